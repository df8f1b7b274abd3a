/* Internal: block ids, as the compact block stream gives them (jitflow/block_stream.h): a
 * table of distinct blocks, each with an id from 0 up in the order first seen, and the
 * context (source, time) a block given as an id shares with the record before it. Used by
 * the stream itself (block_stream.c) and by the parts of a stream decoded on several
 * threads (block_stream_parallel.c), whose ids are their own until the stream renumbers
 * them. */
#ifndef JITFLOW_BLOCK_IDS_H
#define JITFLOW_BLOCK_IDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "jitflow/block_stream.h"
#include "jitflow/flow.h"

struct jf_block_table {
	struct jf_block *blocks;   /* by id */
	size_t nblocks, cap_blocks;
	uint32_t *slots;           /* id + 1, 0 = empty */
	unsigned slots_log2;
};

/* <0 if out of memory. */
int jf_block_table_init(struct jf_block_table *t);
void jf_block_table_fini(struct jf_block_table *t);

/* A new id for b, which the table does not hold. Returns the id, or
 * JF_BLOCK_STREAM_RECORD if out of memory (or out of ids). */
uint32_t jf_block_table_add(struct jf_block_table *t, const struct jf_block *b);

/* By the start and the instruction count only (one multiply): blocks that share both
 * (the same code in another mode, say) are rare, and probing finds them. */
static inline size_t jf_block_table_slot(const struct jf_block_table *t, const struct jf_block *b)
{
	uint64_t h = (b->start ^ ((uint64_t)b->ninsn << 48)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> (64 - t->slots_log2));
}

/* Every field: the struct has none but its fields' bytes (a compile-time check in
 * block_ids.c), and a compare of its 32 bytes is two vector compares (written out: GCC
 * makes memcmp's a chain of 8-byte compares and branches). */
static inline int jf_block_same(const struct jf_block *a, const struct jf_block *b)
{
#ifdef __SSE2__
	const __m128i *x = (const __m128i *)(const void *)a, *y = (const __m128i *)(const void *)b;
	__m128i eq = _mm_and_si128(_mm_cmpeq_epi8(_mm_loadu_si128(x), _mm_loadu_si128(y)),
				   _mm_cmpeq_epi8(_mm_loadu_si128(x + 1), _mm_loadu_si128(y + 1)));

	return _mm_movemask_epi8(eq) == 0xffff;
#else
	return !memcmp(a, b, sizeof(*a));
#endif
}

/* The slot value (b's id + 1) of b in a table's slots (mask: their number - 1), probed from
 * at on, or 0 where b is not there. Given the table's fields rather than the table, so that
 * a caller's loop keeps them in registers (jf_block_ids_held). */
static inline uint32_t jf_block_slots_find(const uint32_t *slots, const struct jf_block *blocks,
					   size_t mask, size_t at, const struct jf_block *b)
{
	uint32_t slot;

	for (;; at = (at + 1) & mask)
		if (!(slot = slots[at]) || jf_block_same(&blocks[slot - 1], b))
			return slot;
}

/* b's id (made if new), or JF_BLOCK_STREAM_RECORD if out of memory, found by hashing b
 * into an open-addressed table of ids. Inline: it runs once per block. (Trying first the
 * id that followed the block before it last time made no difference on pt-latency.sh's
 * buffer: reading the decoder's records costs the time, not the lookup.) */
static inline uint32_t jf_block_table_id(struct jf_block_table *t, const struct jf_block *b)
{
	uint32_t slot = jf_block_slots_find(t->slots, t->blocks,
					    ((size_t)1 << t->slots_log2) - 1,
					    jf_block_table_slot(t, b), b);

	return slot ? slot - 1 : jf_block_table_add(t, b);
}

/* The context of the record given last, which a block given as an id shares. */
struct jf_block_context {
	uint32_t source;
	uint16_t time_flag;
	uint64_t time;
	uint64_t head;   /* the first 8 bytes of a block record in this context (kind,
			  * flags, source: jf_block_head), compared in one go */
};

/* A record's kind, flags and source, its first 8 bytes (a compile-time check in
 * block_ids.c), as one number. */
static inline uint64_t jf_block_head(const struct jf_flow *fl)
{
	uint64_t head;

	memcpy(&head, fl, sizeof(head));
	return head;
}

static inline void jf_block_context_of(struct jf_block_context *c, const struct jf_flow *fl)
{
	struct jf_flow block = { .kind = JF_FLOW_BLOCK };

	c->source = fl->source;
	c->time_flag = fl->flags & JF_FLOW_HAS_TIME;
	c->time = fl->time;
	block.flags = c->time_flag;
	block.source = c->source;
	c->head = jf_block_head(&block);
}

static inline int jf_block_context_same(const struct jf_block_context *a,
					const struct jf_block_context *b)
{
	return a->source == b->source && a->time_flag == b->time_flag && a->time == b->time;
}

/* The ids of flows[i], flows[i + 1]... (up to n) while each is a block in context c that
 * t holds, as jf_block_entry gives them, into ids; returns where that stops (n, or a
 * record, or a block new to t: jf_block_entry's), with the blocks' instructions added to
 * *insns. The loop that runs once per block of a trace: the table's fields, the context
 * and the sum stay in registers, which a loop calling jf_block_entry kept on the stack. */
static inline size_t jf_block_ids_held(const struct jf_block_table *t,
				       const struct jf_block_context *c,
				       const struct jf_flow *flows, size_t i, size_t n,
				       uint32_t *ids, uint64_t *insns)
{
	const uint32_t *slots = t->slots;
	const struct jf_block *blocks = t->blocks;
	size_t mask = ((size_t)1 << t->slots_log2) - 1;
	uint64_t head = c->head, time = c->time, sum = 0;
	uint32_t slot;

	for (; i < n; i++) {
		const struct jf_flow *fl = &flows[i];

		if (jf_block_head(fl) != head || fl->time != time || fl->ip != fl->u.block.start)
			break;
		slot = jf_block_slots_find(slots, blocks, mask,
					   jf_block_table_slot(t, &fl->u.block), &fl->u.block);
		if (!slot)
			break;
		ids[i] = slot - 1;
		sum += fl->u.block.ninsn;
	}
	*insns += sum;
	return i;
}

/* Record fl's entry in context c: its block's id in t where fl is a block that is what
 * jf_block_stream_record makes of that id in c (no flag but the time's, the same source
 * and time, ip at the block's start); else JF_BLOCK_STREAM_RECORD, and fl's context
 * becomes c. */
static inline uint32_t jf_block_entry(struct jf_block_table *t, struct jf_block_context *c,
				      const struct jf_flow *fl)
{
	uint32_t id = JF_BLOCK_STREAM_RECORD;

	if (jf_block_head(fl) == c->head && fl->time == c->time && fl->ip == fl->u.block.start)
		id = jf_block_table_id(t, &fl->u.block);
	if (id == JF_BLOCK_STREAM_RECORD)
		jf_block_context_of(c, fl);
	return id;
}

#endif
