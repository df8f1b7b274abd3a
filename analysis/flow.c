/* Per-thread state machines: each block is classified through the live code model, and
 * the machines decide what it was: a trace entry or iteration, a guard's exit or pass, a
 * transition between interpreter, jitted and native code, time since the last timestamp.
 * They announce it as analysis events (events.h) to the counters and the views, and count
 * nothing themselves: this file knows no counter and no listener. */
#include <string.h>

#include "analysis_internal.h"
#include "events.h"

struct thread_state *jf_existing_thread(struct jf_analysis *a, int32_t tid)
{
	size_t i;

	for (i = 0; i < a->nthreads; i++)
		if (a->threads[i].tid == tid)
			return &a->threads[i];
	return NULL;
}

struct thread_state *jf_thread(struct jf_analysis *a, int32_t tid)
{
	size_t i;

	if (a->cur_thread < a->nthreads && a->threads[a->cur_thread].tid == tid)
		return &a->threads[a->cur_thread];
	for (i = 0; i < a->nthreads; i++) {
		if (a->threads[i].tid == tid) {
			a->cur_thread = i;
			return &a->threads[i];
		}
	}
	if (jf_grow((void **)&a->threads, &a->threads_cap, a->nthreads, sizeof(*a->threads)) < 0)
		return NULL;
	memset(&a->threads[i], 0, sizeof(a->threads[i]));
	a->threads[i].tid = tid;
	a->threads[i].split.tid = tid;
	a->threads[i].pending_guard = -1;
	a->threads[i].exit_guard = -1;
	a->threads[i].prefix_open = 1;
	a->threads[i].prefix_bridge_entry = -1;
	a->threads[i].prev_trace = -1;
	/* Until a block says where the thread is, its time is in unknown code. */
	a->threads[i].time_split = JF_SPLIT_UNKNOWN;
	a->threads[i].time_class = JF_CLASS_UNKNOWN;
	a->threads[i].time_trace = -1;
	a->threads[i].first_trace = -1;
	a->threads[i].first_phase_trace = -1;
	a->threads[i].first_entry_trace = -1;
	a->threads[i].first_entry_region = -1;
	a->threads[i].first_header_trace = -1;
	a->threads[i].time_phase_trace = -1;
	a->cur_thread = i;
	a->nthreads++;
	jf_phase_sync_thread(a, &a->threads[i]);
	return &a->threads[i];
}

void jf_split_add_transition(struct jf_split_result *s, enum jf_code_class from,
			     enum jf_code_class to)
{
	enum jf_split_class f = jf_split_fast(from), t = jf_split_fast(to);

	if (f != t)
		s->transitions[f][t]++;
}

void jf_split_add(struct jf_split_result *to, const struct jf_split_result *from)
{
	int i, j;

	for (i = 0; i < JF_SPLIT_COUNT; i++) {
		to->insns[i] += from->insns[i];
		to->time[i] += from->time[i];
		for (j = 0; j < JF_SPLIT_COUNT; j++)
			to->transitions[i][j] += from->transitions[i][j];
	}
	for (i = 0; i < JF_CLASS_COUNT; i++) {
		to->by_class[i] += from->by_class[i];
		to->time_by_class[i] += from->time_by_class[i];
	}
	for (i = 0; i < JF_PHASE_COUNT; i++)
		to->phase_spans[i] += from->phase_spans[i];
	for (i = 0; i < JF_REGION_GROUPS; i++) {
		to->insns_by_group[i] += from->insns_by_group[i];
		to->time_by_group[i] += from->time_by_group[i];
	}
	to->collections += from->collections;
	to->trace_to_trace += from->trace_to_trace;
	to->guard_exits += from->guard_exits;
}

