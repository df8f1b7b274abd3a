/* A perf.data Intel PT session: AUX queues decoded buffer by buffer and merged with the
 * sideband in time order (a k-way merge on each source's next key; for a queue, the time
 * its decoder has reached: see session_next).
 *
 * Streaming: a queue keeps only a cursor to its next AUXTRACE record and the decoder of its
 * current buffer, which runs over the payload in the file mapping. The sideband keeps the
 * records of about two perf rounds (see perf_session_sideband.c).
 *
 * Buffer boundaries: perf cuts AUX data wherever the ring buffer's head was, even inside a
 * packet, and libipt needs one contiguous trace. A queue's consecutive buffers (aux offsets
 * that follow on) are therefore decoded as one stream in segments that meet at PSBs: each
 * buffer's own segment runs from its first PSB to the end of its last PSB+ (so that
 * libipt follows the flow up to that PSB's IP), then a small "stitch" copy runs from that
 * last PSB through the cut (and through following buffers without any PSB) to the end of
 * the next buffer's first PSB+, bounded by STITCH_MAX; the next buffer's segment starts at
 * that PSB. Nothing is lost at a cut: the real captures cut every 1000 bytes decode to the
 * reference's instructions. What remains: bytes before the first PSB of a queue (or after
 * a gap in the aux offsets) cannot be decoded and are reported as JF_LOST_NO_SYNC; an
 * error inside the PSB+ where two segments meet is reported once, but the segment after
 * it starts afresh at the next PSB (as a continuous decoder would after the error), and
 * when that PSB+ is itself corrupt its error may be named differently (no prior state).
 *
 * Known limit: a queue's code map is chosen (codemap_for_pid) when a buffer starts; a
 * context switch to another process inside a buffer (per-CPU tracing) is reported as a
 * JF_FLOW_CONTEXT record but the buffer goes on decoding over the first process's map. */
#include "decoder_internal.h"
#include "perf_session_internal.h"

#include <stdlib.h>
#include <string.h>

#include "jitflow/insn.h"
#include "jitflow/pt_fast.h"

/* The largest stitch: the bytes from a buffer's last PSB to the next buffer's first PSB+.
 * PSBs come every few KiB; a larger gap means a damaged trace, and is reported as lost. */
enum { STITCH_MAX = 16 << 20 };

/* The prescan releases the pages it walked over every this many bytes. */
enum { PRESCAN_RELEASE_STEP = 8 << 20 };

/* Decoded AUX data is given back to the kernel every this many bytes of the file. */
enum { RELEASE_STEP = 4 << 20 };

struct queue *jf_session_queue_for(struct session *s, int32_t tid, uint32_t cpu, int has_cpu)
{
	size_t i;

	for (i = 0; i < s->nq; i++) {
		struct queue *q = &s->q[i];

		if (s->pt.per_cpu_mmaps ? (has_cpu && q->cpu == cpu)
					: (tid >= 0 && q->tid == tid))
			return q;
	}
	return NULL;
}

static struct queue *queue_by_idx(struct session *s, uint32_t idx)
{
	size_t i;

	for (i = 0; i < s->nq; i++)
		if (s->q[i].idx == idx)
			return &s->q[i];
	return NULL;
}

/* One pass over the record headers (payloads skipped): the intel_pt AUXTRACE_INFO and the
 * queues with the position of their first buffer. A framing error ends the pass; the
 * sideband stream meets it again at the same place and ends the decode there. */
static int prescan(struct session *s, const char *path, struct jf_error *err)
{
	struct jf_perf_cursor cur;
	struct jf_perf_record rec;
	uint64_t released;
	int have_info = 0;

	jf_perf_data_begin(s->data, &cur);
	released = cur.pos;
	for (;;) {
		struct jf_perf_cursor at = cur;
		int rc = jf_perf_data_next_header(s->data, &cur, &rec, err);

		if (rc <= 0)
			break;
		/* Reading a header maps the pages around it: keep that bounded. */
		if (cur.pos - released > PRESCAN_RELEASE_STEP) {
			jf_perf_data_release(s->data, released, at.pos - released);
			released = at.pos;
		}
		if (jf_perf_record_maps_code(rec.type))
			s->map_records_left++;
		if (rec.type == JF_PERF_RECORD_AUXTRACE_INFO && !have_info) {
			struct jf_perf_cursor again = at;

			if (jf_perf_data_next(s->data, &again, &rec, err) < 0 ||
			    jf_perf_intel_pt_parse(s->data, &rec, &s->pt, err) < 0)
				return -1;
			have_info = 1;
		} else if (rec.type == JF_PERF_RECORD_AUXTRACE &&
			   !queue_by_idx(s, rec.u.auxtrace.idx)) {
			struct queue *n = realloc(s->q, (s->nq + 1) * sizeof(*n));

			if (!n)
				return jf_fail(err, "%s: out of memory", path);
			s->q = n;
			n = &s->q[s->nq++];
			memset(n, 0, sizeof(*n));
			n->idx = rec.u.auxtrace.idx;
			n->cpu = rec.u.auxtrace.cpu;
			n->tid = (int32_t)rec.u.auxtrace.tid;
			n->pid = -1;
			n->scan = at;
			n->state = Q_IDLE;
		}
	}
	if (!have_info) {
		uint64_t begin, end;

		jf_perf_data_range(s->data, &begin, &end);
		if (begin == end)
			return jf_fail(err,
				       "%s: offset %llu: no records: the data section is empty (a "
				       "recording cut or never finished: its recorder stopped "
				       "before writing any)",
				       path, (unsigned long long)end);
		return jf_fail(err,
			       "%s: no AUXTRACE_INFO record; expected an Intel PT recording "
			       "(perf record -e intel_pt//)",
			       path);
	}
	/* Per-CPU queues are sources by CPU number, per-thread ones by queue index. */
	{
		size_t i;

		for (i = 0; i < s->nq; i++)
			s->q[i].source = s->pt.per_cpu_mmaps ? s->q[i].cpu : s->q[i].idx;
	}
	return 0;
}

