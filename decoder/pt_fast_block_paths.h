/* Internal: the TNT payload cache of the fast Intel PT path when it returns blocks.
 *
 * The counting path's payload cache (pt_fast_payloads.h) keeps where a TNT payload's path
 * from an address ends and what it counted; a decoder returning blocks also needs the
 * blocks on that path, in order, as libipt's block decoder cuts them (pt_fast_emit.c).
 * An entry here, keyed the same way (start IP, execution mode, code map version, payload
 * bits), holds them: each block's first and last instruction, its instruction count, how
 * it ends and whether a TNT bit ended it, and what the path did to the return stack. A
 * payload seen before then costs one lookup and a copy per block (of the block as its
 * record has it), instead of a block-cache
 * lookup and a step per block. A new code map version misses every entry (its version is
 * part of the key), but the miss keeps an entry whose blocks' bytes no change since
 * touched (jf_block_path_fill): a JIT changes a few hundred bytes at a time, and
 * following every hot path again after each change cost more than the paths saved.
 *
 * As in the counting cache, an entry depends on nothing but its key: a compressed return
 * to a call not made on the path, a block that needs a TIP or has bad code, and the
 * entry's length limit end it there; the caller takes such a block one step at a time. */
#ifndef JITFLOW_PT_FAST_BLOCK_PATHS_H
#define JITFLOW_PT_FAST_BLOCK_PATHS_H

#include <stdint.h>

#include "pt_fast_blocks.h"
#include "pt_fast_payloads.h"
#include "pt_fast_table.h"

/* The most blocks one entry holds; a longer path is looked up again where it stops. */
enum { JF_BLOCK_PATH_MAX = 16 };

struct jf_path_block {
	struct jf_block block; /* its record's block, as libipt's block decoder returns it
				* (flags 0, the path's mode): pt_fast_emit.c copies it whole */
	uint8_t end;       /* enum jf_fast_end */
	uint8_t took_bit;  /* a TNT bit decided where it went (a conditional branch or return) */
};

struct jf_block_path {
	uint64_t start;     /* key: where the path starts... */
	uint64_t gen;       /* ...the code map version... */
	uint64_t bits;      /* ...the payload's bits, the first in bit nbits-1... */
	uint8_t nbits;      /* ...how many (1-47; 0: an empty slot)... */
	uint8_t isa;        /* ...and the execution mode */
	uint8_t used;       /* bits the path consumed (<= nbits) */
	uint8_t nblocks;    /* blocks on the path (0: its first block is the caller's) */
	uint8_t nops;       /* return-stack operations to replay, in order: */
	uint8_t pops;       /* bit i set: op i pops (the return pushed by an earlier op) */
	uint64_t end;       /* where the path ends: the IP of the block after the last */
	uint64_t push[JF_PAYLOAD_MAX_OPS]; /* op i pushes push[i] (unless it pops) */
	struct jf_path_block blocks[JF_BLOCK_PATH_MAX];
};

/* Its cache visible: the lookup below is inline, since a trace takes one per TNT packet. */
struct jf_block_paths {
	struct jf_fast_path_cache c; /* first (jf_fast_path_cache_new): of struct jf_block_path */
	uint64_t kept; /* entries of an older code map version found still to hold */
};

/* A direct-mapped cache of at most 2^log2_slots paths over the blocks of blocks (a cache
 * made with end_on_jump). */
struct jf_block_paths *jf_block_paths_new(struct jf_fast_blocks *blocks, unsigned log2_slots);
void jf_block_paths_free(struct jf_block_paths *c);

/* jf_block_path_at's miss: the path followed into its slot p. */
const struct jf_block_path *jf_block_path_fill(struct jf_block_paths *c,
					       struct jf_block_path *p, enum jf_isa isa,
					       uint64_t ip, uint64_t gen, uint64_t bits,
					       unsigned nbits);

/* The path of the nbits (1-47) low bits of bits from ip, in mode isa and version gen of
 * the code map (its current version), followed now if it is not cached. Never NULL. */
static inline const struct jf_block_path *jf_block_path_at(struct jf_block_paths *c,
							   enum jf_isa isa, uint64_t ip,
							   uint64_t gen, uint64_t bits,
							   unsigned nbits)
{
	struct jf_block_path *p;

	bits &= (1ull << nbits) - 1;
	p = jf_fast_table_payload_slot(&c->c.table, ip, bits, nbits);
	c->c.lookups++;
	if (p->start == ip && p->bits == bits && p->nbits == nbits && p->gen == gen &&
	    p->isa == (uint8_t)isa) {
		c->c.hits++;
		return p;
	}
	return jf_block_path_fill(c, p, isa, ip, gen, bits, nbits);
}

/* Lookups, and how many of them were answered from the cache. */
void jf_block_paths_counts(const struct jf_block_paths *c, uint64_t *lookups, uint64_t *hits);

/* How many misses found their entry, followed in an older code map version, still to hold
 * (no change since touched its blocks) and kept it instead of following the path again. */
uint64_t jf_block_paths_kept(const struct jf_block_paths *c);

#endif
