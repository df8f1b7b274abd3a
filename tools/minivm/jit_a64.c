/* minivm's trace compiler on AArch64: an operand is four 16-bit pieces, one in each imm16
 * of the stencil's MOVZ/MOVK sequence; a jump is a B (imm26, +-128 MiB) and a guard a
 * B.cond or CBNZ (imm19, +-1 MiB), both in instructions (4 bytes) from the instruction
 * itself. A bridge re-points the exit stub's trailing B. codemem.c makes the instruction
 * cache see what was written. */
#include <string.h>

#include "jit_arch.h"
#include "vm.h"

static MVM_SECTION_COMPILER uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static MVM_SECTION_COMPILER void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* The field of `bits` bits at bit 5 (B.cond, CBZ/CBNZ) or 0 (B) gets the distance from
 * the instruction at `at` to target, in instructions. */
static MVM_SECTION_COMPILER int put_offset(uint8_t *insn, uint64_t at, uint64_t target,
					   unsigned bits, unsigned shift)
{
	int64_t d = (int64_t)(target - at);
	int64_t reach = (int64_t)1 << (bits - 1);
	uint32_t mask = (uint32_t)(((uint64_t)1 << bits) - 1) << shift;

	if (d % 4 || d / 4 < -reach || d / 4 >= reach)
		return -1;
	put32(insn, (get32(insn) & ~mask) | (((uint32_t)(d / 4) << shift) & mask));
	return 0;
}

MVM_SECTION_COMPILER int mvm_jit_patch_hole(uint8_t *field, const struct mvm_hole *hole,
					    uint64_t field_addr, uint64_t value)
{
	switch (hole->kind) {
	case MVM_HOLE_OP0:
	case MVM_HOLE_OP1:
	case MVM_HOLE_OP2: {
		uint32_t piece = (uint32_t)(value >> (16 * hole->part)) & 0xffff;

		put32(field, (get32(field) & ~(0xffffu << 5)) | piece << 5);
		return 0;
	}
	case MVM_HOLE_EXIT:
		return put_offset(field, field_addr, value, 19, 5);
	default:
		return put_offset(field, field_addr, value, 26, 0);
	}
}

MVM_SECTION_COMPILER uint64_t mvm_jit_exit_branch(uint64_t exit_field_addr)
{
	return exit_field_addr; /* the hole is the branch instruction itself */
}

MVM_SECTION_COMPILER int mvm_jit_encode_jump(uint8_t out[MVM_JIT_JUMP_MAX], uint64_t at,
					     uint64_t target)
{
	put32(out, 0x14000000); /* B */
	return put_offset(out, at, target, 26, 0) ? -1 : 4;
}
