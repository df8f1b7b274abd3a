/* How stencils.c writes its holes on x86-64: an operand is a movabs of the symbol
 * (R_X86_64_64), a guard one "jnz rel32" (PC32/PLT32) with the state in rdi, rsi, rdx. */
#ifndef MVM_STENCIL_HOLES_X86_H
#define MVM_STENCIL_HOLES_X86_H

#define HOLE(n) ({ uint64_t hole_; __asm__("movabs $_JF_OP" #n ", %0" : "=r"(hole_)); hole_; })
#define EXIT_IF(bad)                                                                     \
	__asm__ volatile("test %0, %0\n\tjnz _JF_EXIT"                                   \
			 : : "r"((uint64_t)(bad)), "D"(st), "S"(sp), "d"(locals) : "cc", "memory")

#endif
