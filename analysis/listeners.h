/* The analysis events, and the one interface through which their listeners receive them.
 *
 * flow.c, bytecodes.c and analysis.c turn the flow and the zone records into a few events
 * (a block counted in its region, a region entered, a loop iteration, instructions
 * attributed to a bytecode range or a code line, time attributed, a guard passed or
 * exited, the code changed); merge.c and result.c tell the same listeners when parts are
 * joined and when the result is made. A listener keeps its own state (its `self`) and
 * reads the analysis's tables for names and ids: adding one (a view) means writing its
 * callbacks and attaching it in jf_analysis_new, not touching the code that reads the
 * flow. Every callback may be NULL.
 *
 * The counters of the result (counters.h) hear the same events, bound at compile time
 * rather than through a jf_listener (events.h announces each event to both). */
#ifndef JITFLOW_LISTENERS_H
#define JITFLOW_LISTENERS_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/analysis.h"
#include "jitflow/emitter.h"
#include "jitflow/insn.h"

struct jf_analysis;
struct live_region;
struct pc_entry;

/* A block about to be counted on thread tid: its live region (NULL outside every region),
 * its class after instrumentation, that class's split class, and its trace row (-1:
 * none); and how the thread came to it: the split class of its block before (when
 * has_from), and whether control moved there from one trace or bridge region to another. */
struct jf_block_event {
	int32_t tid;
	const struct live_region *r;
	enum jf_code_class cls;
	int32_t trace;
	const struct jf_block *b;
	uint8_t split;             /* enum jf_split_class */
	uint8_t has_from;
	uint8_t from_split;        /* enum jf_split_class */
	uint8_t trace_to_trace;
	int32_t from_trace;        /* the previous block's trace row, when trace_to_trace */
	int32_t phase_trace;       /* in a phase span: the trace row it makes (-1: none) */
	uint64_t offset;           /* the block's flow record's trace offset */
};

struct jf_listener {
	void (*destroy)(void *self);
	/* Region entered / block counted: called before the block's counts are added. */
	int (*block_counted)(struct jf_analysis *a, void *self, const struct jf_block_event *e);
	/* n instructions of the block being counted ran under bytecode range row `bytecode`,
	 * inside the frames of inline chain `inline_chain` (jf_inline_frame_at; 0: none). */
	int (*bytecode_insns)(struct jf_analysis *a, void *self, int32_t bytecode,
			      uint32_t inline_chain, uint32_t n);
	/* Instruction ip of pc-mapped region r ran, under pc map entry e. Returns a row of the
	 * listener's own (or -1), which the bytecode memo hands back to code_lines_again when
	 * the same block runs again; so at most one listener answers it. */
	int32_t (*code_line)(struct jf_analysis *a, void *self, const struct live_region *r,
			     const struct pc_entry *e, uint64_t ip, enum jf_isa isa);
	void (*code_lines_again)(void *self, const uint32_t *rows, uint32_t n);
	/* The block being counted is done. */
	void (*block_done)(struct jf_analysis *a, void *self, const struct jf_block *b);
	/* Control arrived at the start of live region r from outside it (an entry of r, and of
	 * its trace when it has one), on thread tid. */
	void (*region_entered)(struct jf_analysis *a, void *self, int32_t tid,
			       const struct live_region *r);
	/* Trace row `trace` began an iteration on thread tid: its loop header ran (a bridge's
	 * iteration is its entry). */
	void (*loop_iteration)(struct jf_analysis *a, void *self, int32_t tid, int32_t trace);
	/* A timestamp `to` on thread tid; the clock since `from` (when has_from) went to what
	 * ran last. */
	int (*time_attributed)(struct jf_analysis *a, void *self, int32_t tid, int has_from,
			       uint64_t from, uint64_t to);
	/* Guard row `guard` exited on thread tid (at the thread's last timestamp, when known). */
	int (*guard_exited)(struct jf_analysis *a, void *self, int32_t tid, int has_time,
			    uint64_t time, uint32_t guard);
	/* Guard row `guard` held on thread tid: its branch went on in the trace. */
	void (*guard_passed)(struct jf_analysis *a, void *self, int32_t tid, uint32_t guard);
	/* A flow record other than a block (an error, lost data, tracing disabled or enabled,
	 * ...) on thread tid, before the state machines act on it. */
	void (*flow_event)(struct jf_analysis *a, void *self, int32_t tid, const struct jf_flow *f);
	/* A zone record takes effect here, before the code model applies it. */
	void (*code_changed)(struct jf_analysis *a, void *self, const struct jf_zone_record *rec);
	/* Joining the analysis of the next part (later, whose listener state is later_self):
	 * a guard exit or pass settled at the seam, the time between the parts on thread tid,
	 * then everything else (later's instruction positions start at insn_shift). */
	int (*seam_guard_exited)(struct jf_analysis *a, void *self, int32_t tid, int has_time,
				 uint64_t time, uint32_t guard);
	void (*seam_guard_passed)(struct jf_analysis *a, void *self, int32_t tid, uint32_t guard);
	int (*seam_time)(struct jf_analysis *a, void *self, const struct jf_analysis *later,
			 const void *later_self, int32_t tid, uint64_t from, uint64_t to);
	int (*merge)(struct jf_analysis *a, void *self, const struct jf_analysis *later,
		     const void *later_self, uint64_t insn_shift);
	/* Fill the listener's part of the result (the analysis's tables are already in r). */
	int (*result)(const struct jf_analysis *a, const void *self, struct jf_analysis_result *r);
};

