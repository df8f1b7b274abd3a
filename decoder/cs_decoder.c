/* The CoreSight jf_decoder: drives OpenCSD's push-style decode trees from a pull API.
 *
 * OpenCSD calls back with each generic element; the callback converts it into flow
 * records in a small ring and answers WAIT once `lookahead` records are waiting, which
 * makes OpenCSD stop and keep its state until we FLUSH it. So memory stays constant
 * whatever the trace length, and decoding runs only as far as the consumer has read. */
#include "cs_internal.h"
#include "isolate_child.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Trace bytes handed to OpenCSD per call: small enough that a WAIT costs little. */
enum { FEED_CHUNK = 4096 };

/* Mapped trace pages are released in steps, well behind the feed position (OpenCSD
 * copies what it keeps of a packet; we re-feed only what it did not take). */
enum { RELEASE_STEP = 8 << 20, RELEASE_LAG = 1 << 20 };

/* Upper bound of pending records (only reached at a buffer's end, see on_elem). */
enum { MAX_RING = 1 << 20 };

struct cs_buffer {
	struct jf_cs_buffer cfg;   /* name and sources point into this decoder's copies */
	char *name;
	struct jf_cs_source *sources;
};

struct cs_decoder {
	struct jf_codemap *map;
	struct cs_buffer *buffers;
	size_t nbuffers, cur;      /* buffer being decoded */

	struct jf_cs_tree tree;
	int tree_open;
	uint32_t number;           /* of the current buffer in an isolating child */
	size_t pos;                /* next byte of the current buffer to feed */
	int waiting;               /* OpenCSD answered WAIT: FLUSH before feeding more */
	int eot_sent;
	size_t released;           /* bytes of the current buffer given back to the kernel */

	struct jf_flow *ring;      /* pending records */
	unsigned head, count, cap, lookahead;
	struct jf_cs_clock clock;
	struct jf_error failure;   /* a fatal problem met inside a callback */
	int failed;
};

/* Make room for one more record. The ring only grows while OpenCSD drains at the end of
 * a buffer (see on_elem); that output is bounded by what the decoder had pending. */
static int room(struct cs_decoder *d)
{
	struct jf_flow *ring;
	unsigned cap, i;

	if (d->count < d->cap)
		return 1;
	if (d->cap >= MAX_RING)
		return 0;
	cap = d->cap * 2;
	ring = malloc(cap * sizeof(*ring));
	if (!ring)
		return 0;
	for (i = 0; i < d->count; i++)
		ring[i] = d->ring[(d->head + i) % d->cap];
	free(d->ring);
	d->ring = ring;
	d->cap = cap;
	d->head = 0;
	return 1;
}

static struct jf_flow *push(struct cs_decoder *d)
{
	struct jf_flow *f = &d->ring[(d->head + d->count) % d->cap];

	d->count++;
	memset(f, 0, sizeof(*f));
	return f;
}

static ocsd_datapath_resp_t on_elem(const void *ctx, const ocsd_trc_index_t index,
				    const uint8_t trace_id, const ocsd_generic_trace_elem *elem)
{
	struct cs_decoder *d = (struct cs_decoder *)ctx;
	struct jf_flow out[JF_CS_MAX_FLOWS_PER_ELEM];
	int i, n;

	n = jf_cs_elem_to_flows(elem, trace_id, d->buffers[d->cur].cfg.base_offset + index,
				&d->clock, out);
	/* The ring has room for one element's records: we answer WAIT before it could fill
	 * up, and OpenCSD sends nothing more until we FLUSH. */
	for (i = 0; i < n && room(d); i++)
		*push(d) = out[i];
	/* At the end of a buffer everything is taken without pausing: OpenCSD 1.3.3's frame
	 * demultiplexer can crash on a FLUSH after EOT once it has been reset after an error
	 * (found by fuzz_cs_frames), so EOT is never answered with WAIT. */
	if (d->eot_sent && d->count < MAX_RING)
		return OCSD_RESP_CONT;
	return d->count >= d->lookahead ? OCSD_RESP_WAIT : OCSD_RESP_CONT;
}

static void note_not_decoded(struct cs_decoder *d, const struct jf_cs_source *src,
			     const char *why)
{
	struct jf_flow *f;

	if (!room(d))
		return;
	/* An error record (not a failure: decoding goes on), as trc_pkt_lister reports it. */
	f = push(d);
	f->kind = JF_FLOW_ERROR;
	f->flags = JF_FLOW_IP_SUPPRESSED;
	f->source = jf_cs_source_trace_id(src);
	f->offset = d->buffers[d->cur].cfg.base_offset;
	f->u.error.code = -(int32_t)OCSD_ERR_NO_PROTOCOL;
	f->u.error.phase = JF_PHASE_CONTAINER;
	jf_cs_copy_text(f->u.error.text, sizeof(f->u.error.text), why);
}

