/* How a copy-and-patch stencil is described: its bytes and the holes the JIT patches.
 * Shared by the generator (stencil_gen.c) and the runtime. */
#ifndef MVM_STENCIL_FORMAT_H
#define MVM_STENCIL_FORMAT_H

#include <stdint.h>


enum mvm_hole_kind {
	MVM_HOLE_OP0,      /* 8-byte absolute operand */
	MVM_HOLE_OP1,
	MVM_HOLE_OP2,
	MVM_HOLE_CONTINUE, /* rel32: the next stencil */
	MVM_HOLE_TARGET,   /* rel32: a jump target */
	MVM_HOLE_EXIT,     /* rel32 of the guard's jnz: its exit stub */
};

struct mvm_hole {
	uint32_t offset; /* of the patched field, from the stencil's start */
	uint32_t kind;   /* enum mvm_hole_kind */
};

struct mvm_stencil {
	const char *name;
	const uint8_t *code;
	uint32_t size;       /* all bytes */
	uint32_t fall_size;  /* bytes to copy when the next stencil follows directly: size
	                      * without a trailing "jmp CONTINUE", which falls through instead */
	int32_t tail_jump;   /* offset of that trailing jmp rel32 (0xE9), or -1 */
	const struct mvm_hole *holes;
	uint32_t hole_count;
};

#endif
