/* Internal state of the analysis, shared by its files:
 *   tables.c     growable arrays and a u64 -> index hash map
 *   zone_model.c the live code model built from zone records (regions, guards, pc maps)
 *   flow.c       the per-thread state machines that turn blocks into analysis events
 *   events.h     announcing an event to the counters and the attached listeners
 *   counters.h   the counters: the result's counts, from the events (problems.c: the
 *                trace's errors, losses and overflows, and where they happened)
 *   merge.c      combining the analyses of consecutive parts of a trace
 *   result.c     the plain-data result: sorted tables, retrace candidates, warmup
 * Attached listeners of the analysis events (listeners.h), such as the views (views.c),
 * keep their state apart. */
#ifndef JITFLOW_ANALYSIS_INTERNAL_H
#define JITFLOW_ANALYSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/analysis.h"
#include "jitflow/emitter.h"
#include "jitflow/insn.h"
#include "listeners.h"

/* ---- tables.c -------------------------------------------------------------------- */

/* Open-addressing map from a 64-bit key to an index. */
struct jf_index_map {
	uint64_t *keys;
	uint32_t *values;  /* index + 1; 0 = empty slot */
	size_t mask, used;
};

int jf_index_map_get(const struct jf_index_map *m, uint64_t key, uint32_t *value);
int jf_index_map_put(struct jf_index_map *m, uint64_t key, uint32_t value);
void jf_index_map_clear(struct jf_index_map *m);
void jf_index_map_free(struct jf_index_map *m);

