/* The fast Intel PT path's block cache: one decode of the code bytes per block and code
 * map version, then one lookup. */
#include "pt_fast_blocks.h"

#include <stdlib.h>

/* A table the cache grew out of: kept until the cache is freed, because a caller may still
 * read the block it was given from it. */
struct retired {
	struct retired *next;
	struct jf_fast_block *slots;
};

struct jf_fast_blocks {
	struct jf_insn_cache *insns;
	struct jf_codemap *map;
	unsigned log2, max_log2, shift;
	int end_on_jump;
	uint64_t filled;
	uint64_t conflicts;         /* blocks of the current code evicted since the last growth */
	struct jf_fast_block *slots;
	struct retired *retired;
};

/* The table starts small and grows eightfold while blocks evict each other (two steps to
 * the largest): a short trace runs a few hundred blocks and need not clear a large table
 * (fuzz_pt_decode made eight decoders per input with 3.2 MiB of tables each, and ran its
 * corpus 2.2 times slower for it), and a long one reaches the largest after touching only
 * a few dozen pages of the smaller ones. */
enum { FIRST_LOG2 = 9, GROWTH_LOG2 = 3 };

struct jf_fast_blocks *jf_fast_blocks_new(struct jf_insn_cache *insns, struct jf_codemap *map,
					  unsigned log2_slots, int end_on_jump)
{
	struct jf_fast_blocks *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->max_log2 = log2_slots;
	c->log2 = log2_slots < FIRST_LOG2 ? log2_slots : FIRST_LOG2;
	c->slots = calloc((size_t)1 << c->log2, sizeof(*c->slots));
	if (!c->slots) {
		free(c);
		return NULL;
	}
	c->insns = insns;
	c->map = map;
	c->shift = 64 - c->log2;
	c->end_on_jump = end_on_jump;
	return c;
}

void jf_fast_blocks_free(struct jf_fast_blocks *c)
{
	if (!c)
		return;
	while (c->retired) {
		struct retired *r = c->retired;

		c->retired = r->next;
		free(r->slots);
		free(r);
	}
	free(c->slots);
	free(c);
}

uint64_t jf_fast_blocks_filled(const struct jf_fast_blocks *c)
{
	return c->filled;
}

static uint64_t slot_of(const struct jf_fast_blocks *c, uint64_t ip)
{
	/* Fibonacci hashing: the top bits of the product depend on all bits of ip. */
	return (ip * 0x9e3779b97f4a7c15ull) >> c->shift;
}

/* Whether the instruction of size bytes at ip lies in two sections: libipt ends its block
 * there and marks it truncated, which blocks returned from here do not model. */
static int straddles(const struct jf_fast_blocks *c, uint64_t ip, uint8_t size)
{
	uint8_t bytes[16];

	return jf_codemap_read(c->map, ip, bytes, size) < size;
}

/* Decode the block at ip from the code bytes, the way libipt's block decoder walks
 * instructions without trace. */
