/* The counters: what the result counts (entries and iterations of traces and regions,
 * exits and passes of guards, instructions and time per trace, region and thread, the
 * interpreter/jitted/native split and its transitions, instructions and time per
 * iteration, decode errors, losses and overflows), counted from the analysis events
 * (listeners.h) and from nothing else.
 *
 * They are a listener like the views, with two differences that keep `report` as fast as
 * counting in place: they are always there, so events.h calls them directly, inline,
 * instead of through a jf_listener's pointers (a block is the hottest event and costs a
 * few additions); and their state is the rows of the analysis's tables and each thread's
 * split (struct jf_split_result in thread_state, handed to them so that a block costs no
 * lookup), which merge.c adds up and result.c copies out. */
#ifndef JITFLOW_COUNTERS_H
#define JITFLOW_COUNTERS_H

#include "analysis_internal.h"

static inline void jf_count_block(struct jf_analysis *a, struct jf_split_result *split,
				  const struct jf_block_event *e)
{
	enum jf_split_class to = (enum jf_split_class)e->split;
	uint32_t n = e->b->ninsn;

	a->blocks++;
	a->insns += n;
	if (e->cls == JF_CLASS_UNKNOWN)
		a->image_misses++;
	split->insns[to] += n;
	split->by_class[e->cls] += n;
	if (e->r && e->cls == e->r->cls)
		split->insns_by_group[e->r->group] += n;
	if (e->has_from && e->from_split != to)
		split->transitions[e->from_split][to]++;
	if (e->trace_to_trace) {
		split->trace_to_trace++;
		jf_trace_link_add(a, a->traces[e->from_trace].trace_id,
				  a->traces[e->trace].trace_id, 1);
	}
	if (e->trace >= 0)
		a->traces[e->trace].insns += n;
	if (e->phase_trace >= 0) {
		if (e->cls == JF_CLASS_TRACING)
			a->traces[e->phase_trace].tracing_insns += n;
		else if (e->cls == JF_CLASS_COMPILING)
			a->traces[e->phase_trace].compiling_insns += n;
	}
	if (e->r)
		a->regions[e->r->region].insns += n;
	if (a->cur.open) {
		a->cur.insns += n;
		a->cur.by_split[to] += n;
		a->cur.by_class[e->cls] += n;
	} else {
		a->pre.insns += n;
		a->pre.by_split[to] += n;
		a->pre.by_class[e->cls] += n;
	}
}

static inline void jf_count_region_entered(struct jf_analysis *a, const struct live_region *r)
{
	a->regions[r->region].entries++;
	if (r->trace >= 0)
		a->traces[r->trace].entries++;
}

static inline void jf_count_loop_iteration(struct jf_analysis *a, int32_t trace)
{
	a->traces[trace].iterations++;
}

static inline void jf_count_guard_passed(struct jf_analysis *a, uint32_t guard)
{
	a->guards[guard].passes++;
}

static inline void jf_count_guard_exited(struct jf_analysis *a, struct jf_split_result *split,
					 uint32_t guard)
{
	struct jf_guard_result *g = &a->guards[guard];
	uint32_t tr;

	g->exits++;
	split->guard_exits++;
	if (jf_index_map_get(&a->trace_by_id, g->trace_id, &tr))
		a->traces[tr].exits++;
}

/* A thread called into a collector entry. */
static inline void jf_count_collection(struct jf_split_result *split)
{
	split->collections++;
}

/* An exit of guard row `guard` reached the bridge attached to it. */
static inline void jf_count_guard_to_bridge(struct jf_analysis *a, uint32_t guard)
{
	a->guards[guard].to_bridge++;
}

/* Guard row `guard`'s branch ran, and the trace stopped before its direction was known. */
static inline void jf_count_guard_unresolved(struct jf_analysis *a, uint32_t guard)
{
	a->guards[guard].unresolved++;
}

/* A decode error, lost data or an overflow (flow f): counted, and its site kept while
 * there is room (problems.c). */
void jf_count_problem(struct jf_analysis *a, const struct jf_flow *f);

/* delta of the clock went to what ran last on the thread: split class `to`, code class
 * `cls` and region group `group` (0: none), trace row `trace` (-1: none), in a phase
 * span making trace row `phase_trace` (-1: none). */
static inline void jf_count_time(struct jf_analysis *a, struct jf_split_result *split,
				 uint64_t delta, enum jf_split_class to, uint8_t cls,
				 uint8_t group, int32_t trace, int32_t phase_trace)
{
	split->time[to] += delta;
	split->time_by_class[cls] += delta;
	split->time_by_group[group] += delta;
	if (trace >= 0)
		a->traces[trace].time += delta;
	if (phase_trace >= 0) {
		if (cls == JF_CLASS_TRACING)
			a->traces[phase_trace].tracing_time += delta;
		else if (cls == JF_CLASS_COMPILING)
			a->traces[phase_trace].compiling_time += delta;
	}
	if (a->cur.open)
		a->cur.time += delta;
	else
		a->pre.time += delta;
}

#endif
