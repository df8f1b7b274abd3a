/* The fast Intel PT path's block cache: one decode of the code bytes per block and code
 * map version, then one lookup. */
#include "pt_fast_blocks.h"
#include "pt_fast_shared.h"

#include <stdlib.h>
#include <string.h>


struct jf_fast_blocks *jf_fast_blocks_new(struct jf_insn_cache *insns, struct jf_codemap *map,
					  unsigned log2_slots, int end_on_jump)
{
	struct jf_fast_blocks *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (jf_fast_table_init(&c->table, sizeof(struct jf_fast_block), log2_slots) < 0) {
		free(c);
		return NULL;
	}
	c->insns = insns;
	c->map = map;
	c->end_on_jump = end_on_jump;
	return c;
}

void jf_fast_blocks_free(struct jf_fast_blocks *c)
{
	if (!c)
		return;
	jf_fast_table_fini(&c->table);
	free(c);
}

uint64_t jf_fast_blocks_filled(const struct jf_fast_blocks *c)
{
	return c->filled;
}

/* Whether the instruction of size bytes at ip lies in two sections: libipt ends its block
 * there and marks it truncated, which blocks returned from here do not model. */
static int straddles(const struct jf_fast_blocks *c, uint64_t ip, uint8_t size)
{
	uint8_t bytes[16];

	return jf_codemap_read(c->map, ip, bytes, size) < size;
}

/* Whether a change still to come may touch the instruction of size bytes at ip (or the
 * bytes next to it: a section edge moved there ends libipt's block). Where the code map
 * says where it will change (jitflow/codemap.h), this path takes no such block: it hands
 * over to libipt's block decoder, which reads the code as it is when it gets there. So
 * what this path decodes ahead holds whatever changes while it is returned. */
static int may_change(struct jf_fast_blocks *c, uint64_t ip, uint64_t size)
{
	return jf_codemap_tells_changes(c->map) && jf_codemap_may_change(c->map, ip - 1, size + 2);
}

/* A block this path does not take (see may_change): never cached, asked again. */
static void leave_to_block_decoder(struct jf_fast_block *b)
{
	b->end = JF_FAST_UNHANDLED;
	b->ninsn = 0;
	b->last = b->next = b->start;
	b->last_size = 0;
}

/* Decode the block at ip from the code bytes, the way libipt's block decoder walks
 * instructions without trace. Returns 1 where it left the block to the block decoder
 * (unless whole: an instruction's bytes may change), else 0. */
static int decode(struct jf_fast_blocks *c, struct jf_fast_block *b, enum jf_isa isa, uint64_t ip,
		  int whole)
{
	struct jf_insn_info in;

	b->start = ip;
	b->isa = (uint8_t)isa;
	b->ninsn = 0;
	b->target = 0;
	b->straight = 1;
	for (;;) {
		int bad = jf_insn_at(c->insns, isa, ip, &in) < 0;

		/* (What cannot be decoded: the longest instruction's bytes.) */
		if (!whole && may_change(c, ip, bad ? 15 : in.size)) {
			leave_to_block_decoder(b);
			return 1;
		}
		if (bad) {
			b->end = JF_FAST_BAD;
			b->last = ip;
			b->last_size = 0;
			b->next = ip;
			return 0;
		}
		if (c->end_on_jump && straddles(c, ip, in.size)) {
			b->end = JF_FAST_UNHANDLED;
			b->last = ip;
			b->last_size = 0;
			b->next = ip;
			return 0;
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
				return 0;
			}
			ip = in.target;
			b->straight = 0;
			break;
		case JF_INSN_COND:
			b->end = JF_FAST_COND;
			b->target = in.target;
			return 0;
		case JF_INSN_CALL:
			b->end = JF_FAST_CALL;
			b->target = in.target;
			return 0;
		case JF_INSN_CALL_INDIRECT:
			b->end = JF_FAST_CALL_IND;
			return 0;
		case JF_INSN_RETURN:
			b->end = JF_FAST_RETURN;
			return 0;
		case JF_INSN_JUMP_INDIRECT:
			b->end = JF_FAST_INDIRECT;
			return 0;
		case JF_INSN_FAR:
			b->end = in.far_call ? JF_FAST_FAR_CALL : JF_FAST_FAR;
			return 0;
		case JF_INSN_PTWRITE:
		case JF_INSN_ERROR:
		default:
			b->end = JF_FAST_UNHANDLED;
			return 0;
		}
		if (b->ninsn == JF_FAST_MAX_BLOCK) {
			b->end = JF_FAST_CONTINUE;
			b->next = ip;
			return 0;
		}
	}
}

