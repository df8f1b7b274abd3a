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
#include "pt_segments.h"
#include "pt_wrap.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum seg_state { QUEUED, RUNNING, DONE };

struct segment {
	uint64_t start;         /* its first PSB (the first segment: 0, a normal start) */
	uint64_t end;           /* the next segment's start; the trace size for the last */
	int first, last;
	enum seg_state state;
	struct jf_flow_buffer flows;
	size_t seam_pos;        /* where in flows the first record past end is (or len) */
	int ended;              /* its decoder reached the end of the trace */
	int failed;             /* its decoder failed (message in err) */
	struct jf_error err;
	struct segment *next;
};

struct worker {
	struct pt_parallel *p;
	struct jf_codemap *map; /* a copy: code maps and libipt images are per thread */
	struct jf_insn_cache *insns;
	pthread_t thread;
	int started;
};

/* Segments smaller than this (in flows) past a seam are not trusted to join. */
enum { MIN_JOIN_FLOWS = 16, RELEASE_STEP = 4 << 20, RELEASE_LAG = 1 << 20 };

struct pt_parallel {
	struct jf_pt_config cfg;
	struct jf_codemap *map;         /* the caller's (for the consumer's own decoder) */
	struct jf_pt_parallel_options opt;
	struct jf_pt_parallel_report *report, own_report;

	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct jf_pt_psb_finder *psbs;  /* under lock */
	struct segment *head, *tail;    /* alive segments, in trace order */
	size_t alive, max_alive;
	uint64_t cut_at;                /* where the next segment starts */
	/* Buffers of segments handed out, kept for the next ones: memory reused, not
	 * returned to the kernel and faulted in again for every segment. */
	struct jf_flow_buffer *spare;
	size_t nspare;
	int all_cut, stopping;
	struct worker *workers;
	int nworkers;

	/* Consumer side. */
	struct segment *cur;            /* being handed out ... */
	size_t pos, until;              /* ... from pos up to until (bytes in cur->flows) */
	int cur_joined;                 /* until is where cur joins cur->next ... */
	size_t next_pos;                /* ... whose flows are taken from here on */
	int finished;                   /* nothing more after cur */
	struct jf_decoder *serial;      /* the consumer's own decoder, after a seam failed */
	struct segment *serial_after;   /* ... which has decoded exactly cur's flows */
	struct jf_insn_cache *serial_insns;
	uint64_t released;
};

static uint64_t stop_offset(const struct pt_parallel *p, const struct segment *s)
{
	return s->last ? UINT64_MAX : s->end + p->opt.overlap;
}

