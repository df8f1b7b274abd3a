/* Intel PT decoded by worker threads over PSB segments, flows delivered in trace order
 * (see jitflow/pt_parallel.h for how the seams are made exact).
 *
 * The calling thread is the consumer: it takes the segments in order, joins each to the
 * next, and hands out their flows. Workers take the next segment not yet decoded (cutting
 * it off the trace when none is waiting); at most jobs + 2 segments exist at a time, so
 * memory is bounded by the segment size, not the trace. */
#include "jitflow/pt_parallel.h"
#include "jitflow/mapped_file.h"
#include "decoder_internal.h"
#include "flow_buffer.h"
#include "jitflow/pt_fast.h"
#include "pt_fast_watch.h"
#include "pt_seg_queue.h"
#include "pt_wrap.h"

#include <intel-pt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct segment {
	struct jf_seg seg;      /* where it lies (first: pt_seg_queue.h) */
	struct jf_flow_buffer flows;
	size_t seam_pos;        /* where in flows the first record past end is (or len) */
	int ended;              /* its decoder reached the end of the trace */
	int failed;             /* its decoder failed (message in err) */
	int return_before;      /* its decoder met a compressed return without a call */
	struct jf_error err;
	/* With opt.parts, decoded by a worker (decode_part): its part holds the flows from
	 * flows' part_from up to part_to (what they count: stats), and flows keeps only the
	 * records seams compare: the first nhead (up to the first block and the first past
	 * start + overlap) and those from seam_pos on; the ndropped between are not kept. */
	void *part;
	size_t part_from, part_to;
	struct jf_decode_stats stats;
	uint64_t nhead, ndropped;
};

struct worker {
	struct pt_parallel *p;
	struct jf_codemap *map; /* a copy: code maps and libipt images are per thread */
	struct jf_insn_cache *insns;
	struct jf_pt_fast_caches caches; /* with opt.fast: the fast decoders' (over map) */
	int ready;              /* map, insns and caches made (worker_ready) */
};

enum { RELEASE_STEP = 4 << 20, RELEASE_LAG = 1 << 20 };

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
	int serial_from_start;          /* ... from the trace's start (serial_decoder_from_start) */
	uint64_t handed;                /* records handed out so far */
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

/* A compressed return whose call the decoder has not seen. Hardware compresses only
 * returns to calls made since the last PSB (Intel SDM, "Indirect Transfer Compression for
 * Returns"), but a damaged or hand-made trace may not: a decoder started at the segment's
 * PSB then has no call where the one-thread decoder has it from before that PSB, and
 * reports an error that decoder does not. Such a segment does not join (find_join). */
static void note_return_before(struct segment *s, const struct jf_flow *f)
{
	if (f->kind == JF_FLOW_ERROR && f->u.error.code == -pte_retstack_empty)
		s->return_before = 1;
}

/* Flow f of s, kept: 1 if it lies past s's stop offset (s is decoded), -1 if out of
 * memory, else 0. */
static int keep_flow(struct segment *s, const struct jf_flow *f, uint64_t stop)
{
	if (f->offset >= s->seg.end && s->seam_pos == SIZE_MAX)
		s->seam_pos = s->flows.len;
	note_return_before(s, f);
	if (jf_flow_buffer_push(&s->flows, f) < 0)
		return jf_fail(&s->err, "out of memory");
	return f->offset >= stop;
}

/* How s's decode ended: past its stop offset (kept > 0: see keep_flow), at the end of the
 * trace (rc 0), or failed (rc < 0, or kept < 0 with rc > 0). */
static void decoded(struct segment *s, int rc, int kept)
{
	if (kept > 0)
		return;
	if (rc == 0)
		s->ended = 1;
	else
		s->failed = 1;
}

/* Decode flows with dec into s until one lies past its stop offset or the trace ends;
 * dec goes on from there (the calling thread's decoder, over the next segment too). */
static void decode_into(struct pt_parallel *p, struct segment *s, struct jf_decoder *dec)
{
	uint64_t stop = stop_offset(p, s);
	struct jf_flow f;
	int rc, kept = 0;

	s->seam_pos = SIZE_MAX;
	while (!kept && (rc = jf_decoder_next(dec, &f, &s->err)) > 0)
		kept = keep_flow(s, &f, stop);
	decoded(s, rc, kept);
}

