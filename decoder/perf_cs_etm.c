/* cs_etm perf.data decoding: records in time order (perf_cs_order.h); each AUXTRACE
 * payload goes through the CoreSight backend straight from the file mapping (see
 * perf_cs_etm.h). */
#include "jitflow/perf_cs_etm.h"
#include "perf_cs_order.h"
#include "jitflow/isolate.h"

#include <stdlib.h>
#include <string.h>

/* Threads seen in COMM/FORK records, to find an AUXTRACE buffer's process. */
struct thread {
	int32_t tid, pid;
};

struct perf_cs {
	struct jf_perf_data *data;
	int cut_reported;            /* the file's cut (jf_perf_data_cut_flow) */
	struct cs_schedule order;    /* every record, in the order they are applied */
	size_t next_item;
	struct jf_perf_session_hooks hooks;
	struct jf_codemap *own_map;  /* when the caller gives no code maps */
	struct jf_cs_source *sources;
	uint32_t *cpus;
	size_t nsources;
	struct jf_decoder *inner;    /* the AUXTRACE buffer being decoded */
	uint64_t inner_offset, inner_size;
	struct thread *threads;
	size_t nthreads, cap_threads;
	struct jf_flow pending;      /* a loss to report before going on */
	int has_pending;
	struct jf_decoder *self;     /* the handle, for its statistics */
};

static int32_t pid_of(const struct perf_cs *p, int32_t tid)
{
	size_t i;

	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return p->threads[i].pid;
	return -1;
}

static void note_thread(struct perf_cs *p, int32_t pid, int32_t tid)
{
	size_t i;

	for (i = 0; i < p->nthreads; i++) {
		if (p->threads[i].tid == tid) {
			p->threads[i].pid = pid;
			return;
		}
	}
	if (p->nthreads == p->cap_threads) {
		size_t cap = p->cap_threads ? p->cap_threads * 2 : 64;
		struct thread *t = realloc(p->threads, cap * sizeof(*t));

		if (!t)
			return; /* only costs the process's code map: the empty one is used */
		p->threads = t;
		p->cap_threads = cap;
	}
	p->threads[p->nthreads].tid = tid;
	p->threads[p->nthreads].pid = pid;
	p->nthreads++;
}

static struct jf_codemap *map_for(struct perf_cs *p, int32_t pid)
{
	struct jf_codemap *map = NULL;

	if (p->hooks.codemap_for_pid)
		map = p->hooks.codemap_for_pid(p->hooks.ctx, pid);
	return map ? map : p->own_map;
}

