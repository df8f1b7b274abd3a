/* How a copy-and-patch stencil is described: its bytes and the holes the JIT patches.
 * Shared by the generator (stencil_gen.c) and the runtime. */
#ifndef MVM_STENCIL_FORMAT_H
#define MVM_STENCIL_FORMAT_H

#include <stdint.h>


/* What a hole is filled with; how it is written depends on the architecture (x86-64: an
 * 8-byte immediate or a rel32; AArch64: one 16-bit piece of a MOVZ/MOVK sequence, or the
 * offset field of a B or a conditional branch). */
enum mvm_hole_kind {
	MVM_HOLE_OP0,      /* absolute operand */
	MVM_HOLE_OP1,
	MVM_HOLE_OP2,
	MVM_HOLE_CONTINUE, /* the next stencil */
	MVM_HOLE_TARGET,   /* a jump target */
	MVM_HOLE_EXIT,     /* the guard's conditional branch: its exit stub */
};

struct mvm_hole {
	uint32_t offset; /* of the patched field (AArch64: instruction), from the stencil's start */
	uint32_t kind;   /* enum mvm_hole_kind */
	uint32_t part;   /* AArch64 operands: which 16 bits (0 = bits 0-15 ... 3 = 48-63) */
};

struct mvm_stencil {
	const char *name;
	const uint8_t *code;
	uint32_t size;       /* all bytes */
	uint32_t fall_size;  /* bytes to copy when the next stencil follows directly: size
	                      * without a trailing "jmp CONTINUE", which falls through instead */
	int32_t tail_jump;   /* offset of that trailing jump (x86-64: jmp rel32, AArch64: B), or -1 */
	const struct mvm_hole *holes;
	uint32_t hole_count;
};

#endif