static int open_buffer(struct cs_decoder *d, struct jf_error *err)
{
	const struct jf_cs_buffer *b = &d->buffers[d->cur].cfg;
	size_t i;

	if (jf_cs_tree_open(&d->tree, b, d->map, err) < 0)
		return -1;
	d->tree_open = 1;
	d->number = jf_isolate_buffer_opened();
	d->pos = 0;
	d->waiting = 0;
	d->eot_sent = 0;
	d->released = 0;
	for (i = 0; i < b->nsources; i++) {
		struct jf_error why;
		int rc;

		/* A raw buffer is the stream of one source: the first one listed. */
		if (!b->formatted && i > 0) {
			note_not_decoded(d, &b->sources[i], "raw buffer of another source");
			continue;
		}
		rc = jf_cs_tree_add_source(&d->tree, &b->sources[i], &why);
		if (rc < 0) {
			*err = why;
			return -1;
		}
		if (rc > 0)
			note_not_decoded(d, &b->sources[i], why.msg);
	}
	return jf_cs_tree_start(&d->tree, on_elem, d, err);
}

/* Bytes OpenCSD could not attribute to a decoded source: report them as lost. */
static void note_buffer_losses(struct cs_decoder *d)
{
	const struct jf_cs_buffer *b = &d->buffers[d->cur].cfg;
	uint64_t undecoded = 0;
	int have_demux = 0;
	size_t i;

	for (i = 0; i < d->tree.nids; i++) {
		ocsd_decode_stats_t *st = NULL;

		if (ocsd_dt_get_decode_stats(d->tree.handle, d->tree.ids[i], &st) != OCSD_OK || !st)
			continue;
		if (st->channel_unsynced && room(d)) {
			struct jf_flow *f = push(d);

			f->kind = JF_FLOW_LOST;
			f->flags = JF_FLOW_IP_SUPPRESSED;
			f->source = d->tree.ids[i];
			f->offset = b->base_offset + b->size;
			f->u.lost.bytes = st->channel_unsynced;
			f->u.lost.reason = JF_LOST_NO_SYNC;
		}
		if (!have_demux && b->formatted) {
			/* Reserved IDs are padding and triggers, not lost trace. */
			undecoded = st->demux.no_id_bytes + st->demux.unknown_id_bytes;
			have_demux = 1;
		}
	}
	if (undecoded && room(d)) {
		struct jf_flow *f = push(d);

		f->kind = JF_FLOW_LOST;
		f->flags = JF_FLOW_IP_SUPPRESSED;
		f->offset = b->base_offset + b->size;
		f->u.lost.bytes = undecoded;
		f->u.lost.reason = JF_LOST_SKIPPED;
	}
}

/* OpenCSD's messages read "0x0006 (OCSD_ERR_NAME) [generic text]; detail": keep
 * "OCSD_ERR_NAME: detail", which fits a flow record's text. */
static void short_message(const char *msg, char *out, size_t size)
{
	const char *open = strchr(msg, '('), *close = open ? strchr(open, ')') : NULL;
	const char *detail = strstr(msg, "]; ");

	if (!open || !close) {
		jf_cs_copy_text(out, size, msg);
		return;
	}
	snprintf(out, size, "%.*s%s%s", (int)(close - open - 1), open + 1, detail ? ": " : "",
		 detail ? detail + 3 : "");
}

