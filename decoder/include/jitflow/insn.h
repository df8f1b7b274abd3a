/* Instructions inside blocks.
 *
 * Decoders report blocks (first and last address, count). Listings need every instruction
 * address, which means knowing each instruction's length and, because libipt's block
 * decoder follows direct jumps and calls inside a block, their targets. Capstone decodes
 * the bytes (from the code map); results are cached per address and dropped where a change
 * of the code map touches them, so a loop's instructions are decoded once. */
#ifndef JITFLOW_INSN_H
#define JITFLOW_INSN_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/flow.h"

#ifdef __cplusplus
extern "C" {
#endif

enum jf_insn_class {
	JF_INSN_ERROR = 0,      /* no bytes, or not a valid instruction */
	JF_INSN_OTHER,          /* not a branch */
	JF_INSN_COND,           /* conditional branch (jcc, loop, jrcxz; b.cond, cbz, tbz) */
	JF_INSN_JUMP,           /* direct unconditional jump */
	JF_INSN_JUMP_INDIRECT,
	JF_INSN_CALL,           /* direct call */
	JF_INSN_CALL_INDIRECT,
	JF_INSN_RETURN,
	JF_INSN_FAR,            /* syscall, sysret, int, iret, far call/jmp/ret, ... */
	JF_INSN_PTWRITE,
};

struct jf_insn_info {
	uint64_t target;        /* direct branch target, 0 otherwise */
	uint8_t size;           /* 0 when class is JF_INSN_ERROR */
	uint8_t cls;            /* enum jf_insn_class */
	/* JF_INSN_FAR that libipt counts as a far call (syscall, sysenter, int, int1, int3,
	 * into, call far): tracing disabled there resumes after it. */
	uint8_t far_call;
};

struct jf_insn_cache;

/* A cache over map (which must outlive it). */
struct jf_insn_cache *jf_insn_cache_new(struct jf_codemap *map);
void jf_insn_cache_free(struct jf_insn_cache *cache);

/* Decode (or look up) the instruction at ip. Returns 0, or -1 when there are no bytes at ip
 * or they are not an instruction (info->cls = JF_INSN_ERROR). */
int jf_insn_at(struct jf_insn_cache *cache, enum jf_isa isa, uint64_t ip,
	       struct jf_insn_info *info);

/* The address execution goes to after the instruction at ip when it is not a conditional
 * or indirect branch: the next instruction, or a direct jump's or call's target. This is
 * how consecutive instructions of one block follow each other. */
int jf_insn_next_ip(struct jf_insn_cache *cache, enum jf_isa isa, uint64_t ip, uint64_t *next);

/* Call fn for each instruction address of block, in execution order. Returns 0 when the
 * walk ends exactly at block->last after block->ninsn instructions; otherwise -1, with
 * *stop_ip the address where reconstruction failed (the listing reports it). */
int jf_block_walk(struct jf_insn_cache *cache, const struct jf_block *block,
		  void (*fn)(void *ctx, uint64_t ip), void *ctx, uint64_t *stop_ip);

/* Disassemble the instruction at ip into buf ("mov rax, qword ptr [rbx]"); returns its
 * size or 0. Not cached; for listings. */
size_t jf_insn_disasm(struct jf_insn_cache *cache, enum jf_isa isa, uint64_t ip, char *buf,
		      size_t bufsize);

/* Map a block end from the last instruction's class. */
enum jf_block_end jf_insn_class_to_end(enum jf_insn_class cls);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
