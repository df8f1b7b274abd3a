/* Merging the analyses of two consecutive parts of a trace.
 *
 * Sums are simple; what needs care is the seam. The later part saw its first blocks
 * without knowing what ran just before, so it counted them provisionally: an arrival at a
 * trace's entry as an entry, no transition, no time. The earlier part knows how it ended:
 * the last block's code, a guard whose direction the next block decides, the last
 * timestamp. Merging settles each of these exactly as one analysis of the whole would. */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "events.h"

static int32_t map_trace(struct jf_analysis *a, const struct jf_analysis *later, int32_t idx)
{
	return idx < 0 ? -1 : jf_trace_index(a, later->traces[idx].trace_id);
}

static int32_t map_guard(struct jf_analysis *a, const struct jf_analysis *later, int32_t idx)
{
	return idx < 0 ? -1 : jf_guard_index(a, later->guards[idx].trace_id, later->guards[idx].guard_id);
}

/* A guard branch ended a's part: the later part's first block on that thread decides it.
 * Returns 1 for an exit. */
static int resolve_seam_guard(struct jf_analysis *a, struct thread_state *ta,
			      const struct thread_state *tb)
{
	int32_t g = ta->pending_guard;

	if (g < 0 || !tb->has_first)
		return 0;
	ta->pending_guard = -1;
	if (!jf_guard_exited(&a->guards[g], tb->first_start != ta->pending_fallthrough)) {
		jf_announce_seam_guard_passed(a, ta->tid, (uint32_t)g);
		return 0;
	}
	ta->exit_guard = g;
	jf_announce_seam_guard_exited(a, &ta->split, ta->tid, ta->has_time, ta->last_time,
				      (uint32_t)g);
	return 1;
}

