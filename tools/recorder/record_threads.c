/* Guest threads: one per QEMU CPU index at a time, each with its PT stream and AUX buffer;
 * their tids, sideband records and ends (see record_state.h). */
#include "record_internal.h"

#include <stdlib.h>
#include <string.h>

static int thread_sink(void *ctx, const uint8_t *bytes, size_t size)
{
	struct jf_record_thread *t = ctx;
	struct jf_record_state *st = t->owner;

	jf_perf_aux(&st->perf, st->pid, t->tid ? t->tid : -1, t->queue, t->aux_offset, bytes,
		    size, jf_pt_perf_time(st->clock));
	t->aux_offset += size;
	return 0; /* a failed write (full disk) is the perf writer's to report, at its close */
}

void jf_rec_announce(struct jf_record_state *st, struct jf_record_thread *t)
{
	if (t->announced || !t->tid)
		return;
	/* Dated when the thread appeared (its tid may only come later in the log): perf
	 * must know the thread before it decodes the thread's first packet. */
	if (t->queue != 0)
		jf_perf_fork(&st->perf, st->pid, st->pid, t->tid, t->ptid,
			     jf_pt_perf_time(t->start_clock));
	jf_perf_itrace_start(&st->perf, st->pid, t->tid, jf_pt_perf_time(t->start_clock));
	t->announced = 1;
}

static int grow(void *array_ptr, unsigned *cap, unsigned need)
{
	struct jf_record_thread ***array = array_ptr;
	struct jf_record_thread **n;
	unsigned new_cap;

	if (need < *cap)
		return 0;
	new_cap = need + 16;
	n = realloc(*array, new_cap * sizeof(*n));
	if (!n)
		return -1;
	memset(n + *cap, 0, (new_cap - *cap) * sizeof(*n));
	*array = n;
	*cap = new_cap;
	return 0;
}

int jf_rec_tid_in_use(const struct jf_record_state *st, int tid)
{
	unsigned i;

	for (i = 0; i < st->nthreads; i++)
		if (st->threads[i]->tid == tid)
			return 1;
	for (i = 0; i < st->npredictions; i++)
		if (st->predictions[i].tid == tid)
			return 1;
	return 0;
}

struct jf_record_thread *jf_rec_thread_for(struct jf_record_state *st, unsigned cpu)
{
	struct jf_record_thread *t;

	if (cpu < st->cpu_cap && st->by_cpu[cpu])
		return st->by_cpu[cpu];
	if (grow(&st->by_cpu, &st->cpu_cap, cpu) || grow(&st->threads, &st->threads_cap, st->nthreads))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t)
		t->pt = malloc(sizeof(*t->pt));
	if (!t || !t->pt) {
		if (t)
			free(t->pt);
		free(t);
		return NULL;
	}
	t->owner = st;
	if (jf_pt_stream_init(t->pt, thread_sink, t, st->timing)) {
		free(t->pt);
		free(t);
		return NULL;
	}
	t->pt->filtered = st->filter != NULL;
	t->cpu = cpu;
	t->start_clock = st->clock;
	t->queue = st->nthreads; /* one AUX buffer per thread */
	if (st->nthreads == 0) {
		t->tid = st->pid;
	} else {
		t->ptid = st->pid;
		unsigned i;

		/* The oldest clone predicted to create a thread on this index. */
		for (i = 0; i < st->npredictions; i++) {
			struct jf_clone_prediction *p = &st->predictions[i];

			if (p->cpu == cpu && !p->appeared) {
				t->clone_k = p->k;
				t->tid = p->tid;
				memmove(p, p + 1, (st->npredictions - i - 1) * sizeof(*p));
				st->npredictions--;
				break;
			}
		}
	}
	st->by_cpu[cpu] = t;
	st->threads[st->nthreads++] = t;
	jf_rec_announce(st, t);
	return t;
}

/* The thread leaves for good: its stream ends with the exit system call's TIP.PGD. */
void jf_rec_thread_exit(struct jf_record_state *st, struct jf_record_thread *t)
{
	if (t->exited)
		return;
	/* Still waiting for a handler to return (it left by longjmp): the wait ends here,
	 * while the thread's stream is open. */
	if (t->deferring)
		jf_rec_replay_deferred(st, t, 0, 0);
	t->exited = 1;
	jf_pt_advance(t->pt, st->clock);
	if (t->have_prev && t->prev.exit == JF_EXIT_SYSCALL) {
		jf_pt_disable(t->pt);
	} else if (t->have_prev && t->prev_inside) {
		/* Stopped somewhere in its last block (another thread's exit_group, a fatal
		 * signal): QEMU reported the block as it began, and how far it ran is not
		 * known. Written as an interruption at the block's start, as the hardware
		 * writes one, so a decoder stops there; its instructions are hidden. */
		jf_pt_async_disable(t->pt, t->last_pc);
		t->hidden += t->last_ninsn;
		t->ended_in_block = 1;
	}
	if (st->by_cpu[t->cpu] == t)
		st->by_cpu[t->cpu] = NULL;
}

/* Hand the rest of the thread's stream to perf.data, and its EXIT record. */
int jf_rec_thread_finish(struct jf_record_state *st, struct jf_record_thread *t)
{
	int rc;

	if (t->finished)
		return 0;
	t->finished = 1;
	rc = jf_pt_stream_finish(t->pt);
	t->stats = t->pt->stats;
	free(t->pt);
	t->pt = NULL;
	jf_perf_exit(&st->perf, st->pid, st->pid, t->tid, t->tid, jf_pt_perf_time(st->clock));
	return rc;
}

void jf_rec_clone_line(struct jf_record_state *st)
{
	struct jf_clone_prediction *p;
	unsigned i, next = 1;

	for (i = 0; i < st->cpu_cap; i++)
		if (st->by_cpu[i] && i + 1 > next)
			next = i + 1;
	for (i = 0; i < st->npredictions; i++)
		if (st->predictions[i].cpu + 1 > next)
			next = st->predictions[i].cpu + 1;
	if (st->npredictions == sizeof(st->predictions) / sizeof(st->predictions[0])) {
		memmove(st->predictions, st->predictions + 1,
			sizeof(st->predictions) - sizeof(st->predictions[0]));
		st->npredictions--;
	}
	p = &st->predictions[st->npredictions++];
	p->k = ++st->clone_lines;
	p->cpu = next;
	p->tid = 0;
	p->appeared = 0;
}

void jf_rec_new_tid(struct jf_record_state *st, int tid)
{
	unsigned i, k = ++st->clone_results;

	if (jf_rec_tid_in_use(st, tid))
		return;
	/* The thread the k-th clone made, if it already ran ... */
	for (i = 1; i < st->nthreads; i++) {
		struct jf_record_thread *t = st->threads[i];

		if (t->clone_k == k && !t->tid) {
			t->tid = tid;
			jf_rec_announce(st, t);
			return;
		}
	}
	/* ... or its prediction, for when it does ... */
	for (i = 0; i < st->npredictions; i++) {
		if (st->predictions[i].k == k) {
			st->predictions[i].tid = tid;
			return;
		}
	}
	/* ... else the oldest thread without a name. */
	for (i = 1; i < st->nthreads; i++) {
		struct jf_record_thread *t = st->threads[i];

		if (!t->tid) {
			t->tid = tid;
			jf_rec_announce(st, t);
			return;
		}
	}
}
