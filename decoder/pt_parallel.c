/* Intel PT decoded by worker threads over PSB segments, flows delivered in trace order
 * (see jitflow/pt_parallel.h for how the seams are made exact).
 *
 * The calling thread is the consumer: it takes the segments in order, joins each to the
 * next, and hands out their flows. Workers take the next segment not yet decoded (cutting
 * it off the trace when none is waiting); at most jobs + 2 segments exist at a time, so
 * memory is bounded by the segment size, not the trace. */
#include "jitflow/pt_parallel.h"
#include "jitflow/mapped_file.h"
#include "flow_buffer.h"
#include "jitflow/pt_fast.h"
#include "pt_fast_watch.h"
#include "pt_seg_queue.h"
#include "pt_wrap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct segment {
	struct jf_seg seg;      /* where it lies (first: pt_seg_queue.h) */
	struct jf_flow_buffer flows;
	size_t seam_pos;        /* where in flows the first record past end is (or len) */
	int ended;              /* its decoder reached the end of the trace */
	int failed;             /* its decoder failed (message in err) */
	struct jf_error err;
};

struct worker {
	struct pt_parallel *p;
	struct jf_codemap *map; /* a copy: code maps and libipt images are per thread */
	struct jf_insn_cache *insns;
	struct jf_pt_fast_caches caches; /* with opt.fast: the fast decoders' (over map) */
};

/* Segments smaller than this (in flows) past a seam are not trusted to join. */
enum { MIN_JOIN_FLOWS = 16, RELEASE_STEP = 4 << 20, RELEASE_LAG = 1 << 20 };

struct pt_parallel {
	struct jf_pt_config cfg;
	struct jf_codemap *map;         /* the caller's (for the consumer's own decoder) */
	struct jf_pt_parallel_options opt;
	struct jf_pt_parallel_report *report, own_report;

	struct jf_seg_queue q;
	/* Buffers of segments handed out, kept for the next ones (q's lock): memory
	 * reused, not returned to the kernel and faulted in again for every segment. */
	struct jf_flow_buffer *spare;
	size_t nspare, max_spare;
	struct worker *workers;
	int nworkers;

	/* Consumer side. */
	struct segment *cur;            /* being handed out ... */
	size_t pos, until;              /* ... from pos up to until (bytes in cur->flows) */
	int cur_joined;                 /* until is where cur joins the next ... */
	size_t next_pos;                /* ... whose flows are taken from here on */
	int finished;                   /* nothing more after cur */
	struct jf_decoder *serial;      /* the consumer's own decoder, after a seam failed */
	struct segment *serial_after;   /* ... which has decoded exactly cur's flows */
	struct jf_insn_cache *serial_insns;
	struct jf_pt_fast_caches serial_caches; /* with opt.fast (over map) */
	uint64_t released;
};

static struct segment *seg_of(struct jf_seg *s)
{
	return (struct segment *)(void *)s;
}

static uint64_t stop_offset(const struct pt_parallel *p, const struct segment *s)
{
	return s->seg.last ? UINT64_MAX : s->seg.end + p->opt.overlap;
}

/* Decode flows with dec into s until one lies past its stop offset or the trace ends. */
static void decode_into(struct pt_parallel *p, struct segment *s, struct jf_decoder *dec)
{
	uint64_t stop = stop_offset(p, s);
	struct jf_flow f;
	int rc;

	s->seam_pos = SIZE_MAX;
	while ((rc = jf_decoder_next(dec, &f, &s->err)) > 0) {
		if (f.offset >= s->seg.end && s->seam_pos == SIZE_MAX)
			s->seam_pos = s->flows.len;
		if (jf_flow_buffer_push(&s->flows, &f) < 0) {
			rc = jf_fail(&s->err, "out of memory");
			break;
		}
		if (f.offset >= stop)
			return;
	}
	if (rc == 0)
		s->ended = 1;
	else
		s->failed = 1;
}