/* The same on a worker, whose decoder ends with its segment: read in batches (the fast
 * decoder's: a stretch between PSBs where it lies), not a copy and a call per record. */
static void decode_batches_into(struct pt_parallel *p, struct segment *s,
				struct jf_decoder *dec)
{
	uint64_t stop = stop_offset(p, s);
	const struct jf_flow *flows;
	size_t n, i;
	int rc, kept = 0;

	s->seam_pos = SIZE_MAX;
	while (!kept && (rc = jf_decoder_next_batch_uncounted(dec, &flows, &n, &s->err)) > 0)
		for (i = 0; i < n && !kept; i++)
			kept = keep_flow(s, &flows[i], stop);
	decoded(s, rc, kept);
}

enum part_phase { BEFORE_PART, IN_PART, AFTER_PART };

/* The records from f on that lie in s's part, before its end (f does), counted and given
 * to s's part: in one call where the part takes runs (part_flows). Returns how many, 0
 * if out of memory. */
static size_t give_middle_run(struct segment *s, const struct jf_pt_part_ops *ops,
			      const struct jf_flow *f, size_t n)
{
	size_t run, i;

	for (run = 0; run < n && f[run].offset < s->seg.end; run++) {
		note_return_before(s, &f[run]);
		jf_decode_stats_count(&s->stats, &f[run]);
	}
	if (ops->part_flows)
		return ops->part_flows(s->part, f, run) < 0 ? 0 : run;
	for (i = 0; i < run; i++)
		if (ops->part_flow(s->part, &f[i]) < 0)
			return 0;
	return run;
}

/* With opt.parts: decode s with dec as decode_into does, giving the flows from s's first
 * block (the first segment: its first record) up to its first block past its end to a
 * new part (map: the worker's), and keeping in s->flows only what seams compare. */
static void decode_part(struct pt_parallel *p, struct segment *s, struct jf_decoder *dec,
			struct jf_codemap *map)
{
	const struct jf_pt_part_ops *ops = p->opt.parts;
	uint64_t stop = stop_offset(p, s), head_until = s->seg.start + p->opt.overlap;
	enum part_phase phase = s->seg.first ? IN_PART : BEFORE_PART;
	int in_head = 1, middle = 0, rc;
	const struct jf_flow *flows;
	size_t n, i;

	s->seam_pos = SIZE_MAX;
	s->part = ops->part_new(p->opt.parts_ctx, map);
	if (!s->part) {
		jf_fail(&s->err, "out of memory");
		s->failed = 1;
		return;
	}
	while ((rc = jf_decoder_next_batch_uncounted(dec, &flows, &n, &s->err)) > 0) {
		for (i = 0; i < n; i++) {
			const struct jf_flow *f = &flows[i];
			int keep = in_head;

			/* Most records: in the part, neither kept nor near a seam. */
			if (middle && f->offset < s->seg.end) {
				size_t run = give_middle_run(s, ops, flows + i, n - i);

				if (!run) {
					rc = jf_fail(&s->err, "out of memory");
					goto out;
				}
				s->ndropped += run;
				i += run - 1;
				continue;
			}
			note_return_before(s, f);

			if (f->offset >= s->seg.end && s->seam_pos == SIZE_MAX)
				s->seam_pos = s->flows.len;
			keep |= s->seam_pos != SIZE_MAX;
			if (f->kind == JF_FLOW_BLOCK && phase == BEFORE_PART) {
				/* The previous segment's flows hand over here if its seam joins. */
				phase = IN_PART;
				s->part_from = s->flows.len;
			}
			/* (The same block where the segment has none before its end, tracing
			 * off or lost all through it: its part is empty, that block the next
			 * segment's first.) */
			if (f->kind == JF_FLOW_BLOCK && phase == IN_PART &&
			    s->seam_pos != SIZE_MAX && f->offset >= s->seg.end) {
				/* Where find_join hands over to the next segment when it joins. */
				phase = AFTER_PART;
				s->part_to = s->flows.len;
			}
			if (phase == IN_PART) {
				jf_decode_stats_count(&s->stats, f);
				if (ops->part_flow(s->part, f) < 0) {
					rc = jf_fail(&s->err, "out of memory");
					goto out;
				}
			}
			if (f->offset >= head_until && phase != BEFORE_PART)
				in_head = 0;
			middle = phase == IN_PART && !in_head && s->seam_pos == SIZE_MAX;
			if (!keep) {
				s->ndropped++;
			} else if (jf_flow_buffer_push(&s->flows, f) < 0) {
				rc = jf_fail(&s->err, "out of memory");
				goto out;
			} else if (!s->ndropped) {
				s->nhead++;
			}
			if (f->offset >= stop)
				goto out;
		}
	}
out:
	if (phase != AFTER_PART)
		s->part_to = s->flows.len;
	if (phase == BEFORE_PART)
		s->part_from = s->flows.len;
	if (rc == 0)
		s->ended = 1;
	else if (rc < 0)
		s->failed = 1;
}