/* seam_exits[i]: exits of a's guard i settled at the seam. */
static int merge_tables(struct jf_analysis *a, const struct jf_analysis *later,
			const uint32_t *seam_exits)
{
	size_t i;

	for (i = 0; i < later->ntraces; i++) {
		const struct jf_trace_result *s = &later->traces[i];
		int32_t t = jf_trace_index(a, s->trace_id);
		struct jf_trace_result *d;

		if (t < 0)
			return -1;
		d = &a->traces[t];
		if (!d->kind) {
			d->kind = s->kind;
			d->parent_trace = s->parent_trace;
			d->parent_guard = s->parent_guard;
			d->code_object = s->code_object;
			d->link = s->link;
			d->link_trace = s->link_trace;
			memcpy(d->name, s->name, sizeof(d->name));
		}
		d->entries += s->entries;
		d->iterations += s->iterations;
		d->insns += s->insns;
		d->time += s->time;
		d->exits += s->exits;
		d->tracing_insns += s->tracing_insns;
		d->tracing_time += s->tracing_time;
		d->compiling_insns += s->compiling_insns;
		d->compiling_time += s->compiling_time;
	}
	for (i = 0; i < later->nguards; i++) {
		const struct jf_guard_result *s = &later->guards[i];
		int32_t g = jf_guard_index(a, s->trace_id, s->guard_id);
		struct jf_guard_result *d;

		if (g < 0)
			return -1;
		d = &a->guards[g];
		if (!d->branch_addr) {
			memcpy(d->kind, s->kind, sizeof(d->kind));
			d->branch_addr = s->branch_addr;
			d->stub_addr = s->stub_addr;
			d->resume_pc = s->resume_pc;
			d->flags = s->flags;
			d->code_object = s->code_object;
		}
		if (!d->has_bridge && s->has_bridge) {
			/* Exits settled at the seam happened at the later part's first block:
			 * after the bridge if it was attached before that block. */
			uint32_t seam = (size_t)g < a->nguards && seam_exits ? seam_exits[g] : 0;

			d->has_bridge = 1;
			d->bridge_id = s->bridge_id;
			d->exits_before_bridge = d->exits - (s->bridge_before_flow ? seam : 0) +
						 s->exits_before_bridge;
		}
		d->exits += s->exits;
		d->passes += s->passes;
		d->to_bridge += s->to_bridge;
		d->unresolved += s->unresolved;
	}
	for (i = 0; i < later->nregions; i++) {
		const struct jf_region_result *s = &later->regions[i];
		int32_t r = jf_region_index(a, s->name, s->addr);

		if (r < 0)
			return -1;
		a->regions[r].size = s->size;
		a->regions[r].kind = s->kind;
		a->regions[r].insns += s->insns;
		a->regions[r].entries += s->entries;
	}
	for (i = 0; i < later->nbytecodes; i++) {
		const struct jf_bytecode_result *s = &later->bytecodes[i];
		int32_t b = jf_bytecode_index(a, s->region_key, s->pc_from, s->pc_to);

		if (b < 0)
			return -1;
		a->bytecodes[b].insns += s->insns;
		a->bytecodes[b].time += s->time;
		if (!a->bytecodes[b].code_name[0]) {
			memcpy(a->bytecodes[b].code_name, s->code_name, sizeof(s->code_name));
			memcpy(a->bytecodes[b].code_file, s->code_file, sizeof(s->code_file));
			a->bytecodes[b].code_line = s->code_line;
		}
	}
	for (i = 0; i < later->nops; i++) {
		int32_t o = jf_op_index(a, later->ops[i].op_kind);

		if (o < 0)
			return -1;
		a->ops[o].insns += later->ops[i].insns;
		a->ops[o].time += later->ops[i].time;
	}
	for (i = 0; i < later->npoints; i++) {
		const struct jf_point_result *s = &later->points[i];
		int32_t p = jf_point_index(a, s->trace_id, s->point_id, s->kind);

		if (p < 0)
			return -1;
		a->points[p].addr = s->addr;
		a->points[p].passes += s->passes;
	}
	for (i = 0; i < later->nlinks; i++)
		if (jf_trace_link_add(a, later->links[i].from_trace, later->links[i].to_trace,
				      later->links[i].count) < 0)
			return -1;
	for (i = 0; i < later->zm.ncode_objects; i++)
		if (!jf_zone_model_code_object(&a->zm, later->zm.code_objects[i].id) &&
		    jf_zone_model_set_code_object(&a->zm, &later->zm.code_objects[i]) < 0)
			return -1;
	/* names given in the later part come after the earlier part's, one by one */
	for (i = 0; i < later->zm.nthread_names; i++) {
		char names[sizeof(later->zm.thread_names[i].name)], *name, *next;

		memcpy(names, later->zm.thread_names[i].name, sizeof(names));
		for (name = names; name; name = next) {
			next = strstr(name, " / ");
			if (next) {
				*next = '\0';
				next += 3;
			}
			if (jf_zone_model_set_thread_name(&a->zm, later->zm.thread_names[i].tid,
							  name) < 0)
				return -1;
		}
	}
	for (i = 0; i < later->zm.nop_names; i++) {
		if (!jf_zone_model_op_name(&a->zm, later->zm.op_names[i].kind) &&
		    jf_grow((void **)&a->zm.op_names, &a->zm.op_names_cap, a->zm.nop_names,
			    sizeof(*a->zm.op_names)) == 0)
			a->zm.op_names[a->zm.nop_names++] = later->zm.op_names[i];
	}
	return 0;
}

