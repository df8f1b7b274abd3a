/* The backend-neutral decoder handle: dispatches to a backend and counts what passes. */
#include "jitflow/decoder.h"
#include "jitflow/count_gate.h"
#include "decoder_internal.h"

#include <stdlib.h>
#include <string.h>

struct jf_decoder {
	const struct jf_decoder_ops *ops;
	void *self;
	jf_decoder_batch_fn next_batch; /* NULL: jf_decoder_next_batch gives one record */
	jf_decoder_gate_fn set_gate;    /* NULL: returns every block (count_gate.h) */
	struct jf_decode_stats stats;
	jf_decoder_progress_fn progress;
	void *progress_ctx;
	uint64_t progress_next;   /* the offset of the next call */
	struct jf_flow one;       /* jf_decoder_next_batch's record, for backends without
				   * next_batch */
};

enum { PROGRESS_STEP = 1 << 20 };

struct jf_decoder *jf_decoder_new(const struct jf_decoder_ops *ops, void *self)
{
	struct jf_decoder *dec = calloc(1, sizeof(*dec));

	if (!dec) {
		ops->free(self);
		return NULL;
	}
	dec->ops = ops;
	dec->self = self;
	return dec;
}

void jf_decoder_set_batch(struct jf_decoder *dec, jf_decoder_batch_fn fn)
{
	dec->next_batch = fn;
}

void jf_decoder_set_gate(struct jf_decoder *dec, jf_decoder_gate_fn fn)
{
	dec->set_gate = fn;
}

int jf_decoder_offer_count_gate(struct jf_decoder *dec, const struct jf_count_gate *gate)
{
	return dec->set_gate ? dec->set_gate(dec->self, gate) : 0;
}

void jf_decode_stats_span(struct jf_decode_stats *s, uint64_t first, uint64_t last)
{
	if (!s->has_time || first < s->first_time)
		s->first_time = first;
	if (!s->has_time || last > s->last_time)
		s->last_time = last;
	s->has_time = 1;
}

static void count(struct jf_decode_stats *s, const struct jf_flow *f)
{
	switch (f->kind) {
	case JF_FLOW_BLOCK:
		s->blocks++;
		s->insns += f->u.block.ninsn;
		break;
	case JF_FLOW_ERROR: {
		uint32_t code = f->u.error.code < 0 ? (uint32_t)-f->u.error.code : 0;

		s->errors++;
		s->errors_by_code[code < 63 ? code : 63]++;
		break;
	}
	case JF_FLOW_LOST:
		s->lost_bytes += f->u.lost.bytes;
		s->lost_insns += f->u.lost.insns;
		s->events++;
		break;
	case JF_FLOW_OVERFLOW:
		s->overflows++;
		s->events++;
		break;
	default:
		s->events++;
		break;
	}
	if (f->flags & JF_FLOW_HAS_TIME)
		jf_decode_stats_span(s, f->time, f->time);
}

void jf_decode_stats_count(struct jf_decode_stats *s, const struct jf_flow *f)
{
	count(s, f);
}

void jf_decode_stats_add(struct jf_decode_stats *to, const struct jf_decode_stats *from)
{
	int i;

	to->insns += from->insns;
	to->blocks += from->blocks;
	to->events += from->events;
	to->errors += from->errors;
	to->overflows += from->overflows;
	to->lost_bytes += from->lost_bytes;
	to->lost_insns += from->lost_insns;
	for (i = 0; i < 64; i++)
		to->errors_by_code[i] += from->errors_by_code[i];
	if (from->has_time)
		jf_decode_stats_span(to, from->first_time, from->last_time);
}

int jf_decoder_next(struct jf_decoder *dec, struct jf_flow *flow, struct jf_error *err)
{
	int rc = dec->ops->next(dec->self, flow, err);

	if (rc > 0)
		count(&dec->stats, flow);
	return rc;
}

int jf_decoder_next_batch(struct jf_decoder *dec, const struct jf_flow **flows, size_t *n,
			  struct jf_error *err)
{
	size_t i;
	int rc = jf_decoder_next_batch_uncounted(dec, flows, n, err);

	for (i = 0; rc > 0 && i < *n; i++)
		count(&dec->stats, &(*flows)[i]);
	return rc;
}

int jf_decoder_next_batch_uncounted(struct jf_decoder *dec, const struct jf_flow **flows,
				    size_t *n, struct jf_error *err)
{
	int rc;

	if (dec->next_batch) {
		rc = dec->next_batch(dec->self, flows, n, err);
	} else {
		rc = dec->ops->next(dec->self, &dec->one, err);
		*flows = &dec->one;
		*n = 1;
	}
	if (rc <= 0) {
		*flows = NULL;
		*n = 0;
	}
	return rc;
}

int jf_decoder_next_uncounted(struct jf_decoder *dec, struct jf_flow *flow,
			      struct jf_error *err)
{
	return dec->ops->next(dec->self, flow, err);
}

void jf_decoder_free(struct jf_decoder *dec)
{
	if (!dec)
		return;
	dec->ops->free(dec->self);
	free(dec);
}

void *jf_decoder_backend(struct jf_decoder *dec, const struct jf_decoder_ops *ops)
{
	return dec && dec->ops == ops ? dec->self : NULL;
}

const struct jf_decode_stats *jf_decoder_stats(const struct jf_decoder *dec)
{
	return &dec->stats;
}

struct jf_decode_stats *jf_decoder_stats_mut(struct jf_decoder *dec)
{
	return &dec->stats;
}

void jf_decoder_on_progress(struct jf_decoder *dec, jf_decoder_progress_fn fn, void *ctx)
{
	dec->progress = fn;
	dec->progress_ctx = ctx;
	dec->progress_next = 0;
}

void jf_decoder_report_progress(struct jf_decoder *dec, uint64_t offset)
{
	if (!dec || !dec->progress || offset < dec->progress_next)
		return;
	dec->progress_next = offset + PROGRESS_STEP;
	dec->progress(dec->progress_ctx, offset, &dec->stats);
}
