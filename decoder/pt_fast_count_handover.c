/* Counting (stat), where the fast Intel PT path (pt_fast.c) meets something it does not
 * model: libipt's block decoder goes on from the PSB of that stretch or one just before
 * it, not from the trace's start, so that the hand-over costs a PSB period or two, not the
 * trace so far.
 *
 * A block decoder synchronised at a PSB is not in the state the one-thread decoder has
 * there (its return stack is empty, and it reads the PSB+ as a start), and its state
 * cannot be read. A watched fast decoder (pt_fast_watch.h) started at the same PSB can:
 * where it models what it decodes, it decodes as that block decoder does. Three places to
 * start are tried, nearest first:
 *
 * - f->restart itself: the watched decoder must stop where this path stopped (the same
 *   packet), having decoded the same (counts, records, time span) into the same state.
 *   The packets since that PSB are the same to both, so what differs between a decoder
 *   started there and the one-thread one is what crosses the PSB (return stack, tracing
 *   state, mode, time), which the states compare.
 * - one or two PSBs before (p0): the last stretch it decodes up to f->restart must be the
 *   same as this path's (counts, records, time span and the state at its end: the test
 *   the parallel counter's seams pass, pt_parallel_count.c); with two, the first need
 *   only end in this path's state.
 *
 * The block decoder from there then decodes on as the one-thread decoder does, but for its
 * return stack, which is the top of the one-thread one's: a compressed return to a call
 * made before it started is -pte_retstack_empty there, which sends the decode to a block
 * decoder from the start (pt_fast_handover.c). Its instructions and records before
 * f->restart, the watched decoder's, are skipped; where it resynchronises after an error,
 * this path takes over again (resume in pt_fast.c). On the damaged capture of
 * tools/bench (an error per 29 KB) starting at f->restart rather than two PSBs before
 * halves stat's CPU time: the block decoder's is most of it. */
#include "decoder_internal.h"
#include "pt_fast_internal.h"

#include <string.h>

/* What the watched decoder committed: its first `want` stretches past p0 (its first commit
 * may be at p0 itself, an empty stretch before the PSB+ it starts with), and all it
 * counted up to the last one's end (which the block decoder from p0 skips). */
struct probe {
	const struct jf_pt_fast_stop *stop;
	uint64_t p0;
	size_t want;                /* 1 or 2 */
	struct jf_fast_counted got[2];
	size_t n;
	uint64_t insns, records;
	int same_records;           /* the last stretch's records are the stop's last ones */
	int unmodelled;
};

static int on_commit(void *ctx, const struct jf_pt_fast_commit *c)
{
	struct probe *p = ctx;
	struct jf_fast_counted *g;
	size_t i;

	if (c->unmodelled || p->n == p->want) {
		p->unmodelled = 1;
		return 1;
	}
	p->insns += c->insns;
	p->records += c->nrecords + c->events;
	if (c->psb <= p->p0)
		return 0;
	g = &p->got[p->n];
	g->psb = c->psb;
	g->insns = c->insns;
	g->blocks = c->blocks;
	g->has_time = c->has_time;
	g->tmin = c->tmin;
	g->tmax = c->tmax;
	g->events = c->events;
	g->events_hash = c->events_hash;
	g->state = c->state;
	if (++p->n < p->want)
		return 0;
	p->same_records = c->nrecords == p->stop->nlast;
	for (i = 0; p->same_records && i < c->nrecords; i++)
		p->same_records = jf_flow_same(&c->records[i], &p->stop->last_records[i]);
	return 1;
}

int jf_fast_same_counted(const struct jf_fast_counted *a, const struct jf_fast_counted *b)
{
	return a->psb == b->psb && a->insns == b->insns && a->blocks == b->blocks &&
	       a->has_time == b->has_time && a->events == b->events &&
	       a->events_hash == b->events_hash &&
	       (!a->has_time || (a->tmin == b->tmin && a->tmax == b->tmax)) &&
	       jf_pt_fast_same_state(&a->state, &b->state);
}

/* Run a watched decoder from p0, telling fn (with ctx) of its commits until it pauses or
 * ends. Returns 0, -1 with err. */
static int run_watched(struct fast *f, uint64_t p0, jf_pt_fast_watch_fn fn, void *ctx,
		       struct jf_error *err)
{
	struct jf_pt_fast_caches caches = { f->insns, f->blocks, f->payloads, NULL, f->queues };
	struct jf_pt_config cfg = f->cfg;
	struct jf_decoder *w;
	struct jf_flow fl;
	int rc;

	cfg.has_sync_at = 1;
	cfg.sync_at = p0;
	cfg.release_consumed = 0;
	if (!cfg.insns)
		cfg.insns = f->insns;
	w = jf_pt_fast_watched_new(&cfg, f->map, &caches, fn, ctx, err);
	if (!w)
		return -1;
	while ((rc = jf_decoder_next(w, &fl, err)) > 0)
		; /* the watcher has the records */
	jf_decoder_free(w);
	return rc < 0 ? -1 : 0;
}

/* The block decoder from p0 in f->old, skipping the instructions and records the watched
 * decoder committed before f->restart. Returns 1, -1 with err. */
static int block_decoder_from(struct fast *f, uint64_t p0, uint64_t insns, uint64_t records,
			      struct jf_error *err)
{
	struct jf_pt_config cfg = f->cfg;

