/* Result table entries keyed by the runtime's ids: created on first sight. */
#include <stdio.h>
#include <string.h>

#include "analysis_internal.h"

#define LOOKUP_OR_ADD(a, array, n, cap, map, key, init)                                  \
	do {                                                                               \
		uint32_t idx_;                                                             \
		if (jf_index_map_get(&(a)->map, (key), &idx_))                             \
			return (int32_t)idx_;                                              \
		if (jf_grow((void **)&(a)->array, &(a)->cap, (a)->n, sizeof(*(a)->array)) < 0 || \
		    jf_index_map_put(&(a)->map, (key), (uint32_t)(a)->n) < 0)              \
			return -1;                                                         \
		init;                                                                      \
		return (int32_t)(a)->n++;                                                  \
	} while (0)

int32_t jf_trace_index(struct jf_analysis *a, uint64_t trace_id)
{
	LOOKUP_OR_ADD(a, traces, ntraces, traces_cap, trace_by_id, trace_id,
		      a->traces[a->ntraces].trace_id = trace_id);
}

int32_t jf_guard_index(struct jf_analysis *a, uint64_t trace_id, uint64_t guard_id)
{
	uint64_t key = (trace_id * 0x9e3779b97f4a7c15ull) ^ guard_id;
	uint32_t idx;

	for (;; key++) {
		if (!jf_index_map_get(&a->guard_by_id, key, &idx))
			break;
		if (a->guards[idx].trace_id == trace_id && a->guards[idx].guard_id == guard_id)
			return (int32_t)idx;
	}
	if (jf_grow((void **)&a->guards, &a->guards_cap, a->nguards, sizeof(*a->guards)) < 0 ||
	    jf_index_map_put(&a->guard_by_id, key, (uint32_t)a->nguards) < 0)
		return -1;
	a->guards[a->nguards].trace_id = trace_id;
	a->guards[a->nguards].guard_id = guard_id;
	return (int32_t)a->nguards++;
}

/* Keys hashed from several fields are checked against the entry; on a collision the next
 * key is tried, so two different entries are never merged. */
int32_t jf_region_index(struct jf_analysis *a, const char *name, uint64_t addr)
{
	uint64_t key = jf_hash_string(name, addr);
	uint32_t idx;

	for (;; key++) {
		if (!jf_index_map_get(&a->region_by_key, key, &idx))
			break;
		if (a->regions[idx].addr == addr && !strncmp(a->regions[idx].name, name,
							      sizeof(a->regions[idx].name) - 1))
			return (int32_t)idx;
	}
	if (jf_grow((void **)&a->regions, &a->regions_cap, a->nregions, sizeof(*a->regions)) < 0 ||
	    jf_index_map_put(&a->region_by_key, key, (uint32_t)a->nregions) < 0)
		return -1;
	snprintf(a->regions[a->nregions].name, sizeof(a->regions[0].name), "%s", name);
	a->regions[a->nregions].addr = addr;
	return (int32_t)a->nregions++;
}

int32_t jf_bytecode_index(struct jf_analysis *a, uint64_t region_key, uint32_t pc_from,
			  uint32_t pc_to)
{
	uint64_t key = (region_key * 0x100000001b3ull) ^ ((uint64_t)pc_from << 32 | pc_to);
	uint32_t idx;

	for (;; key++) {
		const struct jf_bytecode_result *b;

		if (!jf_index_map_get(&a->bytecode_by_key, key, &idx))
			break;
		b = &a->bytecodes[idx];
		if (b->region_key == region_key && b->pc_from == pc_from && b->pc_to == pc_to)
			return (int32_t)idx;
	}
	if (jf_grow((void **)&a->bytecodes, &a->bytecodes_cap, a->nbytecodes,
		    sizeof(*a->bytecodes)) < 0 ||
	    jf_index_map_put(&a->bytecode_by_key, key, (uint32_t)a->nbytecodes) < 0)
		return -1;
	a->bytecodes[a->nbytecodes].region_key = region_key;
	a->bytecodes[a->nbytecodes].pc_from = pc_from;
	a->bytecodes[a->nbytecodes].pc_to = pc_to;
	return (int32_t)a->nbytecodes++;
}

int32_t jf_op_index(struct jf_analysis *a, uint16_t op_kind)
{
	LOOKUP_OR_ADD(a, ops, nops, ops_cap, op_by_kind, op_kind,
		      a->ops[a->nops].op_kind = op_kind);
}
