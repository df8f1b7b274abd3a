/* Stencils stencil_gen must refuse (tests/minivm/stencil_gen.sh): each is compiled into its
 * own object with the stencil flags, for x86-64 and for AArch64. */
#include <stdint.h>
#include <stdio.h>

struct mvm_jit_state;
struct mvm_value;
#define ARGS struct mvm_jit_state *st, struct mvm_value *sp, struct mvm_value *locals
extern void _JF_CONTINUE(ARGS);

#ifdef CALLS_LIBC
/* A call to a function outside the stencil: its relocation is not a hole. */
void mvm_stencil_calls_puts(ARGS)
{
	puts("hello");
	_JF_CONTINUE(st, sp, locals);
}
#endif

#ifdef GUARD_USES_STACK
/* A guard in a stencil that saves registers on the stack first (to keep them across a call
 * through the state, which needs no relocation): its exit stub would return to the wrong
 * place. */
void mvm_stencil_guard_after_push(ARGS)
{
	(*(void (**)(void))st)();
#if defined(__aarch64__)
	register struct mvm_jit_state *st_ __asm__("x0") = st;
	register struct mvm_value *sp_ __asm__("x1") = sp, *locals_ __asm__("x2") = locals;
	__asm__ volatile("cbnz %0, _JF_EXIT" : : "r"((uint64_t)(uintptr_t)sp), "r"(st_), "r"(sp_),
			 "r"(locals_) : "memory");
#else
	__asm__ volatile("test %0, %0\n\tjnz _JF_EXIT" : : "r"((uint64_t)(uintptr_t)sp), "D"(st),
			 "S"(sp), "d"(locals) : "cc", "memory");
#endif
	(*(void (**)(void))st)();
	_JF_CONTINUE(st, sp, locals);
}
#endif
