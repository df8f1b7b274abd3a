/* The translation blocks QEMU has run, classified by their last instruction.
 *
 * A block is known by its guest address and QEMU's flags (the same address can be
 * translated more than once, e.g. again in parallel mode once a second thread exists, or
 * after the code there was rewritten). Capstone decodes each translation once; executions
 * then only look the block up. Memory grows with the code that ran, not with the trace. */
#ifndef JITFLOW_RECORDER_BLOCK_MAP_H
#define JITFLOW_RECORDER_BLOCK_MAP_H

#include <stddef.h>
#include <stdint.h>

/* How control leaves a block: what an Intel PT encoder has to say about it. */
enum jf_exit_kind {
	JF_EXIT_NONE,     /* not a branch (QEMU cut the block): falls through, no packet */
	JF_EXIT_COND,     /* conditional branch: one TNT bit */
	JF_EXIT_JUMP,     /* direct jump: no packet */
	JF_EXIT_CALL,     /* direct call: no packet, pushes the return address */
	JF_EXIT_IND_JUMP, /* indirect jump: TIP */
	JF_EXIT_IND_CALL, /* indirect call: TIP, pushes the return address */
	JF_EXIT_RET,      /* return: compressed (TNT) when it matches the call stack, else TIP */
	JF_EXIT_SYSCALL,  /* syscall/sysenter/int: leaves user space (TIP.PGD) */
	JF_EXIT_FAULT,    /* ud2, int3, hlt...: a signal follows */
};

struct jf_block {
	uint64_t pc;
	uint32_t flags, cflags;
	uint32_t ninsn;        /* guest instructions in the block */
	uint32_t size;         /* bytes */
	uint64_t last_ip;      /* address of the last instruction */
	uint64_t next_ip;      /* the address after it (fall-through / return address) */
	uint64_t target;       /* direct branch target, else 0 */
	uint8_t exit;          /* enum jf_exit_kind */
	uint8_t last_is_rep;   /* the last instruction is a rep-prefixed string operation:
	                        * QEMU runs each iteration as one execution of the block */
};

struct jf_block_map;

struct jf_block_map *jf_block_map_new(void);
void jf_block_map_free(struct jf_block_map *m);

/* A new translation at pc (bytes as translated). Returns 0, or -1 when capstone cannot
 * decode the bytes (the block is then kept as "no branch" and counted). */
int jf_block_map_translated(struct jf_block_map *m, uint64_t pc, const uint8_t *bytes,
			    size_t size);
/* How many of size bytes at pc make up a block of ninsn instructions as QEMU's plugin
 * interface reports it (see the QEMU 7.2 quirk in the code); all of them when capstone
 * cannot decode that many. */
size_t jf_block_map_prefix_size(struct jf_block_map *m, uint64_t pc, const uint8_t *bytes,
				size_t size, uint32_t ninsn);
/* The next translation is known by (flags, cflags) from the start, as the plugin backend
 * names translations by id: it goes straight to the known blocks, not to pending. */
void jf_block_map_key_next(struct jf_block_map *m, uint32_t flags, uint32_t cflags);
/* The block an execution ran: the newest translation at pc not yet executed, else the
 * known translation for (pc, flags, cflags). NULL when QEMU never showed its bytes. */
const struct jf_block *jf_block_map_executed(struct jf_block_map *m, uint64_t pc,
					     uint32_t flags, uint32_t cflags);

uint64_t jf_block_map_count(const struct jf_block_map *m);
uint64_t jf_block_map_undecodable(const struct jf_block_map *m);

/* Classify one instruction (exposed for tests): bytes at ip; fills exit kind, next_ip and
 * target; returns the instruction's length, 0 when it cannot be decoded. */
size_t jf_block_classify_insn(const uint8_t *bytes, size_t size, uint64_t ip,
			      struct jf_block *out);

#endif
