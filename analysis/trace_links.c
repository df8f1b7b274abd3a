/* Trace-to-trace transitions counted by the pair of traces (jitflow/analysis.h,
 * struct jf_trace_link_result): a table keyed by the two trace ids. */
#include "analysis_internal.h"

int jf_trace_link_add(struct jf_analysis *a, uint64_t from_trace, uint64_t to_trace, uint64_t n)
{
	uint64_t key = (from_trace * 0x9e3779b97f4a7c15ull) ^ (to_trace * 0x100000001b3ull);
	uint32_t idx;

	for (;; key++) {
		struct jf_trace_link_result *l;

		if (!jf_index_map_get(&a->link_by_key, key, &idx))
			break;
		l = &a->links[idx];
		if (l->from_trace == from_trace && l->to_trace == to_trace) {
			l->count += n;
			return 0;
		}
	}
	if (jf_grow((void **)&a->links, &a->links_cap, a->nlinks, sizeof(*a->links)) < 0 ||
	    jf_index_map_put(&a->link_by_key, key, (uint32_t)a->nlinks) < 0)
		return -1;
	a->links[a->nlinks].from_trace = from_trace;
	a->links[a->nlinks].to_trace = to_trace;
	a->links[a->nlinks].count = n;
	a->nlinks++;
	return 0;
}
