/* minivm's copy-and-patch stencils: one C function per trace operation, compiled at build
 * time with fixed flags (see CMakeLists.txt) into an object file whose bytes and
 * relocations stencil_gen.c turns into a table. The JIT copies a stencil's bytes and patches
 * its holes; it never assembles an instruction itself. The same source is compiled for
 * x86-64 and for AArch64; only how a hole is written differs (stencil_holes_x86.h,
 * stencil_holes_a64.h).
 *
 * Calling convention inside a trace: every stencil is entered by a jump with the trace
 * state, the operand stack pointer and the frame's locals in the first three argument
 * registers of the signature below (rdi, rsi, rdx; x0, x1, x2), and leaves by a tail call
 * carrying them on.
 *
 * Holes (undefined symbols the runtime patches):
 *   _JF_OP0.._JF_OP2  64-bit operands
 *   _JF_CONTINUE       the next stencil (tail call; dropped when it is the last instruction)
 *   _JF_TARGET         a jump target: a loop header, another trace's entry
 *   _JF_EXIT           the guard's exit stub, reached by one conditional branch
 *
 * A guard must be a single conditional branch so that a control-flow trace's taken/not
 * taken bit for it is exactly "guard failed/passed"; the compilers will not emit a
 * conditional tail call, so the branch is written with inline assembly. Guard stencils do
 * not touch the machine stack before that branch (stencil_gen checks it): the exit stub
 * returns straight to the interpreter that called the trace. */
#include <stdint.h>

#include "jit_abi.h"

#define ARGS struct mvm_jit_state *st, struct mvm_value *sp, struct mvm_value *locals

extern void _JF_CONTINUE(ARGS);
extern void _JF_TARGET(ARGS);

#define CONTINUE() _JF_CONTINUE(st, sp, locals)
/* HOLE(n): operand n; EXIT_IF(bad): leave through the guard's exit stub when bad != 0,
 * with st, sp and locals where the stub expects them. */
#if defined(__x86_64__)
#include "stencil_holes_x86.h"
#elif defined(__aarch64__)
#include "stencil_holes_a64.h"
#else
#error "minivm's stencils exist for x86-64 and AArch64"
#endif

#define STENCIL(name) void mvm_stencil_##name(ARGS)

/* Counters: the same code runs whether or not the user asked for the counters. */
STENCIL(count_entry) { (*(uint64_t *)HOLE(0))++; CONTINUE(); }
STENCIL(count_iteration) { (*(uint64_t *)HOLE(0))++; CONTINUE(); }
/* First half of an exit stub; its trailing jump is what a bridge patches. */
STENCIL(exit_count) { (*(uint64_t *)HOLE(0))++; CONTINUE(); }

/* Second half of an exit stub: tell the interpreter where to resume, and return to it. */
STENCIL(exit_leave)
{
	st->exit_sp = sp;
	st->exit_pc = (int64_t)HOLE(0);
	st->exit_guard = (int64_t)HOLE(1);
	(void)locals;
}

STENCIL(jump) { _JF_TARGET(st, sp, locals); }

STENCIL(push_int) { sp->tag = MVM_INT; sp->i = (int64_t)HOLE(0); sp++; CONTINUE(); }
STENCIL(push_func) { sp->tag = MVM_FUNC; sp->i = (int64_t)HOLE(0); sp++; CONTINUE(); }
STENCIL(load_local) { *sp = locals[HOLE(0)]; sp++; CONTINUE(); }
STENCIL(store_local) { sp--; locals[HOLE(0)] = *sp; CONTINUE(); }
STENCIL(pop) { sp--; CONTINUE(); }

/* Integer operations wrap (two's complement), as in the interpreter. */
#define BINARY(name, extra_bad, result)                                              \
	STENCIL(name)                                                                    \
	{                                                                                \
		struct mvm_value *a = sp - 2, *b = sp - 1;                               \
		EXIT_IF((uint64_t)(a->tag | b->tag) | (uint64_t)(extra_bad));            \
		a->i = (result);                                                         \
		sp--;                                                                    \
		CONTINUE();                                                              \
	}

