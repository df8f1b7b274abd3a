/* Internal: the fast Intel PT path's TNT payload cache.
 *
 * A TNT packet's payload, followed from a start address, always takes the same path through
 * the same code: libxdc's observation. An entry keyed by (start IP, execution mode, code map
 * version, payload bits) holds where that path ends, the instructions and blocks on it and
 * what it did to the return stack, so that a payload seen before costs one lookup instead
 * of a block lookup and a TNT query per bit.
 *
 * An entry never depends on anything but its key: a compressed return whose call is not on
 * the entry's own path (the return address is on the stack from before) ends the entry
 * before that return, and so does anything that needs more than TNT bits (a TIP, bad code).
 * The caller takes such a block one step at a time and looks the remaining bits up again. */
#ifndef JITFLOW_PT_FAST_PAYLOADS_H
#define JITFLOW_PT_FAST_PAYLOADS_H

#include <stdint.h>

#include "pt_fast_blocks.h"
#include "pt_fast_table.h"

/* The most return-stack operations one entry records; a path with more ends early. */
enum { JF_PAYLOAD_MAX_OPS = 6 };

/* The nbits of an entry that is no payload's path but a TIP's: from an address, without
 * trace, through direct calls to the first block that needs a TIP (an indirect branch, a
 * return not compressed, a far transfer), which a TIP packet ends. The same cache keeps
 * them, since the same code runs both: where an interpreter dispatches through an
 * indirect jump, every bytecode costs a TNT payload and a TIP. */
enum { JF_PAYLOAD_TO_TIP = 0xff };

struct jf_payload_path {
	uint64_t start;     /* key: where the path starts... */
	uint64_t gen;       /* ...the code map version... */
	uint64_t bits;      /* ...the payload's bits, the first taken/not-taken in bit nbits-1... */
	uint8_t nbits;      /* ...how many (1-47; 0: an empty slot)... */
	uint8_t isa;        /* ...and the execution mode */
	uint8_t used;       /* bits the path consumed (<= nbits); a TIP's: 1 if it reached
			     * the block that needs the TIP (counted, its push the last op),
			     * 0 if it stopped before a block it cannot follow */
	uint8_t nops;       /* return-stack operations to replay, in order: */
	uint8_t pops;       /* bit i set: op i pops (the return pushed by an earlier op) */
	uint32_t blocks;    /* blocks on the path (as pt_fast.c counts them) */
	uint64_t insns;     /* instructions on the path */
	uint64_t end;       /* where the path ends: the IP whose block needs the next query */
	uint64_t push[JF_PAYLOAD_MAX_OPS]; /* op i pushes push[i] (unless it pops) */
};

/* Its cache visible: the lookup below is inline, since a trace takes one per TNT packet. */
struct jf_payloads {
	struct jf_fast_path_cache c; /* first (jf_fast_path_cache_new): of struct jf_payload_path */
	struct jf_fast_shared *shared; /* paths other threads followed (may be NULL) */
};

/* A cache of 2^log2_slots paths over the blocks of blocks. A path lies in its own slot or
 * in the other slot of that pair, where a newer path of the same slot moved it: a trace's
 * hot paths are few (1137 on the clean capture), but in their own slots alone dozens of
 * pairs of them took the same one and followed each other out again at every turn of
 * the loop that ran them (93 misses a turn, 4% of `stat` there). A lookup looks in the
 * other slot only where its own holds another path. */
struct jf_payloads *jf_payloads_new(struct jf_fast_blocks *blocks, unsigned log2_slots);
void jf_payloads_free(struct jf_payloads *c);

/* Whether entry p is keyed (ip, bits, nbits) in mode isa and code map version gen. */
static inline int jf_payload_holds(const struct jf_payload_path *p, enum jf_isa isa,
				   uint64_t ip, uint64_t gen, uint64_t bits, unsigned nbits)
{
	return p->start == ip && p->bits == bits && p->nbits == nbits && p->gen == gen &&
	       p->isa == (uint8_t)isa;
}

/* The lookup of a path whose own slot p holds another: the path in the other slot of the
 * pair, else followed now into p (the path there moved to the other slot). Never NULL. */