/* Out of line: guards mostly pass, and the pass path then needs no registers saved. */
static __attribute__((noinline)) void guard_exited(struct jf_analysis *a, struct thread_state *t,
						   int32_t g)
{
	t->exit_guard = g;
	t->prefix_open = 0;
	jf_announce_guard_exited(a, &t->split, t->tid, t->has_time, t->last_time, (uint32_t)g);
}

/* taken: the branch did not fall through. */
static void resolve_guard(struct jf_analysis *a, struct thread_state *t, int32_t g, int taken)
{
	if (jf_guard_exited(&a->guards[g], taken))
		guard_exited(a, t, g);
	else
		jf_announce_guard_passed(a, t->tid, (uint32_t)g);
}

/* The thread lost track of where it was (error, overflow, lost data). */
static void lose_track(struct jf_analysis *a, struct thread_state *t)
{
	if (t->pending_guard >= 0)
		jf_announce_guard_unresolved(a, (uint32_t)t->pending_guard);
	t->pending_guard = -1;
	t->exit_guard = -1;
	t->prefix_open = 0;
	t->has_prev = 0;
	t->prev_region_start = 0;
	t->prev_trace = -1;
	/* Calls and returns went unseen: a collection or an exit under way can no longer be
	 * followed. */
	t->in_collection = 0;
	t->in_exit_handling = 0;
}

/* A timestamp marks the end of what was decoded before it: the time since the previous
 * timestamp was spent in that code (split, trace). Time before a thread's first timestamp
 * is unknown and not counted. */
static inline __attribute__((always_inline)) void
attribute_time(struct jf_analysis *a, struct thread_state *t, uint64_t time,
	       enum jf_split_class split, uint8_t cls, uint8_t group, int32_t trace,
	       int32_t phase_trace)
{
	jf_announce_time(a, &t->split, t->tid, t->has_time, t->last_time, time, split, cls, group,
			 trace, phase_trace);
	if (!t->has_time && !t->has_first_time) {
		t->has_first_time = 1;
		t->first_time = time;
	}
	t->has_time = 1;
	t->last_time = time;
	a->has_time = 1;
}

/* The guard whose branch is instruction `last` (-1: none), remembered in the slot of the
 * block's start (when last is within 4 GiB of it). */
static int32_t guard_at(struct jf_analysis *a, struct block_class_slot *s, uint64_t last)
{
	uint64_t off = last - s->start;
	uint32_t g;

	if (s->has_guard && s->guard_last == off)
		return s->guard;
	s->guard = jf_index_map_get(&a->zm.guard_by_branch, last, &g) ? (int32_t)g : -1;
	s->guard_last = (uint32_t)off;
	s->has_guard = off <= UINT32_MAX;
	return s->guard;
}

static void end_at_guard(struct jf_analysis *a, struct thread_state *t,
			 const struct live_region *r, const struct jf_block *b,
			 struct block_class_slot *s)
{
	int32_t g;

	if (b->end != JF_END_COND && b->end != JF_END_COND_TAKEN &&
	    b->end != JF_END_COND_NOT_TAKEN && b->end != JF_END_CALL)
		return;
	g = guard_at(a, s, b->last);
	if (g < 0)
		return;
	/* A guard of code freed since: its branch address may hold other code now. A side
	 * trace's stack check exits through its parent's exit (LuaJIT), so the parent's
	 * guards may also sit in its children. */
	if (!r || (r->region_key != a->guards[g].trace_id && r->cls != JF_CLASS_EXIT_STUB &&
		   !(r->trace >= 0 && a->traces[r->trace].parent_trace == a->guards[g].trace_id)))
		return;
	if (b->end == JF_END_COND_TAKEN || b->end == JF_END_COND_NOT_TAKEN) {
		resolve_guard(a, t, g, b->end == JF_END_COND_TAKEN);
		return;
	}
	/* A guard whose branch is a call (HotSpot's call into UncommonTrapBlob) leaves
	 * every time it runs, like a taken branch. */
	if (b->end == JF_END_CALL) {
		resolve_guard(a, t, g, 1);
		return;
	}
	t->pending_guard = g;
	t->pending_fallthrough = b->next ? b->next : b->last + b->last_size;
}

