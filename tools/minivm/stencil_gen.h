/* stencil_gen's pieces shared by its architectures: a stencil read from the object file,
 * the error exit, and what each architecture decides (which relocations are holes, which
 * instructions they must be in, what moves the stack, where the trailing jump to the next
 * stencil is). */
#ifndef MVM_STENCIL_GEN_H
#define MVM_STENCIL_GEN_H

#include <capstone/capstone.h>
#include <stdint.h>

#include "stencil_format.h"

#define MAX_HOLES 32

struct stencil {
	char name[64];
	size_t section;
	uint8_t *code;
	uint32_t size;
	struct mvm_hole holes[MAX_HOLES];
	uint32_t hole_count;
};

__attribute__((format(printf, 1, 2))) _Noreturn void die(const char *fmt, ...);

/* The hole kind an undefined symbol (_JF_OP0, _JF_CONTINUE, ...) stands for, or -1. */
int hole_symbol(const char *symbol);

struct stencil_arch {
	cs_arch cs_arch;
	cs_mode cs_mode;
	/* The hole a relocation is (sets hole->kind and hole->part), or -1. */
	int (*hole_of)(const char *symbol, unsigned type, int64_t addend, struct mvm_hole *hole);
	/* Dies unless each exit hole is in a conditional branch (and each jump hole in a
	 * jump). */
	void (*check_holes)(const struct stencil *s);
	/* Whether the instruction (disassembled with details) changes the stack pointer. */
	int (*moves_stack)(const cs_insn *insn);
	/* Offset of a last instruction that only jumps to _JF_CONTINUE, or -1. */
	int32_t (*tail_jump)(const struct stencil *s);
};

extern const struct stencil_arch stencil_arch_x86_64, stencil_arch_aarch64;

#endif
