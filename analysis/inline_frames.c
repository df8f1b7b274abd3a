/* Inline frames: the functions around an inlined function's code, from INLINE_FRAMES
 * records (docs/zone-format.md), kept as a tree of frames so that a code-object map entry
 * names its whole chain with one node. Chains are few (one per inlining path a compiler
 * took), whatever the trace's length. */
#include <stdlib.h>

#include "analysis_internal.h"

const struct jf_inline_frame *jf_inline_frame_at(const struct jf_zone_model *zm, uint32_t node)
{
	return node && node <= zm->ninline_frames ? &zm->inline_frames[node - 1] : NULL;
}

/* The node of code_object's frame inside parent's (0: outermost); 0 when out of memory. */
static uint32_t intern(struct jf_zone_model *zm, uint32_t parent, uint16_t code_object)
{
	uint64_t key = (uint64_t)parent << 16 | code_object;
	uint32_t i;

	if (jf_index_map_get(&zm->inline_frame_by_key, key, &i))
		return i + 1;
	if (jf_grow((void **)&zm->inline_frames, &zm->inline_frames_cap, zm->ninline_frames,
		    sizeof(*zm->inline_frames)) < 0)
		return 0;
	i = (uint32_t)zm->ninline_frames;
	if (jf_index_map_put(&zm->inline_frame_by_key, key, i) < 0)
		return 0;
	zm->inline_frames[i].parent = parent;
	zm->inline_frames[i].code_object = code_object;
	zm->ninline_frames++;
	return i + 1;
}

/* The code-object map entry at code offset off, NULL when none starts there. */
static struct pc_entry *entry_starting_at(struct pc_map *m, uint32_t off)
{
	uint32_t lo = 0, hi = m->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->entries[mid].code_offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->entries[lo].code_offset == off ? &m->entries[lo] : NULL;
}

/* Entries come in groups, one per code-object map entry with inlined code: at its code
 * offset, depths 0, 1, ... outermost first. A group that does not start at depth 0, skips a
 * depth or names no code object, or whose offset starts no entry of the region's
 * code-object map (a map that came after the record replaced it), gives no chain. */
int jf_inline_frames_set(struct jf_zone_model *zm, const struct jf_zone_reader *reader,
			 const struct jf_zone_record *rec)
{
	struct live_region *r = jf_zone_model_region_at(zm, rec->u.pc_map.region_addr);
	uint32_t i = 0, n = rec->u.pc_map.count;

	if (!r || r->start != rec->u.pc_map.region_addr || !r->code_object_map.n)
		return 0;
	while (i < n) {
		struct jf_zone_pc_entry e;
		struct pc_entry *at;
		uint32_t node = 0, off, depth = 0;
		int whole = 1;

		jf_zone_pc_map_entry(reader, rec, i, &e);
		off = e.code_offset;
		for (; i < n; i++) {
			jf_zone_pc_map_entry(reader, rec, i, &e);
			if (e.code_offset != off)
				break;
			if (!whole || e.inline_depth != depth++ || !e.op_kind) {
				whole = 0;
				continue;
			}
			if (!(node = intern(zm, node, e.op_kind)))
				return -1;
		}
		/* entries of zero-size code share an offset with the code after it: each names
		 * the chain, whichever of them counts the instructions */
		for (at = entry_starting_at(&r->code_object_map, off);
		     at && at < r->code_object_map.entries + r->code_object_map.n &&
		     at->code_offset == off; at++)
			at->inline_chain = whole ? node : 0;
	}
	return 0;
}
