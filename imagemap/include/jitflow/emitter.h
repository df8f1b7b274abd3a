/* jitflow's zone emitter: the small library a JIT runtime links to describe its code as it
 * compiles, patches, moves and frees it.
 *
 * It writes a perf jitdump file (jit-PID.dump, readable by `perf inject --jit`) with
 * jitflow's extension records beside the standard ones (ids perf skips; the format is in
 * docs/zone-format.md), and maps the file executable once so that perf's MMAP sideband
 * (and jitflow's recorder) can find it.
 *
 * Ordering: every record gets a sequence number. After writing a record the emitter calls
 * jf_emitter_marker(seq), a non-inlined function whose execution a control-flow trace
 * shows; with JF_EMIT_PTWRITE it also executes PTWRITE with the sequence number where the
 * CPU has it. A decoder then applies the record at that exact point of the trace.
 *
 * Thread-safe without a shared lock: each thread appends its records to a buffer of its
 * own (no allocation per record; the emitter's one mutex is taken only by loads, moves
 * and frees, for perf's code indexes), and the global order is the sequence number, from
 * an atomic counter. Buffers reach the file when full, on jf_emitter_flush and
 * jf_emitter_close, when their thread exits and at process exit, so the file holds each
 * thread's records in seq order but threads interleaved out of seq order; readers order
 * by seq (docs/zone-format.md, "Ordering"). A record reads the arch counter, or
 * CLOCK_MONOTONIC only where that is no system call (see JF_EMIT_CLOCK_MONOTONIC).
 *
 * Every call returns the record's sequence number (>0), or 0 when the record could not be
 * written (the emitter then stays usable; jf_emitter_error says why). */
#ifndef JITFLOW_EMITTER_H
#define JITFLOW_EMITTER_H

/* The API of libjitflow-emit.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct jf_emitter;

enum jf_emit_flags {
	JF_EMIT_CLOCK_MONOTONIC = 0,   /* timestamps from CLOCK_MONOTONIC (perf's default)
	                               * through the vDSO; where there is none (a system
	                               * call per record) from the arch counter instead,
	                               * which the header then says (ARCH_TIMESTAMP) */
	JF_EMIT_CLOCK_TSC = 1 << 0,    /* timestamps from rdtsc (jitdump ARCH_TIMESTAMP) */
	JF_EMIT_PTWRITE = 1 << 1,      /* also execute PTWRITE(seq) where the CPU has it */
	JF_EMIT_NO_MARKER_CALLS = 1 << 2, /* do not call jf_emitter_marker */
};

enum jf_region_kind {
	JF_REGION_OTHER = 0,
	JF_REGION_INTERPRETER = 1,
	JF_REGION_TRACE = 2,          /* a loop or function trace (tracing JIT) */
	JF_REGION_BRIDGE = 3,         /* side trace / bridge attached to a guard */
	JF_REGION_EXIT_STUB = 4,
	JF_REGION_TRAMPOLINE = 5,
	JF_REGION_INLINE_CACHE = 6,
	JF_REGION_STENCIL = 7,        /* one copy-and-patch stencil instance */
	JF_REGION_FUNCTION = 8,       /* a method-JIT compiled function */
};

enum jf_interp_range_kind {
	JF_INTERP_EVAL_LOOP = 1,
	JF_INTERP_HANDLER = 2,        /* one opcode handler */
	JF_INTERP_TRACER = 3,
	JF_INTERP_COMPILER = 4,
	JF_INTERP_GC = 5,
	JF_INTERP_DEOPT = 6,
	JF_INTERP_RUNTIME = 7,        /* other runtime native code */
	JF_INTERP_INSTRUMENTATION = 8, /* code that only describes the runtime to jitflow:
	                               * the emitter itself reports its own code so at open */
};

