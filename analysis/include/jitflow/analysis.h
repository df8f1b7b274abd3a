/* The analysis: a decoded flow turned into answers about a JIT.
 *
 * Input is two streams in trace order: flow records (from any decoder) and zone records at
 * the point of the trace where they took effect (a region loaded, a guard described, an
 * iteration started). Static code (the runtime's own ELF, libraries, the kernel) is
 * described once with jf_analysis_add_native.
 *
 * Requirements on the flow: blocks must not run through direct jumps or calls (configure
 * the Intel PT decoder with end_on_call and end_on_jump; CoreSight ranges already end at
 * every taken branch), so that arriving at a trace's entry always starts a block.
 *
 * Definitions (docs/analysis.md, the same as minivm's counters):
 *   entries     times control arrived at a trace's entry from outside that trace;
 *   iterations  executions of a loop trace's header, its entry address (entries plus
 *               back-edge jumps); for bridges, equal to entries;
 *   guard exits times the guard's branch went to its exit path (not the fall-through);
 *   guard passes times it fell through.
 *
 * Results are plain data that merge: analysing two consecutive parts of a trace and
 * merging the results gives the result of the whole (the second part must first be given
 * the zone records that took effect before it, with jf_analysis_replay_record). */
#ifndef JITFLOW_ANALYSIS_H
#define JITFLOW_ANALYSIS_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdint.h>
#include <stdio.h>

#include "jitflow/codemap.h"
#include "jitflow/error.h"
#include "jitflow/flow.h"
#include "jitflow/call_stacks.h"
#include "jitflow/views.h"
#include "jitflow/zone.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a block's code is. */
enum jf_code_class {
	JF_CLASS_UNKNOWN = 0,    /* no image says (or data was lost) */
	JF_CLASS_INTERPRETER,    /* the runtime's interpreter ranges */
	JF_CLASS_TRACE,          /* compiled trace / loop / function */
	JF_CLASS_BRIDGE,
	JF_CLASS_EXIT_STUB,
	JF_CLASS_TRAMPOLINE,
	JF_CLASS_INLINE_CACHE,
	JF_CLASS_STENCIL,
	JF_CLASS_JITTED,         /* jitted code of unknown kind (jitdump only) */
	JF_CLASS_RUNTIME,        /* the runtime's other native code (incl. tracer, compiler,
	                          * GC ranges) */
	JF_CLASS_NATIVE,         /* libraries and other native code */
	JF_CLASS_KERNEL,
	JF_CLASS_INSTRUMENTATION, /* the zone emitter's code (INTERP_RANGE kind
	                          * instrumentation) and what it calls until it returns:
	                          * describing the runtime to jitflow, not running it */
	JF_CLASS_GC,             /* garbage collection: a call into one of the collector's
	                          * entries (jf_analysis_config.collector_entry) and all the
	                          * native code it runs until that call returns; or a GC
	                          * phase (below) */
	/* The VM's own work that the runtime brackets with PHASE_BEGIN / PHASE_END events
	 * (enum jf_vm_phase): all the writing thread runs in between but the emitter's code,
	 * whatever code it is (docs/analysis.md, "VM phases"). Native in the coarse split. */
	JF_CLASS_TRACING,        /* recording a trace */
	JF_CLASS_COMPILING,      /* optimizing and assembling compiled code */
	JF_CLASS_EXIT_HANDLING,  /* leaving compiled code: restoring the interpreter's state;
	                          * also an INTERP_RANGE of kind deopt and the native code
	                          * the thread runs from it until interpreted, jitted or
	                          * instrumentation code */
	JF_CLASS_COUNT,
};

/* The coarse split the reports show. */
enum jf_split_class {
	JF_SPLIT_INTERPRETER = 0,
	JF_SPLIT_JITTED,         /* traces, bridges, stubs, trampolines, ICs, stencils */
	JF_SPLIT_NATIVE,         /* the runtime's native code, libraries, kernel */
	JF_SPLIT_INSTRUMENTATION, /* never counted as native: the emitter's own cost */
	JF_SPLIT_UNKNOWN,
	JF_SPLIT_COUNT,
};