static uint64_t tsc_key(const struct session *s, uint64_t tsc)
{
	return jf_tsc_to_ns(&s->pt.conv, tsc);
}

static void lost_flow(struct queue *q, uint64_t offset, uint64_t bytes, uint32_t reason,
		      const struct session *s)
{
	memset(&q->peek, 0, sizeof(q->peek));
	q->peek.kind = JF_FLOW_LOST;
	q->peek.flags = JF_FLOW_IP_SUPPRESSED;
	q->peek.source = q->source;
	q->peek.offset = offset;
	q->peek.u.lost.bytes = bytes;
	q->peek.u.lost.reason = reason;
	if (!s->timeless) {
		q->peek.time = q->key;
		q->peek.flags |= JF_FLOW_HAS_TIME;
	}
	q->have_peek = 1;
}

/* The queue's next AUXTRACE record after its scan cursor: 1 found, 0 none. */
static int scan_next(struct session *s, struct queue *q, struct jf_perf_record *rec)
{
	struct jf_error err;

	for (;;) {
		struct jf_perf_cursor at = q->scan;
		int rc = jf_perf_data_next_header(s->data, &q->scan, rec, &err);

		if (rc < 0 && q->scan.pos == at.pos)
			return 0; /* broken framing: the sideband stream reports it */
		if (rc == 0)
			return 0;
		if (rc > 0 && rec->type == JF_PERF_RECORD_AUXTRACE &&
		    rec->u.auxtrace.idx == q->idx)
			return 1;
	}
}

/* Q_IDLE: the queue's next buffer (looked ahead already, or found now) and the key its
 * data starts at. */
static int locate_buffer(struct session *s, struct queue *q)
{
	uint64_t tsc = 0;
	int have_tsc;

	if (q->have_next) {
		q->buf = q->next;
		q->buf_skip = q->next_skip;
		q->buf_lost_from = q->next_lost_from;
		q->have_next = 0;
	} else if (scan_next(s, q, &q->buf)) {
		q->buf_skip = q->buf_lost_from = 0;
	} else {
		q->state = Q_DONE;
		return 0;
	}
	q->next_skip = q->next_lost_from = 0;
	q->state = Q_LOCATED;
	if (s->timeless) {
		q->key = q->buf.offset;
	} else {
		jf_psb_first(q->buf.u.auxtrace.payload, q->buf.u.auxtrace.size, &tsc, &have_tsc);
		if (have_tsc && tsc_key(s, tsc) > q->key)
			q->key = tsc_key(s, tsc);
	}
	return 0;
}

/* The instruction cache for map, shared by the decoders of every buffer over it: a
 * decoder's own cache would start empty (and open capstone again) at each 64 KiB buffer.
 * NULL when out of memory: the decoder then makes its own. */
static struct jf_insn_cache *insns_for(struct session *s, struct jf_codemap *map)
{
	struct map_insns *n;
	size_t i;

	for (i = 0; i < s->ninsns; i++)
		if (s->insns[i].map == map)
			return s->insns[i].cache;
	n = realloc(s->insns, (s->ninsns + 1) * sizeof(*n));
	if (!n)
		return NULL;
	s->insns = n;
	n[s->ninsns].map = map;
	n[s->ninsns].cache = jf_insn_cache_new(map);
	if (!n[s->ninsns].cache)
		return NULL;
	return n[s->ninsns++].cache;
}

/* The fast path's caches over map, made on first use (NULL: out of memory): for counting
 * or for returned blocks (whose blocks end at direct jumps), as the session decodes. */
