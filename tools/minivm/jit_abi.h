/* The data layout shared by minivm's runtime and its stencils (stencils.c). Stencils are
 * compiled separately with fixed flags, so everything they touch is described here and
 * nowhere else. */
#ifndef MVM_JIT_ABI_H
#define MVM_JIT_ABI_H

#include <stdint.h>

enum mvm_tag {
	MVM_INT = 0,   /* zero so that "both operands are integers" is one OR and one test */
	MVM_ARRAY = 1,
	MVM_FUNC = 2,
};

/* Every value: a tag and a payload (the integer, or a pointer as an integer). */
struct mvm_value {
	int64_t tag;
	int64_t i;
};

struct mvm_array {
	int64_t len;
	struct mvm_value *items;
	struct mvm_array *next_allocated; /* runtime only: every array, freed at exit */
};

/* Largest array `array(n)` may create (elements). */
#define MVM_ARRAY_MAX ((int64_t)1 << 24)

struct mvm_jit_state;

/* Runtime services a trace calls (through the state, so stencils need no relocation to
 * the runtime's code). Each returns the new operand stack pointer. */
/* site = caller's function number << 32 | the CALL's pc, for error messages */
typedef struct mvm_value *(*mvm_jit_call_fn)(struct mvm_jit_state *st, struct mvm_value *sp,
					      int64_t argc, uint64_t site);
typedef struct mvm_value *(*mvm_jit_helper_fn)(struct mvm_jit_state *st, struct mvm_value *sp);
typedef void (*mvm_jit_iteration_fn)(struct mvm_jit_state *st, int64_t index);

/* One trace invocation: the interpreter fills in the helpers, calls the trace's entry as
 * void entry(st, sp, locals), and reads where to resume after it returns. */
struct mvm_jit_state {
	mvm_jit_call_fn call;
	mvm_jit_helper_fn print;
	mvm_jit_helper_fn new_array;
	mvm_jit_iteration_fn iteration;
	void *vm;
	/* written by the exit stub that left the trace */
	struct mvm_value *exit_sp;
	int64_t exit_pc;
	int64_t exit_guard;  /* guard id, 0 for a bridge's unconditional end exit */
};

typedef void (*mvm_trace_entry_fn)(struct mvm_jit_state *st, struct mvm_value *sp,
				   struct mvm_value *locals);

#endif
