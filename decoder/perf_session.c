/* A perf.data Intel PT session: AUX queues decoded buffer by buffer and merged with the
 * sideband in time order (a k-way merge on each source's next key).
 *
 * Streaming: a queue keeps only a cursor to its next AUXTRACE record and the decoder of its
 * current buffer, which runs over the payload in the file mapping. The sideband keeps the
 * records of about two perf rounds (see perf_session_sideband.c).
 *
 * Buffer boundaries: libipt needs each buffer as one contiguous trace, so the buffers of a
 * queue are decoded one after another, each from its first PSB. The packets at the start
 * of a buffer before its first PSB continue the previous buffer's packet stream but cannot
 * be decoded on their own; the backend reports them as JF_FLOW_LOST JF_LOST_NO_SYNC (bytes
 * known, instructions not), and a buffer without any PSB is reported so here, whole.
 *
 * Known limit: a queue's code map is chosen (codemap_for_pid) when a buffer starts; a
 * context switch to another process inside a buffer (per-CPU tracing) is reported as a
 * JF_FLOW_CONTEXT record but the buffer goes on decoding over the first process's map. */
#include "perf_session_internal.h"

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

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
	int have_info = 0;

	jf_perf_data_begin(s->data, &cur);
	for (;;) {
		struct jf_perf_cursor at = cur;
		int rc = jf_perf_data_next_header(s->data, &cur, &rec, err);

		if (rc <= 0)
			break;
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
	if (!have_info)
		return jf_fail(err,
			       "%s: no AUXTRACE_INFO record; expected an Intel PT recording "
			       "(perf record -e intel_pt//)",
			       path);
	/* Per-CPU queues are sources by CPU number, per-thread ones by queue index. */
	{
		size_t i;

		for (i = 0; i < s->nq; i++)
			s->q[i].source = s->pt.per_cpu_mmaps ? s->q[i].cpu : s->q[i].idx;
	}
	return 0;
}

/* Bytes before the first PSB, and the first TSC of the PSB+ (0 if none), with libipt's
 * packet decoder. Returns the sync offset, or size when there is no PSB. */