static struct jf_decoder *segment_decoder(struct pt_parallel *p, const struct segment *s,
					  struct jf_codemap *map, struct jf_insn_cache *insns,
					  const struct jf_pt_fast_caches *caches,
					  struct jf_error *err)
{
	struct jf_pt_config cfg = p->cfg;

	cfg.release_consumed = 0;       /* the consumer releases what all have passed */
	cfg.insns = insns;
	if (!s->seg.first) {
		cfg.has_sync_at = 1;
		cfg.sync_at = s->seg.start;
	}
	if (p->opt.fast)
		return jf_pt_fast_decoder_cached(&cfg, map, caches, err);
	return jf_pt_decoder_new(&cfg, map, err);
}

/* pt_seg_queue.h: a new segment, with the buffer of one handed out if there is one. */
static struct jf_seg *new_segment(void *ctx)
{
	struct pt_parallel *p = ctx;
	struct segment *s = calloc(1, sizeof(*s));

	if (s && p->nspare)
		s->flows = p->spare[--p->nspare];
	return s ? &s->seg : NULL;
}

static void recycle_segment(void *ctx, struct jf_seg *b)
{
	struct pt_parallel *p = ctx;
	struct segment *s = seg_of(b);

	jf_flow_buffer_clear(&s->flows);
	if (p->nspare < p->max_spare)
		p->spare[p->nspare++] = s->flows;
	else
		jf_flow_buffer_fini(&s->flows);
	free(s);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pt_parallel *p = w->p;
	struct jf_seg *b;

	while ((b = jf_seg_queue_next_job(&p->q))) {
		struct segment *s = seg_of(b);
		struct jf_decoder *dec =
			segment_decoder(p, s, w->map, w->insns, &w->caches, &s->err);

		if (dec)
			decode_into(p, s, dec);
		else
			s->failed = 1;
		jf_decoder_free(dec);
		jf_seg_queue_job_done(&p->q, b, &p->report->segments);
	}
	return NULL;
}

/* Whether f's records from fa on equal g's from gb on, all of f's, and enough of them. */
static int tails_match(const struct segment *f, size_t fa, const struct segment *g, size_t gb)
{
	size_t n = 0;

	while (fa < f->flows.len) {
		if (gb >= g->flows.len || !jf_flow_buffer_same(&f->flows, fa, &g->flows, gb))
			return 0;
		fa += jf_flow_record_size(jf_flow_buffer_at(&f->flows, fa));
		gb += jf_flow_record_size(jf_flow_buffer_at(&g->flows, gb));
		n++;
	}
	return n >= MIN_JOIN_FLOWS;
}

/* Where f's flows hand over to g's: f's up to *fa, then g's from *gb. 0 if they do not
 * agree past the seam. */
static int find_join(const struct segment *f, const struct segment *g, size_t *fa, size_t *gb)
{
	size_t a, b = 0;

	if (f->failed || g->failed || f->ended)
		return 0;
	while (b < g->flows.len && jf_flow_buffer_at(&g->flows, b)->kind != JF_FLOW_BLOCK)
		b += jf_flow_record_size(jf_flow_buffer_at(&g->flows, b));
	if (b >= g->flows.len || f->seam_pos == SIZE_MAX)
		return 0;
	/* g's records all lie at or past the seam (g->start): the search starts at f's
	 * first record there. */
	for (a = f->seam_pos; a < f->flows.len;
	     a += jf_flow_record_size(jf_flow_buffer_at(&f->flows, a))) {
		if (jf_flow_buffer_at(&f->flows, a)->offset < g->seg.start)
			continue;
		if (jf_flow_buffer_same(&f->flows, a, &g->flows, b) && tails_match(f, a, g, b)) {
			*fa = a;
			*gb = b;
			return 1;
		}
	}
	return 0;
}

/* The consumer's own decoder, positioned right after cur's flows: started where cur
 * started and run over them again (it must give the same records). */