/* A decoder from the trace's start (s NULL) or from segment s's first PSB. */
static struct jf_decoder *segment_decoder(struct pt_parallel *p, const struct segment *s,
					  struct jf_codemap *map, struct jf_insn_cache *insns,
					  const struct jf_pt_fast_caches *caches,
					  struct jf_error *err)
{
	struct jf_pt_config cfg = p->cfg;

	cfg.release_consumed = 0;       /* the consumer releases what all have passed */
	cfg.insns = insns;
	if (s && !s->seg.first) {
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

static void drop_part(struct pt_parallel *p, struct segment *s)
{
	if (s->part)
		p->opt.parts->part_free(s->part);
	s->part = NULL;
	memset(&s->stats, 0, sizeof(s->stats));
}

static void recycle_segment(void *ctx, struct jf_seg *b)
{
	struct pt_parallel *p = ctx;
	struct segment *s = seg_of(b);

	drop_part(p, s);

	jf_flow_buffer_clear(&s->flows);
	if (p->nspare < p->max_spare)
		p->spare[p->nspare++] = s->flows;
	else
		jf_flow_buffer_fini(&s->flows);
	free(s);
}

/* w's code map and caches, made on the worker's own thread before its first segment: the
 * calling thread would otherwise make every worker's (a copy of the map, caches whose
 * memory is cleared and faulted in) before any worker starts, at 16 threads 6 M
 * instructions that no other thread can share (callgrind, bench_pt_latency). The map does
 * not change while decoding, so threads may copy it at the same time (as
 * pt_parallel_count.c's workers do). 0, or -1 with err. */
static int worker_ready(struct worker *w, struct jf_error *err)
{
	if (w->ready)
		return 0;
	if (!w->map && !(w->map = jf_codemap_clone(w->p->map, err)))
		return -1;
	if (!w->insns && !(w->insns = jf_insn_cache_new(w->map)))
		return jf_fail(err, "out of memory");
	if (w->p->opt.fast && jf_pt_fast_block_caches_init(&w->caches, w->map) < 0) {
		jf_pt_fast_caches_fini(&w->caches); /* what it made before it failed */
		return jf_fail(err, "out of memory");
	}
	w->ready = 1;
	return 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pt_parallel *p = w->p;
	struct jf_seg *b;

	while ((b = jf_seg_queue_next_job(&p->q))) {
		struct segment *s = seg_of(b);
		struct jf_decoder *dec =
			worker_ready(w, &s->err) < 0
				? NULL
				: segment_decoder(p, s, w->map, w->insns, &w->caches, &s->err);

		if (dec && p->opt.parts)
			decode_part(p, s, dec, w->map);
		else if (dec)
			decode_batches_into(p, s, dec);
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
	return n >= JF_JOIN_MIN_RECORDS;
}

/* Where f's flows hand over to g's: f's up to *fa, then g's from *gb. 0 if they do not
 * agree past the seam. */
static int find_join(const struct segment *f, const struct segment *g, size_t *fa, size_t *gb)
{
	size_t a, b = 0;

	if (f->failed || g->failed || f->ended || g->return_before)
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
	uint64_t n;
	int rc = 0;

	if (!want)
		return jf_fail(err, "out of memory");
	jf_decoder_free(p->serial);
	p->serial = segment_decoder(p, cur, p->map, p->serial_insns, &p->serial_caches, err);
	if (!p->serial) {
		free(want);
		return -1;
	}
	for (n = 0; n < cur->flows.count + cur->ndropped; n++) {
		rc = jf_decoder_next_uncounted(p->serial, &f, err);
		if (rc < 0)
			break;
		/* Records a worker did not keep (decode_part): only their number is known. */
		if (rc > 0 && n >= cur->nhead && n < cur->nhead + cur->ndropped)
			continue;
		pos = jf_flow_buffer_get(&cur->flows, pos, want);
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
	p->serial_from_start = 0;
	return rc < 0 ? -1 : 0;
}

/* The consumer's own decoder, positioned right after the records handed out so far (cur's
 * last one), made by decoding from the trace's start: the next segment met a compressed
 * return whose call lies before its PSB, maybe before cur's too, where only a decoder that
 * started before it has the call. Rare (see note_return_before), so not made faster. */
static int serial_decoder_from_start(struct pt_parallel *p, struct segment *cur,
				     struct jf_error *err)
{
	struct jf_flow f, *want;
	size_t pos, last = 0;
	uint64_t n;
	int rc = 1;

	jf_decoder_free(p->serial);
	p->serial = segment_decoder(p, NULL, p->map, p->serial_insns, &p->serial_caches, err);
	if (!p->serial)
		return -1;
	p->serial_after = cur;
	p->serial_from_start = 1;
	for (n = 0; n < p->handed && rc > 0; n++)
		rc = jf_decoder_next_uncounted(p->serial, &f, err);
	if (rc <= 0)
		return rc < 0 ? -1 : jf_fail(err, "parallel decode: decoded from the start, "
					       "the trace ends before record %llu",
					       (unsigned long long)p->handed);
	if (!p->handed || !p->until)
		return 0;
	/* The last record skipped must be the last one handed out. */
	for (pos = 0; pos < p->until;
	     pos += jf_flow_record_size(jf_flow_buffer_at(&cur->flows, pos)))
		last = pos;
	want = malloc(sizeof(*want));
	if (!want)
		return jf_fail(err, "out of memory");
	jf_flow_buffer_get(&cur->flows, last, want);
	if (memcmp(&f, want, jf_flow_record_size(want)) != 0)
		rc = jf_fail(err, "parallel decode: decoded from the start, record %llu is not "
			     "the one handed out at trace offset 0x%llx",
			     (unsigned long long)p->handed, (unsigned long long)want->offset);
	free(want);
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
		if (next->return_before) {
			if ((p->serial_after != cur || !p->serial_from_start) &&
			    serial_decoder_from_start(p, cur, err) < 0)
				return -1;
		} else if (p->serial_after != cur && serial_decoder_at(p, cur, err) < 0) {
			return -1;
		}
		p->report->serial++;
		jf_flow_buffer_clear(&next->flows);
		next->ended = next->failed = next->return_before = 0;
		/* Its part was made from other flows; all of its records are kept now. */
		drop_part(p, next);
		next->ndropped = 0;
		decode_into(p, next, p->serial);
		p->serial_after = next;
		p->pos = 0;
	}
	drop_head(p);
	p->cur = next;
	return plan_segment(p, err) < 0 ? -1 : 1;
}

static int start(struct pt_parallel *p, struct jf_error *err)
{
	p->cur = seg_of(jf_seg_queue_first(&p->q));
	jf_seg_queue_wait_done(&p->q, &p->cur->seg);
	p->pos = 0;
	return plan_segment(p, err);
}

static int par_next(void *self, struct jf_flow *f, struct jf_error *err)
{
	struct pt_parallel *p = self;

	if (p->opt.parts)
		return jf_fail(err, "parallel decode into parts: use jf_pt_parallel_run");
	if (!p->cur && start(p, err) < 0)
		return -1;
	while (p->pos >= p->until) {
		int rc = advance(p, err);

		if (rc == 0)
			jf_seg_queue_join(&p->q); /* the report is final */
		if (rc <= 0)
			return rc;
	}
	p->pos = jf_flow_buffer_get(&p->cur->flows, p->pos, f);
	p->handed++;
	return 1;
}

static void par_free(void *self)
{
	struct pt_parallel *p = self;
	int i;

	/* Segments still alive are recycled (their parts freed) before the code maps that
	 * their parts were made with. */
	jf_seg_queue_fini(&p->q);
	for (i = 0; i < p->nworkers; i++) {
		struct worker *w = &p->workers[i];

		jf_insn_cache_free(w->insns);
		jf_pt_fast_caches_fini(&w->caches);
		jf_codemap_free(w->map);
	}
	free(p->workers);
	while (p->nspare)
		jf_flow_buffer_fini(&p->spare[--p->nspare]);
	free(p->spare);
	jf_decoder_free(p->serial);
	jf_insn_cache_free(p->serial_insns);
	jf_pt_fast_caches_fini(&p->serial_caches);
	free(p);
}

static const struct jf_decoder_ops par_ops = { par_next, par_free };

/* The calling thread's part (after a seam that did not join) is taken. */
static int take_serial_part(struct pt_parallel *p, void **part, uint64_t reached,
			    struct jf_error *err)
{
	void *taken = *part;

	*part = NULL;
	return taken ? p->opt.parts->part_take(p->opt.parts_ctx, taken, reached, err) : 0;
}

/* Take cur's flows from pos up to until: its worker's part if it holds them (then the
 * flows after it up to until, past a seam that joined further on or not at all), or the
 * calling thread's part. */
static int take_segment(struct pt_parallel *p, void **serial_part, struct jf_decode_stats *st,
			struct jf_error *err)
{
	const struct jf_pt_part_ops *ops = p->opt.parts;
	struct segment *cur = p->cur;
	size_t pos = p->pos;
	struct jf_flow f;

	if (cur->part) {
		void *part = cur->part;

		if (pos != cur->part_from || cur->part_to > p->until)
			return jf_fail(err, "parallel decode: segment at trace offset 0x%llx: its "
				       "part does not start where its flows are taken",
				       (unsigned long long)cur->seg.start);
		if (take_serial_part(p, serial_part, cur->seg.start, err) < 0)
			return -1;
		cur->part = NULL;
		jf_decode_stats_add(st, &cur->stats);
		p->handed += cur->stats.blocks + cur->stats.events + cur->stats.errors;
		if (ops->part_take(p->opt.parts_ctx, part, cur->seg.end, err) < 0)
			return -1;
		pos = cur->part_to;
	}
	while (pos < p->until) {
		if (!*serial_part && !(*serial_part = ops->part_new(p->opt.parts_ctx, p->map)))
			return jf_fail(err, "out of memory");
		pos = jf_flow_buffer_get(&cur->flows, pos, &f);
		p->handed++;
		jf_decode_stats_count(st, &f);
		if (ops->part_flow(*serial_part, &f) < 0)
			return jf_fail(err, "out of memory");
	}
	p->pos = pos;
	return 0;
}

int jf_pt_parallel_run(struct jf_decoder *dec, struct jf_error *err)
{
	struct pt_parallel *p = jf_decoder_backend(dec, &par_ops);
	void *serial_part = NULL;
	int rc;

	if (!p)
		return 1;
	if (!p->opt.parts)
		return jf_fail(err, "parallel decode: no parts to run into");
	rc = start(p, err);
	while (rc >= 0) {
		rc = take_segment(p, &serial_part, jf_decoder_stats_mut(dec), err);
		if (rc >= 0)
			rc = advance(p, err);
		if (rc == 0)
			break;
	}
	if (rc == 0)
		rc = take_serial_part(p, &serial_part, p->cfg.size, err);
	if (serial_part)
		p->opt.parts->part_free(serial_part);
	jf_seg_queue_join(&p->q); /* the report is final */
	return rc < 0 ? -1 : 0;
}

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
	uint64_t segment_size = opt->segment_size ? opt->segment_size :
				opt->parts ? JF_PT_PARTS_SEGMENT_DEFAULT : JF_PT_SEGMENT_DEFAULT;
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