static int is_jitted(enum jf_code_class cls)
{
	return cls == JF_CLASS_TRACE || cls == JF_CLASS_BRIDGE || cls == JF_CLASS_EXIT_STUB ||
	       cls == JF_CLASS_JITTED;
}

/* After a guard's exit, control goes through its stub (and, after LuaJIT's inverted loop
 * branch, a jump) to the bridge attached to it or on to the interpreter. Arriving at that
 * bridge's entry counts the exit as gone to the bridge; any trace's entry or code that is
 * not jitted ends the exit's path. */
static void follow_exit(struct jf_analysis *a, struct thread_state *t,
			const struct live_region *r, enum jf_code_class cls, int32_t trace,
			uint64_t start)
{
	int entry = r && trace >= 0 && start == r->start;

	if (entry && a->traces[trace].kind == JF_REGION_BRIDGE) {
		const struct jf_trace_result *tr = &a->traces[trace];

		if (t->exit_guard >= 0) {
			struct jf_guard_result *g = &a->guards[t->exit_guard];

			if (g->trace_id == tr->parent_trace && g->guard_id == tr->parent_guard)
				jf_announce_guard_to_bridge(a, (uint32_t)t->exit_guard);
		} else if (t->prefix_open) {
			t->prefix_bridge_entry = trace;
		}
	}
	if (entry || !is_jitted(cls)) {
		t->exit_guard = -1;
		t->prefix_open = 0;
	}
}

static int is_call(uint8_t end)
{
	return end == JF_END_CALL || end == JF_END_CALL_INDIRECT;
}

/* A collection: from a call into one of the collector's entries (cfg.collector_entry)
 * until that call returns, the native code the thread runs (the collector's and all it
 * calls, libc's included) is garbage collection. The calls and returns of the blocks
 * before this one keep the depth below the entry's frame. The collection ends with the
 * block after a return that leaves the entry's frame (the depth below 0) or that arrives
 * where the call into the entry returns to (so that a return without a call, a signal
 * handler's, cannot keep the thread in it), at the runtime's interpreted or jitted code
 * (a collector runs neither), and where the trace loses track of the thread
 * (lose_track): a longjmp out of the collection ends it at one of these. A thread
 * arriving at an entry while in a collection stays in that one. */
static enum jf_code_class collection_call(struct thread_state *t, const struct block_class_slot *s,
					  const struct jf_block *b, enum jf_code_class cls)
{
	enum jf_split_class split = jf_split_fast(cls);

	if (t->in_collection && t->has_prev) {
		if (is_call(t->prev_end))
			t->collection_depth++;
		else if (t->prev_end == JF_END_RETURN &&
			 (--t->collection_depth < 0 || b->start == t->collection_return))
			t->in_collection = 0;
	}
	if (split == JF_SPLIT_INTERPRETER || split == JF_SPLIT_JITTED)
		t->in_collection = 0;
	else if (!t->in_collection && s->collector_entry) {
		t->in_collection = 1;
		t->collection_depth = 0;
		t->collection_return = t->has_prev && is_call(t->prev_end) ? t->prev_after_last : 0;
		jf_announce_collection(&t->split);
	}
	if (t->in_collection &&
	    (cls == JF_CLASS_RUNTIME || cls == JF_CLASS_NATIVE || cls == JF_CLASS_KERNEL))
		cls = JF_CLASS_GC;
	return cls;
}

/* The emitter's code is instrumentation, and so is the native code it calls (libc's
 * write, memcpy, locks, clocks) until the emitter returns to its caller. */
static enum jf_code_class instrumentation_call(struct thread_state *t, enum jf_code_class cls)
{
	int in_emitter = cls == JF_CLASS_INSTRUMENTATION;

