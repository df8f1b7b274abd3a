/* How `stat -j N` cuts a trace into segments (pt_seg_queue.c), on a real stream of PSB
 * periods written with libipt's encoder: contiguous segments from the trace's start to its
 * end, each beginning at a PSB; guided by the trace left, never smaller than the smallest
 * size while every thread can still get one that large; and with a tail, the last ones a
 * thread's share of the rest, down to the tail size, so that N threads end within a small
 * segment of each other (the plan for a given trace size and N: the sizes and count). */
#include "pt_builder.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

#include "pt_seg_queue.h"

enum {
	PERIOD = 1024,          /* bytes from one PSB to the next */
	TRACE = 4 << 20,
	SMALLEST = 256 << 10,   /* segment_size */
	LARGEST = 2 << 20,
	TAIL = 64 << 10,
	THREADS = 8,
	MAX_SEGMENTS = 1024,
};

/* TRACE bytes of PSB periods: PSB, PSBEND and PADs up to the next PSB, one period written
 * by libipt's encoder (the builder holds 64 KiB) and repeated. */
static uint8_t *build(void)
{
	struct jf_ptb *b = jf_ptb_new();
	uint8_t *trace = malloc(TRACE);
	size_t at;

	assert_non_null(trace);
	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	while (jf_ptb_size(b) < PERIOD)
		jf_ptb_pad(b);
	assert_int_equal(jf_ptb_size(b), PERIOD);
	for (at = 0; at < TRACE; at += PERIOD)
		memcpy(trace + at, jf_ptb_bytes(b), PERIOD);
	jf_ptb_free(b);
	return trace;
}

static struct jf_seg *new_seg(void *ctx)
{
	(void)ctx;
	return calloc(1, sizeof(struct jf_seg));
}

static void recycle(void *ctx, struct jf_seg *s)
{
	(void)ctx;
	free(s);
}

struct plan {
	uint64_t start[MAX_SEGMENTS], end[MAX_SEGMENTS];
	size_t n;
};

/* The segments as the queue cuts them for threads (0: no tail), checked to be contiguous
 * from 0 to the trace's end, each beginning at a PSB. */
static void cut_all(const uint8_t *trace, unsigned threads, struct plan *plan)
{
	struct jf_seg_queue q;
	struct jf_seg *s;

	assert_int_equal(jf_seg_queue_init(&q, trace, TRACE, SMALLEST,
					   MAX_SEGMENTS, NULL, new_seg, recycle), 0);
	jf_seg_queue_set_guided(&q, LARGEST, 4 * THREADS);
	if (threads)
		jf_seg_queue_set_tail(&q, TAIL, threads);
	plan->n = 0;
	do {
		s = jf_seg_queue_next_job(&q);
		assert_non_null(s);
		assert_true(plan->n < MAX_SEGMENTS);
		assert_int_equal(s->first, plan->n == 0);
		assert_int_equal(s->start, plan->n ? plan->end[plan->n - 1] : 0);
		assert_int_equal(s->start % PERIOD, 0);
		assert_true(s->end > s->start);
		plan->start[plan->n] = s->start;
		plan->end[plan->n++] = s->end;
	} while (!s->last);
	assert_int_equal(plan->end[plan->n - 1], TRACE);
	jf_seg_queue_fini(&q);
}

/* Without a tail no segment is smaller than the smallest size: the last ones, a few to
 * each thread, are all of it. */
static void test_guided_alone(void **state)
{
	uint8_t *trace = build();
	struct plan *plan = calloc(1, sizeof(*plan));
	size_t i;

	(void)state;
	cut_all(trace, 0, plan);
	for (i = 0; i < plan->n; i++) {
		assert_true(plan->end[i] - plan->start[i] >= SMALLEST);
		assert_true(plan->end[i] - plan->start[i] <= LARGEST + PERIOD);
	}
	free(plan);
	free(trace);
}

/* With a tail: the smallest size while the rest gives each thread a segment that large,
 * then a thread's share of the rest (to the next PSB), never below the tail size, and the
 * last THREADS segments are of about the tail size. */
static void test_tail(void **state)
{
	uint8_t *trace = build();
	struct plan *plan = calloc(1, sizeof(*plan));
	struct plan *alone = calloc(1, sizeof(*alone));
	size_t i, small = 0;

	(void)state;
	cut_all(trace, 0, alone);
	cut_all(trace, THREADS, plan);
	for (i = 0; i < plan->n; i++) {
		uint64_t rest = TRACE - plan->start[i], size = plan->end[i] - plan->start[i];

		if (rest / THREADS >= SMALLEST) {
			assert_true(size >= SMALLEST);
		} else if (i + 1 < plan->n) {
			uint64_t share = rest / THREADS > TAIL ? rest / THREADS : TAIL;

			assert_true(size >= share && size <= share + PERIOD);
		} else {
			/* the last: the rest, not a piece smaller than the tail after it */
			assert_true(size >= TAIL && size < 2 * TAIL + PERIOD);
		}
		small += size < SMALLEST;
	}
	for (i = plan->n - THREADS; i < plan->n; i++)
		assert_true(plan->end[i] - plan->start[i] < 2 * TAIL + PERIOD);
	/* Up to the tail, the same cuts as without it. */
	for (i = 0; i < plan->n - small; i++)
		assert_int_equal(plan->end[i], alone->end[i]);
	/* The tail starts with 2 MiB left (THREADS segments of SMALLEST): each an eighth of the
	 * rest, 11 down to 512 KiB left, then 8 of 64 KiB. */
	assert_true(small >= 2 * THREADS && small <= 4 * THREADS);
	assert_true(plan->n > alone->n);
	free(alone);
	free(plan);
	free(trace);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guided_alone),
		cmocka_unit_test(test_tail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