static void fill(struct jf_fast_blocks *c, struct jf_fast_block *b, enum jf_isa isa, uint64_t ip)
{
	struct jf_insn_info in;

	b->start = ip;
	b->isa = (uint8_t)isa;
	b->ninsn = 0;
	b->target = 0;
	b->straight = 1;
	for (;;) {
		if (jf_insn_at(c->insns, isa, ip, &in) < 0) {
			b->end = JF_FAST_BAD;
			b->last = ip;
			b->last_size = 0;
			b->next = ip;
			return;
		}
		if (c->end_on_jump && straddles(c, ip, in.size)) {
			b->end = JF_FAST_UNHANDLED;
			b->last = ip;
			b->last_size = 0;
			b->next = ip;
			return;
		}
		b->ninsn++;
		b->last = ip;
		b->last_size = in.size;
		b->next = ip + in.size;
		switch ((enum jf_insn_class)in.cls) {
		case JF_INSN_OTHER:
			ip += in.size;
			break;
		case JF_INSN_JUMP:
			if (c->end_on_jump) {
				b->end = JF_FAST_JUMP;
				b->target = in.target;
				return;
			}
			ip = in.target;
			b->straight = 0;
			break;
		case JF_INSN_COND:
			b->end = JF_FAST_COND;
			b->target = in.target;
			return;
		case JF_INSN_CALL:
			b->end = JF_FAST_CALL;
			b->target = in.target;
			return;
		case JF_INSN_CALL_INDIRECT:
			b->end = JF_FAST_CALL_IND;
			return;
		case JF_INSN_RETURN:
			b->end = JF_FAST_RETURN;
			return;
		case JF_INSN_JUMP_INDIRECT:
			b->end = JF_FAST_INDIRECT;
			return;
		case JF_INSN_FAR:
			b->end = JF_FAST_FAR;
			return;
		case JF_INSN_PTWRITE:
		case JF_INSN_ERROR:
		default:
			b->end = JF_FAST_UNHANDLED;
			return;
		}
		if (b->ninsn == JF_FAST_MAX_BLOCK) {
			b->end = JF_FAST_CONTINUE;
			b->next = ip;
			return;
		}
	}
}

static int holds(const struct jf_fast_block *b, enum jf_isa isa, uint64_t ip, uint64_t gen)
{
	return b->start == ip && b->gen == gen && b->isa == (uint8_t)isa && b->ninsn;
}

/* Put a block of the old table into the new one, if its set has room. */
static void place(struct jf_fast_blocks *c, const struct jf_fast_block *o)
{
	struct jf_fast_block *b = &c->slots[slot_of(c, o->start) & ~(uint64_t)1];

	if (!b[0].ninsn)
		b[0] = *o;
	else if (!b[1].ninsn)
		b[1] = *o;
}

/* Grow the table, keeping the blocks of the current code (newer ways first). On failure the
 * cache stays as it is and stops growing. */
static void grow(struct jf_fast_blocks *c, uint64_t gen)
{
	size_t n = (size_t)1 << c->log2, i;
	unsigned log2 = c->log2 + GROWTH_LOG2 < c->max_log2 ? c->log2 + GROWTH_LOG2 : c->max_log2;
	struct jf_fast_block *slots = calloc((size_t)1 << log2, sizeof(*slots));
	struct retired *r = malloc(sizeof(*r));
	int way;

	c->conflicts = 0;
	if (!slots || !r) {
		free(slots);
		free(r);
		c->max_log2 = c->log2;
		return;
	}
	r->slots = c->slots;
	r->next = c->retired;
	c->retired = r;
	c->slots = slots;
	c->log2 = log2;
	c->shift = 64 - log2;
	for (way = 0; way < 2; way++) {
		for (i = (size_t)way; i < n; i += 2) {
			if (r->slots[i].ninsn && r->slots[i].gen == gen)
				place(c, &r->slots[i]);
		}
	}
}

const struct jf_fast_block *jf_fast_block_at(struct jf_fast_blocks *c, enum jf_isa isa,
					     uint64_t ip, uint64_t gen)
{
	/* Two ways per set: the newer block in the first, the older in the second, so that
	 * two hot blocks that hash alike do not evict each other on every visit. */
	struct jf_fast_block *b = &c->slots[slot_of(c, ip) & ~(uint64_t)1];

	if (holds(b, isa, ip, gen))
		return b;
	if (holds(b + 1, isa, ip, gen))
		return b + 1;
	if (b[1].ninsn && b[1].gen == gen &&
	    ++c->conflicts > ((uint64_t)1 << c->log2) / 16 && c->log2 < c->max_log2) {
		grow(c, gen);
		b = &c->slots[slot_of(c, ip) & ~(uint64_t)1];
	}
	b[1] = b[0];
	fill(c, b, isa, ip);
	b->gen = gen;
	c->filled++;
	return b;
}
