/* What minivm's trace compiler (jit.c) asks of the machine it compiles for: how a
 * stencil's hole is filled, where a guard's branch instruction starts, and how an exit
 * stub's jump is re-pointed. One implementation per architecture (jit_x86.c, jit_a64.c),
 * chosen by the build. */
#ifndef MVM_JIT_ARCH_H
#define MVM_JIT_ARCH_H

#include <stdint.h>

#include "stencil_format.h"

/* Longest jump mvm_jit_encode_jump writes. */
#define MVM_JIT_JUMP_MAX 8

/* Fill hole (at field, which will run at field_addr) with value: an operand, or the
 * address a jump or branch goes to. -1 when the target is out of the hole's reach. */
int mvm_jit_patch_hole(uint8_t *field, const struct mvm_hole *hole, uint64_t field_addr,
		       uint64_t value);

/* The address of a guard's conditional branch, from the address of its exit hole. */
uint64_t mvm_jit_exit_branch(uint64_t exit_field_addr);

/* An unconditional jump at `at` to target, in out; its size, or -1 when out of reach. */
int mvm_jit_encode_jump(uint8_t out[MVM_JIT_JUMP_MAX], uint64_t at, uint64_t target);

#endif
