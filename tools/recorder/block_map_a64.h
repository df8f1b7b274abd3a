/* How an AArch64 translation block ends, for the ETMv4 writer: QEMU ends a block at every
 * branch, exception-generating instruction, page end or size limit, so its last
 * instruction says which waypoint (if any) the trace must account for and where it can
 * go. Classified once per translation with capstone's AArch64 mode. */
#ifndef JITFLOW_RECORDER_BLOCK_MAP_A64_H
#define JITFLOW_RECORDER_BLOCK_MAP_A64_H

#include <stddef.h>
#include <stdint.h>

#include <capstone/capstone.h>

enum jf_a64_exit {
	JF_A64_EXIT_NONE,      /* not a branch: execution falls through to `end` */
	JF_A64_EXIT_DIRECT,    /* B, BL, ISB: always to `target` (an E atom) */
	JF_A64_EXIT_COND,      /* B.cond, CBZ, CBNZ, TBZ, TBNZ: `target` (E) or `end` (N) */
	JF_A64_EXIT_INDIRECT,  /* BR, BLR, RET: an E atom and the target's address */
	JF_A64_EXIT_EXCEPTION, /* SVC, HVC, SMC: an exception, returning to `end` */
	JF_A64_EXIT_UNKNOWN,   /* the last instruction does not decode */
};

struct jf_a64_block {
	uint64_t pc;           /* first instruction */
	uint64_t last;         /* last instruction */
	uint64_t end;          /* the address after it */
	uint64_t target;       /* a direct or conditional branch's target */
	uint32_t ninsns;
	enum jf_a64_exit exit;
};

/* A capstone handle for AArch64 with operand details; 0 on success. */
int jf_a64_disasm_open(csh *cs);

/* Classifies the block of ninsns 4-byte instructions at pc whose bytes are code (nbytes
 * of them); 0 on success, -1 when nbytes is not 4 * ninsns or ninsns is 0. */
int jf_a64_block_classify(csh cs, uint64_t pc, const uint8_t *code, size_t nbytes,
			  uint32_t ninsns, struct jf_a64_block *out);

#endif
