/* Blocks cut at their direct jumps (jump_split.h): a memo of each block's parts per block
 * start, filled by walking its instructions once, and checked by a hash of its bytes when
 * the code map changes. */
#include "jitflow/jump_split.h"

#include <stdlib.h>
#include <string.h>

#include "jitflow/insn.h"

enum {
	MEMO_BITS = 14,
	/* Parts kept at most (24 bytes each): past it the memo starts again, so memory stays
	 * bounded, whatever the trace and however often code changes. */
	PARTS_MAX = 1 << 18,
	SOURCES_MAX = 64,
};

/* One part of a block: from start to last, count instructions, the last one size bytes
 * (the code from start to last + size is contiguous). */
struct part {
	uint64_t start, last;
	uint32_t ninsn;
	uint8_t last_size;
};

/* The parts of the block that starts at start with ninsn instructions in mode isa, as
 * walked in the memo's epoch and found unchanged at map generation gen. nparts 0: its
 * instructions could not be walked. */
struct memo_slot {
	uint64_t start, epoch, gen, hash;
	uint32_t ninsn, first, nparts;
	uint8_t isa;
};

/* The time of each source's last record: what the parts before a block's last one carry,
 * unless the block is timed at its start (flow.h). */
struct source_time {
	uint32_t source;
	int has_time;
	uint64_t time;
};

struct jf_jump_split {
	struct jf_codemap *map;
	const uint64_t *map_generation; /* read for every block: a load, not a call */
	struct jf_insn_cache *insns;
	uint64_t epoch;
	struct memo_slot slot[1u << MEMO_BITS];
	struct part *parts;
	uint32_t nparts;
	struct source_time sources[SOURCES_MAX];
	size_t nsources, last_source;
	/* The block last cut: its parts, and its source's time before it. */
	const struct part *cut;
	uint32_t ncut;
	int cut_has_time;
	uint64_t cut_time;
	uint64_t unwalked;
};

struct jf_jump_split *jf_jump_split_new(struct jf_codemap *map)
{
	struct jf_jump_split *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->map = map;
	s->map_generation = jf_codemap_generation_counter(map);
	s->epoch = 1;
	s->insns = jf_insn_cache_new(map);
	s->parts = malloc(PARTS_MAX * sizeof(*s->parts));
	if (!s->insns || !s->parts) {
		jf_jump_split_free(s);
		return NULL;
	}
	return s;
}

void jf_jump_split_free(struct jf_jump_split *s)
{
	if (!s)
		return;
	jf_insn_cache_free(s->insns);
	free(s->parts);
	free(s);
}

uint64_t jf_jump_split_unwalked(const struct jf_jump_split *s)
{
	return s->unwalked;
}

/* FNV-1a over the bytes of parts [first, first + n): 0 when some are not in the map. */
static uint64_t hash_parts(struct jf_jump_split *s, const struct part *p, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	unsigned char buf[256];
	uint32_t i;

	for (i = 0; i < n; i++) {
		uint64_t at = p[i].start, end = p[i].last + p[i].last_size;

		while (at < end) {
			size_t want = end - at < sizeof(buf) ? (size_t)(end - at) : sizeof(buf), j;

			if (jf_codemap_read(s->map, at, buf, want) != want)
				return 0;
			for (j = 0; j < want; j++)
				h = (h ^ buf[j]) * 0x100000001b3ull;
			at += want;
		}
	}
	return h ? h : 1;
}

static int add_part(struct jf_jump_split *s, uint64_t start, uint64_t last, uint32_t ninsn,
		    uint8_t size)
{
	struct part *p;

	if (s->nparts == PARTS_MAX)
		return -1;
	p = &s->parts[s->nparts++];
	p->start = start;
	p->last = last;
	p->ninsn = ninsn;
	p->last_size = size;
	return 0;
}

/* Walk b's instructions and note its parts from s->nparts on. Returns their count, or 0
 * when the walk fails or the pool is full (the parts noted are dropped). */
static uint32_t walk(struct jf_jump_split *s, const struct jf_block *b)
{
	uint32_t first = s->nparts, i, in_part = 0;
	uint64_t ip = b->start, part_start = b->start;
	struct jf_insn_info info;

	for (i = 0; i < b->ninsn; i++) {
		if (jf_insn_at(s->insns, (enum jf_isa)b->isa, ip, &info) < 0)
			break;
		in_part++;
		if (i + 1 == b->ninsn) {
			if (ip != b->last || add_part(s, part_start, ip, in_part, info.size))
				break;
			return s->nparts - first;
		}
		if (info.cls == JF_INSN_JUMP) {
			if (add_part(s, part_start, ip, in_part, info.size))
				break;
			part_start = ip = info.target;
			in_part = 0;
		} else if (info.cls == JF_INSN_CALL) {
			ip = info.target; /* a decode that does not end blocks at calls follows them */
		} else if (info.cls == JF_INSN_OTHER || info.cls == JF_INSN_PTWRITE) {
			ip += info.size;
		} else {
			break; /* a branch inside a block: not a block of this map's code */
		}
	}
	s->nparts = first;
	return 0;
}

