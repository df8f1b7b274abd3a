/* The fast Intel PT path's TNT payload cache: each (start, payload) path is followed
 * through the block cache once, then costs one lookup. */
#include "pt_fast_payloads.h"
#include "pt_fast_shared.h"

#include <stdlib.h>

/* Blocks one path may take: a path through direct calls and long straight runs is cut
 * there, so that following one is bounded (the caller goes on with another lookup). */
enum { MAX_PATH_BLOCKS = 256 };

struct jf_payloads *jf_payloads_new(struct jf_fast_blocks *blocks, unsigned log2_slots)
{
	return jf_fast_path_cache_new(blocks, sizeof(struct jf_payload_path), log2_slots,
				      sizeof(struct jf_payloads));
}

void jf_payloads_free(struct jf_payloads *p)
{
	jf_fast_path_cache_free(p ? &p->c : NULL);
}

void jf_payloads_counts(const struct jf_payloads *p, uint64_t *lookups, uint64_t *hits)
{
	*lookups = p->c.lookups;
	*hits = p->c.hits;
}

static struct jf_payload_path *slot_of(const struct jf_payloads *c, uint64_t ip, uint64_t bits,
				       unsigned nbits)
{
	return jf_fast_table_payload_slot(&c->c.table, ip, bits, nbits);
}

/* The other slot of the pair slot p is in. */
static struct jf_payload_path *other_slot(const struct jf_payloads *c,
					  const struct jf_payload_path *p)
{
	struct jf_payload_path *slots = c->c.table.slots;

	return &slots[(size_t)(p - slots) ^ 1];
}

/* Grow the table, keeping the paths of the current code that still find a free slot: their
 * own, else the other of its pair. */
static void grow(struct jf_payloads *c, uint64_t gen)
{
	size_t n, i;
	const struct jf_payload_path *old = jf_fast_table_grow(&c->c.table, &n);

	for (i = 0; old && i < n; i++) {
		struct jf_payload_path *p;

		if (!old[i].nbits || old[i].gen != gen)
			continue;
		p = slot_of(c, old[i].start, old[i].bits, old[i].nbits);
		if (p->nbits)
			p = other_slot(c, p);
		if (!p->nbits)
			*p = old[i];
	}
}

/* The slot a new path keyed (ip, bits, nbits) takes, its own, p: a path of the current code
 * there moves to the other slot of the pair, whose path is evicted (the table grows where
 * that happens to paths of the current code too often). */
static struct jf_payload_path *take_slot(struct jf_payloads *c, struct jf_payload_path *p,
					 uint64_t ip, uint64_t gen, uint64_t bits,
					 unsigned nbits)
{
	struct jf_payload_path *other;

	if (!p->nbits || p->gen != gen)
		return p;
	other = other_slot(c, p);
	if (other->nbits && other->gen == gen && jf_fast_table_conflict(&c->c.table)) {
		grow(c, gen);
		p = slot_of(c, ip, bits, nbits);
		if (!p->nbits || p->gen != gen)
			return p;
		other = other_slot(c, p);
	}
	*other = *p;
	return p;
}

/* Follow the bits from ip through the blocks, as pt_fast.c's block-by-block decode does. */
static void follow(struct jf_payloads *c, struct jf_payload_path *p, enum jf_isa isa,
		   uint64_t ip, uint64_t gen, uint64_t bits, unsigned nbits)
{
	/* Return addresses pushed on this path and not yet popped on it (indices of ops). */
	uint8_t own[JF_PAYLOAD_MAX_OPS];
	unsigned nown = 0, n;

	p->start = ip;
	p->gen = gen;
	p->bits = bits;
	p->nbits = (uint8_t)nbits;
	p->isa = (uint8_t)isa;
	p->used = p->nops = p->pops = 0;
	p->blocks = 0;
	p->insns = 0;
	for (n = 0; n < MAX_PATH_BLOCKS && p->used < nbits; n++) {
		const struct jf_fast_block *b = jf_fast_block_at(c->c.blocks, isa, ip, gen);
		int taken = (int)((bits >> (nbits - 1 - p->used)) & 1);

		switch ((enum jf_fast_end)b->end) {
		case JF_FAST_COND:
			p->used++;
			ip = taken ? b->target : b->next;
			break;
		case JF_FAST_CALL:
			/* A call to the next instruction (position-independent code) is no call. */
			if (b->target != b->next) {
				if (p->nops == JF_PAYLOAD_MAX_OPS)
					goto out;
				own[nown++] = p->nops;
				p->push[p->nops++] = b->next;
			}
			ip = b->target;
			break;
		case JF_FAST_CONTINUE:
			ip = b->next;
			break;
		case JF_FAST_RETURN:
			/* A compressed return (a taken bit) to a call made on this path; one to an
			 * older call depends on the stack, and a not-taken bit is an error: both
			 * are the caller's. */
			if (!nown || !taken || p->nops == JF_PAYLOAD_MAX_OPS)
				goto out;
			p->pops |= (uint8_t)(1u << p->nops++);
			ip = p->push[own[--nown]];
			p->used++;
			break;
		default:
			/* A TIP is needed, or the code cannot be decoded: the caller's. */
			goto out;
		}
		p->insns += b->ninsn;
		p->blocks++;
	}
out:
	p->end = ip;
}