enum jf_event_kind {
	JF_EVENT_ITERATION = 1,       /* an outermost-loop iteration starts; arg = index */
	JF_EVENT_TRACE_START = 2,     /* recording a trace starts; arg = trace id */
	JF_EVENT_TRACE_ABORT = 3,     /* arg = trace id */
	JF_EVENT_COMPILE_BEGIN = 4,   /* arg = trace id */
	JF_EVENT_COMPILE_END = 5,     /* arg = trace id */
	JF_EVENT_LOOP_HEADER = 6,     /* arg = the address of the header of the loop trace
	                               * loaded last, where its back-edges jump, when that is
	                               * not the trace's entry (e.g. entry code runs first) */
	JF_EVENT_TRACE_FLUSH = 7,     /* every trace was thrown away (their REGION_FREEs come
	                               * first); arg = flushes so far, this one included */
	JF_EVENT_TRACE_LINK = 8,      /* how the trace loaded last ends (it follows the
	                               * trace's REGION_LOAD): arg = enum jf_trace_link in
	                               * bits 0-7, the trace id it goes to in bits 8-63 (0:
	                               * none) */
	JF_EVENT_RUNTIME = 9,         /* arg = enum jf_runtime: whose words reports use for
	                               * trace and guard ids (written once, first) */
	/* The writing thread now runs code that only describes the runtime to jitflow (a
	 * handler of a Lua module that feeds the emitter): everything it executes until
	 * INSTRUMENTATION_END is instrumentation, whatever code it is. arg = 0. */
	JF_EVENT_INSTRUMENTATION_BEGIN = 10,
	JF_EVENT_INSTRUMENTATION_END = 11,
	/* The writing thread enters / leaves a phase of the VM's own work (arg = enum
	 * jf_vm_phase): everything it executes in between counts to that phase, whatever code
	 * it is, as with instrumentation. Phases nest (a collection while compiling); the
	 * innermost one counts. */
	JF_EVENT_PHASE_BEGIN = 12,
	JF_EVENT_PHASE_END = 13,
};

/* JF_EVENT_PHASE_BEGIN / _END: the VM's own work, beside interpreting and running jitted
 * code (which the code's regions already tell). */
enum jf_vm_phase {
	JF_PHASE_TRACING = 1,         /* recording a trace (LuaJIT's recorder, PyPy's
	                               * jit-tracing, minivm's tracer) */
	JF_PHASE_COMPILING = 2,       /* optimizing and assembling compiled code */
	JF_PHASE_GC = 3,              /* garbage collection */
	JF_PHASE_EXIT_HANDLING = 4,   /* leaving compiled code: blackholing, deoptimizing,
	                               * restoring the interpreter's state at an exit */
	JF_PHASE_COUNT,
};

/* JF_EVENT_TRACE_LINK: where a trace goes when it runs to its end (LuaJIT's link types). */
enum jf_trace_link {
	JF_LINK_NONE = 0,             /* not said (or the trace never ends: LuaJIT "none") */
	JF_LINK_LOOP = 1,             /* back to its own loop header */
	JF_LINK_TRACE = 2,            /* to another trace's entry (LuaJIT "root") */
	JF_LINK_RETURN = 3,           /* returns to the caller's frame in the interpreter */
	JF_LINK_INTERPRETER = 4,      /* to the interpreter */
	JF_LINK_TAIL_CALL = 5,        /* tail-recursion: back to its own start */
	JF_LINK_UP_RECURSION = 6,
	JF_LINK_DOWN_RECURSION = 7,
	JF_LINK_STITCH = 8,           /* to the interpreter for a call, continued by a trace */
	JF_LINK_COUNT,
};