static const struct jf_pt_fast_caches *fast_caches_for(struct session *s, struct jf_codemap *map,
						       int counting)
{
	struct map_fast *n;
	size_t i;

	for (i = 0; i < s->nfast; i++)
		if (s->fast[i].map == map && s->fast[i].counting == counting)
			return &s->fast[i].caches;
	n = realloc(s->fast, (s->nfast + 1) * sizeof(*n));
	if (!n)
		return NULL;
	s->fast = n;
	n[s->nfast].map = map;
	n[s->nfast].counting = counting;
	if ((counting ? jf_pt_fast_caches_init(&n[s->nfast].caches, map)
		      : jf_pt_fast_block_caches_init(&n[s->nfast].caches, map)) < 0)
		return NULL;
	return &n[s->nfast++].caches;
}

/* Whether no code bytes change from here on (fast_when_settled): nothing in the sideband
 * still to come may change a code map, and the caller's code changes are all applied. */
static int code_settled(const struct session *s)
{
	return s->map_records_left == 0 &&
	       (!s->hooks.code_settled || s->hooks.code_settled(s->hooks.ctx));
}

/* How a buffer over map is decoded (fast_when_settled): 0 by libipt's block decoder, 1 by
 * the fast path, 2 by the fast path's counter (count_when_fast). The fast path decodes a
 * PSB period ahead of what it returns: exact where no code it read changes meanwhile,
 * which holds when nothing changes any more (code_settled), and where the map tells where
 * code will still change once the sideband has no map record left (the fast path then
 * leaves that code to the block decoder: jitflow/codemap.h). The counter returns no
 * blocks, so the zone records placed at a thread's instruction count would apply late:
 * it waits for the code to settle; until then stat counts the blocks returned where the
 * zone filter's count gate lets it (perf_session_count.c). */
static int decode_how(const struct session *s, struct jf_codemap *map)
{
	if (!s->opts.fast_when_settled)
		return 0;
	if (code_settled(s))
		return s->opts.count_when_fast ? 2 : 1;
	return s->map_records_left == 0 && jf_codemap_tells_changes(map);
}

/* A decoder over [from, to) of bytes at file offset file_off (base 0 for the stitch). */
static int new_decoder(struct session *s, struct queue *q, const uint8_t *bytes,
		       uint64_t size, uint64_t file_off, int release, struct jf_error *err)
{
	struct jf_pt_config cfg;
	struct jf_codemap *map = NULL;
	int how;

	memset(&cfg, 0, sizeof(cfg));
	jf_perf_intel_pt_config(&s->pt, &cfg);
	if (s->opts.cpu_override) {
		cfg.cpu_family = s->opts.cpu_family;
		cfg.cpu_model = s->opts.cpu_model;
		cfg.cpu_stepping = s->opts.cpu_stepping;
	}
	cfg.trace = bytes;
	cfg.size = (size_t)size;
	cfg.base_offset = file_off;
	cfg.end_on_call = s->opts.end_on_call;
	/* Where the fast path returns blocks, every buffer's block decoder ends blocks at
	 * jumps as its do: libipt's block cache belongs to the code's sections, shared by all
	 * decoders of the map, and entries made without end_on_jump walk through jumps for a
	 * decoder with it (a fast decoder's hand-over then returned other blocks than those
	 * it had, and lost a stretch skipping them by count). */
	cfg.end_on_jump = s->opts.end_on_jump ||
			  (s->opts.fast_when_settled && !s->opts.count_when_fast);
	cfg.source = q->source;
	cfg.release_consumed = release; /* resident memory stays flat over long files */
	if (s->hooks.codemap_for_pid)
		map = s->hooks.codemap_for_pid(s->hooks.ctx, q->pid);
	if (!map)
		map = s->empty_map;
	/* (Counting too where the fast path returns blocks while code changes.) */
	cfg.end_on_jump |= s->opts.fast_when_settled && jf_codemap_tells_changes(map);
	cfg.insns = insns_for(s, map);
	cfg.join_cache_splits = s->opts.join_cache_splits;
	cfg.decode_ahead_changing = s->opts.decode_ahead_changing;
	how = decode_how(s, map);
	q->dec_counts = how == 2;
	if (how) {
		const struct jf_pt_fast_caches *caches = fast_caches_for(s, map, how == 2);

		if (!caches) {
			q->dec = NULL;
		} else if (how == 2) {
			q->dec = jf_pt_fast_counter_cached(&cfg, map, caches, err);
		} else {
			cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
			q->dec = jf_pt_fast_decoder_cached(&cfg, map, caches, err);
		}
		if (!caches)
			jf_fail(err, "out of memory");
		s->report.fast_buffers += q->dec != NULL;
		s->report.fast_bytes += q->dec ? size : 0;
	} else {
		q->dec = jf_pt_decoder_new(&cfg, map, err);
	}
	s->report.buffers++;
	s->report.decoded_bytes += size;
	if (!q->dec)
		return jf_fail_prefix(err, "%s: offset %llu: AUXTRACE buffer: ",
				      jf_perf_data_path(s->data), (unsigned long long)q->buf.offset);
	return 0;
}

