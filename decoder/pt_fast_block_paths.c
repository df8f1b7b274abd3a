/* The TNT payload cache of returned blocks (pt_fast_block_paths.h): each (start, payload)
 * path is followed through the block cache once, its blocks kept in order. */
#include "pt_fast_block_paths.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pt_fast_table.h"

/* A block of the block cache fits a path block's 16-bit fields: it is straight (the cache
 * of an emitting decoder ends blocks at jumps), its instructions at most 15 bytes each. */
_Static_assert(JF_FAST_MAX_BLOCK <= UINT16_MAX && (JF_FAST_MAX_BLOCK - 1) * 15 <= UINT16_MAX,
	       "a block's instruction count or last offset overflows struct jf_path_block");
/* A path block's eight bytes after start are its record's from ninsn on (but for
 * JF_PATH_BLOCK_RECORD_BYTES). */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && sizeof(struct jf_path_block) == 16 &&
		       offsetof(struct jf_path_block, ninsn) == 8 &&
		       offsetof(struct jf_path_block, last_off) == 10 &&
		       offsetof(struct jf_path_block, end) == 12 &&
		       offsetof(struct jf_path_block, isa) == 13 &&
		       offsetof(struct jf_path_block, path_flags) == 14 &&
		       offsetof(struct jf_path_block, last_size) == 15 &&
		       sizeof(((struct jf_block *)0)->ninsn) == 4 &&
		       offsetof(struct jf_block, end) == offsetof(struct jf_block, ninsn) + 4 &&
		       offsetof(struct jf_block, isa) == offsetof(struct jf_block, ninsn) + 5 &&
		       offsetof(struct jf_block, flags) == offsetof(struct jf_block, ninsn) + 6 &&
		       offsetof(struct jf_block, last_size) == offsetof(struct jf_block, ninsn) + 7,
	       "struct jf_path_block no longer lies as its record's block");
/* A lookup's line is the entry's first: the table's slots are aligned to a line. */
_Static_assert(sizeof(struct jf_block_path) % 64 == 0, "entries straddle cache lines");

struct jf_block_paths *jf_block_paths_new(struct jf_fast_blocks *blocks, unsigned log2_slots)
{
	return jf_fast_path_cache_new(blocks, sizeof(struct jf_block_path), log2_slots,
				      sizeof(struct jf_block_paths));
}

void jf_block_paths_free(struct jf_block_paths *p)
{
	jf_fast_path_cache_free(p ? &p->c : NULL);
}

void jf_block_paths_counts(const struct jf_block_paths *p, uint64_t *lookups, uint64_t *hits)
{
	*lookups = p->c.lookups;
	*hits = p->c.hits;
}

uint64_t jf_block_paths_kept(const struct jf_block_paths *p)
{
	return p->kept;
}

/* Grow the table, moving the paths that find their slot free: those of older code too,
 * which a miss may find still to hold (still_holds). */
static void grow(struct jf_block_paths *c)
{
	size_t n, i;
	const struct jf_block_path *old = jf_fast_table_grow(&c->c.table, &n);

	for (i = 0; old && i < n; i++) {
		const struct jf_block_path *o = &old[i];
		struct jf_block_path *p;

		if (o->nbits &&
		    !(p = jf_fast_table_payload_slot(&c->c.table, o->start, o->bits, o->nbits))->nbits)
			*p = *o;
	}
}

/* Follow the bits from ip through the blocks, as pt_fast_emit.c's emit_tnt_step steps
 * through them one by one. */