const struct jf_payload_path *jf_payload_path_elsewhere(struct jf_payloads *c,
							struct jf_payload_path *p,
							enum jf_isa isa, uint64_t ip,
							uint64_t gen, uint64_t bits,
							unsigned nbits);

/* The path of the nbits (1-47) bits of bits (none set above them: the caller clears
 * those it has consumed, so that the lookup, one per TNT packet, need not) from ip, in
 * mode isa and version gen of the code map (its current version), followed now if it is
 * not cached. Never NULL. */
static inline const struct jf_payload_path *jf_payload_path_at(struct jf_payloads *c,
							       enum jf_isa isa, uint64_t ip,
							       uint64_t gen, uint64_t bits,
							       unsigned nbits)
{
	struct jf_payload_path *p =
		jf_fast_table_payload_slot(&c->c.table, ip, bits, nbits);

	c->c.lookups++;
	if (jf_payload_holds(p, isa, ip, gen, bits, nbits)) {
		c->c.hits++;
		return p;
	}
	return jf_payload_path_elsewhere(c, p, isa, ip, gen, bits, nbits);
}

/* The TIP's path from ip (JF_PAYLOAD_TO_TIP), followed now if it is not cached. Never
 * NULL. Not counted in jf_payloads_counts, which counts TNT payloads. */
static inline const struct jf_payload_path *jf_payload_tip_path_at(struct jf_payloads *c,
								   enum jf_isa isa, uint64_t ip,
								   uint64_t gen)
{
	struct jf_payload_path *p =
		jf_fast_table_payload_slot(&c->c.table, ip, 0, JF_PAYLOAD_TO_TIP);

	/* A TIP's path has no bits (0). */
	if (jf_payload_holds(p, isa, ip, gen, 0, JF_PAYLOAD_TO_TIP))
		return p;
	return jf_payload_path_elsewhere(c, p, isa, ip, gen, 0, JF_PAYLOAD_TO_TIP);
}

/* The nbits of an entry that is a walk without trace (pt_fast.c's walk_to, which binds an
 * event to its IP: a TIP.PGD, a FUP's): JF_PAYLOAD_WALK, plus 2 where it walks to an IP
 * (its bits: that IP), plus 1 where it may end at the first branch that needs trace. The
 * same cache keeps them: an IP-filtered trace walks the same few stretches to each
 * TIP.PGD, and each walk steps an instruction at a time where its end may lie inside a
 * block. Only walks that reached their end are kept: there (end), the instructions on the
 * way (insns) and the returns its calls pushed (push, nops of them; a walk pops none). */
enum { JF_PAYLOAD_WALK = 0xf8 };

/* The walk of this kind from ip (to: its end, 0 where it has none) in the other slot of
 * the pair of its own, p, or NULL. */
const struct jf_payload_path *jf_payload_walk_elsewhere(const struct jf_payloads *c,
							const struct jf_payload_path *p,
							enum jf_isa isa, uint64_t ip,
							uint64_t gen, uint64_t to,
							unsigned kind);

/* The walk of this kind from ip (to: its end, 0 where it has none) if it is kept, else
 * NULL. */
static inline const struct jf_payload_path *jf_payload_walk_at(struct jf_payloads *c,
							       enum jf_isa isa, uint64_t ip,
							       uint64_t gen, uint64_t to,
							       unsigned kind)
{
	const struct jf_payload_path *p = jf_fast_table_payload_slot(
		&c->c.table, ip, to, JF_PAYLOAD_WALK + kind);

	if (jf_payload_holds(p, isa, ip, gen, to, JF_PAYLOAD_WALK + kind))
		return p;
	return jf_payload_walk_elsewhere(c, p, isa, ip, gen, to, kind);
}

/* Keep a walk of this kind from ip that reached end, with insns instructions and the
 * npush (at most JF_PAYLOAD_MAX_OPS) returns in push pushed on the way. */
void jf_payload_walk_keep(struct jf_payloads *c, enum jf_isa isa, uint64_t ip, uint64_t gen,
			  uint64_t to, unsigned kind, uint64_t end, uint64_t insns,
			  const uint64_t *push, unsigned npush);

/* Lookups, and how many of them were answered from the cache. */
void jf_payloads_counts(const struct jf_payloads *c, uint64_t *lookups, uint64_t *hits);

#endif