/* The segment's decoder is done: what the fast path did there, and the blocks a counting
 * decoder counted without returning them (pull returns records uncounted: the session's
 * own statistics count them, these are not among them). */
static void finish_decoder(struct session *s, struct queue *q)
{
	struct jf_pt_fast_report r;

	jf_pt_fast_counter_report(q->dec, &r);
	if (r.is_fast) {
		s->report.fast_path_bytes += r.fast_bytes;
		s->report.hand_overs += r.hand_overs;
		s->report.resumes += r.resumes;
		s->report.resyncs += r.resyncs;
		s->report.changing_stretches += r.changing_stretches;
		s->report.rollbacks += r.rollbacks;
		s->report.rollback_fallbacks += r.rollback_fallbacks;
		if (q->dec_counts)
			jf_decode_stats_add(jf_decoder_stats_mut(s->self), jf_decoder_stats(q->dec));
	}
	jf_decoder_free(q->dec);
	q->dec = NULL;
}

/* A buffer is decoded: drop the file's pages behind it (see release_from), in steps of
 * RELEASE_STEP. Each release is an madvise and a TLB shootdown: per 64 KiB AUX buffer they
 * cost a few percent of the decode, per few MiB nothing, and resident memory stays flat. */
static void release_behind(struct session *s, const struct jf_perf_record *buf)
{
	uint64_t end = buf->u.auxtrace.payload_offset + buf->u.auxtrace.size;

	if (end <= s->release_next || end - s->release_next < RELEASE_STEP)
		return;
	jf_perf_data_release(s->data, s->release_from, end - s->release_from);
	s->release_from = s->release_next;
	s->release_next = end;
}

static int add_part(struct queue *q, const uint8_t *bytes, uint64_t size, uint64_t file_off)
{
	if (q->nparts == q->cap_parts) {
		size_t cap = q->cap_parts ? q->cap_parts * 2 : 4;
		struct stitch_part *p = realloc(q->parts, cap * sizeof(*p));

		if (!p)
			return -1;
		q->parts = p;
		q->cap_parts = cap;
	}
	q->parts[q->nparts].bytes = bytes;
	q->parts[q->nparts].size = size;
	q->parts[q->nparts].file_off = file_off;
	q->nparts++;
	return 0;
}

/* Whether next's AUX data continues the buffer at prev_off (prev_size bytes at prev). perf
 * pads each AUXTRACE payload with zeros to a multiple of 8 bytes while aux offsets count
 * the data alone, so the next offset may fall up to 7 bytes short of the payload's end;
 * *pad is how many padding bytes end the previous payload. */
static int follows_on(uint64_t prev_off, uint64_t prev_size, const uint8_t *prev,
		      const struct jf_perf_record *next, uint64_t *pad)
{
	uint64_t end = prev_off + prev_size, off = next->u.auxtrace.offset, i;

	if (off > end || off + 8 <= end || off < prev_off)
		return 0;
	for (i = off - prev_off; i < prev_size; i++) {
		if (prev[i])
			return 0; /* not padding: the buffers overlap (snapshot mode) */
	}
	*pad = end - off;
	return 1;
}

/* Plan the stitch from buf's last PSB into the following buffers of the queue, while
 * their AUX data continues buf's (aux offsets follow on): through buffers without any PSB
 * and up to the end of the first PSB+ of the next buffer that has one (the "target",
 * which then decodes on from that PSB). Bounded by STITCH_MAX; a buffer that does not fit
 * is left to decode (or be reported lost) on its own. Sets the end of buf's own segment
 * (*end). */
