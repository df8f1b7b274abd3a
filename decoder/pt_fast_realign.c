/* Returning blocks, a hand-over to libipt's block decoder from the trace's start
 * (pt_fast_handover.c) skips the records already returned. Counting them is exact only
 * where the code is what it was when they were decoded: a JIT's code changes while the
 * trace is decoded (the session applies its zone records between records), and the
 * decoder from the start reads the code as it is now, so over code that changed since it
 * makes other blocks, more or fewer, and a count of records lands elsewhere (a HotSpot
 * recording: a record returned twice, and every record after it shifted). So the decoder
 * from the start finds its place by the records returned last (the tail): it skips up to
 * the record after which its own last records equal the tail, one by one (every field,
 * the trace offset included, so the place is unique), wherever that is. Past the tail's
 * last offset no such place can come: the count decides, as it did (a decoder from the
 * start again, skipping by number). */
#include "decoder_internal.h"
#include "pt_fast_internal.h"

#include <string.h>

void jf_fast_tail_push(struct jf_fast_tail *t, const struct jf_flow *flow, uint64_t end)
{
	t->flows[t->next] = *flow;
	t->next = (t->next + 1) % JF_TAIL_MAX;
	if (t->n < JF_TAIL_MAX)
		t->n++;
	t->end = end;
}

void jf_fast_tail_from_stretch(struct fast *f)
{
	size_t i = f->stretch_n > JF_TAIL_MAX ? f->stretch_n - JF_TAIL_MAX : 0;

	/* A stretch without records leaves the tail as it was, and its end then tells that
	 * records returned since are not in it. */
	if (!f->emit || !f->stretch_n)
		return;
	f->tail.n = f->tail.next = 0;
	for (; i < f->stretch_n; i++)
		jf_fast_tail_push(&f->tail, &f->ready.flows[i], f->committed_records);
}

int jf_fast_tail_ends_at(const struct fast *f, uint64_t skip)
{
	return f->emit && f->tail.n && f->tail.end == skip;
}

/* The k-th last record of t (k < t->n). */
static const struct jf_flow *last(const struct jf_fast_tail *t, unsigned k)
{
	return &t->flows[(t->next + JF_TAIL_MAX - 1 - k) % JF_TAIL_MAX];
}

int jf_fast_realign(struct fast *f, const struct jf_flow *flow)
{
	const struct jf_fast_tail *tail = &f->tail;
	unsigned k;

	if (flow->offset > last(tail, 0)->offset)
		return -1;
	jf_fast_tail_push(&f->seen, flow, 0);
	if (f->seen.n < tail->n || !jf_flow_same(flow, last(tail, 0)))
		return 0;
	for (k = 1; k < tail->n; k++)
		if (!jf_flow_same(last(&f->seen, k), last(tail, k)))
			return 0;
	return 1;
}