/* Settle the seam between how ta's part ended and how tb's began. */
static void join_seam(struct jf_analysis *a, const struct jf_analysis *later,
		      struct thread_state *ta, const struct thread_state *tb, uint64_t *seam_time)
{
	if (tb->first_entry_trace >= 0 && ta->has_prev &&
	    ta->prev_region_start == tb->first_region_start) {
		/* Control came from inside the same trace: not an entry after all. */
		int32_t t = map_trace(a, later, tb->first_entry_trace);

		if (t >= 0) {
			a->traces[t].entries--;
			if (a->traces[t].kind == JF_REGION_BRIDGE)
				a->traces[t].iterations--;
		}
	}
	if (tb->first_entry_region >= 0 && ta->has_prev &&
	    ta->prev_region_start == tb->first_region_start) {
		const struct jf_region_result *s = &later->regions[tb->first_entry_region];
		int32_t r = jf_region_index(a, s->name, s->addr);

		if (r >= 0)
			a->regions[r].entries--;
	}
	/* tb's first block arrived at a loop header by falling through: no iteration,
	 * unless the code before the header was one. */
	if (tb->first_header_trace >= 0 && ta->has_prev &&
	    ta->prev_fallthrough == tb->first_start && !jf_preamble_is_iteration(a)) {
		int32_t t = map_trace(a, later, tb->first_header_trace);

		if (t >= 0)
			a->traces[t].iterations--;
	}
	/* An exit under way at a's end that reached its bridge early in tb's part. */
	if (ta->exit_guard >= 0 && tb->prefix_bridge_entry >= 0) {
		struct jf_guard_result *g = &a->guards[ta->exit_guard];
		int32_t t = map_trace(a, later, tb->prefix_bridge_entry);

		if (t >= 0 && g->trace_id == a->traces[t].parent_trace &&
		    g->guard_id == a->traces[t].parent_guard)
			jf_announce_guard_to_bridge(a, (uint32_t)ta->exit_guard);
	}
	if (ta->has_prev && tb->has_first) {
		jf_split_add_transition(&ta->split, ta->prev_class, tb->first_class);
		if (ta->prev_trace >= 0 && tb->first_region_start &&
		    (tb->first_class == JF_CLASS_TRACE || tb->first_class == JF_CLASS_BRIDGE) &&
		    ta->prev_region_start != tb->first_region_start) {
			int32_t to = map_trace(a, later, tb->first_trace);

			ta->split.trace_to_trace++;
			if (to >= 0)
				jf_trace_link_add(a, a->traces[ta->prev_trace].trace_id,
						  a->traces[to].trace_id, 1);
		}
	}
	/* The time between ta's last timestamp and tb's first was spent in tb's first
	 * block; its iteration is only known once the iteration series are joined. */
	*seam_time = 0;
	if (ta->has_time && tb->has_first_time && tb->first_time >= ta->last_time) {
		int32_t t = map_trace(a, later, tb->first_trace);
		int32_t made = map_trace(a, later, tb->first_phase_trace);

		*seam_time = tb->first_time - ta->last_time;
		jf_emit_seam_time(a, later, ta->tid, ta->last_time, tb->first_time);
		ta->split.time[jf_split_of(tb->first_class)] += *seam_time;
		ta->split.time_by_class[tb->first_class] += *seam_time;
		ta->split.time_by_group[tb->first_group] += *seam_time;
		if (t >= 0)
			a->traces[t].time += *seam_time;
		if (made >= 0 && tb->first_class == JF_CLASS_TRACING)
			a->traces[made].tracing_time += *seam_time;
		else if (made >= 0 && tb->first_class == JF_CLASS_COMPILING)
			a->traces[made].compiling_time += *seam_time;
	}
}

