/* The TNT payload cache of returned blocks (pt_fast_block_paths.h): each (start, payload)
 * path is followed through the block cache once, its blocks kept in order. */
#include "pt_fast_block_paths.h"

#include <stdlib.h>
#include <string.h>

#include "pt_fast_table.h"

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

/* Grow the table, moving the paths of the current code that find their slot free. */
static void grow(struct jf_block_paths *c, uint64_t gen)
{
	size_t n, i;
	const struct jf_block_path *old = jf_fast_table_grow(&c->c.table, &n);

	for (i = 0; old && i < n; i++) {
		const struct jf_block_path *o = &old[i];
		struct jf_block_path *p;

		if (o->nbits && o->gen == gen &&
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

		pb->took_bit = 0;
		switch ((enum jf_fast_end)b->end) {
		case JF_FAST_COND:
			pb->took_bit = 1;
			next = taken ? b->target : b->next;
			break;
		case JF_FAST_RETURN:
			/* A compressed return to a call made on this path; one to an older call
			 * depends on the stack, a not-taken bit is an error: the caller's. */
			if (!nown || !taken || p->nops == JF_PAYLOAD_MAX_OPS)
				goto out;
			pb->took_bit = 1;
			p->pops |= (uint8_t)(1u << p->nops++);
			next = p->push[own[--nown]];
			break;
		case JF_FAST_CALL:
			/* A call to the next instruction (position-independent code) is no call. */
			if (b->target != b->next) {
				if (p->nops == JF_PAYLOAD_MAX_OPS)
					goto out;
				own[nown++] = p->nops;
				p->push[p->nops++] = b->next;
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
		memset(&pb->block, 0, sizeof(pb->block));
		pb->block.start = b->start;
		pb->block.last = b->last;
		pb->block.next = b->last + b->last_size;
		pb->block.ninsn = b->ninsn;
		pb->block.end = (uint8_t)jf_fast_block_end((enum jf_fast_end)b->end);
		pb->block.isa = (uint8_t)isa;
		pb->block.last_size = b->last_size;
		pb->end = b->end;
		p->used += pb->took_bit;
		p->nblocks++;
		ip = next;
	}
out:
	p->end = ip;
}

const struct jf_block_path *jf_block_path_fill(struct jf_block_paths *c,
					       struct jf_block_path *p, enum jf_isa isa,
					       uint64_t ip, uint64_t gen, uint64_t bits,
					       unsigned nbits)
{
	if (p->nbits && p->gen == gen && jf_fast_table_conflict(&c->c.table)) {
		grow(c, gen);
		p = jf_fast_table_payload_slot(&c->c.table, ip, bits, nbits);
	}
	follow(c, p, isa, ip, gen, bits, nbits);
	return p;
}