/* Grow *array (of elem-sized items, *cap of them) to hold n + 1; zero the new space. */
int jf_grow(void **array, size_t *cap, size_t n, size_t elem);
/* qsort, except that an empty table may be NULL, which qsort must not be given. */
void jf_sort_rows(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* FNV-1a over a string, for keying names. */
uint64_t jf_hash_string(const char *s, uint64_t seed);

/* ---- zone_model.c ---------------------------------------------------------------- */

struct pc_entry {
	uint32_t code_offset, bytecode_pc, bytecode_next;
	uint16_t op_kind;
	uint32_t inline_chain;    /* a code-object map's: the frames around op_kind's, as
	                           * jf_inline_frame_at's node (0: none, or not said) */
};

struct pc_map {
	struct pc_entry *entries; /* sorted by code_offset */
	uint32_t n;
};

struct live_region {
	uint64_t start, end;
	enum jf_code_class cls;
	uint32_t kind;           /* JF_REGION_* (0 when only jitdump says it exists) */
	int32_t trace;           /* index into traces, -1 for none */
	uint32_t region;         /* index into regions */
	/* Its pc maps, either or both: one whose kinds are ops (OP_NAME) and one whose kinds
	 * are code objects (JF_PC_MAP_CODE_OBJECTS). Bytecode ranges come from the
	 * code-object map where there is one (per code object, across traces), else from the
	 * op map (per region); ops come from the op map. */
	struct pc_map op_map, code_object_map;
	uint64_t region_key;     /* trace id, or start address */
	int pc_per_region;       /* its code-object map's ranges are counted apart in this
	                          * region (JF_PC_MAP_PER_REGION) */
	uint64_t header;         /* where a loop trace's iterations begin (default: start) */
	uint8_t group;           /* < JF_REGION_GROUPS: the runtime description's group of it */
};

struct native_range {
	uint64_t start, end;
	enum jf_code_class cls;
};

struct jf_zone_model {
	struct live_region *live;     size_t nlive, live_cap;
	struct native_range *natives; size_t nnatives, natives_cap;
	int natives_sorted;
	/* jf_zone_model_native_at's answers by address (blocks start at few addresses, and
	 * each lookup searches nested ranges); cleared when a range is added. */
	struct { uint64_t addr; uint32_t cls, valid; } native_memo[256];
	size_t last_hit;
	struct jf_index_map guard_by_branch; /* live guards: branch address -> guard index */
	struct { uint16_t kind; char name[192]; } *op_names; size_t nop_names, op_names_cap;
	struct jf_code_object_name { /* CODE_OBJECT records */
		uint64_t id;
		uint32_t line;
		char name[128], file[160];
	} *code_objects;
	size_t ncode_objects, code_objects_cap;
	struct { uint64_t addr; uint32_t point; } *points; /* live points by address */
	size_t npoints, points_cap;
	struct jf_thread_name { int32_t tid; char name[32]; } *thread_names; /* THREAD_NAME */
	size_t nthread_names, thread_names_cap;
	/* Inline frames (INLINE_FRAMES records) as a tree: node i + 1 is a code object's frame
	 * inside node parent's (0: the outermost); a chain is its innermost node. */
	struct jf_inline_frame { uint32_t parent; uint16_t code_object; } *inline_frames;
	size_t ninline_frames, inline_frames_cap;
	struct jf_index_map inline_frame_by_key; /* (parent, code object) -> node - 1 */
};

/* ---- names.c ---------------------------------------------------------------------- */

/* jf_split_of as a table the per-block path reads without a call. */
extern const uint8_t jf_split_by_class[JF_CLASS_COUNT];

static inline enum jf_split_class jf_split_fast(enum jf_code_class c)
{
	return (unsigned)c < JF_CLASS_COUNT ? (enum jf_split_class)jf_split_by_class[c] :
					      JF_SPLIT_UNKNOWN;
}

/* ---- per-thread state (flow.c) ---------------------------------------------------- */

/* What count_block asks about every block, by its start address: its live region, its
 * class, and the guard whose branch is its last instruction. Blocks start at few
 * addresses, so the answers are remembered in a direct-mapped table for one state of the
 * code: the table's epoch moves on when the code model (model_generation) or the code map
 * (its generation) changes, which makes every slot stale at once. */
#define JF_CLASS_MEMO_BITS 11
struct block_class_slot {
	uint64_t start;
	struct live_region *r;        /* jf_zone_model_region_at(start) */
	uint32_t epoch;               /* valid when the table's epoch */
	int32_t guard;                /* guard_by_branch's answer (guard index, or -1) ... */
	uint32_t guard_last;          /* ... for the instruction at start + this */
	uint32_t bytecode_row;        /* where the bytecode memo last had a block from start
	                               * (a hint, checked against the row: see bytecodes.c) */
	uint8_t cls;                  /* enum jf_code_class, before instrumentation */
	uint8_t has_guard;            /* guard_last and guard are set */
	uint8_t collector_entry;      /* cfg.collector_entry's answer for start */
};

struct block_class_memo {
	uint32_t epoch;               /* 0: not started */
	uint64_t model_generation, map_generation;
	struct block_class_slot slot[1u << JF_CLASS_MEMO_BITS];
};

struct thread_state {
	int32_t tid;
	struct jf_split_result split; /* the counters' (counters.h): this thread's split */
	/* The previous block. */
	int has_prev;
	enum jf_code_class prev_class;
	uint8_t prev_split;           /* its split class (enum jf_split_class) */
	uint64_t prev_region_start;   /* live region of the previous block (0: none) */
	int32_t prev_trace;
	/* Inside a call of the emitter: its code, and the library code it calls, until it
	 * returns to its caller, are instrumentation. */
	int in_instrumentation;
	int prev_in_emitter;          /* the previous block was the emitter's own code */
	/* In exit handling (flow.c, exit_handling_call): since the runtime's exit handling
	 * code ran, until it went on by other than a call; the previous block was that code. */
	int in_exit_handling;
	int prev_in_exit_handler;
	uint8_t prev_end;             /* how the previous block ended (enum jf_block_end) */
	uint64_t prev_fallthrough;    /* where the previous block continues without a branch
	                               * (0: it ended in one that was taken, or unknown) */
	uint64_t prev_after_last;     /* the address after its last instruction (a call's
	                               * return address) */
	/* Inside a collection (cfg.collector_entry): since the call into the entry, how many
	 * calls deeper than the entry's frame the thread is, and where that call returns to
	 * (0: not known). */
	int in_collection;
	int64_t collection_depth;
	uint64_t collection_return;
	/* A guard branch ended the previous block; the next block tells its direction. */
	int32_t pending_guard;
	uint64_t pending_fallthrough;
	/* A guard exited and control has not yet left jitted code or reached a trace's
	 * entry: if it reaches that guard's bridge, the exit went to the bridge. */
	int32_t exit_guard;
	/* This part has not yet seen an exit resolved, a trace entry or unjitted code: a
	 * bridge entered meanwhile may continue an exit of the part before (merging). */
	int prefix_open;
	int32_t prefix_bridge_entry;
	/* Time is attributed to what ran until the next timestamp. */
	int has_time;
	uint64_t last_time;
	enum jf_split_class time_split;
	int32_t time_trace;
	uint8_t time_class, time_group; /* enum jf_code_class and region group of it */
	/* How this part began, for merging with the part before it. */
	int has_first;
	uint64_t first_start;         /* the first block's start */
	enum jf_code_class first_class;
	uint8_t first_group;
	int32_t first_entry_trace;    /* the first block counted as an entry of this trace */
	int32_t first_entry_region;   /* ... and of this region */
	uint64_t first_region_start;
	int32_t first_trace;          /* the first block's trace */
	int32_t first_phase_trace;    /* the trace its phase span makes (-1: none) */
	int32_t first_header_trace;   /* the first block counted an iteration of this trace
	                               * at its loop header (-1: no) */
	int64_t first_iteration;      /* iterations closed before the first block, or -1 when
	                               * it ran before any iteration mark */
	int has_first_time;
	uint64_t first_time;
	/* The thread's innermost open VM phase (phases.c keeps it): the class its blocks
	 * count to (0: none), and the trace row being made when it began (-1: none). */
	uint8_t phase_class;
	int32_t phase_trace;
	int32_t time_phase_trace;     /* phase_trace of what ran since the last timestamp */
};

/* A thread's open VM phase brackets (phases.c), kept by tid apart from the thread states
 * like the instrumented threads: a record may name a thread before its first block. */
struct phase_span {
	uint8_t phase;                /* enum jf_vm_phase */
	uint8_t replayed;             /* begun before this part (jf_analysis_replay_record) */
	uint64_t trace_id;            /* the trace being made when it began (0: none) */
	uint64_t record_offset, insn, time;
	int has_time;
};

struct phase_thread {
	int32_t tid;
	uint32_t depth;               /* open spans, innermost last */
	struct phase_span open[JF_PHASE_DEPTH];
	uint64_t making;              /* trace id between TRACE_START/COMPILE_BEGIN and its
	                               * TRACE_ABORT/COMPILE_END (0: none) */
};

struct iteration_acc {
	int open;                     /* an iteration is under way */
	uint64_t index;
	uint64_t insns, time, by_split[JF_SPLIT_COUNT], by_class[JF_CLASS_COUNT];
};

struct jf_analysis {
	struct jf_analysis_config cfg;
	struct jf_insn_cache *walker;   /* instruction lengths, for pc-mapped regions */
	struct jf_zone_model zm;

	struct jf_trace_result *traces;   size_t ntraces, traces_cap;
	struct jf_index_map trace_by_id;
	struct jf_guard_result *guards;   size_t nguards, guards_cap;
	struct jf_index_map guard_by_id;
	struct jf_region_result *regions; size_t nregions, regions_cap;
	struct jf_index_map region_by_key;
	struct jf_bytecode_result *bytecodes; size_t nbytecodes, bytecodes_cap;
	struct jf_index_map bytecode_by_key;
	struct jf_op_result *ops;         size_t nops, ops_cap;
	struct jf_index_map op_by_kind;
	struct jf_point_result *points;   size_t npoints, points_cap;
	struct jf_index_map point_by_key;
	struct jf_trace_link_result *links; size_t nlinks, links_cap;
	struct jf_index_map link_by_key;

	struct thread_state *threads;     size_t nthreads, threads_cap;
	/* Threads between INSTRUMENTATION_BEGIN and _END events (a runtime's handlers that
	 * only feed the emitter): all they run is instrumentation. Kept by tid apart from
	 * the thread states, since a record may name a thread before its first block. */
	int32_t *instrumented;            size_t ninstrumented, instrumented_cap;
	struct phase_thread *phase_threads; size_t nphase_threads, phase_threads_cap;
	uint32_t phases_told;             /* 1 << phase of each PHASE_BEGIN that took effect */
	uint64_t phase_problem_count;     /* unmatched ENDs and too deep BEGINs (unclosed
	                                   * ones are counted by the result) */
	struct jf_phase_problem phase_problems[JF_PHASE_PROBLEMS_MAX]; size_t nphase_problems;
	/* Which thread runs on each trace source (CPU, AUX queue or CoreSight trace id): flows
	 * of several sources arrive interleaved in time order, and each belongs to the thread
	 * its own source last named in a context record. */
	struct { uint32_t source; int32_t tid; } *sources;
	size_t nsources, sources_cap, last_source;
	size_t cur_thread;
	/* The thread of the last flow's source (flow_thread SIZE_MAX: none), so that a block
	 * costs no lookup: thread states are only ever added, and a context record resets it. */
	uint32_t flow_source;
	size_t flow_thread;
	/* jf_codemap_generation of cfg.map, read for every block (a constant 0 without one). */
	const uint64_t *map_generation;

	struct iteration_acc pre, cur;    /* before the first iteration; the current one */
	struct jf_iteration_series *iters; /* closed iterations (iterations.c), NULL until one */

	uint64_t insns, blocks, decode_errors, lost_bytes, lost_events, overflows;
	uint64_t image_misses;
	struct jf_problem_site problems[JF_PROBLEM_SITES_MAX]; size_t nproblems;
	int has_zone_records, has_pc_maps, has_iterations, has_time;
	int time_is_ns, time_is_synthetic;
	uint32_t runtime;                 /* enum jf_runtime */
	uint64_t trace_starts, trace_aborts, trace_flushes;
	int32_t last_loaded_trace;        /* a TRACE_LINK event describes this trace (-1: none) */
	struct jf_listeners listeners;    /* of the analysis events (listeners.h) */
	/* Zone records that changed the code model (regions, guards, pc maps, headers). */
	uint64_t model_generation;
	struct jf_block_memo *memo;       /* bytecodes.c */
	struct block_class_memo class_memo; /* flow.c */
};

/* Whether a guard's branch, taken or falling through, left through its exit. */
static inline int jf_guard_exited(const struct jf_guard_result *g, int taken)
{
	return (g->flags & JF_GUARD_EXIT_ON_FALLTHROUGH) ? !taken : taken;
}

/* Whether the code of a loop trace before its header is a whole iteration of the loop, so
 * that running on from it into the header begins the next one: LuaJIT's preamble (its
 * LOOP optimisation peels the first iteration off the loop). minivm's and PyPy's code
 * before the header belongs to the entry's own iteration. */
static inline int jf_preamble_is_iteration(const struct jf_analysis *a)
{
	return a->runtime == JF_RUNTIME_LUAJIT;
}

/* zone_model.c */
void jf_zone_model_free(struct jf_zone_model *zm);
int jf_zone_model_apply(struct jf_analysis *a, const struct jf_zone_reader *reader,
			const struct jf_zone_record *rec);
struct live_region *jf_zone_model_region_at(struct jf_zone_model *zm, uint64_t addr);

/* ---- inline_frames.c ---------------------------------------------------------------- */

/* An INLINE_FRAMES record: the chains of the region's code-object map entries. */
int jf_inline_frames_set(struct jf_zone_model *zm, const struct jf_zone_reader *reader,
			 const struct jf_zone_record *rec);
/* Node `node` of a chain (1 up to zm->ninline_frames), NULL for 0 and beyond. */
const struct jf_inline_frame *jf_inline_frame_at(const struct jf_zone_model *zm, uint32_t node);
enum jf_code_class jf_zone_model_native_at(struct jf_zone_model *zm, uint64_t addr);
int jf_zone_model_add_native(struct jf_zone_model *zm, uint64_t start, uint64_t end,
			     enum jf_code_class cls);
const char *jf_zone_model_op_name(struct jf_zone_model *zm, uint16_t kind);
const struct jf_code_object_name *jf_zone_model_code_object(const struct jf_zone_model *zm,
							     uint64_t id);
int jf_zone_model_set_code_object(struct jf_zone_model *zm,
				  const struct jf_code_object_name *co);
/* A thread's name (the last THREAD_NAME record's), NULL when none named it. */
const char *jf_zone_model_thread_name(const struct jf_zone_model *zm, int32_t tid);
int jf_zone_model_set_thread_name(struct jf_zone_model *zm, int32_t tid, const char *name);

/* Lookups that create a table entry when missing; return its index or -1. */
int32_t jf_trace_index(struct jf_analysis *a, uint64_t trace_id);
/* Guards are keyed by their trace and id: runtimes may number guards per trace. */
int32_t jf_guard_index(struct jf_analysis *a, uint64_t trace_id, uint64_t guard_id);
int32_t jf_region_index(struct jf_analysis *a, const char *name, uint64_t addr);
int32_t jf_bytecode_index(struct jf_analysis *a, uint64_t region_key, uint32_t pc_from,
			  uint32_t pc_to);
int32_t jf_op_index(struct jf_analysis *a, uint16_t op_kind);

/* trace_links.c: add n to the pair's count (trace ids); 0, or -1 when out of memory. */
int jf_trace_link_add(struct jf_analysis *a, uint64_t from_trace, uint64_t to_trace, uint64_t n);

/* points.c */
int32_t jf_point_index(struct jf_analysis *a, uint64_t trace_id, uint64_t point_id,
		       uint32_t kind);
int jf_points_add(struct jf_analysis *a, const struct jf_zone_record *rec);
void jf_points_count(struct jf_analysis *a, const struct live_region *r, const struct jf_block *b);

/* bytecodes.c: count block b of pc-mapped region r per bytecode range, op, code line.
 * *row_hint: the memo row of a block seen before, kept by the caller per block start
 * (any value is safe: a row that is not b's is looked up again). */
struct jf_block_memo;
void jf_count_bytecodes(struct jf_analysis *a, const struct live_region *r, uint32_t *row_hint,
			const struct jf_block *b);
void jf_block_memo_reset(struct jf_block_memo *m);
void jf_block_memo_free(struct jf_block_memo *m);

/* iterations.c: a series of iteration rows, spilled to a temporary file when long */
struct jf_iteration_series *jf_iteration_series_new(void);
struct jf_iteration_series *jf_iteration_series_ref(struct jf_iteration_series *s);
void jf_iteration_series_unref(struct jf_iteration_series *s);
size_t jf_iteration_series_count(const struct jf_iteration_series *s); /* 0 for NULL */
int jf_iteration_series_append(struct jf_iteration_series *s,
			       const struct jf_iteration_result *row);
int jf_iteration_series_get(struct jf_iteration_series *s, size_t i,
			    struct jf_iteration_result *row);
int jf_iteration_series_add_time(struct jf_iteration_series *s, size_t i, uint64_t delta);
/* Append a's current iteration (acc) as a closed row. */
int jf_close_iteration(struct jf_analysis *a, const struct iteration_acc *acc);

/* phases.c: a zone EVENT record of the phases' (PHASE_BEGIN/_END, and TRACE_START,
 * TRACE_ABORT, COMPILE_BEGIN, COMPILE_END which say which trace is being made) on its
 * writing thread; replayed: it took effect before this part (no span is counted). */
int jf_phase_event(struct jf_analysis *a, const struct jf_zone_record *rec, int replayed);
/* Copy tid's innermost phase into its thread state t. */
void jf_phase_sync_thread(struct jf_analysis *a, struct thread_state *t);
/* a's phase brackets become the later part's (merge.c). */
int jf_phase_merge(struct jf_analysis *a, const struct jf_analysis *later);
/* The result's phase fields, the brackets still open at the end among the problems. */
void jf_phase_result(const struct jf_analysis *a, struct jf_analysis_result *r);
void jf_phase_free(struct jf_analysis *a);

/* flow.c */
struct thread_state *jf_thread(struct jf_analysis *a, int32_t tid);
/* The thread's state if it has one yet (jf_thread makes one), else NULL. */
struct thread_state *jf_existing_thread(struct jf_analysis *a, int32_t tid);
/* An INSTRUMENTATION_BEGIN / _END event of thread tid (flow.c). */
int jf_instrumentation_event(struct jf_analysis *a, int32_t tid, int begin);
void jf_split_add_transition(struct jf_split_result *s, enum jf_code_class from,
			     enum jf_code_class to);
/* to += from, field by field (the tid stays to's). */
void jf_split_add(struct jf_split_result *to, const struct jf_split_result *from);

#endif
