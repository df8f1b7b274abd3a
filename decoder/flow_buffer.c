#include "flow_buffer.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define RECORD(member) ((offsetof(struct jf_flow, u) + sizeof(((struct jf_flow *)0)->u.member) + 7) & ~(size_t)7)

enum { BLOCK_RECORD = offsetof(struct jf_flow, u) + sizeof(struct jf_block) };

/* Records follow each other: every size keeps the next one aligned for its 64-bit fields. */
_Static_assert(BLOCK_RECORD % 8 == 0 && sizeof(struct jf_flow) % 8 == 0,
	       "flow records must stay 8-byte aligned");

/* The header and the union member the kind uses (flow.h), nothing more: most records of a
 * long trace are tracing on/off events, and copying and comparing their whole union (a
 * 64-byte error text) was most of what a parallel decode added per record. */
size_t jf_flow_record_size(const struct jf_flow *f)
{
	switch (f->kind) {
	case JF_FLOW_BLOCK: return BLOCK_RECORD;
	case JF_FLOW_ENABLED: return RECORD(enabled);
	case JF_FLOW_DISABLED: return RECORD(disabled);
	case JF_FLOW_ASYNC: return RECORD(async);
	case JF_FLOW_EXEC_MODE: return RECORD(exec_mode);
	case JF_FLOW_PTWRITE: return RECORD(ptwrite);
	case JF_FLOW_CONTEXT: return RECORD(context);
	case JF_FLOW_OTHER: return RECORD(other);
	case JF_FLOW_LOST: return RECORD(lost);
	case JF_FLOW_OVERFLOW: /* the header says it all */
	case JF_FLOW_TIME:
	case JF_FLOW_END: return offsetof(struct jf_flow, u);
	default: return sizeof(struct jf_flow); /* errors, and any kind added later */
	}
}

int jf_flow_buffer_push(struct jf_flow_buffer *b, const struct jf_flow *f)
{
	size_t n = jf_flow_record_size(f);

	if (b->len + n > b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 64 * 1024;
		uint8_t *data;

		while (cap < b->len + n)
			cap *= 2;
		data = realloc(b->data, cap);
		if (!data)
			return -1;
		b->data = data;
		b->cap = cap;
	}
	memcpy(b->data + b->len, f, n);
	b->len += n;
	b->count++;
	return 0;
}

void jf_flow_buffer_clear(struct jf_flow_buffer *b)
{
	b->len = 0;
	b->count = 0;
}

void jf_flow_buffer_fini(struct jf_flow_buffer *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

size_t jf_flow_buffer_get(const struct jf_flow_buffer *b, size_t pos, struct jf_flow *f)
{
	size_t n = jf_flow_record_size(jf_flow_buffer_at(b, pos));

	memcpy(f, b->data + pos, n);
	/* The rest of the union as a decoder leaves it: zero (records are cleared before
	 * they are filled). */
	if (n < sizeof(*f))
		memset((char *)f + n, 0, sizeof(*f) - n);
	return pos + n;
}

uint64_t jf_flow_hash(uint64_t h, const struct jf_flow *f)
{
	size_t i, n = jf_flow_record_size(f) / 8;
	uint64_t w;

	/* FNV-1a by 64-bit words (records are cleared before they are filled, and their
	 * size is a multiple of 8). */
	for (i = 0; i < n; i++) {
		memcpy(&w, (const char *)f + 8 * i, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	return h;
}

int jf_flow_buffer_same(const struct jf_flow_buffer *a, size_t pa, const struct jf_flow_buffer *b,
			size_t pb)
{
	size_t n = jf_flow_record_size(jf_flow_buffer_at(a, pa));

	return n == jf_flow_record_size(jf_flow_buffer_at(b, pb)) &&
	       memcmp(a->data + pa, b->data + pb, n) == 0;
}

void *jf_flow_buffer_part_new(void *ctx, struct jf_codemap *map)
{
	(void)ctx;
	(void)map;
	return calloc(1, sizeof(struct jf_flow_buffer));
}

int jf_flow_buffer_part_flow(void *part, const struct jf_flow *f)
{
	return jf_flow_buffer_push(part, f);
}

void jf_flow_buffer_part_free(void *part)
{
	jf_flow_buffer_fini(part);
	free(part);
}
