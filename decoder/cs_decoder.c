/* The CoreSight jf_decoder: drives OpenCSD's push-style decode trees from a pull API.
 *
 * OpenCSD calls back with each generic element; the callback converts it into flow
 * records in a small ring and answers WAIT once `lookahead` records are waiting, which
 * makes OpenCSD stop and keep its state until we FLUSH it. So memory stays constant
 * whatever the trace length, and decoding runs only as far as the consumer has read. */
#include "cs_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Trace bytes handed to OpenCSD per call: small enough that a WAIT costs little. */
enum { FEED_CHUNK = 4096 };

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
	size_t pos;                /* next byte of the current buffer to feed */
	int waiting;               /* OpenCSD answered WAIT: FLUSH before feeding more */
	int eot_sent;

	struct jf_flow *ring;      /* pending records */
	unsigned head, count, cap, lookahead;
	struct jf_cs_clock clock;
	struct jf_error failure;   /* a fatal problem met inside a callback */
	int failed;
};

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
	/* The ring always has room for one element's records: we answer WAIT before it
	 * could fill up, and OpenCSD sends nothing more until we FLUSH. */
	for (i = 0; i < n && d->count < d->cap; i++)
		*push(d) = out[i];
	return d->count >= d->lookahead ? OCSD_RESP_WAIT : OCSD_RESP_CONT;
}

static void note_not_decoded(struct cs_decoder *d, const struct jf_cs_source *src,
			     const char *why)
{
	struct jf_flow *f;

	if (d->count >= d->cap)
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
	d->pos = 0;
	d->waiting = 0;
	d->eot_sent = 0;
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
		if (st->channel_unsynced && d->count < d->cap) {
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
	if (undecoded && d->count < d->cap) {
		struct jf_flow *f = push(d);

		f->kind = JF_FLOW_LOST;
		f->flags = JF_FLOW_IP_SUPPRESSED;
		f->offset = b->base_offset + b->size;
		f->u.lost.bytes = undecoded;
		f->u.lost.reason = JF_LOST_SKIPPED;
	}
}

/* OpenCSD gave up on the data path: report where, reset, and go on past the bad spot. */
static void recover(struct cs_decoder *d, size_t fed_from)
{
	const struct jf_cs_buffer *b = &d->buffers[d->cur].cfg;
	ocsd_trc_index_t index = 0;
	uint8_t chan = 0;
	char msg[256] = "";
	ocsd_err_t code = ocsd_get_last_err(&index, &chan, msg, sizeof(msg));
	size_t resume = d->pos;
	struct jf_flow *f;
	uint32_t used = 0;

	if (d->count < d->cap) {
		f = push(d);
		f->kind = JF_FLOW_ERROR;
		f->flags = JF_FLOW_IP_SUPPRESSED;
		f->source = chan & 0x7f;
		f->offset = b->base_offset + (index >= fed_from && index < b->size ? index : fed_from);
		f->u.error.code = code != OCSD_OK ? -(int32_t)code : -(int32_t)OCSD_ERR_DATA_DECODE_FATAL;
		f->u.error.phase = JF_PHASE_DECODE;
		jf_cs_copy_text(f->u.error.text, sizeof(f->u.error.text),
				msg[0] ? msg : "OpenCSD data path failure");
		/* One line: OpenCSD's messages end in newlines. */
		for (char *p = f->u.error.text; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	}
	ocsd_dt_process_data(d->tree.handle, OCSD_OP_RESET, 0, 0, NULL, &used);
	/* Always move forward, to the next frame boundary for formatted data. */
	if (index + 1 > resume && index < b->size)
		resume = index + 1;
	if (resume <= fed_from)
		resume = fed_from + 1;
	if (b->formatted)
		resume = (resume + 15) & ~(size_t)15;
	d->pos = resume < b->size ? resume : b->size;
	d->waiting = 0;
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
		resp = ocsd_dt_process_data(d->tree.handle, OCSD_OP_FLUSH, 0, 0, NULL, &used);
	} else if (d->pos < b->size) {
		size_t n = b->size - d->pos;

		if (n > FEED_CHUNK)
			n = FEED_CHUNK;
		resp = ocsd_dt_process_data(d->tree.handle, OCSD_OP_DATA, d->pos, (uint32_t)n,
					    b->data + d->pos, &used);
		d->pos += used;
	} else if (!d->eot_sent) {
		d->eot_sent = 1;
		resp = ocsd_dt_process_data(d->tree.handle, OCSD_OP_EOT, 0, 0, NULL, &used);
	} else {
		note_buffer_losses(d);
		jf_cs_tree_close(&d->tree);
		d->tree_open = 0;
		d->cur++;
		return 0;
	}
	if (OCSD_DATA_RESP_IS_FATAL(resp)) {
		if (d->eot_sent)
			d->waiting = 0; /* nothing to resume after the end */
		else
			recover(d, fed_from);
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
