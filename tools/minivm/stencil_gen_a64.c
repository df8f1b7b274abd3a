/* stencil_gen for AArch64 objects: the relocations of stencil_holes_a64.h are the holes
 * (an operand's MOVZ/MOVK pieces, the B of a tail call, a guard's conditional branch), and
 * capstone checks that guards are one B.cond, CBZ or CBNZ and leave the stack alone. */
#include <elf.h>
#include <string.h>

#include "stencil_gen.h"

static int hole_of_aarch64(const char *symbol, unsigned type, int64_t addend,
			   struct mvm_hole *hole)
{
	int kind = hole_symbol(symbol), fits = 0;

	hole->part = 0;
	switch (type) {
	case R_AARCH64_MOVW_UABS_G3:
		hole->part++;
		/* fall through */
	case R_AARCH64_MOVW_UABS_G2_NC:
		hole->part++;
		/* fall through */
	case R_AARCH64_MOVW_UABS_G1_NC:
		hole->part++;
		/* fall through */
	case R_AARCH64_MOVW_UABS_G0_NC:
		fits = kind >= MVM_HOLE_OP0 && kind <= MVM_HOLE_OP2;
		break;
	case R_AARCH64_JUMP26: /* B; a BL (CALL26) would need a frame the trace has not */
		fits = kind == MVM_HOLE_CONTINUE || kind == MVM_HOLE_TARGET;
		break;
	case R_AARCH64_CONDBR19:
		fits = kind == MVM_HOLE_EXIT;
		break;
	}
	if (!fits || addend != 0)
		kind = -1;
	hole->kind = (uint32_t)kind;
	return kind;
}

static uint32_t insn_at(const struct stencil *s, uint32_t at)
{
	uint32_t insn;

	memcpy(&insn, s->code + at, 4); /* AArch64 code is little-endian here */
	return insn;
}

static int is_conditional_branch(uint32_t insn)
{
	return (insn & 0xff000010) == 0x54000000 || /* B.cond */
	       (insn & 0x7e000000) == 0x34000000;   /* CBZ, CBNZ */
}

static int is_b(uint32_t insn)
{
	return (insn & 0xfc000000) == 0x14000000;
}

static void check_holes_aarch64(const struct stencil *s)
{
	uint32_t h;

	for (h = 0; h < s->hole_count; h++) {
		uint32_t at = s->holes[h].offset, kind = s->holes[h].kind;

		if (at % 4 || at + 4 > s->size)
			die("%s+0x%x: hole is not an instruction", s->name, at);
		if (kind == MVM_HOLE_EXIT && !is_conditional_branch(insn_at(s, at)))
			die("%s+0x%x: exit hole is not a conditional branch", s->name, at);
		if ((kind == MVM_HOLE_CONTINUE || kind == MVM_HOLE_TARGET) && !is_b(insn_at(s, at)))
			die("%s+0x%x: jump hole is not a B", s->name, at);
	}
}

/* SP written as a register, or as the base of a load or store with write-back
 * ("stp x29, x30, [sp, #-16]!"), which capstone 4 does not list among written registers. */
static int moves_stack_aarch64(const cs_insn *insn)
{
	const cs_arm64 *a = &insn->detail->arm64;
	uint8_t r;

	for (r = 0; r < insn->detail->regs_write_count; r++)
		if (insn->detail->regs_write[r] == ARM64_REG_SP)
			return 1;
	for (r = 0; r < a->op_count; r++) {
		if (a->operands[r].type == ARM64_OP_MEM && a->operands[r].mem.base == ARM64_REG_SP &&
		    a->writeback)
			return 1;
		if (r == 0 && a->operands[r].type == ARM64_OP_REG &&
		    a->operands[r].reg == ARM64_REG_SP && a->operands[r].access & CS_AC_WRITE)
			return 1;
	}
	return 0;
}

/* A last instruction "B CONTINUE" can fall through into the next stencil. */
static int32_t tail_jump_aarch64(const struct stencil *s)
{
	uint32_t j;

	for (j = 0; j < s->hole_count; j++)
		if (s->holes[j].kind == MVM_HOLE_CONTINUE && s->holes[j].offset + 4 == s->size)
			return (int32_t)s->holes[j].offset;
	return -1;
}

const struct stencil_arch stencil_arch_aarch64 = {
	CS_ARCH_ARM64, CS_MODE_ARM, hole_of_aarch64, check_holes_aarch64, moves_stack_aarch64,
	tail_jump_aarch64,
};
