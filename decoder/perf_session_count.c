/* stat on a recording whose code still changes: where the consumer's count gate (the zone
 * filter: jitflow/count_gate.h) says nothing is due at them, the blocks a queue's decoder
 * returns are counted into the session's statistics instead of returned.
 *
 * Such a buffer is decoded by the fast path returning blocks, or by libipt's block
 * decoder, not by the counter: the zone records placed at a thread's instruction count
 * must apply when that thread reaches it, and the counter's stretches are not cut there.
 * Returned one by one, each block went through this session's merge, the zone filter and
 * the statistics only to be added up. A block is counted here only where returning it
 * would have changed nothing but the counts: the gate's limit holds (no zone record
 * becomes due at it) and the merge would have gone on with this queue after it (nothing
 * in the sideband before it, every other queue behind it), so the records returned keep
 * their order, and the code each decoder reads is the same. */
#include "decoder_internal.h"
#include "perf_session_internal.h"

int jf_session_set_gate(void *self, const struct jf_count_gate *gate)
{
	struct session *s = self;

	/* Only stat counts (count_when_fast), and --decoder=libipt-block, the reference,
	 * returns every block. */
	if (!s->opts.fast_when_settled || !s->opts.count_when_fast)
		return 0;
	s->gate = *gate;
	s->has_gate = 1;
	return 1;
}

/* The least key at which the merge would no longer go on with q, the queue running
 * (jf_session_runs_on): the sideband's next record, or the rival queue (at the same key
 * it goes first unless q has the lower index). UINT64_MAX: none. */
static uint64_t merge_key_below(const struct session *s, const struct queue *q)
{
	uint64_t below = s->nheap ? s->heap[0].key : UINT64_MAX;

	if (s->rival_idx != s->nq) {
		uint64_t rival = s->rival_key;

		if ((size_t)(q - s->q) < s->rival_idx && rival < UINT64_MAX)
			rival++;
		if (rival < below)
			below = rival;
	}
	return below;
}

int jf_count_gate_acts_on(const struct jf_count_limit *limit, const struct jf_block *b)
{
	size_t i;

	for (i = 0; i < limit->nstarts; i++)
		if (b->start == limit->starts[i])
			return 1;
	if (b->end != JF_END_RETURN)
		return 0;
	if (limit->any_return)
		return 1;
	for (i = 0; i < limit->nreturns; i++)
		if (b->last == limit->returns[i])
			return 1;
	return 0;
}

/* The least range [*from, *from + *span] that holds the n addresses a (n == 0: the
 * range of the one address 1, which asks jf_count_gate_acts_on, which finds nothing). */
static void address_range(const uint64_t *a, size_t n, uint64_t *from, uint64_t *span)
{
	uint64_t lo = 1, hi = 1;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!i || a[i] < lo)
			lo = a[i];
		if (!i || a[i] > hi)
			hi = a[i];
	}
	*from = lo;
	*span = hi - lo;
}

void jf_session_count_begin(struct session *s, struct queue *q, struct count_run *run)
{
	uint64_t below;

	run->blocks = 0;
	run->tmin = UINT64_MAX;
	run->tmax = 0;
	/* The merge's view of what comes next (the rival queue, the sideband's head) holds
	 * only for the queue it chose to run, with the sideband filled. A counter (the fast
	 * path's, where code is settled) counts its blocks itself. */
	run->on = s->has_gate && !q->dec_counts && s->running == q && !jf_sb_needs_fill(s) &&
		  s->gate.limit(s->gate.ctx, q->source, &run->limit);
	if (!run->on)
		return;
	run->insns_left = run->insns_left_told = run->limit.insns;
	run->time_below = run->limit.time_below;
	address_range(run->limit.starts, run->limit.nstarts, &run->starts_from,
		      &run->starts_span);
	address_range(run->limit.returns, run->limit.nreturns, &run->returns_from,
		      &run->returns_span);
	if (run->limit.any_return)
		run->returns_span = UINT64_MAX;
	below = merge_key_below(s, q);
	/* A block without a time leaves q's key as it is; one with a time moves it there
	 * (timeless: the merge's keys are the buffers' offsets, which no block moves). */
	run->on = q->key < below;
	if (!s->timeless && below < run->time_below)
		run->time_below = below;
}

void jf_session_count_end(struct session *s, struct queue *q, struct count_run *run)
{
	struct jf_decode_stats *st;
	uint64_t insns;

	if (!run->blocks)
		return;
	insns = run->insns_left_told - run->insns_left;
	/* As jf_decoder_next counts the blocks it returns; the zone filter passes them on. */
	st = jf_decoder_stats_mut(s->self);
	st->insns += insns;
	st->blocks += run->blocks;
	if (run->tmin <= run->tmax) {
		jf_decode_stats_span(st, run->tmin, run->tmax);
		/* q's key as the merge would have moved it, block by block. */
		if (!s->timeless && run->tmax > q->key)
			q->key = run->tmax;
	}
	s->report.counted_blocks += run->blocks;
	s->gate.counted(s->gate.ctx, q->source, insns, &run->last);
	run->insns_left_told = run->insns_left;
	run->blocks = 0;
	run->tmin = UINT64_MAX;
	run->tmax = 0;
}