static void plan_stitch(struct session *s, struct queue *q, uint64_t first, uint64_t *end)
{
	const struct jf_perf_record *b = &q->buf;
	const uint8_t *p = b->u.auxtrace.payload;
	uint64_t size = b->u.auxtrace.size, last, last_end, total, prev_off, prev_size, pad;
	const uint8_t *prev;

	*end = size;
	q->pending_stitch = 0;
	q->nparts = 0;
	q->stitch_target = 0;
	/* The last PSB whose PSB+ is complete in buf: the two segments overlap on it. */
	last = jf_psb_last(p, size);
	if (last < first || last >= size)
		return;
	last_end = jf_psb_header_end(p, size, last);
	while (!last_end && last > first) {
		uint64_t before = jf_psb_last(p, last); /* == last when there is none */

		last = before < last && before >= first ? before : first;
		last_end = jf_psb_header_end(p, size, last);
	}
	if (add_part(q, p + last, size - last, b->u.auxtrace.payload_offset + last) < 0)
		return;
	total = size - last;
	prev_off = b->u.auxtrace.offset;
	prev_size = size;
	prev = p;
	for (;;) {
		const struct jf_perf_record *n = &q->next;
		uint64_t nfirst, nend, tsc;
		int have_tsc;

		if (!q->have_next && scan_next(s, q, &q->next))
			q->have_next = 1;
		if (!q->have_next || !follows_on(prev_off, prev_size, prev, n, &pad))
			break;
		/* The stitch's last part ends the previous payload: drop its padding. */
		q->parts[q->nparts - 1].size -= pad;
		total -= pad;
		nfirst = jf_psb_first(n->u.auxtrace.payload, n->u.auxtrace.size, &tsc, &have_tsc);
		nend = nfirst < n->u.auxtrace.size
			       ? jf_psb_header_end(n->u.auxtrace.payload, n->u.auxtrace.size,
						   nfirst)
			       : 0;
		if (!nend) {
			/* No PSB, or its PSB+ runs past the buffer: take it whole. */
			nfirst = n->u.auxtrace.size;
			nend = n->u.auxtrace.size;
		}
		if (total + nend > STITCH_MAX)
			break;
		if (add_part(q, n->u.auxtrace.payload, nend, n->u.auxtrace.payload_offset) < 0)
			break;
		total += nend;
		if (nfirst < n->u.auxtrace.size) {
			q->stitch_target = 1;
			q->next_skip = q->next_lost_from = nfirst; /* decoded by the stitch */
			q->next_head = nend;
			break;
		}
		/* No PSB in it: the stitch takes it whole, it is not decoded on its own. */
		jf_decoder_stats_mut(s->self)->trace_bytes += n->u.auxtrace.size;
		prev_off = n->u.auxtrace.offset;
		prev_size = n->u.auxtrace.size;
		prev = n->u.auxtrace.payload;
		q->have_next = 0;
	}
	if (q->nparts < 2) {
		q->nparts = 0;
		return; /* nothing follows on: buf decodes to its end */
	}
	/* buf's own segment ends after its last PSB+, so that libipt follows the flow up
	 * to that PSB's IP; the stitch starts again at that PSB. */
	*end = last_end ? last_end : last;
	q->pending_stitch = 1;
	q->tail_from = last;
	q->overlap_from = b->u.auxtrace.payload_offset + last;
}

/* Q_LOCATED, now that the sideband up to the buffer's start is applied: make the decoder
 * over the current process's code, for the part of the buffer that is its own. */
static int start_buffer(struct session *s, struct queue *q, struct jf_error *err)
{
	const struct jf_perf_record *b = &q->buf;
	uint64_t tsc, first, from, end;
	int have_tsc;

	jf_decoder_stats_mut(s->self)->trace_bytes += b->u.auxtrace.size;
	first = jf_psb_first(b->u.auxtrace.payload, b->u.auxtrace.size, &tsc, &have_tsc);
	q->state = Q_IDLE;
	q->in_stitch = 0;
	if (first >= b->u.auxtrace.size) {
		/* No PSB at all: what the stitch from the previous buffer did not cover is
		 * lost. */
		if (b->u.auxtrace.size > q->buf_skip)
			lost_flow(q, b->u.auxtrace.payload_offset + q->buf_skip,
				  b->u.auxtrace.size - q->buf_skip, JF_LOST_NO_SYNC, s);
		return 0;
	}
	if (q->buf_skip > first)
		first = jf_psb_first(b->u.auxtrace.payload + q->buf_skip,
				     b->u.auxtrace.size - q->buf_skip, &tsc, &have_tsc) +
			q->buf_skip;
	if (first >= b->u.auxtrace.size) {
		if (b->u.auxtrace.size > q->buf_lost_from)
			lost_flow(q, b->u.auxtrace.payload_offset + q->buf_lost_from,
				  b->u.auxtrace.size - q->buf_lost_from, JF_LOST_SKIPPED, s);
		return 0;
	}
	plan_stitch(s, q, first, &end);
	q->seg_end = end;
	q->overlap_error = 0;
	/* Bytes before the first PSB: decoded by the stitch from the previous buffer, or
	 * reported by the backend as JF_LOST_NO_SYNC (at file offsets), or skipped after an
	 * error in the stitch (reported here). */
	from = q->buf_skip ? first : 0;
	if (q->buf_lost_from < q->buf_skip)
		lost_flow(q, b->u.auxtrace.payload_offset + q->buf_lost_from,
			  first - q->buf_lost_from, JF_LOST_SKIPPED, s);
	q->continues = q->pending_stitch;
	if (q->pending_stitch && q->tail_from == first) {
		/* A single PSB: the stitch covers everything from it. */
		if (from < first && !(q->buf_lost_from < q->buf_skip))
			lost_flow(q, b->u.auxtrace.payload_offset, first, JF_LOST_NO_SYNC, s);
		q->state = Q_DECODING;
		return 0;
	}
	if (new_decoder(s, q, b->u.auxtrace.payload + from, end - from,
			b->u.auxtrace.payload_offset + from, 1, err) < 0)
		return -1;
	q->state = Q_DECODING;
	return 0;
}