static int serial_decoder_at(struct pt_parallel *p, struct segment *cur, struct jf_error *err)
{
	struct jf_flow f, *want = malloc(sizeof(*want));
	size_t pos = 0;
	int rc = 0;

	if (!want)
		return jf_fail(err, "out of memory");
	jf_decoder_free(p->serial);
	p->serial = segment_decoder(p, cur, p->map, p->serial_insns, &p->serial_caches, err);
	if (!p->serial) {
		free(want);
		return -1;
	}
	while (pos < cur->flows.len) {
		pos = jf_flow_buffer_get(&cur->flows, pos, want);
		rc = jf_decoder_next(p->serial, &f, err);
		if (rc < 0)
			break;
		if (rc == 0 || memcmp(&f, want, jf_flow_record_size(want)) != 0) {
			rc = jf_fail(err, "parallel decode: segment at trace offset 0x%llx decodes "
				     "differently a second time (at offset 0x%llx)",
				     (unsigned long long)cur->seg.start,
				     (unsigned long long)want->offset);
			break;
		}
	}
	free(want);
	p->serial_after = cur;
	return rc < 0 ? -1 : 0;
}

/* Give the pages of the trace that every decoder has passed back to the kernel. */
static void release_before(struct pt_parallel *p, uint64_t offset)
{
	if (!p->cfg.release_consumed || offset < p->released + RELEASE_STEP + RELEASE_LAG)
		return;
	jf_mapped_release(p->cfg.trace, p->released, offset - RELEASE_LAG);
	p->released = offset - RELEASE_LAG;
}

static void drop_head(struct pt_parallel *p)
{
	uint64_t start = p->cur->seg.start;

	if (p->serial_after == p->cur)
		p->serial_after = NULL;
	jf_seg_queue_drop_first(&p->q);
	release_before(p, start);
}

/* cur's flows are ready: decide how far they go before the next segment's take over. */
static int plan_segment(struct pt_parallel *p, struct jf_error *err)
{
	struct segment *cur = p->cur, *next;
	size_t fa, gb;

	p->until = cur->flows.len;
	p->cur_joined = 0;
	if (cur->failed) {
		*err = cur->err;
		return -1;
	}
	if (cur->seg.last || cur->ended) {
		p->finished = 1;
		return 0;
	}
	next = seg_of(jf_seg_queue_wait_next(&p->q, &cur->seg));
	jf_seg_queue_wait_done(&p->q, &next->seg);
	if (!p->opt.no_joins && find_join(cur, next, &fa, &gb)) {
		p->until = fa;
		p->next_pos = gb;
		p->cur_joined = 1;
		p->report->joins++;
	}
	return 0;
}

/* cur is handed out: go on with the next segment. 1 = more flows, 0 = the end. */
static int advance(struct pt_parallel *p, struct jf_error *err)
{
	/* The next segment was waited for (under the lock) in plan_segment. */
	struct segment *cur = p->cur, *next = seg_of(cur->seg.next);

	if (p->finished)
		return 0;
	if (p->cur_joined) {
		p->pos = p->next_pos;
		jf_decoder_free(p->serial);
		p->serial = NULL;
		p->serial_after = NULL;
	} else {
		/* The seam did not join: cur's decoder state is the right one, so decode the
		 * next segment with it (a copy of it, made by decoding cur again). */
		if (p->serial_after != cur && serial_decoder_at(p, cur, err) < 0)
			return -1;
		p->report->serial++;
		jf_flow_buffer_clear(&next->flows);
		next->ended = next->failed = 0;
		decode_into(p, next, p->serial);
		p->serial_after = next;
		p->pos = 0;
	}
	drop_head(p);
	p->cur = next;
	return plan_segment(p, err) < 0 ? -1 : 1;
}

