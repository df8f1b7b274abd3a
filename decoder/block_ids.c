/* The table of distinct blocks behind block ids (block_ids.h). */
#include "block_ids.h"

#include <stddef.h>
#include <stdlib.h>

enum { FIRST_SLOTS_LOG2 = 12 };

_Static_assert(offsetof(struct jf_flow, kind) == 0 && offsetof(struct jf_flow, flags) == 2 &&
	       offsetof(struct jf_flow, source) == 4 && offsetof(struct jf_flow, offset) == 8,
	       "jf_block_head: kind, flags and source are not a record's first 8 bytes");
_Static_assert(sizeof(struct jf_block) == 3 * sizeof(uint64_t) + sizeof(uint32_t) + 4,
	       "struct jf_block has padding: jf_block_same would compare it");

int jf_block_table_init(struct jf_block_table *t)
{
	memset(t, 0, sizeof(*t));
	t->slots = calloc((size_t)1 << FIRST_SLOTS_LOG2, sizeof(*t->slots));
	t->slots_log2 = FIRST_SLOTS_LOG2;
	return t->slots ? 0 : -1;
}

void jf_block_table_fini(struct jf_block_table *t)
{
	free(t->blocks);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* The table twice as large, every id hashed again. */
static int grow_slots(struct jf_block_table *t)
{
	uint32_t *old = t->slots;
	size_t size, i, at;

	if (t->slots_log2 >= 31)
		return -1;
	size = (size_t)1 << (t->slots_log2 + 1);
	if (!(t->slots = calloc(size, sizeof(*t->slots)))) {
		t->slots = old;
		return -1;
	}
	t->slots_log2++;
	for (i = 0; i < t->nblocks; i++) {
		at = jf_block_table_slot(t, &t->blocks[i]);
		while (t->slots[at])
			at = (at + 1) & (size - 1);
		t->slots[at] = (uint32_t)i + 1;
	}
	free(old);
	return 0;
}

uint32_t jf_block_table_add(struct jf_block_table *t, const struct jf_block *b)
{
	size_t cap, mask, at;
	void *p;

	if (t->nblocks >= JF_BLOCK_STREAM_RECORD - 1)
		return JF_BLOCK_STREAM_RECORD;
	/* At most half full, so that probes stay short (and end at an empty slot). */
	if (2 * (t->nblocks + 1) > ((size_t)1 << t->slots_log2) && grow_slots(t) < 0)
		return JF_BLOCK_STREAM_RECORD;
	if (t->nblocks == t->cap_blocks) {
		cap = t->cap_blocks ? 2 * t->cap_blocks : 1024;
		if (!(p = realloc(t->blocks, cap * sizeof(*t->blocks))))
			return JF_BLOCK_STREAM_RECORD;
		t->blocks = p;
		t->cap_blocks = cap;
	}
	mask = ((size_t)1 << t->slots_log2) - 1;
	for (at = jf_block_table_slot(t, b); t->slots[at]; at = (at + 1) & mask)
		;
	t->blocks[t->nblocks] = *b;
	t->slots[at] = (uint32_t)++t->nblocks;
	return (uint32_t)(t->nblocks - 1);
}
