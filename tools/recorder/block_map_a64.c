#include "block_map_a64.h"

#include <string.h>

int jf_a64_disasm_open(csh *cs)
{
	if (cs_open(CS_ARCH_ARM64, CS_MODE_ARM, cs) != CS_ERR_OK)
		return -1;
	cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

/* The branch target: the last immediate operand (B.cond/B/BL: the only one; CBZ: after
 * the register; TBZ: after the register and the bit number). */
static uint64_t branch_target(const cs_insn *insn)
{
	const cs_arm64 *a = &insn->detail->arm64;
	int i;

	for (i = a->op_count - 1; i >= 0; i--)
		if (a->operands[i].type == ARM64_OP_IMM)
			return (uint64_t)a->operands[i].imm;
	return 0;
}

static enum jf_a64_exit exit_of(const cs_insn *insn)
{
	switch (insn->id) {
	case ARM64_INS_B:
		/* B.cond is ARM64_INS_B with a condition; B.AL is always taken. */
		return insn->detail->arm64.cc == ARM64_CC_INVALID ||
		       insn->detail->arm64.cc == ARM64_CC_AL ? JF_A64_EXIT_DIRECT :
		       JF_A64_EXIT_COND;
	case ARM64_INS_BL:
	case ARM64_INS_ISB: /* an ETMv4 waypoint (P0 element), to the next instruction */
		return JF_A64_EXIT_DIRECT;
	case ARM64_INS_CBZ:
	case ARM64_INS_CBNZ:
	case ARM64_INS_TBZ:
	case ARM64_INS_TBNZ:
		return JF_A64_EXIT_COND;
	case ARM64_INS_BR:
	case ARM64_INS_BLR:
	case ARM64_INS_RET:
		return JF_A64_EXIT_INDIRECT;
	case ARM64_INS_SVC:
	case ARM64_INS_HVC:
	case ARM64_INS_SMC:
		return JF_A64_EXIT_EXCEPTION;
	default:
		return JF_A64_EXIT_NONE;
	}
}

int jf_a64_block_classify(csh cs, uint64_t pc, const uint8_t *code, size_t nbytes,
			  uint32_t ninsns, struct jf_a64_block *out)
{
	cs_insn *insn = NULL;
	uint64_t last;

	if (ninsns == 0 || nbytes != (size_t)ninsns * 4)
		return -1;
	last = pc + 4 * (uint64_t)(ninsns - 1);
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->last = last;
	out->end = last + 4;
	out->ninsns = ninsns;
	if (cs_disasm(cs, code + nbytes - 4, 4, last, 1, &insn) != 1) {
		out->exit = JF_A64_EXIT_UNKNOWN;
		return 0;
	}
	out->exit = exit_of(insn);
	if (insn->id == ARM64_INS_ISB)
		out->target = out->end;
	else if (out->exit == JF_A64_EXIT_DIRECT || out->exit == JF_A64_EXIT_COND)
		out->target = branch_target(insn);
	cs_free(insn, 1);
	return 0;
}
