/* Internal: the fast Intel PT path's block cache.
 *
 * A block here runs from an address to the first instruction whose successor only the
 * trace can tell: a conditional branch, a return, an indirect or far branch. Direct jumps
 * are followed inside the block; a direct call ends it, because its return address has to
 * be pushed for return compression. Each block is decoded from the code bytes once per code
 * map version (capstone, through jf_insn_at) and then costs one lookup. */
#ifndef JITFLOW_PT_FAST_BLOCKS_H
#define JITFLOW_PT_FAST_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/flow.h"
#include "jitflow/insn.h"

#include "pt_fast_table.h"

struct jf_fast_shared;

/* What ends a block: what the decoder has to do to know where execution goes next. */
enum jf_fast_end {
	JF_FAST_COND,      /* conditional branch: one TNT bit; taken -> target, else next */
	JF_FAST_CALL,      /* direct call: push next, go to target (no trace) */
	JF_FAST_CALL_IND,  /* indirect near call: push next, then a TIP */
	JF_FAST_RETURN,    /* near return: a compressed return (TNT bit) or a TIP */
	JF_FAST_INDIRECT,  /* indirect jump: a TIP */
	JF_FAST_FAR,       /* far jump or return, sysret, iret...: a TIP */
	JF_FAST_FAR_CALL,  /* syscall, int n, call far...: a TIP; tracing resumes after it */
	JF_FAST_CONTINUE,  /* the block reached its length limit: go on at next (no trace) */
	JF_FAST_JUMP,      /* direct jump, in a cache that ends blocks there: go to target */
	JF_FAST_BAD,       /* the instruction at last cannot be decoded (no code, bad bytes) */
	JF_FAST_UNHANDLED, /* an instruction the fast path does not model (PTWRITE; with
			    * end_on_jump, one that lies in two sections); last: its address */
};

struct jf_fast_block {
	uint64_t start;    /* key: the block's first address... */
	uint64_t gen;      /* ...the code map version it was decoded from... */
	uint8_t isa;       /* ...and the execution mode */
	uint8_t end;       /* enum jf_fast_end */
	uint8_t last_size; /* size of the last instruction (0 for JF_FAST_BAD) */
	uint8_t straight;  /* no jump followed: the instructions are [start, last] in order */
	uint32_t ninsn;    /* instructions, the last one included (not for JF_FAST_BAD) */
	uint64_t last;     /* address of the last instruction (for BAD: the bad address) */
	uint64_t next;     /* address after the last instruction (fall-through, return) */
	uint64_t target;   /* direct target of a conditional branch, call or jump */
};

/* How a block that ends so ends in the records libipt's block decoder returns. */
static inline enum jf_block_end jf_fast_block_end(enum jf_fast_end end)
{
	switch (end) {
	case JF_FAST_COND: return JF_END_COND;
	case JF_FAST_CALL: return JF_END_CALL;
	case JF_FAST_CALL_IND: return JF_END_CALL_INDIRECT;
	case JF_FAST_RETURN: return JF_END_RETURN;
	case JF_FAST_INDIRECT: return JF_END_JUMP_INDIRECT;
	case JF_FAST_FAR: return JF_END_FAR;
	case JF_FAST_FAR_CALL: return JF_END_FAR;
	case JF_FAST_JUMP: return JF_END_JUMP;
	default: return JF_END_NONE; /* the length limit: an ordinary instruction */
	}
}

/* The longest block; a longer straight run (or a loop of direct jumps) continues in the
 * next block, so that filling one never takes unbounded time. */
enum { JF_FAST_MAX_BLOCK = 4096 };

/* Decoding ahead over code that may change (pt_fast_optimism.c). Where a decoder sets
 * this (only while it decodes a stretch), a fill of code that may still change is decoded
 * whole from the bytes as they are now and logged here, in the order of the fills; the
 * cache still leaves its slot to the block decoder (never cached, asked again: a later
 * decode reads the bytes afresh), and `marker` names that slot, so that the decoder can
 * take the logged block where it returns it as a record (and check it when that record is
 * returned). Replaying a stretch (kept: the fills its last decode logged, kept_set their
 * addresses, a table of kept_mask + 1 with 0 for none), a fill of an address among them
 * is served from the one that made the record to come (*records, the records queued),
 * while fewer than replay_until are: those records were returned with those bytes. */