#define JF_LISTENERS_MAX 4

struct jf_listeners {
	const struct jf_listener *of[JF_LISTENERS_MAX];
	void *self[JF_LISTENERS_MAX];
	size_t n;
};

/* Attach listener l with state self (taken over: destroyed with the analysis, also when
 * attaching fails). */
int jf_listeners_attach(struct jf_listeners *ls, const struct jf_listener *l, void *self);
void jf_listeners_free(struct jf_listeners *ls);

/* The views (views.c): folded stacks, timeline buckets and events, code lines. NULL when
 * out of memory. */
extern const struct jf_listener jf_views_listener;
void *jf_views_new(void);
/* Free what the views' result callback put in r. */
void jf_views_result_free(struct jf_analysis_result *r);

/* Call stacks (call_stacks.c). NULL when out of memory. */
extern const struct jf_listener jf_call_stacks_listener;
void *jf_call_stacks_new(void);
/* Free what the call stacks' result callback put in r. */
void jf_call_stacks_result_free(struct jf_analysis_result *r);

/* ---- delivering an event to every listener ------------------------------------------ *
 * The jf_emit_* helpers are inline and only test whether there is a listener, so that an
 * analysis without one (a text or JSON report) pays a load and a branch per event on the
 * per-record path; the loop over the listeners is out of line (listeners.c). A listener
 * that runs out of memory loses what it was told (as a view, it says less); the analysis's
 * own counts go on. */

/* Called only when there are listeners (the caller builds e only then). */
void jf_listeners_block_counted(struct jf_analysis *a, struct jf_listeners *ls,
				const struct jf_block_event *e);
void jf_listeners_bytecode_insns(struct jf_analysis *a, struct jf_listeners *ls,
				 int32_t bytecode, uint32_t inline_chain, uint32_t n);
void jf_listeners_block_done(struct jf_analysis *a, struct jf_listeners *ls,
			     const struct jf_block *b);
void jf_listeners_time_attributed(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
				  int has_from, uint64_t from, uint64_t to);
void jf_listeners_guard_exited(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
			       int has_time, uint64_t time, uint32_t guard);
void jf_listeners_code_changed(struct jf_analysis *a, struct jf_listeners *ls,
			       const struct jf_zone_record *rec);
void jf_listeners_flow_event(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
			     const struct jf_flow *f);
void jf_listeners_region_entered(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
				 const struct live_region *r);
void jf_listeners_loop_iteration(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
				 int32_t trace);
void jf_listeners_guard_passed(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
			       uint32_t guard);

static inline void jf_emit_bytecode_insns(struct jf_analysis *a, struct jf_listeners *ls,
					  int32_t bytecode, uint32_t inline_chain, uint32_t n)
{
	if (__builtin_expect(ls->n != 0, 0))
		jf_listeners_bytecode_insns(a, ls, bytecode, inline_chain, n);
}