void jf_fast_block_decode_now(struct jf_fast_blocks *c, enum jf_isa isa, uint64_t ip,
			      struct jf_fast_block *out)
{
	memset(out, 0, sizeof(*out));
	decode(c, out, isa, ip, 1);
}

/* A logged fill (jf_fast_changing) of the block at ip: as decoded (as), its slot b left to
 * the block decoder. Out of memory, the log fails (the decoder then hands over). */
static void log_fill(struct jf_fast_changing *ch, struct jf_fast_block *b, enum jf_isa isa,
		     uint64_t ip, const struct jf_fast_block *as, uint64_t gen)
{
	b->start = ip;
	b->isa = (uint8_t)isa;
	leave_to_block_decoder(b);
	if (ch->n == ch->cap) {
		size_t cap = ch->cap ? 2 * ch->cap : 64;
		struct jf_fast_changing_fill *more = realloc(ch->fills, cap * sizeof(*more));

		if (!more) {
			ch->failed = 1;
			return;
		}
		ch->fills = more;
		ch->cap = cap;
	}
	ch->fills[ch->n].block = *as;
	ch->fills[ch->n].gen = gen;
	ch->fills[ch->n].record = JF_FAST_NO_RECORD;
	ch->n++;
	ch->marker = b;
}

/* The fill of the block at ip logged as the bytes are now, whole. */
static void log_fill_now(struct jf_fast_blocks *c, struct jf_fast_changing *ch,
			 struct jf_fast_block *b, enum jf_isa isa, uint64_t ip)
{
	struct jf_fast_block now;

	jf_fast_block_decode_now(c, isa, ip, &now);
	log_fill(ch, b, isa, ip, &now, jf_codemap_generation(c->map));
}

/* Whether ip is the address of a kept fill (jf_fast_changing's kept_set). */
static int kept_address(const struct jf_fast_changing *ch, uint64_t ip)
{
	size_t i = jf_fast_kept_slot(ip, ch->kept_mask);

	for (; ch->kept_set[i]; i = (i + 1) & ch->kept_mask)
		if (ch->kept_set[i] == ip)
			return 1;
	return 0;
}

/* Replaying: whether the fill at ip is of code the decode replayed logged (1: logged,
 * as it was for the records returned, else as the bytes are now), or not (0). Before
 * replay_until, the block taken for the record to come is the one the decode replayed
 * took for it; a fill that made no record there (one that found where a TNT path stops,
 * say) gets a block no caller takes (the replay took another way: it then hands over). */
static int replayed(struct jf_fast_blocks *c, struct jf_fast_changing *ch, struct jf_fast_block *b,
		    enum jf_isa isa, uint64_t ip)
{
	size_t r = *ch->records, i;
	struct jf_fast_block now;

	if (!kept_address(ch, ip))
		return 0;
	if (r >= ch->replay_until) {
		log_fill_now(c, ch, b, isa, ip);
		return 1;
	}
	/* The records of the fills taken grow in their order. */
	while (ch->next_kept < ch->nkept && (ch->kept[ch->next_kept].record < r ||
					     ch->kept[ch->next_kept].record == JF_FAST_NO_RECORD))
		ch->next_kept++;
	for (i = ch->next_kept; i < ch->nkept && ch->kept[i].record == r; i++) {
		if (ch->kept[i].block.start == ip && ch->kept[i].block.isa == (uint8_t)isa) {
			log_fill(ch, b, isa, ip, &ch->kept[i].block, ch->kept[i].gen);
			return 1;
		}
	}
	memset(&now, 0, sizeof(now));
	now.start = ip;
	now.isa = (uint8_t)isa;
	now.end = JF_FAST_UNHANDLED;
	log_fill(ch, b, isa, ip, &now, 0);
	return 1;
}