const char *jf_code_class_name(enum jf_code_class c);
/* VM phases are numbered as the zone records' enum jf_vm_phase (jitflow/emitter.h, the
 * emitter library's header): tracing 1, compiling 2, GC 3, exit handling 4; arrays by
 * phase have JF_VM_PHASE_SLOTS entries, [0] unused. */
enum { JF_VM_PHASE_SLOTS = 5 };
/* The class a phase's instructions count to (GC: JF_CLASS_GC); UNKNOWN for none. */
enum jf_code_class jf_phase_class(int phase);
const char *jf_phase_name(int phase);
const char *jf_split_class_name(enum jf_split_class c);
enum jf_split_class jf_split_of(enum jf_code_class c);

struct jf_guard_result {
	uint64_t guard_id, trace_id;
	uint64_t branch_addr, stub_addr;
	uint32_t resume_pc;
	uint32_t flags;             /* enum jf_guard_flags of its GUARD records */
	uint64_t exits, passes;
	uint64_t to_bridge;         /* exits that went on to the bridge attached to it (the
	                             * rest, exits - to_bridge, went to the interpreter) */
	uint64_t unresolved;        /* branch executed, direction unknown (trace stopped) */
	uint64_t bridge_id;         /* trace id of the bridge attached to it (0 = none) */
	uint64_t exits_before_bridge; /* exits until the bridge was attached */
	int has_bridge;
	int bridge_before_flow;     /* attached before this part's first block (for merging) */
	uint64_t code_object;
	char kind[192];             /* the runtime's name for the guard (PyPy: guard_class;
	                             * HotSpot: the trap reason and the frames at the call) */
};

/* An instruction whose passes the runtime counts itself (zone POINT records; PyPy's
 * jit-backend-counts: "entry N", "TargetToken(T)", "bridge B"). */
struct jf_point_result {
	uint64_t trace_id, point_id, addr;
	uint32_t kind;              /* JF_POINT_ENTRY, JF_POINT_LABEL, JF_POINT_BRIDGE */
	uint64_t passes;            /* times the instruction at addr ran */
};

/* Control that went straight from one trace's code into another's, counted by the pair
 * (CPython: an executor's exit that runs the next executor; LuaJIT: a side trace linked
 * to a root trace). The sum over all pairs is the split's trace_to_trace. */
struct jf_trace_link_result {
	uint64_t from_trace, to_trace;
	uint64_t count;
};

struct jf_trace_result {
	uint64_t trace_id;
	uint32_t kind;              /* JF_REGION_TRACE, JF_REGION_BRIDGE, ... */
	uint64_t parent_trace, parent_guard;
	uint64_t entries, iterations;
	uint64_t insns;             /* in the trace's own code */
	uint64_t time;              /* flow clock units spent in it (see time_unit) */
	uint64_t exits;             /* sum of its guards' exits */
	uint64_t code_object;
	uint32_t link;              /* enum jf_trace_link: how it ends when it runs through */
	uint64_t link_trace;        /* ... and for JF_LINK_TRACE, the trace it goes to */
	char name[96];
	/* What making it cost: instructions and time of the tracing and compiling phase
	 * spans that began while it was being made (from its TRACE_START or COMPILE_BEGIN to
	 * its TRACE_ABORT or COMPILE_END), beside insns and time, what it ran afterwards. */
	uint64_t tracing_insns, tracing_time, compiling_insns, compiling_time;
	uint32_t guard_first, guard_count; /* its guards: guards[guard_first ...] after
	                                    * jf_analysis_result sorts them */
};

/* Instructions per region and bytecode range (pc maps), and per op/stencil kind. */
struct jf_bytecode_result {
	uint64_t region_key;        /* trace id, or the region's address when it has none;
	                             * JF_BYTECODE_CODE_OBJECT | id for a code object's,
	                             * | region key << 16 when counted per region */
	uint32_t pc_from, pc_to;    /* bytecode range [from, to) (to == from: one pc) */
	uint64_t insns, time;
	/* Pc maps whose entries name code objects (PyPy: the Python function, inlined ones
	 * too): the range is in this function, across all traces. Empty name: none. */
	char code_name[128], code_file[160];
	uint32_t code_line;         /* the function's first line */
};

