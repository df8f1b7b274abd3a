#include "flow_buffer.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK_RECORD = offsetof(struct jf_flow, u) + sizeof(struct jf_block) };

/* Records follow each other: both sizes keep the next one aligned for its 64-bit fields. */
_Static_assert(BLOCK_RECORD % 8 == 0 && sizeof(struct jf_flow) % 8 == 0,
	       "flow records must stay 8-byte aligned");

size_t jf_flow_record_size(const struct jf_flow *f)
{
	return f->kind == JF_FLOW_BLOCK ? BLOCK_RECORD : sizeof(struct jf_flow);
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
	return pos + n;
}

int jf_flow_buffer_same(const struct jf_flow_buffer *a, size_t pa, const struct jf_flow_buffer *b,
			size_t pb)
{
	size_t n = jf_flow_record_size(jf_flow_buffer_at(a, pa));

	return n == jf_flow_record_size(jf_flow_buffer_at(b, pb)) &&
	       memcmp(a->data + pa, b->data + pb, n) == 0;
}