static inline void jf_emit_block_done(struct jf_analysis *a, struct jf_listeners *ls,
				      const struct jf_block *b)
{
	if (__builtin_expect(ls->n != 0, 0))
		jf_listeners_block_done(a, ls, b);
}

static inline void jf_emit_time_attributed(struct jf_analysis *a, struct jf_listeners *ls,
					   int32_t tid, int has_from, uint64_t from, uint64_t to)
{
	if (__builtin_expect(ls->n != 0, 0))
		jf_listeners_time_attributed(a, ls, tid, has_from, from, to);
}

static inline void jf_emit_guard_exited(struct jf_analysis *a, struct jf_listeners *ls,
					int32_t tid, int has_time, uint64_t time, uint32_t guard)
{
	if (__builtin_expect(ls->n != 0, 0))
		jf_listeners_guard_exited(a, ls, tid, has_time, time, guard);
}

static inline void jf_emit_region_entered(struct jf_analysis *a, struct jf_listeners *ls,
					  int32_t tid, const struct live_region *r)
{
	if (__builtin_expect(ls->n != 0, 0))
		jf_listeners_region_entered(a, ls, tid, r);
}

static inline void jf_emit_loop_iteration(struct jf_analysis *a, struct jf_listeners *ls,
					  int32_t tid, int32_t trace)
{
	if (__builtin_expect(ls->n != 0, 0))
		jf_listeners_loop_iteration(a, ls, tid, trace);
}

static inline void jf_emit_guard_passed(struct jf_analysis *a, struct jf_listeners *ls,
					int32_t tid, uint32_t guard)
{
	if (__builtin_expect(ls->n != 0, 0))
		jf_listeners_guard_passed(a, ls, tid, guard);
}

static inline void jf_emit_flow_event(struct jf_analysis *a, struct jf_listeners *ls,
				      int32_t tid, const struct jf_flow *f)
{
	if (__builtin_expect(ls->n != 0, 0))
		jf_listeners_flow_event(a, ls, tid, f);
}

static inline void jf_emit_code_changed(struct jf_analysis *a, struct jf_listeners *ls,
					const struct jf_zone_record *rec)
{
	if (__builtin_expect(ls->n != 0, 0))
		jf_listeners_code_changed(a, ls, rec);
}

/* Joining parts (merge.c) and making the result (result.c): the listeners of later are
 * those of a, attached in the same order. -1 when one ran out of memory. */
void jf_emit_seam_guard_exited(struct jf_analysis *a, int32_t tid, int has_time,
			       uint64_t time, uint32_t guard);
void jf_emit_seam_guard_passed(struct jf_analysis *a, int32_t tid, uint32_t guard);
void jf_emit_seam_time(struct jf_analysis *a, const struct jf_analysis *later, int32_t tid,
		       uint64_t from, uint64_t to);
int jf_listeners_merge(struct jf_analysis *a, const struct jf_analysis *later,
		       uint64_t insn_shift);
int jf_listeners_result(const struct jf_analysis *a, struct jf_analysis_result *r);

/* The row of the listener that answers code lines, or -1. */
int32_t jf_listeners_code_line(struct jf_analysis *a, struct jf_listeners *ls,
			       const struct live_region *r, const struct pc_entry *e, uint64_t ip,
			       enum jf_isa isa);
void jf_listeners_code_lines_again(struct jf_listeners *ls, const uint32_t *rows, uint32_t n);

static inline int32_t jf_emit_code_line(struct jf_analysis *a, struct jf_listeners *ls,
					const struct live_region *r, const struct pc_entry *e,
					uint64_t ip, enum jf_isa isa)
{
	return __builtin_expect(ls->n != 0, 0) ? jf_listeners_code_line(a, ls, r, e, ip, isa) : -1;
}

static inline void jf_emit_code_lines_again(struct jf_listeners *ls, const uint32_t *rows,
					    uint32_t n)
{
	if (__builtin_expect(ls->n != 0, 0) && n)
		jf_listeners_code_lines_again(ls, rows, n);
}

#endif