static void follow(struct jf_block_paths *c, struct jf_block_path *p, enum jf_isa isa,
		   uint64_t ip, uint64_t gen, uint64_t bits, unsigned nbits)
{
	/* Return addresses pushed on this path and not yet popped on it (indices of ops). */
	uint8_t own[JF_PAYLOAD_MAX_OPS];
	unsigned nown = 0;

	p->start = ip;
	p->gen = gen;
	p->bits = bits;
	p->nbits = (uint8_t)nbits;
	p->isa = (uint8_t)isa;
	p->used = p->nblocks = p->nops = p->pops = 0;
	while (p->nblocks < JF_BLOCK_PATH_MAX && p->used < nbits) {
		const struct jf_fast_block *b = jf_fast_block_at(c->c.blocks, isa, ip, gen);
		struct jf_path_block *pb = &p->blocks[p->nblocks];
		int taken = (int)((bits >> (nbits - 1 - p->used)) & 1);
		uint64_t next;

		pb->path_flags = 0;
		switch ((enum jf_fast_end)b->end) {
		case JF_FAST_COND:
			pb->path_flags = JF_PATH_TOOK_BIT;
			next = taken ? b->target : b->next;
			break;
		case JF_FAST_RETURN:
			/* A compressed return to a call made on this path; one to an older call
			 * depends on the stack, a not-taken bit is an error: the caller's. */
			if (!nown || !taken || p->nops == JF_PAYLOAD_MAX_OPS)
				goto out;
			pb->path_flags = JF_PATH_TOOK_BIT;
			p->pops |= (uint8_t)(1u << p->nops++);
			next = jf_block_path_push(p, own[--nown]);
			break;
		case JF_FAST_CALL:
			/* A call to the next instruction (position-independent code) is no call. */
			if (b->target != b->next) {
				if (p->nops == JF_PAYLOAD_MAX_OPS)
					goto out;
				own[nown++] = p->nops;
				p->push[p->nops++] = p->nblocks;
			}
			next = b->target;
			break;
		case JF_FAST_JUMP:
			next = b->target;
			break;
		case JF_FAST_CONTINUE:
			next = b->next;
			break;
		default:
			goto out; /* a TIP is needed, or the code cannot be decoded */
		}
		pb->start = b->start;
		pb->last_off = (uint16_t)(b->last - b->start);
		pb->ninsn = (uint16_t)b->ninsn;
		pb->last_size = b->last_size;
		pb->end = (uint8_t)jf_fast_block_end((enum jf_fast_end)b->end);
		pb->isa = (uint8_t)isa;
		if (b->end == JF_FAST_CONTINUE)
			pb->path_flags |= JF_PATH_GOES_ON;
		p->used += pb->path_flags & JF_PATH_TOOK_BIT;
		p->nblocks++;
		ip = next;
	}
out:
	p->end = ip;
}

/* Whether the bytes of every block on path p are those of version since of the code map.
 * The blocks of a path lie close together, in one compiled method or a few: one check of
 * the range they span answers most; where it cannot (several sections, a change between
 * the blocks), each block is checked. */
static int blocks_unchanged_since(struct jf_codemap *map, const struct jf_block_path *p,
				  uint64_t since)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned i;

	for (i = 0; i < p->nblocks; i++) {
		const struct jf_block b = jf_path_block_record(p, i);

		lo = b.start < lo ? b.start : lo;
		hi = b.next > hi ? b.next : hi;
	}
	if (!p->nblocks || jf_codemap_unchanged_since(map, since, lo, hi - lo))
		return 1;
	for (i = 0; i < p->nblocks; i++) {
		const struct jf_block b = jf_path_block_record(p, i);

		if (!jf_codemap_unchanged_since(map, since, b.start, b.next - b.start))
			return 0;
	}
	return 1;
}

/* Whether entry p, followed in an earlier version of the code map, is the path of this key
 * in version gen too: then it is brought to gen. Following it again would give the same
 * blocks: each is straight (the block cache ends blocks on jumps), so its instructions, and
 * where it ends and goes, come from its own bytes alone, which lie in one section that no
 * change since touched (as the block cache keeps a block: pt_fast_blocks.c still_holds).
 * The block the path stopped before (one that needs a TIP, say) is not checked: the caller
 * decodes that one itself, at the current version, whatever it now holds. */
static int still_holds(struct jf_block_paths *c, struct jf_block_path *p, enum jf_isa isa,
		       uint64_t ip, uint64_t gen, uint64_t bits, unsigned nbits)
{
	if (p->start != ip || p->bits != bits || p->nbits != nbits || p->isa != (uint8_t)isa ||
	    p->gen >= gen || !blocks_unchanged_since(c->c.blocks->map, p, p->gen))
		return 0;
	p->gen = gen;
	c->kept++;
	return 1;
}

const struct jf_block_path *jf_block_path_fill(struct jf_block_paths *c,
					       struct jf_block_path *p, enum jf_isa isa,
					       uint64_t ip, uint64_t gen, uint64_t bits,
					       unsigned nbits)
{
	if (still_holds(c, p, isa, ip, gen, bits, nbits))
		return p;
	if (p->nbits && p->gen == gen && jf_fast_table_conflict(&c->c.table)) {
		grow(c);
		p = jf_fast_table_payload_slot(&c->c.table, ip, bits, nbits);
	}
	follow(c, p, isa, ip, gen, bits, nbits);
	return p;
}