/* Decode flows with dec into s until one lies past its stop offset or the trace ends. */
static void decode_into(struct pt_parallel *p, struct segment *s, struct jf_decoder *dec)
{
	uint64_t stop = stop_offset(p, s);
	struct jf_flow f;
	int rc;

	s->seam_pos = SIZE_MAX;
	while ((rc = jf_decoder_next(dec, &f, &s->err)) > 0) {
		if (f.offset >= s->end && s->seam_pos == SIZE_MAX)
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
					  struct jf_error *err)
{
	struct jf_pt_config cfg = p->cfg;

	cfg.release_consumed = 0;       /* the consumer releases what all have passed */
	cfg.insns = insns;
	if (!s->first) {
		cfg.has_sync_at = 1;
		cfg.sync_at = s->start;
	}
	return jf_pt_decoder_new(&cfg, map, err);
}

/* Cut the next segment off the trace (lock held). */
static struct segment *cut_segment(struct pt_parallel *p)
{
	struct segment *s = calloc(1, sizeof(*s));
	int64_t end = -1;

	if (!s)
		return NULL;
	if (p->nspare)
		s->flows = p->spare[--p->nspare];
	s->start = p->cut_at;
	s->first = p->head == NULL && p->cut_at == 0;
	if (p->cut_at + p->opt.segment_size < p->cfg.size)
		end = jf_pt_psb_at_or_after(p->psbs, p->cut_at + p->opt.segment_size);
	if (end < 0) {
		s->end = p->cfg.size;
		s->last = 1;
		p->all_cut = 1;
	} else {
		s->end = (uint64_t)end;
	}
	p->cut_at = s->end;
	if (p->tail)
		p->tail->next = s;
	else
		p->head = s;
	p->tail = s;
	p->alive++;
	return s;
}

/* The first queued segment, or a new one if there is room (lock held). */
static struct segment *take_job(struct pt_parallel *p)
{
	struct segment *s;

	for (s = p->head; s; s = s->next) {
		if (s->state == QUEUED)
			return s;
	}
	if (p->all_cut || p->alive >= p->max_alive)
		return NULL;
	return cut_segment(p);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pt_parallel *p = w->p;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		struct segment *s = NULL;
		struct jf_decoder *dec;

		while (!p->stopping && !(s = take_job(p)))
			pthread_cond_wait(&p->changed, &p->lock);
		if (p->stopping)
			break;
		s->state = RUNNING;
		pthread_mutex_unlock(&p->lock);
		dec = segment_decoder(p, s, w->map, w->insns, &s->err);
		if (dec)
			decode_into(p, s, dec);
		else
			s->failed = 1;
		jf_decoder_free(dec);
		pthread_mutex_lock(&p->lock);
		s->state = DONE;
		p->report->segments++;
		pthread_cond_broadcast(&p->changed);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Wait until s is decoded (lock not held). */
static void wait_done(struct pt_parallel *p, struct segment *s)
{
	pthread_mutex_lock(&p->lock);
	while (s->state != DONE)
		pthread_cond_wait(&p->changed, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

/* Wait until the segment after s exists (NULL: s is the last). */
static struct segment *wait_next(struct pt_parallel *p, struct segment *s)
{
	struct segment *next;

	pthread_mutex_lock(&p->lock);
	while (!s->next && !s->last)
		pthread_cond_wait(&p->changed, &p->lock);
	next = s->next;
	pthread_mutex_unlock(&p->lock);
	return next;
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
		if (jf_flow_buffer_at(&f->flows, a)->offset < g->start)
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
	p->serial = segment_decoder(p, cur, p->map, p->serial_insns, err);
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
				     (unsigned long long)cur->start,
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
	struct segment *s;

	pthread_mutex_lock(&p->lock);
	s = p->head;
	p->head = s->next;
	if (!p->head)
		p->tail = NULL;
	p->alive--;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	release_before(p, s->start);
	if (p->serial_after == s)
		p->serial_after = NULL;
	jf_flow_buffer_clear(&s->flows);
	pthread_mutex_lock(&p->lock);
	if (p->nspare < p->max_alive)
		p->spare[p->nspare++] = s->flows;
	else
		jf_flow_buffer_fini(&s->flows);
	pthread_mutex_unlock(&p->lock);
	free(s);
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
	if (cur->last || cur->ended) {
		p->finished = 1;
		return 0;
	}
	next = wait_next(p, cur);
	wait_done(p, next);
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
	struct segment *cur = p->cur, *next = cur->next;

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
		pthread_mutex_lock(&p->lock);
		while (!p->head)
			pthread_cond_wait(&p->changed, &p->lock);
		p->cur = p->head;
		pthread_mutex_unlock(&p->lock);
		wait_done(p, p->cur);
		p->pos = 0;
		if (plan_segment(p, err) < 0)
			return -1;
	}
	while (p->pos >= p->until) {
		int rc = advance(p, err);

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

	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	pthread_cond_broadcast(&p->changed);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nworkers; i++) {
		struct worker *w = &p->workers[i];

		if (w->started)
			pthread_join(w->thread, NULL);
		jf_insn_cache_free(w->insns);
		jf_codemap_free(w->map);
	}
	free(p->workers);
	while (p->head) {
		struct segment *s = p->head;

		p->head = s->next;
		jf_flow_buffer_fini(&s->flows);
		free(s);
	}
	while (p->nspare)
		jf_flow_buffer_fini(&p->spare[--p->nspare]);
	free(p->spare);
	jf_decoder_free(p->serial);
	jf_insn_cache_free(p->serial_insns);
	jf_pt_psb_finder_free(p->psbs);
	pthread_cond_destroy(&p->changed);
	pthread_mutex_destroy(&p->lock);
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
		if (!w->insns)
			return jf_fail(err, "out of memory");
		if (pthread_create(&w->thread, NULL, work, w) != 0)
			return jf_fail(err, "cannot start decoding thread %d of %d", i + 1,
				       p->nworkers);
		w->started = 1;
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
		return jf_pt_decoder_new(cfg, map, err);
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
	p->max_alive = (size_t)opt->jobs + 2;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->changed, NULL);
	p->psbs = jf_pt_psb_finder_new(cfg->trace, cfg->size);
	p->serial_insns = jf_insn_cache_new(map);
	p->spare = calloc(p->max_alive, sizeof(*p->spare));
	if (!p->psbs || !p->serial_insns || !p->spare) {
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
