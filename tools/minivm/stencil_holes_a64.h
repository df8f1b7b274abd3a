/* How stencils.c writes its holes on AArch64. An operand is built 16 bits at a time by a
 * MOVZ and three MOVKs of the symbol (R_AARCH64_MOVW_UABS_G3, G2_NC, G1_NC, G0_NC: the JIT
 * patches each instruction's imm16); a guard is one "cbnz" to the exit stub
 * (R_AARCH64_CONDBR19), with the state pinned to x0, x1, x2 where the stub expects it. The
 * tail calls to _JF_CONTINUE and _JF_TARGET are "b" (R_AARCH64_JUMP26). */
#ifndef MVM_STENCIL_HOLES_A64_H
#define MVM_STENCIL_HOLES_A64_H

#define HOLE(n)                                                                          \
	({                                                                               \
		uint64_t hole_;                                                          \
		__asm__("movz %0, #:abs_g3:_JF_OP" #n "\n\t"                             \
			"movk %0, #:abs_g2_nc:_JF_OP" #n "\n\t"                          \
			"movk %0, #:abs_g1_nc:_JF_OP" #n "\n\t"                          \
			"movk %0, #:abs_g0_nc:_JF_OP" #n                                 \
			: "=r"(hole_));                                                  \
		hole_;                                                                   \
	})
#define EXIT_IF(bad)                                                                     \
	do {                                                                             \
		register struct mvm_jit_state *st_ __asm__("x0") = st;                   \
		register struct mvm_value *sp_ __asm__("x1") = sp;                       \
		register struct mvm_value *locals_ __asm__("x2") = locals;               \
		__asm__ volatile("cbnz %0, _JF_EXIT"                                     \
				 : : "r"((uint64_t)(bad)), "r"(st_), "r"(sp_), "r"(locals_)    \
				 : "memory");                                            \
	} while (0)

#endif
