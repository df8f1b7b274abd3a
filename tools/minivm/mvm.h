/* minivm: a small language with an interpreter and a tracing JIT whose every piece of code is
 * described through jitflow's zone emitter, and which counts its own trace entries,
 * iterations and guard exits as ground truth for jitflow's analysis. */
#ifndef MVM_H
#define MVM_H

#include <stdint.h>
#include <stdio.h>

#include "bytecode.h"
#include "jit_abi.h"

struct mvm_trace;

/* What the tracer knows about one bytecode pc (a loop header when hot > 0 or trace set). */
struct mvm_pc_state {
	uint32_t hot;           /* back-edges seen since the last (re)start */
	uint32_t aborts;        /* failed recordings; the loop is given up after a few */
	uint32_t compiles;      /* traces compiled for this header: the next one's generation */
	struct mvm_trace *trace;
};

struct mvm_function {
	char *name;
	uint32_t index;          /* functions are numbered from 0 (the top level) */
	uint32_t line, column;   /* of its definition */
	uint32_t param_count;
	uint32_t local_count;    /* parameters first, then variables and hidden counters */
	uint32_t max_stack;      /* operand stack depth it can reach */
	int defined;
	struct mvm_insn *code;
	uint32_t code_len, code_cap;
	struct mvm_pc_state *pcs; /* code_len entries, made when execution starts */
};

struct mvm_program {
	const char *path;
	struct mvm_function **functions; /* [0] is the top level ("main") */
	uint32_t function_count, function_cap;
};

/* Parse and compile a program; on error prints "path:line:column: message" and returns
 * NULL. */
struct mvm_program *mvm_compile(const char *path, const char *source, size_t size);
void mvm_program_free(struct mvm_program *p);

#endif