	if (in_emitter)
		t->in_instrumentation = 1;
	else if (t->in_instrumentation && t->has_prev && t->prev_in_emitter &&
		 t->prev_end == JF_END_RETURN)
		t->in_instrumentation = 0; /* back in its caller */
	else if (t->in_instrumentation && (cls == JF_CLASS_RUNTIME || cls == JF_CLASS_NATIVE ||
					   cls == JF_CLASS_KERNEL))
		cls = JF_CLASS_INSTRUMENTATION;
	else
		t->in_instrumentation = 0;
	t->prev_in_emitter = in_emitter;
	return cls;
}

/* Exit handling: from the runtime's exit handling code (an INTERP_RANGE of kind deopt:
 * LuaJIT's trace exit handler, which exit stubs jump to) until that code goes on by
 * anything but a call (LuaJIT: its jump through the dispatch table into the interpreter),
 * all the thread runs is exit handling: the functions it calls, whatever code they are
 * (LuaJIT's lj_trace_exit restoring the interpreter's state from the exit's snapshot,
 * the VM routines it calls it through). The emitter's code stays instrumentation, a
 * phase the runtime brackets meanwhile wins, and jitted code or a lost track ends it. */
static enum jf_code_class exit_handling_call(struct thread_state *t, enum jf_code_class cls)
{
	int in_handler = cls == JF_CLASS_EXIT_HANDLING;

	if (t->in_exit_handling && !in_handler && t->has_prev && t->prev_in_exit_handler &&
	    !is_call(t->prev_end))
		t->in_exit_handling = 0; /* the handler went on */
	if (in_handler)
		t->in_exit_handling = 1;
	else if (jf_split_fast(cls) == JF_SPLIT_JITTED)
		t->in_exit_handling = 0;
	t->prev_in_exit_handler = in_handler;
	if (t->in_exit_handling && cls != JF_CLASS_INSTRUMENTATION)
		cls = JF_CLASS_EXIT_HANDLING;
	return cls;
}

static int instrumented_index(const struct jf_analysis *a, int32_t tid)
{
	size_t i;

	for (i = 0; i < a->ninstrumented; i++)
		if (a->instrumented[i] == tid)
			return (int)i;
	return -1;
}

int jf_instrumentation_event(struct jf_analysis *a, int32_t tid, int begin)
{
	int i = instrumented_index(a, tid);

	if (begin && i < 0) {
		if (jf_grow((void **)&a->instrumented, &a->instrumented_cap, a->ninstrumented,
			    sizeof(*a->instrumented)) < 0)
			return -1;
		a->instrumented[a->ninstrumented++] = tid;
	} else if (!begin && i >= 0) {
		a->instrumented[i] = a->instrumented[--a->ninstrumented];
	}
	return 0;
}

/* The slot of the block starting at `start`, filled for the current code: its region
 * (from the zone model) or, outside every region, the class of the native code there
 * (the model's interpreter ranges, then the caller's native_class, whose answers also
 * hold while the code map's generation stays the same). */
static struct block_class_slot *classify(struct jf_analysis *a, uint64_t start)
{
	struct block_class_memo *m = &a->class_memo;
	uint64_t map_gen = *a->map_generation;
	struct block_class_slot *s =
		&m->slot[(start * 0x9e3779b97f4a7c15ull) >> (64 - JF_CLASS_MEMO_BITS)];
	enum jf_code_class cls;