BINARY(add, 0, (int64_t)((uint64_t)a->i + (uint64_t)b->i))
BINARY(sub, 0, (int64_t)((uint64_t)a->i - (uint64_t)b->i))
BINARY(mul, 0, (int64_t)((uint64_t)a->i * (uint64_t)b->i))
BINARY(div, b->i == 0, b->i == -1 ? (int64_t)(0 - (uint64_t)a->i) : a->i / b->i)
BINARY(mod, b->i == 0, b->i == -1 ? 0 : a->i % b->i)
BINARY(lt, 0, a->i < b->i)
BINARY(le, 0, a->i <= b->i)
BINARY(gt, 0, a->i > b->i)
BINARY(ge, 0, a->i >= b->i)
BINARY(eq, 0, a->i == b->i)
BINARY(ne, 0, a->i != b->i)

STENCIL(neg)
{
	EXIT_IF(sp[-1].tag);
	sp[-1].i = (int64_t)(0 - (uint64_t)sp[-1].i);
	CONTINUE();
}

STENCIL(not)
{
	sp[-1].i = (sp[-1].tag | sp[-1].i) == 0;
	sp[-1].tag = MVM_INT;
	CONTINUE();
}

/* Branch guards: the recorded direction continues, the other one leaves the trace. Only
 * the integer 0 is false. */
STENCIL(guard_true)
{
	sp--;
	EXIT_IF((sp->tag | sp->i) == 0);
	CONTINUE();
}

STENCIL(guard_false)
{
	sp--;
	EXIT_IF((sp->tag | sp->i) != 0);
	CONTINUE();
}

/* The callee seen while recording is still the one called: OP0 = function, OP1 = its
 * distance below the stack top (argc + 1). */
STENCIL(guard_callee)
{
	struct mvm_value *callee = sp - HOLE(1);
	EXIT_IF((uint64_t)(callee->tag != MVM_FUNC) | (uint64_t)(callee->i != (int64_t)HOLE(0)));
	CONTINUE();
}

STENCIL(call) { sp = st->call(st, sp, (int64_t)HOLE(0), HOLE(1)); CONTINUE(); }
STENCIL(print) { sp = st->print(st, sp); CONTINUE(); }

STENCIL(guard_array_size)
{
	EXIT_IF((uint64_t)sp[-1].tag | (uint64_t)((uint64_t)sp[-1].i > (uint64_t)MVM_ARRAY_MAX));
	CONTINUE();
}

STENCIL(new_array) { sp = st->new_array(st, sp); CONTINUE(); }

/* Length of v if it is an array, else 0; the pointer is only read for arrays. */
static inline int64_t array_len_or_zero(const struct mvm_value *v)
{
	return v->tag == MVM_ARRAY ? ((const struct mvm_array *)v->i)->len : 0;
}

STENCIL(index)
{
	struct mvm_value *a = sp - 2, *ix = sp - 1;
	EXIT_IF((uint64_t)(a->tag != MVM_ARRAY) | (uint64_t)ix->tag |
		(uint64_t)((uint64_t)ix->i >= (uint64_t)array_len_or_zero(a)));
	*a = ((struct mvm_array *)a->i)->items[ix->i];
	sp--;
	CONTINUE();
}

STENCIL(store_index)
{
	struct mvm_value *a = sp - 3, *ix = sp - 2;
	EXIT_IF((uint64_t)(a->tag != MVM_ARRAY) | (uint64_t)ix->tag |
		(uint64_t)((uint64_t)ix->i >= (uint64_t)array_len_or_zero(a)));
	((struct mvm_array *)a->i)->items[ix->i] = sp[-1];
	sp -= 3;
	CONTINUE();
}

STENCIL(len)
{
	EXIT_IF(sp[-1].tag != MVM_ARRAY);
	sp[-1].i = ((struct mvm_array *)sp[-1].i)->len;
	sp[-1].tag = MVM_INT;
	CONTINUE();
}

/* An outermost-loop iteration starts: report it, then advance the hidden counter local. */
STENCIL(iter_mark)
{
	st->iteration(st, locals[HOLE(0)].i);
	locals[HOLE(0)].i++;
	CONTINUE();
}