static int par_next(void *self, struct jf_flow *f, struct jf_error *err)
{
	struct pt_parallel *p = self;

	if (!p->cur) {
		p->cur = seg_of(jf_seg_queue_first(&p->q));
		jf_seg_queue_wait_done(&p->q, &p->cur->seg);
		p->pos = 0;
		if (plan_segment(p, err) < 0)
			return -1;
	}
	while (p->pos >= p->until) {
		int rc = advance(p, err);

		if (rc == 0)
			jf_seg_queue_join(&p->q); /* the report is final */
		if (rc <= 0)
			return rc;
	}
	p->pos = jf_flow_buffer_get(&p->cur->flows, p->pos, f);
	return 1;
}

static void par_free(void *self)
{
	struct pt_parallel *p = self;
	int i;

	jf_seg_queue_join(&p->q);
	for (i = 0; i < p->nworkers; i++) {
		struct worker *w = &p->workers[i];

		jf_insn_cache_free(w->insns);
		jf_pt_fast_caches_fini(&w->caches);
		jf_codemap_free(w->map);
	}
	free(p->workers);
	jf_seg_queue_fini(&p->q);
	while (p->nspare)
		jf_flow_buffer_fini(&p->spare[--p->nspare]);
	free(p->spare);
	jf_decoder_free(p->serial);
	jf_insn_cache_free(p->serial_insns);
	jf_pt_fast_caches_fini(&p->serial_caches);
	free(p);
}

static const struct jf_decoder_ops par_ops = { par_next, par_free };

static int start_workers(struct pt_parallel *p, struct jf_error *err)
{
	int i;

	p->workers = calloc((size_t)p->opt.jobs, sizeof(*p->workers));
	if (!p->workers)
		return jf_fail(err, "out of memory");
	p->nworkers = p->opt.jobs;
	for (i = 0; i < p->nworkers; i++) {
		struct worker *w = &p->workers[i];

		w->p = p;
		w->map = jf_codemap_clone(p->map, err);
		if (!w->map)
			return -1;
		w->insns = jf_insn_cache_new(w->map);
		if (!w->insns ||
		    (p->opt.fast && jf_pt_fast_block_caches_init(&w->caches, w->map) < 0))
			return jf_fail(err, "out of memory");
		if (jf_seg_queue_start_worker(&p->q, work, w, err) < 0)
			return -1;
	}
	return 0;
}

struct jf_decoder *jf_pt_parallel_decoder_new(const struct jf_pt_config *cfg,
					      struct jf_codemap *map,
					      const struct jf_pt_parallel_options *opt,
					      struct jf_pt_parallel_report *report,
					      struct jf_error *err)
{
	uint64_t segment_size = opt->segment_size ? opt->segment_size : JF_PT_SEGMENT_DEFAULT;
	struct pt_parallel *p;

	/* One segment: nothing to run in parallel. */
	if (opt->jobs <= 1 || cfg->size <= segment_size)
		return opt->fast ? jf_pt_fast_decoder_new(cfg, map, err)
				 : jf_pt_decoder_new(cfg, map, err);
	p = calloc(1, sizeof(*p));
	if (!p) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	p->cfg = *cfg;
	p->cfg.insns = NULL;
	p->map = map;
	p->opt = *opt;
	p->opt.segment_size = segment_size;
	if (!p->opt.overlap)
		p->opt.overlap = JF_PT_OVERLAP_DEFAULT;
	p->report = report ? report : &p->own_report;
	p->spare = calloc((size_t)opt->jobs + 2, sizeof(*p->spare));
	p->max_spare = p->spare ? (size_t)opt->jobs + 2 : 0;
	p->serial_insns = jf_insn_cache_new(map);
	if (jf_seg_queue_init(&p->q, cfg->trace, cfg->size, segment_size, (size_t)opt->jobs + 2,
			      p, new_segment, recycle_segment) < 0 ||
	    !p->serial_insns || !p->spare ||
	    (opt->fast && jf_pt_fast_block_caches_init(&p->serial_caches, map) < 0)) {
		jf_fail(err, "out of memory");
		par_free(p);
		return NULL;
	}
	if (start_workers(p, err) < 0) {
		par_free(p);
		return NULL;
	}
	return jf_pt_wrap(&par_ops, p, cfg, err);
}