struct jf_fast_changing_fill {
	struct jf_fast_block block; /* as decoded from the bytes then (gen 0)... */
	uint64_t gen;               /* ...the code map's version then */
	size_t record;              /* the record it made (JF_FAST_NO_RECORD: none) */
};
#define JF_FAST_NO_RECORD SIZE_MAX
struct jf_fast_changing {
	int open;                   /* fills of code that may change are logged */
	int failed;                 /* out of memory, or a replay that did not fill as before */
	struct jf_fast_changing_fill *fills;
	size_t n, cap;
	const struct jf_fast_block *marker; /* the slot the last fill left, if logged */
	const struct jf_fast_changing_fill *kept;
	size_t nkept, next_kept;
	const uint64_t *kept_set;
	size_t kept_mask;
	const size_t *records;
	size_t replay_until;
};

/* Where ip's search in kept_set starts (linear probing). */
static inline size_t jf_fast_kept_slot(uint64_t ip, size_t mask)
{
	return (size_t)((ip * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

/* Its table first: the lookup below is inline, since every block of a trace takes one. */
struct jf_fast_blocks {
	struct jf_fast_table table; /* of struct jf_fast_block, two ways per set */
	struct jf_insn_cache *insns;
	struct jf_codemap *map;
	int end_on_jump;
	uint64_t filled;
	struct jf_fast_shared *shared; /* blocks other threads decoded (may be NULL) */
	struct jf_fast_changing *changing; /* see above (NULL: none logged) */
};

/* A cache of at most 2^log2_slots blocks (direct-mapped: a colliding block replaces the
 * one there), over the instructions of insns' code map. With end_on_jump, a direct jump
 * ends its block (JF_FAST_JUMP) instead of being followed, so that every block is straight
 * and ends where libipt's block decoder with end_on_call and end_on_jump ends its blocks. */
struct jf_fast_blocks *jf_fast_blocks_new(struct jf_insn_cache *insns, struct jf_codemap *map,
					  unsigned log2_slots, int end_on_jump);
void jf_fast_blocks_free(struct jf_fast_blocks *c);

/* The first of the two ways of ip's set. */
static inline struct jf_fast_block *jf_fast_block_set(const struct jf_fast_blocks *c, uint64_t ip)
{
	/* Fibonacci hashing: the top bits of the product depend on all bits of ip. */
	uint64_t slot = (ip * 0x9e3779b97f4a7c15ull) >> c->table.shift;

	return (struct jf_fast_block *)c->table.slots + (slot & ~(uint64_t)1);
}

static inline int jf_fast_block_holds(const struct jf_fast_block *b, enum jf_isa isa, uint64_t ip,
				      uint64_t gen)
{
	return b->start == ip && b->gen == gen && b->isa == (uint8_t)isa && b->ninsn;
}

/* jf_fast_block_at's miss: the block decoded into set (ip's), evicting its older way. */
const struct jf_fast_block *jf_fast_block_fill(struct jf_fast_blocks *c, struct jf_fast_block *set,
					       enum jf_isa isa, uint64_t ip, uint64_t gen);

/* The block starting at ip in mode isa in version gen of the code map (which must be its
 * current version: jf_codemap_generation), decoded now if it is not cached. Never NULL.
 * Two ways per set: the newer block in the first, the older in the second, so that two
 * hot blocks that hash alike do not evict each other on every visit. */
static inline const struct jf_fast_block *jf_fast_block_at(struct jf_fast_blocks *c,
							   enum jf_isa isa, uint64_t ip,
							   uint64_t gen)
{
	struct jf_fast_block *b = jf_fast_block_set(c, ip);

	if (jf_fast_block_holds(b, isa, ip, gen))
		return b;
	if (jf_fast_block_holds(b + 1, isa, ip, gen))
		return b + 1;
	return jf_fast_block_fill(c, b, isa, ip, gen);
}

/* Whether block b, decoded from version since of the code map, is what decoding it again
 * now would give, as far as the map's log of changes tells (0: decode it again). */
int jf_fast_block_unchanged_since(struct jf_codemap *map, const struct jf_fast_block *b,
				  uint64_t since);

/* The block at ip as the code map's bytes are now, whether or not they may change, not
 * cached (pt_fast_optimism.c checks a block decoded ahead with it). */
void jf_fast_block_decode_now(struct jf_fast_blocks *c, enum jf_isa isa, uint64_t ip,
			      struct jf_fast_block *out);

/* How many blocks were decoded from code bytes (the rest were cache hits). */
uint64_t jf_fast_blocks_filled(const struct jf_fast_blocks *c);

#endif