#define JF_BYTECODE_CODE_OBJECT (1ull << 63)
/* A code object's row: its id, and the region key (trace id, or the region's address,
 * below 2^47) it was counted in, 0 when summed across regions (JF_PC_MAP_PER_REGION). */
#define JF_BYTECODE_CODE_OBJECT_ID(key) ((key) & 0xffffu)
#define JF_BYTECODE_REGION_OF(key) (((key) & ~JF_BYTECODE_CODE_OBJECT) >> 16)

struct jf_op_result {
	uint16_t op_kind;
	char name[48];
	uint64_t insns, time;
};

struct jf_region_result {           /* jitted regions by name (what jitdump-only gives) */
	char name[96];
	uint64_t addr, size;
	uint32_t kind;
	uint64_t insns, entries;
};

/* A runtime's own subdivision of its regions, set by its description when a region is
 * described (HotSpot: nmethods by tier); group 0 is everything else. */
#define JF_REGION_GROUPS 8

struct jf_split_result {
	int32_t tid;                 /* -1 = all threads */
	char name[32];               /* the thread's name from a THREAD_NAME record, "" if none */
	uint64_t insns[JF_SPLIT_COUNT];
	uint64_t time[JF_SPLIT_COUNT];
	uint64_t by_class[JF_CLASS_COUNT];
	uint64_t time_by_class[JF_CLASS_COUNT];
	/* Instructions and time in regions of each group (blocks counted in their region's
	 * own class only). */
	uint64_t insns_by_group[JF_REGION_GROUPS], time_by_group[JF_REGION_GROUPS];
	uint64_t collections;        /* calls into a collector entry (JF_CLASS_GC) */
	uint64_t phase_spans[JF_VM_PHASE_SLOTS]; /* PHASE_BEGIN events, by enum jf_vm_phase */
	/* transitions[from][to] between split classes, plus trace->trace */
	uint64_t transitions[JF_SPLIT_COUNT][JF_SPLIT_COUNT];
	uint64_t trace_to_trace;
	uint64_t guard_exits;        /* trace -> interpreter through a guard (exit path) */
};

struct jf_iteration_result {
	uint64_t index;              /* the runtime's iteration number */
	uint64_t insns, time;
	uint64_t insns_by_split[JF_SPLIT_COUNT];
	uint64_t insns_by_class[JF_CLASS_COUNT]; /* the phases' classes among them */
};

/* The rows of a jf_iteration_result per iteration mark. A long run marks millions of
 * iterations, so the series is kept in a temporary file (unlinked, in $TMPDIR) beyond a
 * few thousand rows; read it with jf_analysis_iteration. */
struct jf_iteration_series;

enum jf_warmup_kind {
	JF_WARMUP_UNKNOWN = 0,       /* too few iterations */
	JF_WARMUP_FLAT,
	JF_WARMUP_WARMUP,
	JF_WARMUP_SLOWDOWN,
	JF_WARMUP_NO_STEADY_STATE,
};
const char *jf_warmup_name(enum jf_warmup_kind k);

struct jf_retrace_candidate {
	uint64_t trace_id;
	double score;                /* share of iterations leaving through the top guard, or
	                              * share of instructions in bridges, whichever is larger */
	uint64_t top_guard;
	double top_guard_share;      /* exits of the top guard / iterations */
	double bridge_share;         /* bridge instructions / (trace + bridge instructions) */
};

/* Where decoding failed or data was lost: the first few of them, located; every one is
 * counted in the summary fields of jf_analysis_result. */