/* The stitch: the planned parts (buf from its last PSB, whole buffers without a PSB, the
 * target's bytes up to the end of its first PSB+) copied into one small buffer, so that
 * libipt decodes across the boundaries as perf's decoder does for consecutive buffers. */
static int start_stitch(struct session *s, struct queue *q, struct jf_error *err)
{
	size_t need = 0, at = 0, i;

	for (i = 0; i < q->nparts; i++)
		need += (size_t)q->parts[i].size;
	if (need > q->stitch_cap) {
		uint8_t *p = realloc(q->stitch, need);

		if (!p)
			return jf_fail(err, "%s: out of memory", jf_perf_data_path(s->data));
		q->stitch = p;
		q->stitch_cap = need;
	}
	for (i = 0; i < q->nparts; i++) {
		memcpy(q->stitch + at, q->parts[i].bytes, (size_t)q->parts[i].size);
		at += (size_t)q->parts[i].size;
		/* Whole buffers without a PSB live only in the stitch from now on. */
		if (i > 0 && (i + 1 < q->nparts || !q->stitch_target))
			jf_perf_data_release(s->data, q->parts[i].file_off, q->parts[i].size);
	}
	q->pending_stitch = 0;
	q->in_stitch = 1;
	q->continues = q->stitch_target; /* the target's own segment follows */
	q->overlap_error = 0;
	q->overlap_from = q->stitch_target ? q->next.u.auxtrace.payload_offset + q->next_skip
					   : UINT64_MAX;
	return new_decoder(s, q, q->stitch, need, 0, 0, err);
}

/* A stitch offset -> the file offset of that byte. */
static uint64_t stitch_file_offset(const struct queue *q, uint64_t x)
{
	size_t i;

	for (i = 0; i + 1 < q->nparts && x >= q->parts[i].size; i++)
		x -= q->parts[i].size;
	return q->parts[i].file_off + x;
}

/* The next record of q's decoder, uncounted (the session's own stats count what it
 * returns): copied into *f, or where a gate may count it, in place in the decoder's batch
 * (*rec; copied only if returned), after the blocks that run counts (a batch at a time:
 * jf_session_count_blocks). A counter counts its blocks itself: its records are copied,
 * the gate not asked (jf_session_count_begin). */
static int next_of_decoder(struct session *s, struct queue *q, struct count_run *run,
			   struct jf_flow *f, const struct jf_flow **rec, struct jf_error *err)
{
	int rc;

	*rec = f;
	if (!s->has_gate || q->dec_counts)
		return jf_decoder_next_uncounted(q->dec, f, err);
	for (;;) {
		if (q->batch_pos == q->batch_n) {
			q->batch_pos = q->batch_n = 0;
			rc = jf_decoder_next_batch_uncounted(q->dec, &q->batch, &q->batch_n,
							     err);
			if (rc <= 0)
				return rc;
		}
		if (run->on)
			q->batch_pos += jf_session_count_blocks(run, q->batch + q->batch_pos,
								q->batch_n - q->batch_pos);
		if (q->batch_pos < q->batch_n)
			break;
	}
	*rec = &q->batch[q->batch_pos++];
	return 1;
}

/* Q_DECODING: the next flow of the current segment into *f: 1 = a flow (not yet the
 * queue's peek: see session_next), 0 = the segment ended (a loss it reports is the queue's
 * peek), < 0 = fatal. */
