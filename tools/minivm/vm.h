/* minivm's run-time state: options, the value stack, frames, the trace recorder and the JIT's
 * traces and guards. */
#ifndef MVM_VM_H
#define MVM_VM_H

#include <stddef.h>
#include <stdint.h>

#include "mvm.h"

/* Where the parts of the runtime live, so their address ranges can be reported
 * (jf_emit_interp_range): the linker defines __start_X/__stop_X for each section X. */
#define MVM_SECTION_EVAL __attribute__((section("mvmsec_eval"), noinline))
#define MVM_SECTION_HANDLERS __attribute__((section("mvmsec_handlers"), noinline))
#define MVM_SECTION_TRACER __attribute__((section("mvmsec_tracer"), noinline))
#define MVM_SECTION_COMPILER __attribute__((section("mvmsec_compiler"), noinline))
#define MVM_SECTION_RUNTIME __attribute__((section("mvmsec_runtime"), noinline))

#define MVM_PC_RETURN UINT32_MAX  /* a handler's answer when the function returns */
#define MVM_MAX_CALL_DEPTH 10000
#define MVM_MAX_TRACE_OPS 1000    /* longer recordings are aborted (loops) or cut (bridges) */
#define MVM_MAX_ABORTS 3          /* a loop or guard is given up after this many */

struct mvm_options {
	int jit;
	uint32_t hot;        /* back-edges before a loop is recorded */
	uint32_t bridge;     /* exits of a guard before a bridge is recorded */
	size_t code_size;    /* bytes of code memory */
	const char *counters_path;
	const char *zone_dir;
};

struct mvm_frame {
	struct mvm_function *fn;
	struct mvm_value *locals;
	struct mvm_value *sp;   /* next free operand slot */
	struct mvm_value result;
};

enum mvm_trace_kind { MVM_TRACE_LOOP, MVM_TRACE_BRIDGE };

struct mvm_trace;

struct mvm_guard {
	uint64_t id;
	struct mvm_trace *trace;
	uint32_t resume_pc;
	uint64_t exits;          /* incremented by its exit stub */
	uint64_t branch_addr, stub_addr;
	uint64_t stub_jump_addr; /* the stub's "jmp" that a bridge re-points */
	struct mvm_trace *bridge;
	uint32_t bridge_aborts;
};

struct mvm_trace {
	uint64_t id;
	enum mvm_trace_kind kind;
	struct mvm_function *fn;
	uint32_t start_pc;       /* loop header, or where a bridge starts */
	struct mvm_trace *root;  /* the loop trace a bridge (transitively) hangs off */
	struct mvm_guard *parent_guard;
	uint64_t entries, iterations;   /* incremented by the trace's own code */
	struct mvm_guard **guards;
	uint32_t guard_count;
	int live;                /* 0 once invalidated (its memory may be reused) */
	uint64_t addr, size;     /* its whole allocation: body, then exit stubs */
	uint64_t body_size;
	uint64_t entry_addr, header_addr;
	struct mvm_trace *next;  /* every trace ever compiled, in id order */
};

struct mvm_rec_op {
	uint32_t pc;
	uint8_t op;
	int32_t arg;
	int64_t imm;
	int64_t observed;  /* JUMP_IF_FALSE: 1 if the jump was taken; CALL: the callee */
};

enum mvm_rec_end { MVM_END_LOOP, MVM_END_LINK, MVM_END_EXIT };

struct mvm_recorder {
	int active;
	enum mvm_trace_kind kind;
	struct mvm_frame *frame;
	uint32_t start_pc;
	uint32_t loop_end;          /* loops: pc of the back-edge that started the recording */
	uint64_t trace_id;
	struct mvm_guard *parent;   /* bridges */
	struct mvm_rec_op *ops;
	uint32_t len, cap;
};

struct mvm_codemem;
struct mvm_zone;

