/* Announcing an analysis event (listeners.h): to the counters (counters.h), called
 * directly, and to the attached listeners (the views), through their pointers. flow.c and
 * merge.c decide what happened and announce it here; they count nothing themselves. */
#ifndef JITFLOW_EVENTS_H
#define JITFLOW_EVENTS_H

#include "analysis_internal.h"
#include "counters.h"

/* The attached listeners hear a block before the counters count it: they place it at the
 * instruction position a->insns, where it starts. They get a copy, so that e itself never
 * leaves the caller's registers on the path without listeners. */
static inline void jf_announce_block(struct jf_analysis *a, struct jf_split_result *split,
				     const struct jf_block_event *e)
{
	if (__builtin_expect(a->listeners.n != 0, 0)) {
		struct jf_block_event heard = *e;

		jf_listeners_block_counted(a, &a->listeners, &heard);
	}
	jf_count_block(a, split, e);
}

static inline void jf_announce_region_entered(struct jf_analysis *a, int32_t tid,
					      const struct live_region *r)
{
	jf_count_region_entered(a, r);
	jf_emit_region_entered(a, &a->listeners, tid, r);
}

static inline void jf_announce_loop_iteration(struct jf_analysis *a, int32_t tid, int32_t trace)
{
	jf_count_loop_iteration(a, trace);
	jf_emit_loop_iteration(a, &a->listeners, tid, trace);
}

static inline void jf_announce_guard_passed(struct jf_analysis *a, int32_t tid, uint32_t guard)
{
	jf_count_guard_passed(a, guard);
	jf_emit_guard_passed(a, &a->listeners, tid, guard);
}

/* An exit of guard row `guard` reached the bridge attached to it; or the guard's branch
 * ran and the trace stopped before its direction was known; and below, a problem in the
 * trace. Only the counters hear these (no listener has needed them). */
static inline void jf_announce_guard_to_bridge(struct jf_analysis *a, uint32_t guard)
{
	jf_count_guard_to_bridge(a, guard);
}

static inline void jf_announce_guard_unresolved(struct jf_analysis *a, uint32_t guard)
{
	jf_count_guard_unresolved(a, guard);
}

/* A thread began a collection (only the counters hear it). */
static inline void jf_announce_collection(struct jf_split_result *split)
{
	jf_count_collection(split);
}

/* The trace lost its way: a decode error, lost data or an overflow (flow f). */
static inline void jf_announce_problem(struct jf_analysis *a, const struct jf_flow *f)
{
	jf_count_problem(a, f);
}

/* At the thread's last timestamp (when has_time). */
static inline void jf_announce_guard_exited(struct jf_analysis *a, struct jf_split_result *split,
					    int32_t tid, int has_time, uint64_t time,
					    uint32_t guard)
{
	jf_count_guard_exited(a, split, guard);
	jf_emit_guard_exited(a, &a->listeners, tid, has_time, time, guard);
}

/* A timestamp `to` on a thread whose clock stood at `from` (when has_from): what ran since
 * was of split class `split_cls`, code class `cls`, region group `group`, in trace row
 * `trace` and in a phase span making trace row `phase_trace` (-1: none). */
static inline void jf_announce_time(struct jf_analysis *a, struct jf_split_result *split,
				    int32_t tid, int has_from, uint64_t from, uint64_t to,
				    enum jf_split_class split_cls, uint8_t cls, uint8_t group,
				    int32_t trace, int32_t phase_trace)
{
	jf_emit_time_attributed(a, &a->listeners, tid, has_from, from, to);
	if (has_from && to >= from)
		jf_count_time(a, split, to - from, split_cls, cls, group, trace, phase_trace);
}

/* The seam of two parts (merge.c) settled a guard that a's part ended on. */
static inline void jf_announce_seam_guard_passed(struct jf_analysis *a, int32_t tid,
						 uint32_t guard)
{
	jf_count_guard_passed(a, guard);
	jf_emit_seam_guard_passed(a, tid, guard);
}

static inline void jf_announce_seam_guard_exited(struct jf_analysis *a,
						 struct jf_split_result *split, int32_t tid,
						 int has_time, uint64_t time, uint32_t guard)
{
	jf_count_guard_exited(a, split, guard);
	jf_emit_seam_guard_exited(a, tid, has_time, time, guard);
}

#endif