enum { JF_PROBLEM_SITES_MAX = 8 };
struct jf_problem_site {
	uint16_t kind;      /* JF_FLOW_ERROR, JF_FLOW_LOST or JF_FLOW_OVERFLOW */
	uint16_t code;      /* LOST: enum jf_lost_reason; ERROR: enum jf_error_phase */
	uint32_t source;    /* the trace stream (cpu, AUX queue, trace id) */
	uint64_t offset;    /* byte offset in that stream or its container file */
	uint64_t ip, time, bytes;  /* ip and time valid with has_ip / has_time */
	int has_ip, has_time;
	char text[64];      /* ERROR: the backend's message */
};

/* What a problem site is, in words: "lost", "error" or "overflow", and its reason
 * ("file-cut", "skipped", "decode", "image", ...). */
const char *jf_problem_kind_name(const struct jf_problem_site *p);
const char *jf_problem_what(const struct jf_problem_site *p);

/* A phase bracket that does not close: a PHASE_END with no open PHASE_BEGIN of its
 * phase on its thread, a PHASE_BEGIN still open when the trace ended, or one nested
 * deeper than JF_PHASE_DEPTH. Located by the record and the flow position. */
enum jf_phase_problem_kind {
	JF_PHASE_UNMATCHED_END = 1,
	JF_PHASE_UNCLOSED,
	JF_PHASE_TOO_DEEP,
};
enum { JF_PHASE_DEPTH = 16, JF_PHASE_PROBLEMS_MAX = 8 };
struct jf_phase_problem {
	uint16_t kind;              /* enum jf_phase_problem_kind */
	uint16_t phase;             /* the record's phase (enum jf_vm_phase) */
	int32_t tid;
	uint64_t record_offset;     /* the record's offset in the zone file */
	uint64_t insn;              /* instructions of the flow before the record took effect */
	uint64_t time;              /* the thread's clock then (valid with has_time) */
	int has_time;
};
const char *jf_phase_problem_name(enum jf_phase_problem_kind k);

/* Everything the analysis found; arrays are owned by the result. */
struct jf_analysis_result {
	struct jf_trace_result *traces;   size_t ntraces;
	struct jf_guard_result *guards;   size_t nguards;
	struct jf_region_result *regions; size_t nregions;
	struct jf_bytecode_result *bytecodes; size_t nbytecodes;
	struct jf_op_result *ops;         size_t nops;
	struct jf_point_result *points;   size_t npoints; /* by trace, kind, address */
	struct jf_trace_link_result *trace_links; size_t ntrace_links; /* most taken first */
	struct jf_split_result total;
	struct jf_split_result *threads;  size_t nthreads;
	/* One row per iteration, the last one the iteration under way when the trace ended:
	 * read them with jf_analysis_iteration. */
	struct jf_iteration_series *iteration_series; size_t niterations;
	struct jf_iteration_result open_iteration; int has_open_iteration;
	enum jf_warmup_kind warmup;
	uint64_t steady_from;             /* first steady iteration (index in the array) */
	struct jf_retrace_candidate *retrace; size_t nretrace;
	/* What could not be known, said rather than invented. */
	uint64_t insns, blocks;
	uint64_t decode_errors, lost_bytes, lost_events, overflows, image_misses;
	struct jf_problem_site problems[JF_PROBLEM_SITES_MAX]; size_t nproblems;
	int has_zone_records;             /* extension records (kinds, guards, pc maps) */
	uint32_t runtime;                 /* enum jf_runtime the records declared (0: none) */
	/* The runtime's trace events (zone EVENT records) that took effect in the flow:
	 * recordings started, aborted, and flushes of all traces. */
	uint64_t trace_starts, trace_aborts, trace_flushes;
	/* VM phases: which ones the runtime told (bit 1 << enum jf_vm_phase of every
	 * PHASE_BEGIN seen), and the brackets that did not close, every one counted. */
	uint32_t phases_told;
	uint64_t phase_problem_count;
	struct jf_phase_problem phase_problems[JF_PHASE_PROBLEMS_MAX]; size_t nphase_problems;
	int has_pc_maps, has_iterations, has_time;
	int time_is_ns, time_is_synthetic;
	/* For the views (jitflow/views.h): folded stacks, timeline. */
	struct jf_stack_result *stacks;   size_t nstacks;
	struct jf_code_line *code_lines;  size_t ncode_lines; /* by region_key, then offset */
	struct jf_timeline_result timeline;
	/* With jf_analysis_config.call_stacks (jitflow/call_stacks.h). */
	struct jf_call_stacks_result call_stacks;
};