	if (!m->epoch || m->model_generation != a->model_generation ||
	    m->map_generation != map_gen) {
		if (++m->epoch == 0) {
			/* wrapped: slots of epoch 1 would look valid again */
			memset(m->slot, 0, sizeof(m->slot));
			m->epoch = 1;
		}
		m->model_generation = a->model_generation;
		m->map_generation = map_gen;
	}
	if (s->epoch == m->epoch && s->start == start)
		return s;
	s->start = start;
	s->epoch = m->epoch;
	s->has_guard = 0;
	s->bytecode_row = UINT32_MAX;
	s->r = jf_zone_model_region_at(&a->zm, start);
	cls = s->r ? s->r->cls : jf_zone_model_native_at(&a->zm, start);
	if (cls == JF_CLASS_UNKNOWN && !s->r && a->cfg.native_class)
		cls = a->cfg.native_class(a->cfg.native_ctx, start);
	s->cls = (uint8_t)cls;
	s->collector_entry = !s->r && cls != JF_CLASS_UNKNOWN && a->cfg.collector_entry &&
			     a->cfg.collector_entry(a->cfg.native_ctx, start);
	return s;
}

static void count_block(struct jf_analysis *a, struct thread_state *t, const struct jf_flow *f)
{
	const struct jf_block *b = &f->u.block;
	struct block_class_slot *slot = classify(a, b->start);
	struct live_region *r = slot->r;
	enum jf_code_class cls = (enum jf_code_class)slot->cls, code_cls;
	enum jf_split_class split;
	int32_t trace = r ? r->trace : -1;
	struct jf_block_event e;
	uint8_t group;

	if (a->cfg.collector_entry)
		cls = collection_call(t, slot, b, cls);
	cls = instrumentation_call(t, cls);
	cls = exit_handling_call(t, cls);
	if (a->ninstrumented && instrumented_index(a, t->tid) >= 0)
		cls = JF_CLASS_INSTRUMENTATION;
	/* The state machines follow the code; the counters count the phase, which wins
	 * over every class but instrumentation. */
	code_cls = cls;
	if (t->phase_class && cls != JF_CLASS_INSTRUMENTATION)
		cls = (enum jf_code_class)t->phase_class;
	split = jf_split_fast(cls);
	group = r && cls == r->cls ? r->group : 0;
	e.tid = t->tid;
	e.r = r;
	e.cls = cls;
	e.trace = trace;
	e.b = b;
	e.split = (uint8_t)split;
	e.has_from = (uint8_t)t->has_prev;
	e.from_split = t->prev_split;
	/* (prev_trace is -1 whenever there is no previous block) */
	e.trace_to_trace = trace >= 0 && t->prev_trace >= 0 && t->prev_region_start != r->start;
	e.from_trace = t->prev_trace;
	e.phase_trace = cls == (enum jf_code_class)t->phase_class ? t->phase_trace : -1;
	e.offset = f->offset;
	jf_announce_block(a, &t->split, &e);

	if (t->pending_guard >= 0) {
		resolve_guard(a, t, t->pending_guard, b->start != t->pending_fallthrough);
		t->pending_guard = -1;
	}
	if (t->exit_guard >= 0 || t->prefix_open)
		follow_exit(a, t, r, code_cls, trace, b->start);

	if (r && b->start == r->start) {
		int from_outside = !(t->has_prev && t->prev_region_start == r->start);

		if (from_outside)
			jf_announce_region_entered(a, t->tid, r);
		/* Only the part before this one can tell whether this was an entry. */
		if (!t->has_prev && !t->has_first)
			t->first_entry_region = (int32_t)r->region;
		if (trace >= 0) {
			/* Control at a loop's entry runs on through its header. */
			if (from_outside || a->traces[trace].kind != JF_REGION_BRIDGE)
				jf_announce_loop_iteration(a, t->tid, trace);
			if (!t->has_prev && !t->has_first)
				t->first_entry_trace = trace;
		}
	} else if (r && trace >= 0 && b->start == r->header &&
		   a->traces[trace].kind != JF_REGION_BRIDGE &&
		   (!(t->has_prev && t->prev_fallthrough == b->start) ||
		    jf_preamble_is_iteration(a))) {
		/* A back-edge, or a bridge jumping back into its loop; the fall-through from
		 * code before the header only where that code was an iteration of its own. */
		jf_announce_loop_iteration(a, t->tid, trace);
		if (!t->has_prev && !t->has_first)
			t->first_header_trace = trace;
	}

	if (r && (r->op_map.n || r->code_object_map.n))
		jf_count_bytecodes(a, r, &slot->bytecode_row, b);
	if (r)
		jf_points_count(a, r, b);
	jf_emit_block_done(a, &a->listeners, b);
	end_at_guard(a, t, r, b, slot);

	if (!t->has_first) {
		t->has_first = 1;
		t->first_start = b->start;
		t->first_class = cls;
		t->first_group = group;
		t->first_region_start = r ? r->start : 0;
		t->first_trace = trace;
		t->first_phase_trace = e.phase_trace;
		t->first_iteration = a->cur.open ? (int64_t)jf_iteration_series_count(a->iters) : -1;
	}
	t->has_prev = 1;
	t->prev_class = cls;
	t->prev_split = (uint8_t)split;
	t->prev_region_start = r ? r->start : 0;
	t->prev_end = b->end;
	t->prev_after_last = b->last + b->last_size;
	t->prev_fallthrough = (b->end == JF_END_NONE || b->end == JF_END_COND ||
			       b->end == JF_END_COND_NOT_TAKEN) ?
		(b->next ? b->next : b->last + b->last_size) : 0;
	t->prev_trace = trace;
	if (f->flags & JF_FLOW_HAS_TIME)
		attribute_time(a, t, f->time, split, (uint8_t)cls, group, trace, e.phase_trace);
	t->time_split = split;
	t->time_class = (uint8_t)cls;
	t->time_group = group;
	t->time_trace = trace;
	t->time_phase_trace = e.phase_trace;
}