/* Follow the blocks from ip to the one that needs a TIP, as pt_fast_packets.c's
 * packet_tip walks them one by one. Return addresses are only pushed here (a return ends
 * the path). */
static void follow_to_tip(struct jf_payloads *c, struct jf_payload_path *p, enum jf_isa isa,
			  uint64_t ip, uint64_t gen)
{
	unsigned n;

	p->start = ip;
	p->gen = gen;
	p->bits = 0;
	p->nbits = JF_PAYLOAD_TO_TIP;
	p->isa = (uint8_t)isa;
	p->used = p->nops = p->pops = 0;
	p->blocks = 0;
	p->insns = 0;
	for (n = 0; n < MAX_PATH_BLOCKS; n++) {
		const struct jf_fast_block *b = jf_fast_block_at(c->c.blocks, isa, ip, gen);

		switch ((enum jf_fast_end)b->end) {
		case JF_FAST_CALL:
			if (b->target != b->next) {
				if (p->nops == JF_PAYLOAD_MAX_OPS)
					goto out;
				p->push[p->nops++] = b->next;
			}
			ip = b->target;
			break;
		case JF_FAST_JUMP:
			ip = b->target;
			break;
		case JF_FAST_CONTINUE:
			ip = b->next;
			break;
		case JF_FAST_CALL_IND:
			if (p->nops == JF_PAYLOAD_MAX_OPS)
				goto out;
			p->push[p->nops++] = b->next;
			/* fall through */
		case JF_FAST_RETURN:
		case JF_FAST_INDIRECT:
		case JF_FAST_FAR:
		case JF_FAST_FAR_CALL:
			p->used = 1;
			p->insns += b->ninsn;
			p->blocks++;
			goto out;
		default:
			/* A conditional branch (no TNT bit for it), or bad code: the caller's. */
			goto out;
		}
		p->insns += b->ninsn;
		p->blocks++;
	}
out:
	p->end = ip;
}

const struct jf_payload_path *jf_payload_path_elsewhere(struct jf_payloads *c,
							struct jf_payload_path *p,
							enum jf_isa isa, uint64_t ip,
							uint64_t gen, uint64_t bits,
							unsigned nbits)
{
	const struct jf_payload_path *other = other_slot(c, p);

	if (jf_payload_holds(other, isa, ip, gen, bits, nbits)) {
		/* Not a TIP's path: jf_payload_path_at counts only TNT payloads. */
		c->c.hits += nbits != JF_PAYLOAD_TO_TIP;
		return other;
	}
	p = take_slot(c, p, ip, gen, bits, nbits);
	if (!jf_fast_shared_path_get(c->shared, isa, ip, bits, nbits, p)) {
		if (nbits == JF_PAYLOAD_TO_TIP)
			follow_to_tip(c, p, isa, ip, gen);
		else
			follow(c, p, isa, ip, gen, bits, nbits);
		jf_fast_shared_path_put(c->shared, p);
	}
	p->gen = gen;
	return p;
}

const struct jf_payload_path *jf_payload_walk_elsewhere(const struct jf_payloads *c,
							const struct jf_payload_path *p,
							enum jf_isa isa, uint64_t ip,
							uint64_t gen, uint64_t to,
							unsigned kind)
{
	const struct jf_payload_path *other = other_slot(c, p);

	return jf_payload_holds(other, isa, ip, gen, to, JF_PAYLOAD_WALK + kind) ? other : NULL;
}

void jf_payload_walk_keep(struct jf_payloads *c, enum jf_isa isa, uint64_t ip, uint64_t gen,
			  uint64_t to, unsigned kind, uint64_t end, uint64_t insns,
			  const uint64_t *push, unsigned npush)
{
	unsigned nbits = JF_PAYLOAD_WALK + kind, i;
	struct jf_payload_path *p = take_slot(c, slot_of(c, ip, to, nbits), ip, gen, to, nbits);

	p->start = ip;
	p->gen = gen;
	p->bits = to;
	p->nbits = (uint8_t)nbits;
	p->isa = (uint8_t)isa;
	p->used = 1;
	p->pops = 0;
	p->nops = (uint8_t)npush;
	for (i = 0; i < npush; i++)
		p->push[i] = push[i];
	p->blocks = 0;
	p->insns = insns;
	p->end = end;
}