/* JF_EVENT_RUNTIME */
enum jf_runtime {
	JF_RUNTIME_GENERIC = 0,
	JF_RUNTIME_LUAJIT = 1,        /* trace id = LuaJIT's trace number + 2^32 x the
	                               * flushes before it; guard id = exit number */
	JF_RUNTIME_PYPY = 2,          /* trace id = loop number, or a bridge's guard descr;
	                               * guard id = its descr (reports print it in hex) */
	JF_RUNTIME_HOTSPOT = 3,       /* trace id = an nmethod's compile id; its name holds
	                               * the level and OSR bci ("nmethod 52 L1 osr@4 ...") */
	JF_RUNTIME_CPYTHON = 4,       /* trace id = the executor's number; POINT ids say the
	                               * uop and its index (tools/runtimes/cpython) */
};

/* JF_RUNTIME_HOTSPOT: the ids of an nmethod's POINTs (kind JF_POINT_ENTRY), whose passes
 * reports count per compile id. */
enum jf_hotspot_point {
	JF_HOTSPOT_OSR_ENTRY = 1,      /* an OSR nmethod's entry from the interpreter's loop */
	JF_HOTSPOT_VERIFIED_ENTRY = 2, /* the verified entry's first instruction */
	JF_HOTSPOT_ENTRY_BODY = 3,     /* a byte inside that instruction (HotSpot makes it 5
	                                * bytes or more): passed by every run of the entry
	                                * except one through the 5-byte jump HotSpot writes
	                                * over it when it makes the nmethod not entrant, which
	                                * ends its block at the entry */
	JF_HOTSPOT_DEOPT_HANDLER = 4,  /* where a deoptimized frame returns: on to
	                                * DeoptimizationBlob */
	JF_HOTSPOT_DEOPT_MH_HANDLER = 5, /* the same for a frame of a method handle call */
};

enum jf_guard_flags {
	/* The guard's branch stays in the trace when taken and exits when it falls through
	 * (to an unconditional jump to the exit stub): LuaJIT's inverted loop branch. */
	JF_GUARD_EXIT_ON_FALLTHROUGH = 1 << 0,
};

struct jf_region {
	const char *name;             /* shown in listings, e.g. "trace 3 (loop at f.mvm:12)" */
	uint64_t addr;                /* where the code runs */
	const void *code;             /* its bytes (size bytes), copied into the file */
	uint64_t size;
	uint32_t kind;                /* enum jf_region_kind */
	uint32_t generation;          /* bumped when a trace id is recompiled */
	uint64_t trace_id;            /* runtime's own id (0 = none) */
	uint64_t parent_trace;        /* for bridges: the trace whose guard it hangs off */
	uint64_t parent_guard;        /* ... and that guard's id */
	uint64_t code_object;         /* id given to jf_emit_code_object, 0 = none */
};

struct jf_pc_map_entry {
	uint32_t code_offset;         /* from the region's start; applies up to the next entry */
	uint32_t bytecode_pc;
	uint32_t op_index;            /* IR / uop / stencil index */
	uint16_t inline_depth;
	uint16_t op_kind;             /* runtime-defined op or stencil kind, named by
	                               * jf_emit_op_name */
};

/* Open jit-PID.dump in dir (NULL: $JITFLOW_ZONE_DIR, else the current directory). */
struct jf_emitter *jf_emitter_open(const char *dir, unsigned flags);
void jf_emitter_close(struct jf_emitter *em);
int jf_emitter_flush(struct jf_emitter *em);
const char *jf_emitter_error(const struct jf_emitter *em);
const char *jf_emitter_path(const struct jf_emitter *em);

/* Code appears (also written as a jitdump CODE_LOAD). */
uint64_t jf_emit_region_load(struct jf_emitter *em, const struct jf_region *region);
/* Code at addr is gone; the memory may be reused. */
uint64_t jf_emit_region_free(struct jf_emitter *em, uint64_t addr, uint64_t size);
/* Code moved (also written as a jitdump CODE_MOVE). */
uint64_t jf_emit_region_move(struct jf_emitter *em, uint64_t old_addr, uint64_t new_addr,
			     uint64_t size);
