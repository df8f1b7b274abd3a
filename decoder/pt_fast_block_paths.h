/* Internal: the TNT payload cache of the fast Intel PT path when it returns blocks.
 *
 * The counting path's payload cache (pt_fast_payloads.h) keeps where a TNT payload's path
 * from an address ends and what it counted; a decoder returning blocks also needs the
 * blocks on that path, in order, as libipt's block decoder cuts them (pt_fast_emit.c).
 * An entry here, keyed the same way (start IP, execution mode, code map version, payload
 * bits), holds them: each block's first and last instruction, its instruction count, how
 * it ends and whether a TNT bit ended it, and what the path did to the return stack. A
 * payload seen before then costs one lookup, and per block its record made from 16
 * bytes, instead of a block-cache lookup and a step per block. A new code map version
 * misses every entry (its version is part of the key), but the miss keeps an entry whose
 * blocks' bytes no change since touched (jf_block_path_fill): a JIT changes a few hundred
 * bytes at a time, and following every hot path again after each change cost more than
 * the paths saved.
 *
 * As in the counting cache, an entry depends on nothing but its key: a compressed return
 * to a call not made on the path, a block that needs a TIP or has bad code, and the
 * entry's length limit end it there; the caller takes such a block one step at a time. */
#ifndef JITFLOW_PT_FAST_BLOCK_PATHS_H
#define JITFLOW_PT_FAST_BLOCK_PATHS_H

#include <stdint.h>
#include <string.h>

#include "pt_fast_blocks.h"
#include "pt_fast_payloads.h"
#include "pt_fast_table.h"

/* The most blocks one entry holds; a longer path is looked up again where it stops.
 * Thirteen fill an entry of 256 bytes; most paths are far shorter (4.2 blocks a lookup on
 * a HotSpot recording), and a path of up to five blocks lies in the entry's first two
 * cache lines. */
enum { JF_BLOCK_PATH_MAX = 13 };

/* A block on a path, in 16 bytes, which its record's block (pt_fast_emit.c) is made from.
 * Small, because a lookup per TNT packet into a table far larger than the caches reads the
 * entry from memory: its bytes are what a hit waits for. The eight after start lie as the
 * record's from ninsn on (ninsn, end, isa, flags, last_size), so that they are copied as
 * one word, but for two places the record leaves empty: ninsn's upper half (a block of the
 * block cache has at most JF_FAST_MAX_BLOCK instructions, and is straight: its last one
 * lies less than 2^16 bytes from its start) and flags (0 in the record). Static assertions
 * in pt_fast_block_paths.c hold them to that. */
struct jf_path_block {
	uint64_t start;
	uint16_t ninsn;     /* instructions, the last one included (the record's low half) */
	uint16_t last_off;  /* its last instruction's offset from start */
	uint8_t end;        /* enum jf_block_end, as its record has it */
	uint8_t isa;        /* the path's mode */
	uint8_t path_flags; /* JF_PATH_TOOK_BIT, JF_PATH_GOES_ON */
	uint8_t last_size;  /* the last instruction's size: next = last + last_size */
};

enum {
	JF_PATH_TOOK_BIT = 1, /* a TNT bit decided where it went (a conditional branch, a
			       * return) */
	JF_PATH_GOES_ON = 2,  /* it reached the block cache's length limit (JF_FAST_CONTINUE):
			       * its record is joined to the next block's */
};

/* The record's bytes of a jf_path_block's eight after start (little-endian): the others,
 * last_off and path_flags, are 0 in the record. */
#define JF_PATH_BLOCK_RECORD_BYTES 0xff00ffff0000ffffull

/* An entry: the key and counts first, so that a hit reads one line for them and its first
 * block, and its blocks right after; aligned to a cache line (the table's slots are). */
struct jf_block_path {
	uint64_t start;     /* key: where the path starts... */
	uint64_t bits;      /* ...the payload's bits, the first in bit nbits-1... */
	uint64_t gen;       /* ...the code map version... */
	uint8_t nbits;      /* ...how many (1-47; 0: an empty slot)... */
	uint8_t isa;        /* ...and the execution mode */
	uint8_t used;       /* bits the path consumed (<= nbits) */
	uint8_t nblocks;    /* blocks on the path (0: its first block is the caller's) */
	uint8_t nops;       /* return-stack operations to replay, in order: */
	uint8_t pops;       /* bit i set: op i pops (the return pushed by an earlier op) */
	uint8_t push[JF_PAYLOAD_MAX_OPS]; /* else op i pushes the return address of the call
					   * that ends blocks[push[i]] (jf_block_path_push) */
	uint32_t then;      /* the slot of the lookup after this entry's last one: the
			     * next lookup's likely slot, prefetched on a hit */
	uint64_t end;       /* where the path ends: the IP of the block after the last */
	struct jf_path_block blocks[JF_BLOCK_PATH_MAX];
} __attribute__((aligned(64)));