/* The thread on a source; until a context record names one, each source is a thread of
 * its own (tid -1 - source). */
static int32_t *tid_of_source(struct jf_analysis *a, uint32_t source)
{
	size_t i = a->last_source;

	if (i < a->nsources && a->sources[i].source == source)
		return &a->sources[i].tid;
	for (i = 0; i < a->nsources; i++) {
		if (a->sources[i].source == source) {
			a->last_source = i;
			return &a->sources[i].tid;
		}
	}
	if (jf_grow((void **)&a->sources, &a->sources_cap, a->nsources, sizeof(*a->sources)) < 0)
		return NULL;
	a->sources[i].source = source;
	a->sources[i].tid = -1 - (int32_t)source;
	a->last_source = i;
	a->nsources++;
	return &a->sources[i].tid;
}

/* A context record: the source (a core, or a thread's own buffer) runs thread
 * f->u.context.tid from here on. When that is another thread than before, the core went
 * from one thread to the other: the time up to the record is the old thread's, and the new
 * one's clock starts again at the record, so that the time it was switched out (spent by
 * other threads) is not charged to the code it ran before. */
static int enter_context(struct jf_analysis *a, int32_t *tid, const struct jf_flow *f)
{
	int switched = *tid != f->u.context.tid;
	struct thread_state *old = switched ? jf_existing_thread(a, *tid) : NULL, *t;

	if (old && (f->flags & JF_FLOW_HAS_TIME))
		attribute_time(a, old, f->time, old->time_split, old->time_class, old->time_group,
			       old->time_trace, old->time_phase_trace);
	*tid = f->u.context.tid;
	a->flow_thread = SIZE_MAX;
	t = jf_thread(a, *tid);
	if (!t)
		return -1;
	/* A thread seen for the first time starts its clock at its first timestamp, as
	 * before any switch. */
	if (switched && t->has_time) {
		t->has_time = 0;
		if (f->flags & JF_FLOW_HAS_TIME)
			attribute_time(a, t, f->time, t->time_split, t->time_class, t->time_group,
				       t->time_trace, t->time_phase_trace);
	}
	return 0;
}

