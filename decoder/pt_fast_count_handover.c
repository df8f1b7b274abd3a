/* Counting (stat), where the fast Intel PT path (pt_fast.c) meets something it does not
 * model: libipt's block decoder goes on from a PSB just before it, not from the trace's
 * start, so that the hand-over costs a few PSB periods, not the trace so far.
 *
 * A block decoder synchronised at a PSB is not in the state the one-thread decoder has
 * there (its return stack is empty, and it reads the PSB+ as a start), and its state
 * cannot be read. A watched fast decoder (pt_fast_watch.h) started at the same PSB, p0,
 * two stretches before f->restart, can: where it models what it decodes, it decodes as
 * that block decoder does. If its state at the next PSB, p1, agrees with this path's and
 * the stretch from p1 to f->restart is the same in both (counts, records, time span and
 * the state at its end: the test the parallel counter's seams pass, pt_parallel_count.c),
 * the block decoder from p0 decodes from f->restart on as the one-thread decoder does,
 * but for its return stack, which is the top of the one-thread one's: a compressed return
 * to a call made before p0 is -pte_retstack_empty there, which sends the decode to a
 * block decoder from the start (pt_fast_handover.c). Its instructions and records before
 * f->restart, the watched decoder's two stretches, are skipped; where it resynchronises
 * after an error, this path takes over again (resume in pt_fast.c). */
#include "decoder_internal.h"
#include "pt_fast_internal.h"

#include <string.h>

/* What the watched decoder committed: its first two stretches past p0 (its first commit
 * may be at p0 itself, an empty stretch before the PSB+ it starts with), and all it
 * counted up to the second one's end (which the block decoder from p0 skips). */
struct probe {
	const struct fast *f;
	uint64_t p0;
	struct jf_fast_counted got[2];
	size_t n;
	uint64_t insns, records;
	int same_records;           /* the second stretch's records are f->ready's */
	int unmodelled;
};

static int on_commit(void *ctx, const struct jf_pt_fast_commit *c)
{
	struct probe *p = ctx;
	struct jf_fast_counted *g;
	size_t i;

	if (c->unmodelled || p->n == 2) {
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
	if (++p->n < 2)
		return 0;
	p->same_records = c->nrecords == p->f->stretch_n;
	for (i = 0; p->same_records && i < c->nrecords; i++)
		p->same_records = jf_flow_same(&c->records[i], &p->f->ready.flows[i]);
	return 1;
}

static int same_counted(const struct jf_fast_counted *a, const struct jf_fast_counted *b)
{
	return a->psb == b->psb && a->insns == b->insns && a->blocks == b->blocks &&
	       a->has_time == b->has_time && a->events == b->events &&
	       a->events_hash == b->events_hash &&
	       (!a->has_time || (a->tmin == b->tmin && a->tmax == b->tmax)) &&
	       jf_pt_fast_same_state(&a->state, &b->state);
}

/* Run a watched decoder from p0 over two stretches into p. Returns 0, -1 with err. */
static int probe_from(struct fast *f, uint64_t p0, struct probe *p, struct jf_error *err)
{
	struct jf_pt_fast_caches caches = { f->insns, f->blocks, f->payloads };
	struct jf_pt_config cfg = f->cfg;
	struct jf_decoder *w;
	struct jf_flow fl;
	int rc;

	cfg.has_sync_at = 1;
	cfg.sync_at = p0;
	cfg.release_consumed = 0;
	if (!cfg.insns)
		cfg.insns = f->insns;
	w = jf_pt_fast_watched_new(&cfg, f->map, &caches, on_commit, p, err);
	if (!w)
		return -1;
	while ((rc = jf_decoder_next(w, &fl, err)) > 0)
		; /* the watcher has the records */
	jf_decoder_free(w);
	return rc < 0 ? -1 : 0;
}

int jf_fast_count_hand_over_local(struct fast *f, struct jf_error *err)
{
	const struct jf_fast_counted *c = f->counted;
	struct jf_pt_config cfg = f->cfg;
	struct probe p;
	uint64_t p0;

	if (f->emit || f->ncounted < 2 || c[1].psb != f->restart || c[0].psb != c[1].from)
		return 0;
	p0 = c[0].from;
	memset(&p, 0, sizeof(p));
	p.f = f;
	p.p0 = p0;
	if (probe_from(f, p0, &p, err) < 0)
		return -1;
	if (p.unmodelled || p.n < 2 || !p.same_records || p.got[0].psb != c[0].psb ||
	    !jf_pt_fast_same_state(&c[0].state, &p.got[0].state) ||
	    !same_counted(&c[1], &p.got[1]))
		return 0;
	cfg.has_sync_at = 1;
	cfg.sync_at = p0;
	if (!cfg.insns)
		cfg.insns = f->insns;
	f->old = jf_pt_decoder_new(&cfg, f->map, err);
	if (!f->old)
		return -1;
	f->skip_insns = p.insns;
	f->skip_records = p.records;
	f->local = 0;
	f->count_local = 1;
	f->returned_after = 0;
	f->report.block_decoder_from = (int64_t)p0;
	return 1;
}