/* Block i of path p, as its record has it (as libipt's block decoder returns it). */
static inline __attribute__((always_inline)) struct jf_block
jf_path_block_record(const struct jf_block_path *p, unsigned i)
{
	const struct jf_path_block *pb = &p->blocks[i];
	struct jf_block b;
	uint64_t tail;

	b.start = pb->start;
	b.last = pb->start + pb->last_off;
	b.next = b.last + pb->last_size;
	memcpy(&tail, &pb->ninsn, sizeof(tail));
	tail &= JF_PATH_BLOCK_RECORD_BYTES;
	memcpy(&b.ninsn, &tail, sizeof(tail));
	return b;
}

/* The return address op i of path p pushes (unless it pops): after the call ending one of
 * its blocks. */
static inline uint64_t jf_block_path_push(const struct jf_block_path *p, unsigned i)
{
	const struct jf_path_block *pb = &p->blocks[p->push[i]];

	return pb->start + pb->last_off + pb->last_size;
}

/* Its cache visible: the lookup below is inline, since a trace takes one per TNT packet. */
struct jf_block_paths {
	struct jf_fast_path_cache c; /* first (jf_fast_path_cache_new): of struct jf_block_path */
	uint64_t kept; /* entries of an older code map version found still to hold */
	struct jf_block_path *last; /* the entry the last lookup returned (its then is set by
				     * the next) */
	uint64_t next_bits;  /* the payload of the TNT packet after the one looked up now, */
	unsigned next_nbits; /* where its caller read it in the trace (0: not known) */
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

/* Prefetch the slot of the lookup likely to follow path p, the path of the nbits low bits
 * of bits (none above), before its blocks are queued. Where p stops before the payload's
 * last bit, the rest of the payload is looked up next from where p ends: its slot is
 * known (39% of the lookups on a HotSpot recording). Where p takes the payload's last bit
 * and the caller saw the next packet's payload (c->next_nbits), that payload is likely
 * looked up next from where p ends (the packet before a TIP, say, is not). Else the next
 * TNT packet's lookup went to the same slot as the one after this entry's last time 72%
 * of the time there (the same loops run the same payloads in turn): p->then. So 84% of
 * that recording's lookups find their slot prefetched (62% with the last hint alone). A
 * slot index stays valid as the table grows (it only grows); after growth the hint may
 * point elsewhere, which costs a useless prefetch, never a wrong path. */
static inline __attribute__((always_inline)) void
jf_block_path_prefetch_next(const struct jf_block_paths *c, const struct jf_block_path *p,
			    uint64_t bits, unsigned nbits)
{
	const struct jf_block_path *slots = (const struct jf_block_path *)c->c.table.slots;
	unsigned rest = nbits - p->used;

	if (rest && p->nblocks)
		__builtin_prefetch(jf_fast_table_payload_slot(&c->c.table, p->end,
							      bits & ((1ull << rest) - 1), rest));
	else if (!rest && c->next_nbits)
		__builtin_prefetch(jf_fast_table_payload_slot(&c->c.table, p->end, c->next_bits,
							      c->next_nbits));
	else
		__builtin_prefetch(&slots[p->then]);
}

/* The path of the nbits (1-47) low bits of bits from ip, in mode isa and version gen of
 * the code map (its current version), followed now if it is not cached. Never NULL.
 *
 * Each lookup waits for its entry's first line from memory (the table is larger than the
 * CPU's caches), so the lookup before it prefetches it while its blocks are queued
 * (jf_block_path_prefetch_next). */
static inline const struct jf_block_path *jf_block_path_at(struct jf_block_paths *c,
							   enum jf_isa isa, uint64_t ip,
							   uint64_t gen, uint64_t bits,
							   unsigned nbits)
{
	struct jf_block_path *p, *slots = (struct jf_block_path *)c->c.table.slots;
	uint32_t at;

	bits &= (1ull << nbits) - 1;
	p = jf_fast_table_payload_slot(&c->c.table, ip, bits, nbits);
	at = (uint32_t)(p - slots);
	c->c.lookups++;
	if (c->last && c->last->then != at)
		c->last->then = at;
	if (p->start == ip && p->bits == bits && p->nbits == nbits && p->gen == gen &&
	    p->isa == (uint8_t)isa) {
		c->c.hits++;
	} else {
		p = (struct jf_block_path *)jf_block_path_fill(c, p, isa, ip, gen, bits, nbits);
	}
	jf_block_path_prefetch_next(c, p, bits, nbits);
	c->last = p;
	return p;
}

/* Lookups, and how many of them were answered from the cache. */
void jf_block_paths_counts(const struct jf_block_paths *c, uint64_t *lookups, uint64_t *hits);

/* How many misses found their entry, followed in an older code map version, still to hold
 * (no change since touched its blocks) and kept it instead of following the path again. */
uint64_t jf_block_paths_kept(const struct jf_block_paths *c);

#endif