static int pull(struct session *s, struct queue *q, struct jf_flow *f, struct jf_error *err)
{
	const struct jf_flow *rec;
	struct count_run run;
	int rc = 0;

	jf_session_count_begin(s, q, &run);
	while (q->dec && (rc = next_of_decoder(s, q, &run, f, &rec, err)) > 0) {
		/* The gate told before the record is returned. */
		jf_session_count_end(s, q, &run);
		if (rec != f)
			*f = *rec;
		/* Back to file offsets: the stitch holds pieces of the file. */
		if (q->in_stitch)
			f->offset = stitch_file_offset(q, f->offset);
		/* The end of a segment that the stitch continues is not the end of the
		 * trace. */
		if (f->kind == JF_FLOW_END && q->continues)
			continue;
		/* An error in the PSB+ the next segment starts with: a continuous decoder
		 * would resynchronise at the PSB after it, so the next segment must not
		 * decode that PSB+ again. */
		if (f->kind == JF_FLOW_ERROR && q->continues && f->offset >= q->overlap_from)
			q->overlap_error = 1;
		return 1;
	}
	jf_session_count_end(s, q, &run);
	if (rc < 0)
		return jf_fail_prefix(err, "%s: offset %llu: ", jf_perf_data_path(s->data),
				      (unsigned long long)q->buf.offset);
	if (q->dec)
		finish_decoder(s, q);
	if (q->pending_stitch && q->overlap_error) {
		/* Skip the stitch: next starts at its first PSB (the backend reports the
		 * bytes before it); the rest of buf after its own segment is lost here. */
		q->pending_stitch = 0;
		q->next_skip = q->next_lost_from = 0;
		q->state = Q_IDLE;
		if (q->buf.u.auxtrace.size > q->seg_end)
			lost_flow(q, q->buf.u.auxtrace.payload_offset + q->seg_end,
				  q->buf.u.auxtrace.size - q->seg_end, JF_LOST_SKIPPED, s);
		return 0;
	}
	if (q->pending_stitch) {
		int rc2 = start_stitch(s, q, err);

		/* buf's bytes are decoded or copied into the stitch. */
		release_behind(s, &q->buf);
		return rc2;
	}
	if (!q->in_stitch)
		release_behind(s, &q->buf);
	if (q->in_stitch && q->overlap_error && q->stitch_target) {
		/* next's own segment starts at its second PSB; what lies between the
		 * stitch's end and it is reported when next starts. */
		q->next_lost_from = q->next_head;
		q->next_skip = q->next_head + 1;
	}
	q->in_stitch = 0;
	q->state = Q_IDLE;
	return 0;
}

/* The chosen queue's next flow (sideband filled, nothing held): 1 = in *flow, to return;
 * 0 = none to return yet (the segment ended, or the flow waits as the queue's peek for
 * the sideband dated before it); < 0 = fatal. Most flows go out at once: decoded into
 * *flow, and copied to the peek only when sideband goes first. Pulling does not change
 * the sideband. */
static int decode_next(struct session *s, struct queue *q, struct jf_flow *flow,
		       struct jf_error *err)
{
	int rc = pull(s, q, flow, err);
	uint64_t k;

	if (rc <= 0)
		return rc;
	k = jf_session_flow_key(s, q, flow);
	if (!jf_session_sideband_first(s, k)) {
		q->key = k;
		return 1;
	}
	q->peek = *flow;
	q->have_peek = 1;
	return 0;
}

/* q is chosen to decode: remember the next queue in the merge's order (least key, then
 * least index) among the others. Only the queue decoding moves its key (up) and state
 * until the merge loop runs again, so it stays chosen while keeps_running says so. */
static void note_rival(struct session *s, struct queue *q)
{
	size_t i;

	s->running = q;
	s->rival_key = UINT64_MAX;
	s->rival_idx = s->nq;
	for (i = 0; i < s->nq; i++) {
		if (&s->q[i] == q || s->q[i].state == Q_DONE)
			continue;
		if (s->rival_idx == s->nq || s->q[i].key < s->rival_key) {
			s->rival_key = s->q[i].key;
			s->rival_idx = i;
		}
	}
}

/* Whether the merge loop would choose q (the queue that decoded last) now. */
static int keeps_running(const struct session *s, const struct queue *q)
{
	return q->state == Q_DECODING && !q->have_peek && jf_session_runs_on(s, q, q->key);
}

/* The queue holding a decoded flow, if any (at most one: see session_next). */
static struct queue *held_queue(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nq; i++)
		if (s->q[i].have_peek)
			return &s->q[i];
	return NULL;
}

/* The merge. Queues are ordered by the time their decoder has reached (q->key: the time
 * after the queue's last flow, or its buffer's first TSC), which is a lower bound on the
 * time of the queue's next flow, and only the chosen queue's next flow is decoded. That
 * flow is then returned before any other queue decodes on; it waits only for the sideband
 * dated before it (an MMAP applies before code at the same time). So no flow is decoded
 * ahead of another queue's earlier flows: a zone record that a flow of thread A makes due
 * (a marker call, a PTWRITE, a position) applies before any other thread's flow that
 * starts after A's flow started is decoded. (A look-ahead of one flow per queue, ordered
 * by that flow's own time, let another thread's flow read code bytes before such a
 * record changed them; see docs/reliability.md.) This is the order perf's decoder uses
 * too: it runs the queue with the lowest timestamp until it passes the next queue's. */