/* Fill slot m for block b at map generation gen. */
static __attribute__((noinline)) void fill(struct jf_jump_split *s, struct memo_slot *m,
					   const struct jf_block *b, uint64_t gen)
{
	uint32_t n = walk(s, b);

	if (!n && s->nparts + b->ninsn > PARTS_MAX) {
		/* The pool may have been full: start the memo again and walk once more. */
		s->epoch++;
		s->nparts = 0;
		n = walk(s, b);
	}
	m->start = b->start;
	m->ninsn = b->ninsn;
	m->isa = b->isa;
	m->epoch = s->epoch;
	m->gen = gen;
	m->nparts = n;
	m->first = s->nparts - n;
	m->hash = n ? hash_parts(s, &s->parts[m->first], n) : 0;
}

/* Slot m, remembered from an earlier generation of the map: the same bytes cut the same
 * way; other bytes are walked again. */
static __attribute__((noinline)) void check(struct jf_jump_split *s, struct memo_slot *m,
					    const struct jf_block *b, uint64_t gen)
{
	if (m->nparts && hash_parts(s, &s->parts[m->first], m->nparts) == m->hash)
		m->gen = gen;
	else
		fill(s, m, b, gen);
}

/* The memo slot of block b, filled for the code map as it is. */
static inline const struct memo_slot *slot_of(struct jf_jump_split *s, const struct jf_block *b)
{
	uint64_t gen = *s->map_generation;
	/* The count goes above the address bits: start ^ ninsn made two blocks of one loop
	 * (0x481ce6 with 3 instructions, 0x481ced with 8) share a slot and walked them at
	 * every visit, 6% of report's instructions on rec50k. */
	uint64_t key = b->start ^ ((uint64_t)b->ninsn << 48);
	struct memo_slot *m = &s->slot[(key * 0x9e3779b97f4a7c15ull) >> (64 - MEMO_BITS)];

	if (m->epoch != s->epoch || m->start != b->start || m->ninsn != b->ninsn ||
	    m->isa != b->isa)
		fill(s, m, b, gen);
	else if (m->gen != gen)
		check(s, m, b, gen);
	return m;
}

static __attribute__((noinline)) struct source_time *find_source(struct jf_jump_split *s,
								  uint32_t source)
{
	size_t i;

	for (i = 0; i < s->nsources; i++)
		if (s->sources[i].source == source)
			break;
	if (i == s->nsources) {
		if (s->nsources == SOURCES_MAX)
			i = source % SOURCES_MAX; /* shared: the parts' times can be off */
		else
			s->nsources++;
		s->sources[i].source = source;
		s->sources[i].has_time = 0;
	}
	s->last_source = i;
	return &s->sources[i];
}

static inline struct source_time *source_time(struct jf_jump_split *s, uint32_t source)
{
	struct source_time *t = &s->sources[s->last_source];

	return s->nsources && t->source == source ? t : find_source(s, source);
}

uint32_t jf_jump_split_record(struct jf_jump_split *s, const struct jf_flow *f)
{
	struct source_time *t = source_time(s, f->source);
	uint32_t n = 1;

	if (f->kind == JF_FLOW_BLOCK && f->u.block.ninsn > 1) {
		const struct memo_slot *m = slot_of(s, &f->u.block);

		if (m->nparts > 1) {
			n = m->nparts;
			s->cut = &s->parts[m->first];
			s->ncut = n;
			if (f->flags & JF_FLOW_TIMED_AT_START) {
				s->cut_has_time = (f->flags & JF_FLOW_HAS_TIME) != 0;
				s->cut_time = f->time;
			} else {
				s->cut_has_time = t->has_time;
				s->cut_time = t->time;
			}
		} else if (!m->nparts) {
			s->unwalked++;
		}
	}
	/* A record without a time (after an error, a resynchronisation, lost data) says that
	 * the decoder's time is not known from there on, until a record brings one. */
	t->has_time = (f->flags & JF_FLOW_HAS_TIME) != 0;
	t->time = t->has_time ? f->time : 0;
	return n;
}

void jf_jump_split_part(const struct jf_jump_split *s, const struct jf_flow *block, uint32_t k,
			struct jf_flow *out)
{
	const struct part *p = &s->cut[k];
	struct jf_block *b = &out->u.block;

	out->ip = p->start;
	b->start = p->start;
	b->last = p->last;
	b->ninsn = p->ninsn;
	if (k + 1 == s->ncut) {
		/* the last part: the block's own end, next, flags and time */
		b->end = block->u.block.end;
		b->last_size = block->u.block.last_size;
		b->next = block->u.block.next;
		b->flags = block->u.block.flags;
		out->flags = block->flags & (uint16_t)~JF_FLOW_TIMED_AT_START;
		out->time = block->time;
		return;
	}
	b->end = JF_END_JUMP;
	b->last_size = p->last_size;
	b->next = p->last + p->last_size;
	b->flags = block->u.block.flags & (uint8_t)~(JF_BLOCK_TRUNCATED | JF_BLOCK_LAST_FAILED);
	out->flags = block->flags & (uint16_t)~(JF_FLOW_HAS_TIME | JF_FLOW_TIMED_AT_START);
	out->time = 0;
	if (s->cut_has_time) {
		out->flags |= JF_FLOW_HAS_TIME;
		out->time = s->cut_time;
	}
}