/* Every flow but a block of the last flow's source: finds its thread (and remembers it
 * for the blocks after it) and counts what is not a block. Returns 1 for a block, left to
 * count_block, 0 when done, -1 when out of memory. */
static __attribute__((noinline)) int other_flow(struct jf_analysis *a, const struct jf_flow *f)
{
	int32_t *tid = tid_of_source(a, f->source);
	struct thread_state *t;

	if (!tid)
		return -1;
	if (f->kind == JF_FLOW_CONTEXT)
		return enter_context(a, tid, f);
	/* Trace switched on before anything names its thread (OpenCSD gives TRACE_ON before
	 * the context of the Address with Context packet that follows it): nothing happened
	 * to a thread yet, so none is made for it (it would be listed, empty). */
	if (f->kind == JF_FLOW_ENABLED && !(f->flags & JF_FLOW_HAS_TIME) &&
	    !jf_existing_thread(a, *tid))
		return 0;
	/* The thread of the last flow, without a call, in the common case. */
	t = a->cur_thread < a->nthreads && a->threads[a->cur_thread].tid == *tid ?
		&a->threads[a->cur_thread] : jf_thread(a, *tid);
	if (!t)
		return -1;
	a->flow_source = f->source;
	a->flow_thread = (size_t)(t - a->threads);
	if (f->kind != JF_FLOW_BLOCK)
		jf_emit_flow_event(a, &a->listeners, t->tid, f);
	switch (f->kind) {
	case JF_FLOW_BLOCK:
		return 1;
	case JF_FLOW_ERROR:
	case JF_FLOW_LOST:
	case JF_FLOW_OVERFLOW:
		jf_announce_problem(a, f);
		lose_track(a, t);
		break;
	case JF_FLOW_DISABLED:
		/* A branch that left an IP filter's ranges (TIP.PGD with its target): a guard
		 * branch's direction is its target. Only then is at 0 and the IP known. */
		if (t->pending_guard >= 0 && !(f->flags & JF_FLOW_IP_SUPPRESSED) && !f->u.disabled.at) {
			resolve_guard(a, t, t->pending_guard, f->ip != t->pending_fallthrough);
			t->pending_guard = -1;
		}
		break;
	case JF_FLOW_ASYNC:
		/* A signal handler's frame inside a collection: its return, to a restorer no
		 * call made, must not count as leaving one of the collection's frames. */
		if (t->in_collection)
			t->collection_depth++;
		break;
	case JF_FLOW_ENABLED:
		/* Tracing starts again elsewhere than where it stopped: code ran untraced in
		 * between (outside an IP filter, e.g. the interpreter before a loop's entry).
		 * The block before says nothing about how the next one was reached: a region
		 * start reached now is an entry from outside. */
		if (!f->u.enabled.resumed && !(f->flags & JF_FLOW_STATUS_UPDATE) && t->has_prev)
			lose_track(a, t);
		break;
	default:
		break;
	}
	if (f->flags & JF_FLOW_HAS_TIME)
		attribute_time(a, t, f->time, t->time_split, t->time_class, t->time_group,
			       t->time_trace, t->time_phase_trace);
	if (f->kind == JF_FLOW_ERROR || f->kind == JF_FLOW_LOST || f->kind == JF_FLOW_OVERFLOW) {
		/* Time until decoding resumes is spent where nobody can say. */
		t->time_split = JF_SPLIT_UNKNOWN;
		t->time_class = JF_CLASS_UNKNOWN;
		t->time_group = 0;
		t->time_trace = -1;
		t->time_phase_trace = -1;
	}
	return 0;
}

int jf_analysis_flow(struct jf_analysis *a, const struct jf_flow *f)
{
	if (f->kind != JF_FLOW_BLOCK || f->source != a->flow_source || a->flow_thread >= a->nthreads) {
		int rc = other_flow(a, f);

		if (rc <= 0)
			return rc;
	}
	count_block(a, &a->threads[a->flow_thread], f);
	return 0;
}