static int session_next(void *self, struct jf_flow *flow, struct jf_error *err)
{
	struct session *s = self;

	/* Nothing held, the sideband filled and not due before it, the queue that ran last
	 * still decoding and ahead of every other: the loop below would choose it; go to it
	 * at once (most flows of a recording). */
	if (s->running && s->outpos >= s->nout && !jf_sb_needs_fill(s) &&
	    keeps_running(s, s->running)) {
		int rc = decode_next(s, s->running, flow, err);

		if (rc != 0)
			return rc;
	}
	for (;;) {
		struct queue *best = NULL, *held;
		uint64_t best_key = 0;
		int sideband = 0;
		size_t i;

		s->running = NULL;
		if (s->outpos < s->nout) {
			*flow = s->out[s->outpos++];
			return 1;
		}
		s->nout = s->outpos = 0;
		if (jf_sb_needs_fill(s) && jf_sb_fill(s) < 0) {
			*err = s->fatal;
			return -1;
		}
		if (s->nheap) {
			sideband = 1;
			best_key = s->heap[0].key;
		}
		held = held_queue(s);
		if (held) {
			uint64_t k = jf_session_flow_key(s, held, &held->peek);

			if (jf_session_sideband_first(s, k)) {
				jf_sb_deliver(s);
				continue;
			}
			*flow = held->peek;
			held->have_peek = 0;
			held->key = k;
			return 1;
		}
		for (i = 0; i < s->nq; i++) {
			struct queue *q = &s->q[i];

			if (q->state == Q_DONE)
				continue;
			/* Ties go to the sideband, so that an MMAP applies before code at the
			 * same time is decoded. */
			if ((!sideband && !best) || q->key < best_key) {
				best = q;
				best_key = q->key;
				sideband = 0;
			}
		}
		if (sideband) {
			jf_sb_deliver(s);
			continue;
		}
		if (!best) {
			if (s->failed) {
				*err = s->fatal;
				return -1;
			}
			if (!s->cut_reported) {
				s->cut_reported = 1;
				if (jf_perf_data_cut_flow(s->data, flow))
					return 1;
			}
			return 0;
		}
		switch (best->state) {
		case Q_IDLE:
			locate_buffer(s, best);
			break;
		case Q_LOCATED:
			if (start_buffer(s, best, err) < 0)
				return -1;
			break;
		case Q_DECODING: {
			int rc;

			note_rival(s, best);
			rc = decode_next(s, best, flow, err);

			if (rc != 0)
				return rc;
			break;
		}
		case Q_DONE:
			break;
		}
	}
}

static void session_free(void *self)
{
	struct session *s = self;
	size_t i;

	for (i = 0; i < s->nq; i++) {
		jf_decoder_free(s->q[i].dec);
		free(s->q[i].stitch);
		free(s->q[i].parts);
	}
	for (i = 0; i < s->nfast; i++)
		jf_pt_fast_caches_fini(&s->fast[i].caches);
	free(s->fast);
	for (i = 0; i < s->ninsns; i++)
		jf_insn_cache_free(s->insns[i].cache);
	free(s->insns);
	free(s->q);
	free(s->heap);
	jf_codemap_free(s->empty_map);
	jf_perf_data_close(s->data);
	free(s);
}

static const struct jf_decoder_ops session_ops = {
	.next = session_next,
	.free = session_free,
};

struct jf_decoder *jf_perf_pt_decoder_new_opts(const char *path,
					       const struct jf_perf_session_hooks *hooks,
					       const struct jf_perf_session_options *opts,
					       struct jf_error *err)
{
	struct session *s = calloc(1, sizeof(*s));
	struct jf_decoder *dec;

	if (!s) {
		jf_fail(err, "%s: out of memory", path);
		return NULL;
	}
	if (hooks)
		s->hooks = *hooks;
	if (opts)
		s->opts = *opts;
	s->data = jf_perf_data_open(path, err);
	s->empty_map = jf_codemap_new();
	if (!s->data || !s->empty_map || prescan(s, path, err) < 0) {
		if (s->data && !s->empty_map)
			jf_fail(err, "%s: out of memory", path);
		session_free(s);
		return NULL;
	}
	s->timeless = s->pt.timeless;
	jf_perf_data_begin(s->data, &s->sb_cur);
	/* The prescan touched a record header every buffer, and the kernel maps whole
	 * windows around each: let them go, decoding brings back what it reads. */
	{
		uint64_t begin, end;

		jf_perf_data_range(s->data, &begin, &end);
		jf_perf_data_release(s->data, begin, end - begin);
		s->release_from = s->release_next = begin;
	}
	dec = jf_decoder_new(&session_ops, s);
	if (!dec) {
		jf_fail(err, "%s: out of memory", path);
		return NULL;
	}
	s->self = dec;
	jf_decoder_set_gate(dec, jf_session_set_gate);
	jf_decoder_stats_mut(dec)->time_is_ns = !s->timeless;
	return dec;
}

void jf_perf_session_fast_report(struct jf_decoder *dec, struct jf_perf_session_report *out)
{
	struct session *s = jf_decoder_backend(dec, &session_ops);

	memset(out, 0, sizeof(*out));
	if (s)
		*out = s->report;
}

struct jf_decoder *jf_perf_pt_decoder_new(const char *path,
					  const struct jf_perf_session_hooks *hooks,
					  struct jf_error *err)
{
	return jf_perf_pt_decoder_new_opts(path, hooks, NULL, err);
}