static uint64_t first_sync(const struct jf_perf_record *buf, uint64_t *tsc, int *have_tsc)
{
	struct pt_config cfg;
	struct pt_packet_decoder *pd;
	uint64_t sync = buf->u.auxtrace.size;
	int i;

	*have_tsc = 0;
	if (!buf->u.auxtrace.size)
		return 0;
	pt_config_init(&cfg);
	cfg.begin = (uint8_t *)buf->u.auxtrace.payload;
	cfg.end = cfg.begin + buf->u.auxtrace.size;
	pd = pt_pkt_alloc_decoder(&cfg);
	if (!pd)
		return sync;
	if (pt_pkt_sync_forward(pd) >= 0 && pt_pkt_get_sync_offset(pd, &sync) >= 0) {
		/* The PSB+ header holds the TSC when TSC packets are enabled. */
		for (i = 0; i < 64; i++) {
			struct pt_packet p;

			if (pt_pkt_next(pd, &p, sizeof(p)) < 0 || p.type == ppt_psbend)
				break;
			if (p.type == ppt_tsc) {
				*tsc = p.payload.tsc.tsc;
				*have_tsc = 1;
				break;
			}
		}
	}
	pt_pkt_free_decoder(pd);
	return sync;
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

/* Q_IDLE: find the queue's next AUXTRACE record and the key its data starts at. */
static int locate_buffer(struct session *s, struct queue *q)
{
	struct jf_perf_record rec;
	struct jf_error err;
	uint64_t tsc = 0;
	int have_tsc;

	for (;;) {
		struct jf_perf_cursor at = q->scan;
		int rc = jf_perf_data_next_header(s->data, &q->scan, &rec, &err);

		if (rc < 0 && q->scan.pos == at.pos)
			rc = 0; /* broken framing: the sideband stream reports it */
		if (rc == 0) {
			q->state = Q_DONE;
			return 0;
		}
		if (rc > 0 && rec.type == JF_PERF_RECORD_AUXTRACE && rec.u.auxtrace.idx == q->idx)
			break;
	}
	q->buf = rec;
	q->state = Q_LOCATED;
	if (s->timeless) {
		q->key = rec.offset;
	} else {
		first_sync(&rec, &tsc, &have_tsc);
		if (have_tsc && tsc_key(s, tsc) > q->key)
			q->key = tsc_key(s, tsc);
	}
	return 0;
}

/* Q_LOCATED, now that the sideband up to the buffer's start is applied: make the decoder
 * over the current process's code. */
static int start_buffer(struct session *s, struct queue *q, struct jf_error *err)
{
	const struct jf_perf_record *b = &q->buf;
	struct jf_pt_config cfg;
	struct jf_codemap *map = NULL;
	uint64_t tsc, sync;
	int have_tsc;

	jf_decoder_stats_mut(s->self)->trace_bytes += b->u.auxtrace.size;
	sync = first_sync(b, &tsc, &have_tsc);
	q->state = Q_IDLE;
	if (sync >= b->u.auxtrace.size) {
		/* No PSB at all: the whole buffer is lost. */
		if (b->u.auxtrace.size)
			lost_flow(q, b->u.auxtrace.payload_offset, b->u.auxtrace.size,
				  JF_LOST_NO_SYNC, s);
		return 0;
	}
	memset(&cfg, 0, sizeof(cfg));
	jf_perf_intel_pt_config(&s->pt, &cfg);
	if (s->opts.cpu_override) {
		cfg.cpu_family = s->opts.cpu_family;
		cfg.cpu_model = s->opts.cpu_model;
		cfg.cpu_stepping = s->opts.cpu_stepping;
	}
	/* The whole buffer: the backend reports the bytes before its first PSB as
	 * JF_LOST_NO_SYNC itself, at file offsets. */
	cfg.trace = b->u.auxtrace.payload;
	cfg.size = (size_t)b->u.auxtrace.size;
	cfg.base_offset = b->u.auxtrace.payload_offset;
	cfg.release_consumed = 1; /* resident memory stays flat over long files */
	cfg.end_on_call = s->opts.end_on_call;
	cfg.end_on_jump = s->opts.end_on_jump;
	cfg.source = q->source;
	if (s->hooks.codemap_for_pid)
		map = s->hooks.codemap_for_pid(s->hooks.ctx, q->pid);
	q->dec = jf_pt_decoder_new(&cfg, map ? map : s->empty_map, err);
	if (!q->dec)
		return jf_fail_prefix(err, "%s: offset %llu: AUXTRACE buffer: ",
				      jf_perf_data_path(s->data), (unsigned long long)b->offset);
	q->state = Q_DECODING;
	return 0;
}

/* Q_DECODING: the next flow of the current buffer into the queue's peek. */
static int pull(struct session *s, struct queue *q, struct jf_error *err)
{
	int rc = jf_decoder_next(q->dec, &q->peek, err);

	if (rc < 0)
		return jf_fail_prefix(err, "%s: offset %llu: ", jf_perf_data_path(s->data),
				      (unsigned long long)q->buf.offset);
	if (rc == 0) {
		jf_decoder_free(q->dec);
		q->dec = NULL;
		q->state = Q_IDLE;
		return 0;
	}
	q->have_peek = 1;
	return 0;
}

static uint64_t peek_key(const struct session *s, const struct queue *q)
{
	if (!s->timeless && (q->peek.flags & JF_FLOW_HAS_TIME) && q->peek.time > q->key)
		return q->peek.time;
	return q->key;
}

static int session_next(void *self, struct jf_flow *flow, struct jf_error *err)
{
	struct session *s = self;

	for (;;) {
		struct queue *best = NULL;
		uint64_t best_key = 0;
		int sideband = 0;
		size_t i;

		if (s->outpos < s->nout) {
			*flow = s->out[s->outpos++];
			return 1;
		}
		s->nout = s->outpos = 0;
		if (jf_sb_fill(s) < 0) {
			*err = s->fatal;
			return -1;
		}
		if (s->nheap) {
			sideband = 1;
			best_key = s->heap[0].key;
		}
		for (i = 0; i < s->nq; i++) {
			struct queue *q = &s->q[i];
			uint64_t k;

			if (q->state == Q_DONE && !q->have_peek)
				continue;
			k = q->have_peek ? peek_key(s, q) : q->key;
			/* Ties go to the sideband, so that an MMAP applies before code at the
			 * same time is decoded. */
			if ((!sideband && !best) || k < best_key) {
				best = q;
				best_key = k;
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
			return 0;
		}
		if (best->have_peek) {
			*flow = best->peek;
			best->have_peek = 0;
			best->key = best_key;
			return 1;
		}
		switch (best->state) {
		case Q_IDLE:
			locate_buffer(s, best);
			break;
		case Q_LOCATED:
			if (start_buffer(s, best, err) < 0)
				return -1;
			break;
		case Q_DECODING:
			if (pull(s, best, err) < 0)
				return -1;
			break;
		case Q_DONE:
			break;
		}
	}
}

static void session_free(void *self)
{
	struct session *s = self;
	size_t i;

	for (i = 0; i < s->nq; i++)
		jf_decoder_free(s->q[i].dec);
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
	dec = jf_decoder_new(&session_ops, s);
	if (!dec) {
		jf_fail(err, "%s: out of memory", path);
		return NULL;
	}
	s->self = dec;
	jf_decoder_stats_mut(dec)->time_is_ns = !s->timeless;
	return dec;
}

struct jf_decoder *jf_perf_pt_decoder_new(const char *path,
					  const struct jf_perf_session_hooks *hooks,
					  struct jf_error *err)
{
	return jf_perf_pt_decoder_new_opts(path, hooks, NULL, err);
}