/* ta's state becomes how tb's part ended. */
static void take_end_state(struct jf_analysis *a, const struct jf_analysis *later,
			   struct thread_state *ta, const struct thread_state *tb)
{
	if (tb->has_first || !tb->has_prev) {
		ta->has_prev = tb->has_prev;
		ta->prev_class = tb->prev_class;
		ta->prev_split = tb->prev_split;
		ta->prev_region_start = tb->prev_region_start;
		ta->prev_fallthrough = tb->prev_fallthrough;
		ta->prev_end = tb->prev_end;
		ta->prev_in_emitter = tb->prev_in_emitter;
		ta->in_instrumentation = tb->in_instrumentation;
		ta->in_exit_handling = tb->in_exit_handling;
		ta->prev_in_exit_handler = tb->prev_in_exit_handler;
		ta->prev_after_last = tb->prev_after_last;
		ta->in_collection = tb->in_collection;
		ta->collection_depth = tb->collection_depth;
		ta->collection_return = tb->collection_return;
		ta->prev_trace = map_trace(a, later, tb->prev_trace);
		ta->pending_guard = map_guard(a, later, tb->pending_guard);
		ta->pending_fallthrough = tb->pending_fallthrough;
	}
	/* An exit path still open at tb's end is tb's own, or a's when tb never left it. */
	if (!tb->prefix_open)
		ta->exit_guard = map_guard(a, later, tb->exit_guard);
	if (tb->has_time) {
		ta->has_time = 1;
		ta->last_time = tb->last_time;
		ta->time_split = tb->time_split;
		ta->time_class = tb->time_class;
		ta->time_group = tb->time_group;
		ta->time_trace = map_trace(a, later, tb->time_trace);
		ta->time_phase_trace = map_trace(a, later, tb->time_phase_trace);
	}
}

static void add_iteration_counts(struct iteration_acc *to, const struct iteration_acc *from)
{
	int i;

	to->insns += from->insns;
	to->time += from->time;
	for (i = 0; i < JF_SPLIT_COUNT; i++)
		to->by_split[i] += from->by_split[i];
	for (i = 0; i < JF_CLASS_COUNT; i++)
		to->by_class[i] += from->by_class[i];
}

static int merge_iterations(struct jf_analysis *a, const struct jf_analysis *later)
{
	size_t i;

	/* What ran in the later part before its first mark finishes a's current iteration. */
	add_iteration_counts(a->cur.open ? &a->cur : &a->pre, &later->pre);
	if (!later->cur.open)
		return 0;
	if (a->cur.open && jf_close_iteration(a, &a->cur) < 0)
		return -1;
	for (i = 0; i < jf_iteration_series_count(later->iters); i++) {
		struct jf_iteration_result row;

		if (!a->iters && !(a->iters = jf_iteration_series_new()))
			return -1;
		if (jf_iteration_series_get(later->iters, i, &row) < 0 ||
		    jf_iteration_series_append(a->iters, &row) < 0)
			return -1;
	}
	a->cur = later->cur;
	a->has_iterations = 1;
	return 0;
}

/* Add a seam's time to the iteration that the later part's first block belongs to. */
static int seam_iteration_time(struct jf_analysis *a, int64_t first_iteration, size_t base,
			       uint64_t delta)
{
	if (first_iteration >= 0 && base + (size_t)first_iteration < jf_iteration_series_count(a->iters))
		return jf_iteration_series_add_time(a->iters, base + (size_t)first_iteration, delta);
	if (a->cur.open)
		a->cur.time += delta;
	else
		a->pre.time += delta;
	return 0;
}