/* A fill: decoded, or where a decoder logs fills of code that may change
 * (jf_fast_changing), logged as well. */
static void fill(struct jf_fast_blocks *c, struct jf_fast_block *b, enum jf_isa isa, uint64_t ip)
{
	struct jf_fast_changing *ch = c->changing;

	if (!ch) {
		decode(c, b, isa, ip, 0);
		return;
	}
	ch->marker = NULL;
	if (ch->nkept && replayed(c, ch, b, isa, ip))
		return;
	if (decode(c, b, isa, ip, 0) && ch->open)
		log_fill_now(c, ch, b, isa, ip);
}

/* Put a block of the old table into the new one, if its set has room. */
static void place(struct jf_fast_blocks *c, const struct jf_fast_block *o)
{
	struct jf_fast_block *b = jf_fast_block_set(c, o->start);

	if (!b[0].ninsn)
		b[0] = *o;
	else if (!b[1].ninsn)
		b[1] = *o;
}

/* Grow the table, keeping the blocks of the current code (newer ways first). */
static void grow(struct jf_fast_blocks *c, uint64_t gen)
{
	size_t n, i;
	const struct jf_fast_block *old = jf_fast_table_grow(&c->table, &n);
	int way;

	for (way = 0; old && way < 2; way++) {
		for (i = (size_t)way; i < n; i += 2) {
			if (old[i].ninsn && old[i].gen == gen)
				place(c, &old[i]);
		}
	}
}

/* Whether block b, decoded from version since of the code map, is what decoding it again
 * now gives: a straight block (its instructions are [start, next)) whose bytes no change
 * since touched. x86 decodes each instruction from its own bytes, and those lie in one
 * section (jf_codemap_unchanged_since), so none straddles two. (A block that followed a
 * jump has instructions outside [start, next): decoded again, not answered here.) */
int jf_fast_block_unchanged_since(struct jf_codemap *map, const struct jf_fast_block *b,
				  uint64_t since)
{
	return b->ninsn && b->straight && b->end != JF_FAST_UNHANDLED && b->end != JF_FAST_BAD &&
	       jf_codemap_unchanged_since(map, since, b->start, b->next - b->start);
}

/* Whether block o, decoded from an earlier version of the code map, holds for version gen
 * too (then marked so). */
static int still_holds(struct jf_fast_blocks *c, struct jf_fast_block *o, enum jf_isa isa,
		       uint64_t ip, uint64_t gen)
{
	if (o->start != ip || o->isa != (uint8_t)isa || o->gen >= gen ||
	    !jf_fast_block_unchanged_since(c->map, o, o->gen))
		return 0;
	o->gen = gen;
	return 1;
}

const struct jf_fast_block *jf_fast_block_fill(struct jf_fast_blocks *c, struct jf_fast_block *b,
					       enum jf_isa isa, uint64_t ip, uint64_t gen)
{
	/* A change of the code elsewhere leaves the block (JIT code changes all the time,
	 * a few hundred bytes each). */
	if (still_holds(c, b, isa, ip, gen))
		return b;
	if (still_holds(c, b + 1, isa, ip, gen))
		return b + 1;
	if (b[1].ninsn && b[1].gen == gen && jf_fast_table_conflict(&c->table)) {
		grow(c, gen);
		b = jf_fast_block_set(c, ip);
	}
	b[1] = b[0];
	if (!jf_fast_shared_block_get(c->shared, isa, ip, b)) {
		fill(c, b, isa, ip);
		jf_fast_shared_block_put(c->shared, b);
	}
	b->gen = gen;
	c->filled++;
	return b;
}
