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

void jf_session_count_begin(struct session *s, struct queue *q, struct count_run *run)
{
	run->insns = run->blocks = 0;
	/* The merge's view of what comes next (the rival queue, the sideband's head) holds
	 * only for the queue it chose to run, with the sideband filled. */
	run->on = s->has_gate && s->running == q && !jf_sb_needs_fill(s) &&
		  s->gate.limit(s->gate.ctx, q->source, &run->limit);
}

/* Whether the gate's consumer acts on block b wherever it comes (a marker call). */
static int gate_acts_on(const struct jf_count_limit *limit, const struct jf_block *b)
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

int jf_session_count_block(struct session *s, struct queue *q, struct count_run *run,
			   const struct jf_flow *f)
{
	uint64_t k;

	if (!run->on || f->kind != JF_FLOW_BLOCK)
		return 0;
	if ((f->flags & JF_FLOW_HAS_TIME) && f->time >= run->limit.time_below)
		return 0;
	if (f->u.block.ninsn > run->limit.insns - run->insns)
		return 0;
	if (gate_acts_on(&run->limit, &f->u.block))
		return 0;
	k = jf_session_flow_key(s, q, f);
	if (!jf_session_runs_on(s, q, k))
		return 0;
	q->key = k;
	run->insns += f->u.block.ninsn;
	run->blocks++;
	run->last = f->u.block;
	/* As jf_decoder_next counts a record it returns; the zone filter passes it on. */
	jf_decode_stats_count(jf_decoder_stats_mut(s->self), f);
	return 1;
}

void jf_session_count_end(struct session *s, struct queue *q, struct count_run *run)
{
	if (!run->blocks)
		return;
	s->report.counted_blocks += run->blocks;
	s->gate.counted(s->gate.ctx, q->source, run->insns, &run->last);
	run->insns = run->blocks = 0;
}