static int start_buffer(struct perf_cs *p, const struct jf_perf_record *rec,
			uint32_t aux_flags, struct jf_error *err)
{
	struct jf_cs_buffer buf;
	struct jf_cs_config cfg;
	struct jf_codemap *map;
	size_t i;

	memset(&buf, 0, sizeof(buf));
	buf.name = "AUXTRACE";
	buf.data = rec->u.auxtrace.payload;
	buf.size = rec->u.auxtrace.size;
	buf.base_offset = rec->u.auxtrace.payload_offset;
	buf.formatted = !(aux_flags & JF_PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW);
	buf.frames = JF_CS_FRAMES_ALIGNED;
	buf.sources = p->sources;
	buf.nsources = p->nsources;
	if (!buf.formatted) {
		/* A raw buffer (TRBE) is one CPU's stream and nothing else: the other CPUs'
		 * ETMs write to their own buffers, so they are not missing from this one. */
		buf.nsources = 1;
		for (i = 0; i < p->nsources; i++)
			if (p->cpus[i] == rec->u.auxtrace.cpu)
				buf.sources = &p->sources[i];
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.buffers = &buf;
	cfg.nbuffers = 1;
	/* The sideband may change the code map between records: decode lazily. */
	cfg.lookahead = 1;
	map = map_for(p, pid_of(p, (int32_t)rec->u.auxtrace.tid));
	/* OpenCSD 1.3.3 crashes on some corrupt streams: it decodes in a child process that
	 * reads this map as the sideband leaves it, record by record (isolate.h). */
	p->inner = jf_isolated_decoder_lockstep(jf_cs_decoder_new(&cfg, map, err), map,
						"OpenCSD", err);
	if (!p->inner)
		return -1;
	p->inner_offset = rec->u.auxtrace.payload_offset;
	p->inner_size = rec->u.auxtrace.size;
	jf_decoder_stats_mut(p->self)->trace_bytes += rec->u.auxtrace.size;
	return 0;
}

static void lost(struct perf_cs *p, const struct jf_perf_record *rec, uint32_t reason,
		 uint64_t bytes)
{
	memset(&p->pending, 0, sizeof(p->pending));
	p->pending.kind = JF_FLOW_LOST;
	p->pending.flags = JF_FLOW_IP_SUPPRESSED;
	p->pending.offset = rec->offset;
	p->pending.source = rec->sid.present & JF_PERF_SID_CPU ? rec->sid.cpu : 0;
	p->pending.u.lost.reason = reason;
	p->pending.u.lost.bytes = bytes;
	p->has_pending = 1;
}

/* Act on one record; *flow may be set (has_pending) for losses. */
static int handle(struct perf_cs *p, const struct jf_perf_record *rec, uint32_t aux_flags,
		  struct jf_error *err)
{
	switch (rec->type) {
	case JF_PERF_RECORD_AUXTRACE:
		if (!rec->u.auxtrace.size)
			return 0;
		return start_buffer(p, rec, aux_flags, err);
	case JF_PERF_RECORD_AUX:
		if (rec->u.aux.flags & JF_PERF_AUX_FLAG_TRUNCATED)
			lost(p, rec, JF_LOST_AUX_TRUNCATED, 0);
		else if (rec->u.aux.flags & JF_PERF_AUX_FLAG_COLLISION)
			lost(p, rec, JF_LOST_AUX_COLLISION, 0);
		break;
	case JF_PERF_RECORD_LOST:
		lost(p, rec, JF_LOST_RECORDS, 0);
		break;
	case JF_PERF_RECORD_COMM:
		note_thread(p, rec->u.comm.pid, rec->u.comm.tid);
		break;
	case JF_PERF_RECORD_FORK:
		note_thread(p, rec->u.fork.pid, rec->u.fork.tid);
		break;
	case JF_PERF_RECORD_AUXTRACE_INFO:
	case JF_PERF_RECORD_FINISHED_ROUND:
	case JF_PERF_RECORD_HEADER_ATTR:
	case JF_PERF_RECORD_HEADER_FEATURE:
		return 0;
	default:
		break;
	}
	if (p->hooks.on_record && jf_perf_record_known(rec->type))
		p->hooks.on_record(p->hooks.ctx, rec);
	return 0;
}

static int pcs_next(void *self, struct jf_flow *flow, struct jf_error *err)
{
	struct perf_cs *p = self;
	struct jf_perf_record rec;
	const struct cs_item *it;
	struct jf_perf_cursor cur;
	int rc;

	for (;;) {
		if (p->has_pending) {
			*flow = p->pending;
			p->has_pending = 0;
			return 1;
		}
		if (p->inner) {
			rc = jf_decoder_next(p->inner, flow, err);
			if (rc != 0)
				return rc;
			jf_decoder_free(p->inner);
			p->inner = NULL;
			jf_perf_data_release(p->data, p->inner_offset, p->inner_size);
		}
		if (p->next_item == p->order.n) {
			if (!p->order.failed) {
				if (p->cut_reported++ == 0 && jf_perf_data_cut_flow(p->data, flow))
					return 1;
				return 0;
			}
			*err = p->order.err; /* the file breaks off here */
			return -1;
		}
		it = &p->order.items[p->next_item++];
		cur.pos = it->offset;
		rc = jf_perf_data_next(p->data, &cur, &rec, err);
		if (rc <= 0)
			return rc < 0 ? -1 : 0; /* read before: cannot fail now */
		if (handle(p, &rec, it->aux_flags, err) < 0)
			return -1;
	}
}

static void pcs_free(void *self)
{
	struct perf_cs *p = self;

	jf_decoder_free(p->inner);
	jf_cs_schedule_free(&p->order);
	jf_perf_data_close(p->data);
	jf_codemap_free(p->own_map);
	free(p->sources);
	free(p->cpus);
	free(p->threads);
	free(p);
}

static const struct jf_decoder_ops pcs_ops = { pcs_next, pcs_free };

struct jf_decoder *jf_perf_cs_decoder_new(const char *path,
					  const struct jf_perf_session_hooks *hooks,
					  struct jf_error *err)
{
	struct perf_cs *p = calloc(1, sizeof(*p));
	struct jf_perf_cursor cur;
	struct jf_perf_record rec;
	struct jf_decoder *dec;
	int rc;

	if (!p) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	if (hooks)
		p->hooks = *hooks;
	p->own_map = jf_codemap_new();
	p->data = jf_perf_data_open(path, err);
	if (!p->own_map || !p->data)
		goto fail;
	/* The ETM configuration comes first in perf's files, before any AUX data. */
	jf_perf_data_begin(p->data, &cur);
	while ((rc = jf_perf_data_next(p->data, &cur, &rec, err)) > 0)
		if (rec.type == JF_PERF_RECORD_AUXTRACE_INFO)
			break;
	if (rc < 0)
		goto fail;
	if (rc == 0) {
		jf_fail(err, "%s: no AUXTRACE_INFO record: not a CoreSight (cs_etm) recording",
			path);
		goto fail;
	}
	if (jf_perf_cs_etm_sources(&rec, &p->sources, &p->cpus, &p->nsources, err) < 0) {
		jf_fail_prefix(err, "%s: ", path);
		goto fail;
	}
	if (jf_cs_schedule_build(p->data, &p->order, err) < 0)
		goto fail;
	dec = jf_decoder_new(&pcs_ops, p);
	if (!dec) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	p->self = dec;
	return dec;
fail:
	pcs_free(p);
	return NULL;
}
