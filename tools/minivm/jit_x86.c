/* minivm's trace compiler on x86-64: holes are 8-byte immediates (operands) and rel32
 * displacements (the tail jmp, a jump target, a guard's jnz); a bridge re-points the exit
 * stub's 5-byte "jmp rel32". */
#include <string.h>

#include "jit_arch.h"
#include "vm.h"

static MVM_SECTION_COMPILER int put_rel32(uint8_t *at, uint64_t field_addr, uint64_t target)
{
	int64_t d = (int64_t)(target - (field_addr + 4));
	int32_t rel = (int32_t)d;

	if (d != rel)
		return -1;
	memcpy(at, &rel, 4);
	return 0;
}

MVM_SECTION_COMPILER int mvm_jit_patch_hole(uint8_t *field, const struct mvm_hole *hole,
					    uint64_t field_addr, uint64_t value)
{
	switch (hole->kind) {
	case MVM_HOLE_OP0:
	case MVM_HOLE_OP1:
	case MVM_HOLE_OP2:
		memcpy(field, &value, 8);
		return 0;
	default:
		return put_rel32(field, field_addr, value);
	}
}

MVM_SECTION_COMPILER uint64_t mvm_jit_exit_branch(uint64_t exit_field_addr)
{
	return exit_field_addr - 2; /* the jnz's opcode bytes, 0F 85 */
}

MVM_SECTION_COMPILER int mvm_jit_encode_jump(uint8_t out[MVM_JIT_JUMP_MAX], uint64_t at,
					     uint64_t target)
{
	out[0] = 0xe9;
	return put_rel32(out + 1, at + 1, target) ? -1 : 5;
}