	cfg.has_sync_at = 1;
	cfg.sync_at = p0;
	/* Its blocks as they are whatever was decoded before: libipt's block cache is filled
	 * by every hand-over over the same code map, and ends blocks where it knows the next
	 * instruction, so the block count would depend on which thread made the hand-overs
	 * before (pt_parallel_count.c). Blocks cut at every jump and call, and joined across
	 * the cache's splits, are the same whatever the cache held (jitflow/pt.h). */
	cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	if (!cfg.insns)
		cfg.insns = f->insns;
	f->old = jf_pt_decoder_new(&cfg, f->map, err);
	if (!f->old)
		return -1;
	f->skip_insns = insns;
	f->skip_records = records;
	f->local = 0;
	f->count_local = 1;
	f->returned_after = 0;
	f->report.block_decoder_from = (int64_t)p0;
	return 1;
}

/* Whether a block decoder from the PSB `back` (1 or 2) stretches before the stop decodes
 * on from there as the one-thread decoder would, as a watched decoder started there shows
 * (into p). 1, 0 if not, -1 with err. */
static int checked_from(struct fast *f, const struct jf_pt_fast_stop *stop, size_t back,
			struct probe *p, struct jf_error *err)
{
	const struct jf_fast_counted *last, *first;

	if (stop->ncounted < back)
		return 0;
	last = &stop->counted[stop->ncounted - 1];
	first = &stop->counted[stop->ncounted - back];
	if (last->psb != stop->at->psb || (back == 2 && first->psb != last->from))
		return 0;
	memset(p, 0, sizeof(*p));
	p->stop = stop;
	p->p0 = first->from;
	p->want = back;
	if (run_watched(f, p->p0, on_commit, p, err) < 0)
		return -1;
	if (p->unmodelled || p->n < back || !p->same_records ||
	    !jf_fast_same_counted(last, &p->got[back - 1]))
		return 0;
	/* Two stretches: the first need only end where this path's did, in its state. */
	return back == 1 || (p->got[0].psb == first->psb &&
			     jf_pt_fast_same_state(&first->state, &p->got[0].state));
}

int jf_fast_count_hand_over_before(struct fast *f, const struct jf_pt_fast_stop *stop,
				   struct jf_error *err)
{
	struct probe p;
	int rc;

	if (f->emit || stop->ncounted < 1)
		return 0;
	rc = checked_from(f, stop, 1, &p, err);
	if (rc == 0)
		rc = checked_from(f, stop, 2, &p, err);
	if (rc <= 0)
		return rc;
	return block_decoder_from(f, p.p0, p.insns, p.records, err);
}

int jf_fast_count_hand_over_fresh(struct fast *f, uint64_t psb, struct jf_error *err)
{
	return block_decoder_from(f, psb, 0, 0, err);
}

int jf_fast_count_hand_over_local(struct fast *f, struct jf_error *err)
{
	struct jf_pt_fast_commit at;
	struct jf_pt_fast_stop stop;

	memset(&at, 0, sizeof(at));
	at.psb = f->restart;
	memset(&stop, 0, sizeof(stop));
	stop.at = &at;
	stop.counted = f->counted;
	stop.ncounted = f->ncounted;
	stop.last_records = f->ready.flows;
	stop.nlast = f->stretch_n;
	return jf_fast_count_hand_over_before(f, &stop, err);
}

/* What a watched decoder from the stop's PSB did up to where it stopped (the stretch after
 * the PSB it started at, not modelled), and whether that is the stop's: the same records,
 * counts, time span, state and packet offset (compared as it stops: its records are its
 * own until then). */
struct here {
	const struct jf_pt_fast_commit *want;
	uint64_t insns, records;       /* committed at its start, before the PSB+ */
	int same;
};

static int on_stop(void *ctx, const struct jf_pt_fast_commit *c)
{
	struct here *h = ctx;
	const struct jf_pt_fast_commit *w = h->want;
	size_t i;

	if (!c->unmodelled) {
		h->insns += c->insns;
		h->records += c->nrecords + c->events;
		/* Past the stop's PSB: it decoded what the stopped decoder did not. */
		return c->psb > w->psb;
	}
	h->same = c->psb == w->psb && c->stopped_at && c->stopped_at == w->stopped_at &&
		  c->insns == w->insns && c->blocks == w->blocks && c->events == w->events &&
		  c->events_hash == w->events_hash && c->has_time == w->has_time &&
		  (!c->has_time || (c->tmin == w->tmin && c->tmax == w->tmax)) &&
		  c->nrecords == w->nrecords && jf_pt_fast_same_state(&w->state, &c->state);
	for (i = 0; h->same && i < c->nrecords; i++)
		h->same = jf_flow_same(&c->records[i], &w->records[i]);
	return 1;
}

int jf_fast_count_hand_over_at_stop(struct fast *f, const struct jf_pt_fast_commit *stop,
				    struct jf_error *err)
{
	struct here h;

	memset(&h, 0, sizeof(h));
	h.want = stop;
	if (!stop->stopped_at)
		return 0;
	if (run_watched(f, stop->psb, on_stop, &h, err) < 0)
		return -1;
	if (!h.same)
		return 0;
	return block_decoder_from(f, stop->psb, h.insns, h.records, err);
}

int jf_fast_count_hand_over_here(struct fast *f, struct jf_error *err)
{
	struct jf_pt_fast_commit stop;

	/* Not with timing packets: the time libipt's estimate carries across the PSB is
	 * more than the states hold (a TSC read but not yet queried, the calibration), and
	 * a decoder started at the PSB has none of it (fuzz_pt_decode). */
	if (f->emit || !f->by_packets || !f->pkt || f->timed)
		return 0;
	jf_fast_fill_commit(f, f->restart, 1, &stop);
	return jf_fast_count_hand_over_at_stop(f, &stop, err);
}
