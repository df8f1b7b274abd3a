/* Counted points (zone POINT records): instructions whose passes a runtime counts itself,
 * counted here from the flow. Blocks are straight runs of instructions (the analysis
 * requires blocks that end at every jump and call), so a block passes a point exactly when
 * the point's address lies between its first and last instruction. */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

int32_t jf_point_index(struct jf_analysis *a, uint64_t trace_id, uint64_t point_id,
		       uint32_t kind)
{
	uint64_t key = (trace_id * 0x9e3779b97f4a7c15ull) ^ (point_id * 0x100000001b3ull) ^ kind;
	uint32_t idx;

	for (;; key++) {
		const struct jf_point_result *p;

		if (!jf_index_map_get(&a->point_by_key, key, &idx))
			break;
		p = &a->points[idx];
		if (p->trace_id == trace_id && p->point_id == point_id && p->kind == kind)
			return (int32_t)idx;
	}
	if (jf_grow((void **)&a->points, &a->points_cap, a->npoints, sizeof(*a->points)) < 0 ||
	    jf_index_map_put(&a->point_by_key, key, (uint32_t)a->npoints) < 0)
		return -1;
	a->points[a->npoints].trace_id = trace_id;
	a->points[a->npoints].point_id = point_id;
	a->points[a->npoints].kind = kind;
	return (int32_t)a->npoints++;
}

/* Index of the first live point at or above addr. */
static size_t first_at_or_above(const struct jf_zone_model *zm, uint64_t addr)
{
	size_t lo = 0, hi = zm->npoints;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (zm->points[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int jf_points_add(struct jf_analysis *a, const struct jf_zone_record *rec)
{
	struct jf_zone_model *zm = &a->zm;
	int32_t p = jf_point_index(a, rec->u.point.trace_id, rec->u.point.point_id,
				   rec->u.point.kind);
	size_t i;

	if (p < 0)
		return -1;
	a->points[p].addr = rec->u.point.addr;
	i = first_at_or_above(zm, rec->u.point.addr);
	if (i == zm->npoints || zm->points[i].addr != rec->u.point.addr) {
		/* a new address (code reused: the old point there is replaced) */
		if (jf_grow((void **)&zm->points, &zm->points_cap, zm->npoints,
			    sizeof(*zm->points)) < 0)
			return -1;
		memmove(&zm->points[i + 1], &zm->points[i], (zm->npoints - i) * sizeof(*zm->points));
		zm->npoints++;
	}
	zm->points[i].addr = rec->u.point.addr;
	zm->points[i].point = (uint32_t)p;
	return 0;
}

void jf_points_count(struct jf_analysis *a, const struct live_region *r, const struct jf_block *b)
{
	struct jf_zone_model *zm = &a->zm;
	size_t i;

	if (!zm->npoints)
		return;
	for (i = first_at_or_above(zm, b->start); i < zm->npoints && zm->points[i].addr <= b->last;
	     i++) {
		struct jf_point_result *p = &a->points[zm->points[i].point];

		/* a point of code freed since: its address may hold other code now */
		if (r->region_key == p->trace_id)
			p->passes++;
	}
}