struct jf_analysis;

struct jf_analysis_config {
	struct jf_codemap *map;      /* for walking instructions in pc-mapped regions (may be
	                              * NULL: no bytecode attribution) */
	double steady_tolerance;     /* relative; 0 = default 0.05 */
	int views;                   /* collect the data of jitflow/views.h (stacks, code
	                              * lines, timeline) for the flame graph, timeline and
	                              * HTML views; 0: those tables stay empty */
	uint64_t timeline_buckets;   /* most buckets per timeline series (jitflow/views.h);
	                              * 0 = JF_TIMELINE_BUCKETS */
	int call_stacks;             /* rebuild each thread's call stacks (jitflow/call_stacks.h);
	                              * such an analysis cannot be merged with another */
	/* Classifies code no zone record or native range describes (e.g. by the file it
	 * was mapped from); NULL: unknown. Asked once per block start address and kept
	 * while the code map (map's generation) and the zone records stay the same, so
	 * its answer may depend on those only. */
	enum jf_code_class (*native_class)(void *ctx, uint64_t addr);
	void *native_ctx;
	/* Whether addr, in code no zone record describes, is an entry of the runtime's
	 * garbage collector (a routine that runs one collection and returns), asked with
	 * native_ctx under the same terms as native_class; NULL: none. A thread that arrives
	 * there runs a collection: JF_CLASS_GC until that call returns (docs/analysis.md,
	 * "Garbage collection"). */
	int (*collector_entry)(void *ctx, uint64_t addr);
};

struct jf_analysis *jf_analysis_new(const struct jf_analysis_config *cfg);
void jf_analysis_free(struct jf_analysis *a);

/* Static native code: [start, end) of class cls (RUNTIME, NATIVE, KERNEL, INTERPRETER). */
int jf_analysis_add_native(struct jf_analysis *a, uint64_t start, uint64_t end,
			   enum jf_code_class cls, const char *name);

/* A zone record took effect at this point of the flow (reader: for pc map entries). */
int jf_analysis_zone_record(struct jf_analysis *a, const struct jf_zone_reader *reader,
			    const struct jf_zone_record *rec);

/* For the later part of a split trace: a zone record that took effect before the part
 * began. Code state (regions, guards, pc maps) is applied; events (iteration marks) are
 * not, since they belong to the earlier part. */
int jf_analysis_replay_record(struct jf_analysis *a, const struct jf_zone_reader *reader,
			      const struct jf_zone_record *rec);

/* The next flow record. */
int jf_analysis_flow(struct jf_analysis *a, const struct jf_flow *flow);

/* Mark the time unit of the flow (from the decoder's stats). */
void jf_analysis_set_clock(struct jf_analysis *a, int time_is_ns, int time_is_synthetic);

/* The result so far (a snapshot; the analysis may go on). */
int jf_analysis_result(struct jf_analysis *a, struct jf_analysis_result *out);
void jf_analysis_result_free(struct jf_analysis_result *r);
/* Row i (< niterations) of the result's iteration series; 0, or -1 when it could not be
 * read back from its temporary file (the row is then zeros, and
 * jf_analysis_iterations_error gives the errno). */
int jf_analysis_iteration(const struct jf_analysis_result *r, size_t i,
			  struct jf_iteration_result *row);
int jf_analysis_iterations_error(const struct jf_analysis_result *r);

/* Merge the analysis of the part of the trace after `a`'s into `a`: afterwards `a` holds
 * the analysis of both parts, as if one analysis had seen them in order. */
int jf_analysis_merge(struct jf_analysis *a, const struct jf_analysis *later);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