/* OpenCSD gave up on the data path: report where, with OpenCSD's own message. */
static void report_failure(struct cs_decoder *d, size_t fed_from, ocsd_trc_index_t *index)
{
	const struct jf_cs_buffer *b = &d->buffers[d->cur].cfg;
	uint8_t chan = 0;
	char msg[256] = "", text[512];
	ocsd_err_t code = ocsd_get_last_err(index, &chan, msg, sizeof(msg));
	struct jf_flow *f;
	char *p;

	if (!room(d))
		return;
	f = push(d);
	f->kind = JF_FLOW_ERROR;
	f->flags = JF_FLOW_IP_SUPPRESSED;
	/* 0xff: no channel; report it under the buffer's first decoded source. */
	f->source = chan < 0x80 ? chan : (d->tree.nids ? d->tree.ids[0] : 0);
	/* The logged index may be older than this call: then the call's start is the best
	 * position known. */
	if (*index < fed_from || *index >= b->size)
		*index = fed_from;
	f->offset = b->base_offset + *index;
	f->u.error.code = code != OCSD_OK ? -(int32_t)code : -(int32_t)OCSD_ERR_DATA_DECODE_FATAL;
	f->u.error.phase = JF_PHASE_DECODE;
	short_message(msg[0] ? msg : "OpenCSD data path failure", text, sizeof(text));
	jf_cs_copy_text(f->u.error.text, sizeof(f->u.error.text), text);
	for (p = f->u.error.text; *p; p++) /* one line: OpenCSD's messages end in newlines */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

/* After a failure: reset the tree and go on past the bad spot (at the next frame boundary
 * for formatted data); the bytes jumped over are reported as lost. */
static void recover(struct cs_decoder *d, size_t fed_from, ocsd_trc_index_t index)
{
	const struct jf_cs_buffer *b = &d->buffers[d->cur].cfg;
	size_t resume = d->pos;
	uint32_t used = 0;

	ocsd_dt_process_data(d->tree.handle, OCSD_OP_RESET, 0, 0, NULL, &used);
	if (index + 1 > resume)
		resume = index + 1;
	if (resume <= fed_from)
		resume = fed_from + 1; /* always move forward */
	if (b->formatted)
		resume = (resume + 15) & ~(size_t)15;
	if (resume > b->size)
		resume = b->size;
	if (resume > d->pos && room(d)) {
		struct jf_flow *f = push(d);

		f->kind = JF_FLOW_LOST;
		f->flags = JF_FLOW_IP_SUPPRESSED;
		f->source = d->tree.nids ? d->tree.ids[0] : 0;
		f->offset = b->base_offset + d->pos;
		f->u.lost.bytes = resume - d->pos;
		f->u.lost.reason = JF_LOST_SKIPPED;
	}
	d->pos = resume;
	d->waiting = 0;
}

static void release_consumed(struct cs_decoder *d, const struct jf_cs_buffer *b)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from, to;

	if (!b->release_consumed || d->pos < d->released + RELEASE_STEP + RELEASE_LAG)
		return;
	from = ((uintptr_t)b->data + d->released + page - 1) & ~(page - 1);
	to = ((uintptr_t)b->data + d->pos - RELEASE_LAG) & ~(page - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
	d->released = d->pos - RELEASE_LAG;
}

/* In an isolating child, bytes an earlier child crashed on (isolate_child.h): reset the
 * tree and go on at to, the bytes between reported as lost to the crash. */
static void skip_crash(struct cs_decoder *d, enum jf_isolate_op op, uint64_t to)
{
	const struct jf_cs_buffer *b = &d->buffers[d->cur].cfg;
	uint32_t used = 0;

	ocsd_dt_process_data(d->tree.handle, OCSD_OP_RESET, 0, 0, NULL, &used);
	if (to > b->size)
		to = b->size;
	if (to > d->pos && room(d)) {
		struct jf_flow *f = push(d);

		f->kind = JF_FLOW_LOST;
		f->flags = JF_FLOW_IP_SUPPRESSED;
		f->source = d->tree.nids ? d->tree.ids[0] : 0;
		f->offset = b->base_offset + d->pos;
		f->u.lost.bytes = to - d->pos;
		f->u.lost.reason = JF_LOST_DECODER_CRASH;
	}
	d->pos = (size_t)to;
	d->waiting = 0;
	if (op == JF_ISOLATE_EOT)
		d->eot_sent = 1; /* the end crashed: the buffer is over */
}

/* Say where the coming call is; 1 when it must not be made (skipped, see skip_crash). */
static int before_call(struct cs_decoder *d, enum jf_isolate_op op, size_t *n)
{
	const struct jf_cs_buffer *b = &d->buffers[d->cur].cfg;
	struct jf_isolate_spot where;
	uint64_t to = 0;

	if (!jf_isolate_child)
		return 0;
	memset(&where, 0, sizeof(where));
	where.unit = b->formatted ? 16 : 1;
	where.size = b->size;
	where.base = b->base_offset;
	where.source = d->tree.nids ? d->tree.ids[0] : 0;
	if (!jf_isolate_before_call(d->number, op, d->pos, n, &where, &to))
		return 0;
	skip_crash(d, op, to);
	return 1;
}

/* One call into OpenCSD (or one buffer transition). */
static int step(struct cs_decoder *d, struct jf_error *err)
{
	const struct jf_cs_buffer *b;
	ocsd_datapath_resp_t resp;
	size_t fed_from;
	uint32_t used = 0;

	if (!d->tree_open)
		return open_buffer(d, err);
	b = &d->buffers[d->cur].cfg;
	if (jf_cs_tree_sync_memory(&d->tree, err) < 0)
		return -1;
	fed_from = d->pos;
	if (d->waiting) {
		size_t none = 0;

		if (before_call(d, JF_ISOLATE_FLUSH, &none))
			return 0;
		resp = ocsd_dt_process_data(d->tree.handle, OCSD_OP_FLUSH, 0, 0, NULL, &used);
	} else if (d->pos < b->size) {
		size_t n = b->size - d->pos;

		if (n > FEED_CHUNK)
			n = FEED_CHUNK;
		if (before_call(d, JF_ISOLATE_DATA, &n))
			return 0;
		resp = ocsd_dt_process_data(d->tree.handle, OCSD_OP_DATA, d->pos, (uint32_t)n,
					    b->data + d->pos, &used);
		d->pos += used;
		release_consumed(d, b);
	} else if (!d->eot_sent) {
		size_t none = 0;

		if (before_call(d, JF_ISOLATE_EOT, &none))
			return 0;
		d->eot_sent = 1;
		resp = ocsd_dt_process_data(d->tree.handle, OCSD_OP_EOT, 0, 0, NULL, &used);
	} else {
		note_buffer_losses(d);
		jf_cs_tree_close(&d->tree);
		d->tree_open = 0;
		d->cur++;
		return 0;
	}
	jf_isolate_after_call();
	if (OCSD_DATA_RESP_IS_FATAL(resp)) {
		ocsd_trc_index_t index = 0;

		report_failure(d, fed_from, &index);
		if (d->eot_sent)
			d->waiting = 0; /* nothing to resume after the end */
		else
			recover(d, fed_from, index);
		return 0;
	}
	d->waiting = OCSD_DATA_RESP_IS_WAIT(resp);
	return 0;
}

static int cs_next(void *self, struct jf_flow *flow, struct jf_error *err)
{
	struct cs_decoder *d = self;

	while (!d->count) {
		if (d->cur >= d->nbuffers)
			return 0;
		if (step(d, err) < 0)
			return -1;
	}
	*flow = d->ring[d->head];
	d->head = (d->head + 1) % d->cap;
	d->count--;
	return 1;
}

static void cs_free(void *self)
{
	struct cs_decoder *d = self;
	size_t i;

	if (!d)
		return;
	if (d->tree_open)
		jf_cs_tree_close(&d->tree);
	for (i = 0; i < d->nbuffers; i++) {
		free(d->buffers[i].name);
		free(d->buffers[i].sources);
	}
	free(d->buffers);
	free(d->ring);
	free(d);
}

static const struct jf_decoder_ops cs_ops = { cs_next, cs_free };

struct jf_decoder *jf_cs_decoder_new(const struct jf_cs_config *cfg, struct jf_codemap *map,
				     struct jf_error *err)
{
	struct cs_decoder *d = calloc(1, sizeof(*d));
	struct jf_decoder *dec;
	uint64_t bytes = 0;
	size_t i, max_sources = 0;

	if (!d) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	d->map = map;
	d->lookahead = cfg->lookahead ? cfg->lookahead : 1;
	if (d->lookahead > 4096)
		d->lookahead = 4096;
	d->buffers = calloc(cfg->nbuffers ? cfg->nbuffers : 1, sizeof(*d->buffers));
	if (!d->buffers)
		goto oom;
	d->nbuffers = cfg->nbuffers;
	for (i = 0; i < cfg->nbuffers; i++) {
		const struct jf_cs_buffer *src = &cfg->buffers[i];
		struct cs_buffer *b = &d->buffers[i];

		b->cfg = *src;
		b->name = strdup(src->name ? src->name : "trace");
		b->sources = calloc(src->nsources ? src->nsources : 1, sizeof(*b->sources));
		if (!b->name || !b->sources)
			goto oom;
		if (src->nsources)
			memcpy(b->sources, src->sources, src->nsources * sizeof(*b->sources));
		b->cfg.name = b->name;
		b->cfg.sources = b->sources;
		if ((uint64_t)src->size > UINT32_MAX) {
			/* OpenCSD 1.3.3 (as Debian builds it) indexes trace bytes with 32 bits. */
			jf_fail(err, "%s: %zu bytes: trace buffers above 4 GiB are not supported",
				b->name, src->size);
			goto fail;
		}
		bytes += src->size;
		if (src->nsources > max_sources)
			max_sources = src->nsources;
	}
	/* Room for the lookahead, one more element, and a buffer's start and end notes. */
	d->cap = d->lookahead + JF_CS_MAX_FLOWS_PER_ELEM + (unsigned)max_sources + 130;
	d->ring = calloc(d->cap, sizeof(*d->ring));
	if (!d->ring)
		goto oom;
	dec = jf_decoder_new(&cs_ops, d);
	if (!dec) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	jf_decoder_stats_mut(dec)->trace_bytes = bytes;
	return dec;
oom:
	jf_fail(err, "out of memory");
fail:
	cs_free(d);
	return NULL;
}