struct mvm_vm {
	struct mvm_program *prog;
	struct mvm_options opt;
	struct mvm_value *stack, *stack_end;
	uint32_t call_depth;
	struct mvm_recorder rec;
	struct mvm_codemem *code;
	struct mvm_zone *zone;
	struct mvm_trace *traces, **traces_tail;
	struct mvm_guard **guards;  /* by id; [0] unused */
	uint64_t guard_count, guard_cap;
	uint64_t next_trace_id;
	int jit_active;          /* trace invocations on the machine stack */
	int flush_pending;       /* jit_flush() or a full code memory while a trace ran */
	uint64_t flushes;
	/* The VM phases it brackets for jitflow (tracer.c), counted whether or not a zone
	 * file is written: recordings started, compilations (successful or not), and returns
	 * from compiled code whose interpreter state was restored. minivm has no garbage
	 * collector, so no GC phase. */
	uint64_t recordings, compilations, exits_handled;
	uintptr_t machine_stack_top, machine_stack_limit;
	struct mvm_array *arrays; /* every array made, newest first */
	char *source;            /* the program's text, owned */
};

int mvm_vm_init(struct mvm_vm *vm, struct mvm_program *prog, const struct mvm_options *opt);
/* Run the program; returns 0, or exits the process after a run-time fault. */
int mvm_vm_run(struct mvm_vm *vm);
/* Write the counters and close the zone file (also done before a fault exits). */
void mvm_vm_finish(struct mvm_vm *vm);
/* Release everything, the program and its source included. */
void mvm_vm_free(struct mvm_vm *vm);

/* interp.c */
void mvm_eval(struct mvm_vm *vm, struct mvm_frame *fr);
/* The address range [start, end) of opcode op's handler. */
void mvm_handler_range(unsigned op, uint64_t *start, uint64_t *end);

/* runtime.c: calls, arrays, printing, faults, and the services traces call. */
void mvm_call(struct mvm_vm *vm, struct mvm_function *caller, uint32_t pc,
	      struct mvm_value *sp, uint32_t argc);
void mvm_print_value(struct mvm_value v);
void mvm_new_array(struct mvm_vm *vm, struct mvm_value *slot, int64_t n);
_Noreturn void mvm_fault(struct mvm_vm *vm, struct mvm_function *fn, uint32_t pc,
			 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void mvm_jit_state_init(struct mvm_vm *vm, struct mvm_jit_state *st);

/* tracer.c: hot loops, recording, entering traces, bridges, invalidation. */
uint32_t mvm_tracer_backedge(struct mvm_vm *vm, struct mvm_frame *fr, uint32_t pc,
			     uint32_t header);
void mvm_tracer_step(struct mvm_vm *vm, struct mvm_frame *fr, uint32_t pc);
void mvm_tracer_flush(struct mvm_vm *vm);
void mvm_tracer_request_flush(struct mvm_vm *vm);

/* jit.c: turn a recording into machine code from stencils. */
struct mvm_trace *mvm_jit_compile(struct mvm_vm *vm, const struct mvm_recorder *rec,
				  enum mvm_rec_end end, uint32_t end_pc,
				  struct mvm_trace *link);
void mvm_jit_patch_bridge(struct mvm_vm *vm, struct mvm_guard *g, struct mvm_trace *bridge);

/* codemem.c: one executable arena, bump-allocated, reset on flush (addresses reused). */
struct mvm_codemem *mvm_codemem_new(size_t size);
uint64_t mvm_codemem_alloc(struct mvm_codemem *cm, size_t size);
int mvm_codemem_write(struct mvm_codemem *cm, uint64_t addr, const void *bytes, size_t size);
void mvm_codemem_reset(struct mvm_codemem *cm);
size_t mvm_codemem_used(const struct mvm_codemem *cm);
void mvm_codemem_free(struct mvm_codemem *cm);

/* counters.c */
int mvm_counters_write(const struct mvm_vm *vm, const char *path);

#endif