/* Bytes at addr were rewritten in place (e.g. a guard's exit re-pointed to a bridge). */
uint64_t jf_emit_patch(struct jf_emitter *em, uint64_t addr, const void *bytes,
		       uint32_t size, const char *reason);
uint64_t jf_emit_guard(struct jf_emitter *em, uint64_t guard_id, uint64_t trace_id,
		       uint64_t branch_addr, uint64_t stub_addr, uint32_t resume_pc);
/* The same with enum jf_guard_flags. A guard reached by several branches (LuaJIT: every
 * branch to one exit stub) is one GUARD record per branch with the same ids. */
uint64_t jf_emit_guard_flags(struct jf_emitter *em, uint64_t guard_id, uint64_t trace_id,
			     uint64_t branch_addr, uint64_t stub_addr, uint32_t resume_pc,
			     uint32_t flags);
/* The same with the guard's kind: op_kind named by jf_emit_op_name (e.g. PyPy's
 * guard_class, HotSpot's trap reason unstable_if); 0: not said. */
uint64_t jf_emit_guard_kind(struct jf_emitter *em, uint64_t guard_id, uint64_t trace_id,
			    uint64_t branch_addr, uint64_t stub_addr, uint32_t resume_pc,
			    uint32_t flags, uint16_t op_kind);
/* Code offset -> bytecode pc and op (op_kind named by jf_emit_op_name). */
uint64_t jf_emit_pc_map(struct jf_emitter *em, uint64_t region_addr,
			const struct jf_pc_map_entry *entries, uint32_t count);
/* The same with JF_PC_MAP_* flags of zone_format.h: JF_PC_MAP_CODE_OBJECTS makes each
 * op_kind a code object's id (jf_emit_code_object, below 2^16): the function a
 * bytecode_pc is in, where a trace inlines others. A region may have one map of each
 * kind, ops and code objects. */
uint64_t jf_emit_pc_map_flags(struct jf_emitter *em, uint64_t region_addr,
			      const struct jf_pc_map_entry *entries, uint32_t count,
			      uint32_t flags);
/* The frames around a code-object map's inlined code (an INLINE_FRAMES record, after the
 * region's code-object map): for each of its entries of inline_depth d > 0, d entries at
 * the same code_offset, one per outer frame, inline_depth 0 (the region's own function)
 * to d - 1, each with its code object's id as op_kind and, as bytecode_pc, the pc in it
 * of the call that the next frame inlines; op_index 0. */
uint64_t jf_emit_inline_frames(struct jf_emitter *em, uint64_t region_addr,
			       const struct jf_pc_map_entry *entries, uint32_t count);
uint64_t jf_emit_code_object(struct jf_emitter *em, uint64_t id, const char *name,
			     const char *file, uint32_t line);
uint64_t jf_emit_interp_range(struct jf_emitter *em, uint32_t kind, uint64_t start,
			      uint64_t end, const char *name);
uint64_t jf_emit_op_name(struct jf_emitter *em, uint16_t op_kind, const char *name);
uint64_t jf_emit_event(struct jf_emitter *em, uint32_t kind, uint64_t arg);
/* The OS thread tid goes by name from now on (a runtime's own name for it, e.g. a Java
 * thread's); reports name the thread so. */
uint64_t jf_emit_thread_name(struct jf_emitter *em, uint32_t tid, const char *name);
/* An instruction of trace trace_id whose executions jitflow counts (the point's passes):
 * a counter the runtime keeps itself, checked against the trace. kind: JF_POINT_* of
 * zone_format.h (entry, label, bridge entry); point_id: the runtime's name for it. */
uint64_t jf_emit_point(struct jf_emitter *em, uint64_t trace_id, uint64_t addr,
		       uint64_t point_id, uint32_t kind);

/* Called with each record's sequence number; never inlined, so its execution shows in a
 * trace. Runtimes do not call it themselves. */
void jf_emitter_marker(uint64_t seq);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
