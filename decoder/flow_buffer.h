/* Internal: flow records kept in memory in trace order, each as its header and the union
 * member its kind uses (a block in 64 bytes, tracing on/off in 40), not the whole union. */
#ifndef JITFLOW_FLOW_BUFFER_H
#define JITFLOW_FLOW_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/flow.h"

struct jf_flow_buffer {
	uint8_t *data;
	size_t len, cap;     /* bytes */
	size_t count;        /* records */
};

/* Bytes a record of this kind takes in a buffer. */
size_t jf_flow_record_size(const struct jf_flow *f);

int jf_flow_buffer_push(struct jf_flow_buffer *b, const struct jf_flow *f);
void jf_flow_buffer_clear(struct jf_flow_buffer *b);
void jf_flow_buffer_fini(struct jf_flow_buffer *b);

/* The record at byte position pos (< len); the next one is at pos + its record size.
 * Only the record's own bytes may be read: copy it out with jf_flow_buffer_get. */
static inline const struct jf_flow *jf_flow_buffer_at(const struct jf_flow_buffer *b,
						      size_t pos)
{
	return (const struct jf_flow *)(const void *)(b->data + pos);
}

/* Copy the record at pos into *f; returns the position of the next record. */
size_t jf_flow_buffer_get(const struct jf_flow_buffer *b, size_t pos, struct jf_flow *f);

/* h (0 to start) extended by record f's own bytes, as a buffer keeps them: for checking
 * that two decoders gave the same records without keeping them. */
uint64_t jf_flow_hash(uint64_t h, const struct jf_flow *f);

/* Whether the records at pa in a and pb in b are the same flow. */
int jf_flow_buffer_same(const struct jf_flow_buffer *a, size_t pa, const struct jf_flow_buffer *b,
			size_t pb);

/* A part (jitflow/pt_parallel.h: jf_pt_part_ops) that keeps its records in a flow buffer:
 * part_new, part_flow and part_free for callers whose part_take reads the buffer. */
void *jf_flow_buffer_part_new(void *ctx, struct jf_codemap *map);
int jf_flow_buffer_part_flow(void *part, const struct jf_flow *f);
void jf_flow_buffer_part_free(void *part);

#endif
