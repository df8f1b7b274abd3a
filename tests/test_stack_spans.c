/* The spans of a call-stack track (analysis/call_stack_spans.h) on a hand-made table of
 * stacks, whose shape fixes the answers: the deepest stack two stacks share, spans joined
 * below a resolution into it, gaps kept, and every clock unit in exactly one span however
 * often the track is coarsened. */
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

#include "call_stack_spans.h"

/* main (0); main;a (1); main;a;b (2); main;c (3); and another bottom, other (4). */
static const struct jf_call_stack rows[] = {
	{ .parent = JF_NO_STACK, .depth = 1 },
	{ .parent = 0, .depth = 2 },
	{ .parent = 1, .depth = 3 },
	{ .parent = 0, .depth = 2 },
	{ .parent = JF_NO_STACK, .depth = 1 },
};

static uint64_t covered(const struct jf_stack_span_builder *b)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < b->n; i++)
		sum += b->v[i].end - b->v[i].start;
	return sum;
}

static void test_common(void **state)
{
	(void)state;
	assert_int_equal(jf_call_stack_common(rows, 2, 3), 0);
	assert_int_equal(jf_call_stack_common(rows, 2, 1), 1);
	assert_int_equal(jf_call_stack_common(rows, 3, 2), 0);
	assert_int_equal(jf_call_stack_common(rows, 2, 2), 2);
	assert_int_equal(jf_call_stack_common(rows, 2, 4), JF_NO_STACK);
}

static void test_joined_below_resolution(void **state)
{
	struct jf_stack_span_builder b = { NULL, 0, 0, 10 };

	(void)state;
	assert_int_equal(jf_stack_spans_add(&b, rows, 0, 2, 2), 0);
	assert_int_equal(jf_stack_spans_add(&b, rows, 2, 4, 3), 0);   /* main;a;b + main;c */
	assert_int_equal(b.n, 1);
	assert_int_equal(b.v[0].stack, 0);
	assert_int_equal(jf_stack_spans_add(&b, rows, 4, 20, 1), 0);  /* still short: joined */
	assert_int_equal(b.n, 1);
	assert_int_equal(b.v[0].end, 20);
	assert_int_equal(jf_stack_spans_add(&b, rows, 20, 25, 1), 0); /* after a long one: new */
	assert_int_equal(jf_stack_spans_add(&b, rows, 25, 26, 4), 0); /* shares nothing */
	assert_int_equal(b.n, 2);
	assert_int_equal(b.v[1].stack, JF_NO_STACK);
	assert_int_equal(jf_stack_spans_add(&b, rows, 30, 31, 2), 0); /* after a gap: new */
	assert_int_equal(b.n, 3);
	assert_int_equal(b.v[2].start, 30);
	assert_int_equal(covered(&b), 27);
	free(b.v);
}

static void test_same_stack_extends(void **state)
{
	struct jf_stack_span_builder b = { NULL, 0, 0, 0 };

	(void)state;
	jf_stack_spans_add(&b, rows, 0, 5, 2);
	jf_stack_spans_add(&b, rows, 5, 7, 3);
	jf_stack_spans_add(&b, rows, 7, 10, 3);
	jf_stack_spans_add(&b, rows, 10, 10, 1);   /* empty: nothing */
	assert_int_equal(b.n, 2);
	assert_int_equal(b.v[0].stack, 2);
	assert_int_equal(b.v[1].start, 5);
	assert_int_equal(b.v[1].end, 10);
	free(b.v);
}

/* 1000 one-unit spans alternating between main;a;b and main;c, coarsened to 10: spans of
 * main of at least 10 units, and all 1000 units still there. */
static void test_coarsen(void **state)
{
	struct jf_stack_span_builder b = { NULL, 0, 0, 0 };
	size_t i;

	(void)state;
	for (i = 0; i < 1000; i++)
		assert_int_equal(jf_stack_spans_add(&b, rows, i, i + 1, i % 2 ? 3 : 2), 0);
	assert_int_equal(b.n, 1000);
	jf_stack_spans_coarsen(&b, rows, 10);
	assert_int_equal(covered(&b), 1000);
	assert_true(b.n <= 100);
	for (i = 0; i < b.n; i++) {
		assert_int_equal(b.v[i].stack, 0);
		if (i + 1 < b.n)
			assert_true(b.v[i].end - b.v[i].start >= 10);
	}
	free(b.v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_common),
		cmocka_unit_test(test_joined_below_resolution),
		cmocka_unit_test(test_same_stack_extends),
		cmocka_unit_test(test_coarsen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