int jf_analysis_merge(struct jf_analysis *a, const struct jf_analysis *later)
{
	size_t i, base;
	uint64_t *seams;
	uint32_t *seam_exits;
	int rc;

	a->flow_thread = SIZE_MAX; /* look the last flow's thread up again after a merge */
	/* Rows may move and the code model is the later part's: forget remembered blocks. */
	a->model_generation++;
	/* Guards left undecided by a's part are settled first: whether such an exit came
	 * before a bridge attached in the later part depends on it. */
	seam_exits = calloc(a->nguards ? a->nguards : 1, sizeof(*seam_exits));
	if (!seam_exits)
		return -1;
	for (i = 0; i < later->nthreads; i++) {
		size_t j;

		for (j = 0; j < a->nthreads; j++) {
			int32_t g = a->threads[j].pending_guard;

			if (a->threads[j].tid == later->threads[i].tid &&
			    resolve_seam_guard(a, &a->threads[j], &later->threads[i]))
				seam_exits[g]++;
		}
	}
	rc = merge_tables(a, later, seam_exits);
	free(seam_exits);
	if (rc < 0)
		return -1;
	seams = calloc(later->nthreads ? later->nthreads : 1, sizeof(*seams));
	if (!seams)
		return -1;
	for (i = 0; i < later->nthreads; i++) {
		const struct thread_state *tb = &later->threads[i];
		size_t before = a->nthreads;
		struct thread_state *ta = jf_thread(a, tb->tid);

		if (!ta) {
			free(seams);
			return -1;
		}
		if (a->nthreads == before)
			join_seam(a, later, ta, tb, &seams[i]);
		else {
			ta->first_entry_trace = map_trace(a, later, tb->first_entry_trace);
			ta->first_entry_region = -1;
			ta->has_first = tb->has_first;
			ta->first_start = tb->first_start;
			ta->first_class = tb->first_class;
			ta->first_region_start = tb->first_region_start;
			ta->first_trace = map_trace(a, later, tb->first_trace);
			ta->first_phase_trace = map_trace(a, later, tb->first_phase_trace);
			ta->first_header_trace = map_trace(a, later, tb->first_header_trace);
			ta->first_iteration = tb->first_iteration;
			ta->has_first_time = tb->has_first_time;
			ta->first_time = tb->first_time;
			ta->prefix_open = tb->prefix_open;
			ta->prefix_bridge_entry = map_trace(a, later, tb->prefix_bridge_entry);
		}
		jf_split_add(&ta->split, &tb->split);
		take_end_state(a, later, ta, tb);
	}
	/* The later part's iterations follow a's closed ones and its current one. */
	base = jf_iteration_series_count(a->iters) + (a->cur.open && later->cur.open ? 1 : 0);
	for (i = 0; i < later->nthreads; i++) {
		/* A first block before the later part's first mark joins a's current iteration. */
		if (seams[i] && later->threads[i].first_iteration < 0)
			seam_iteration_time(a, -1, base, seams[i]);
	}
	if (merge_iterations(a, later) < 0) {
		free(seams);
		return -1;
	}
	for (i = 0; i < later->nthreads; i++) {
		if (seams[i] && later->threads[i].first_iteration >= 0 &&
		    seam_iteration_time(a, later->threads[i].first_iteration, base, seams[i]) < 0) {
			free(seams);
			return -1;
		}
	}
	free(seams);
	if (jf_listeners_merge(a, later, a->insns) < 0)
		return -1;
	/* (positions of the later part's phase brackets move on by a's instructions) */
	if (jf_phase_merge(a, later) < 0)
		return -1;
	a->insns += later->insns;
	a->blocks += later->blocks;
	a->decode_errors += later->decode_errors;
	a->lost_bytes += later->lost_bytes;
	a->lost_events += later->lost_events;
	a->overflows += later->overflows;
	a->image_misses += later->image_misses;
	for (i = 0; i < later->nproblems && a->nproblems < JF_PROBLEM_SITES_MAX; i++)
		a->problems[a->nproblems++] = later->problems[i];
	/* Threads inside instrumentation at the end are those of the later part (which
	 * replayed the zone records before it, so it knew those at its start). */
	if (later->ninstrumented && jf_grow((void **)&a->instrumented, &a->instrumented_cap,
					    later->ninstrumented - 1, sizeof(*a->instrumented)) < 0)
		return -1;
	if (later->ninstrumented)
		memcpy(a->instrumented, later->instrumented,
		       later->ninstrumented * sizeof(*a->instrumented));
	a->ninstrumented = later->ninstrumented;
	for (i = 0; i < a->nthreads; i++)
		jf_phase_sync_thread(a, &a->threads[i]);
	a->has_zone_records |= later->has_zone_records;
	if (later->runtime)
		a->runtime = later->runtime;
	a->trace_starts += later->trace_starts;
	a->trace_aborts += later->trace_aborts;
	a->trace_flushes += later->trace_flushes;
	a->has_pc_maps |= later->has_pc_maps;
	a->has_time |= later->has_time;
	return 0;
}
