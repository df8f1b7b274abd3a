/* The compact block stream (block_stream.h): a decoder's records in bulk, blocks turned into
 * ids of a table of distinct blocks. */
#include "jitflow/block_stream.h"

#include "decoder_internal.h"

#include <stdlib.h>
#include <string.h>

enum { FIRST_SLOTS_LOG2 = 12 };

/* A block's id is found by hashing the block into an open-addressed table of ids. (Trying
 * first the id that followed the block before it last time made no difference on
 * pt-latency.sh's buffer: reading the decoder's records costs the time, not the lookup.) */
struct jf_block_stream {
	struct jf_decoder *dec;
	struct jf_block *blocks;   /* by id */
	size_t nblocks, cap_blocks;
	uint32_t *slots;           /* id + 1, 0 = empty */
	unsigned slots_log2;
	uint32_t *ids;             /* the run's entries */
	struct jf_flow *records;   /* the run's records */
	size_t cap_ids, cap_records;
	/* the context of the record given last, which a block given as an id shares */
	uint32_t source;
	uint16_t time_flag;
	uint64_t time;
};

static int no_memory(struct jf_error *err)
{
	return jf_fail(err, "block stream: out of memory");
}

struct jf_block_stream *jf_block_stream_new(struct jf_decoder *dec, struct jf_error *err)
{
	struct jf_block_stream *s = calloc(1, sizeof(*s));

	if (!s || !(s->slots = calloc((size_t)1 << FIRST_SLOTS_LOG2, sizeof(*s->slots)))) {
		free(s);
		no_memory(err);
		return NULL;
	}
	s->dec = dec;
	s->slots_log2 = FIRST_SLOTS_LOG2;
	return s;
}

void jf_block_stream_free(struct jf_block_stream *s)
{
	if (!s)
		return;
	free(s->blocks);
	free(s->slots);
	free(s->ids);
	free(s->records);
	free(s);
}

/* By the start and the instruction count only (one multiply): blocks that share both
 * (the same code in another mode, say) are rare, and probing finds them. */
static size_t slot_of(const struct jf_block_stream *s, const struct jf_block *b)
{
	uint64_t h = (b->start ^ ((uint64_t)b->ninsn << 48)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> (64 - s->slots_log2));
}

/* Every field: the struct has none but its fields' bytes (a compile-time check below),
 * and a compare of its 32 bytes is two vector compares. */
static int same_block(const struct jf_block *a, const struct jf_block *b)
{
	return !memcmp(a, b, sizeof(*a));
}
_Static_assert(sizeof(struct jf_block) == 3 * sizeof(uint64_t) + sizeof(uint32_t) + 4,
	       "struct jf_block has padding: same_block would compare it");

/* The table twice as large, every id hashed again. */
static int grow_slots(struct jf_block_stream *s)
{
	uint32_t *old = s->slots;
	size_t size, i, at;

	if (s->slots_log2 >= 31)
		return -1;
	size = (size_t)1 << (s->slots_log2 + 1);
	if (!(s->slots = calloc(size, sizeof(*s->slots)))) {
		s->slots = old;
		return -1;
	}
	s->slots_log2++;
	for (i = 0; i < s->nblocks; i++) {
		at = slot_of(s, &s->blocks[i]);
		while (s->slots[at])
			at = (at + 1) & (size - 1);
		s->slots[at] = (uint32_t)i + 1;
	}
	free(old);
	return 0;
}

/* A new id for b. Returns the id, or JF_BLOCK_STREAM_RECORD if out of memory (or out of
 * ids): the block is then given as a record. */
static uint32_t new_id(struct jf_block_stream *s, const struct jf_block *b)
{
	size_t cap, mask, at;
	void *p;

	if (s->nblocks >= JF_BLOCK_STREAM_RECORD - 1)
		return JF_BLOCK_STREAM_RECORD;
	/* At most half full, so that probes stay short (and end at an empty slot). */
	if (2 * (s->nblocks + 1) > ((size_t)1 << s->slots_log2) && grow_slots(s) < 0)
		return JF_BLOCK_STREAM_RECORD;
	if (s->nblocks == s->cap_blocks) {
		cap = s->cap_blocks ? 2 * s->cap_blocks : 1024;
		if (!(p = realloc(s->blocks, cap * sizeof(*s->blocks))))
			return JF_BLOCK_STREAM_RECORD;
		s->blocks = p;
		s->cap_blocks = cap;
	}
	mask = ((size_t)1 << s->slots_log2) - 1;
	for (at = slot_of(s, b); s->slots[at]; at = (at + 1) & mask)
		;
	s->blocks[s->nblocks] = *b;
	s->slots[at] = (uint32_t)++s->nblocks;
	return (uint32_t)(s->nblocks - 1);
}

/* b's id (made if new), or JF_BLOCK_STREAM_RECORD if out of memory. */
static uint32_t id_of(struct jf_block_stream *s, const struct jf_block *b)
{
	size_t mask = ((size_t)1 << s->slots_log2) - 1, at;
	uint32_t id;

	for (at = slot_of(s, b); s->slots[at]; at = (at + 1) & mask) {
		id = s->slots[at] - 1;
		if (same_block(&s->blocks[id], b))
			return id;
	}
	return new_id(s, b);
}

static int room(struct jf_block_stream *s, size_t n)
{
	void *p;

	if (n > s->cap_ids) {
		if (!(p = realloc(s->ids, n * sizeof(*s->ids))))
			return -1;
		s->ids = p;
		s->cap_ids = n;
	}
	if (n > s->cap_records) {
		if (!(p = realloc(s->records, n * sizeof(*s->records))))
			return -1;
		s->records = p;
		s->cap_records = n;
	}
	return 0;
}

/* Whether fl, a block, is what jf_block_stream_record makes of its id here. */
static int block_fits_context(const struct jf_block_stream *s, const struct jf_flow *fl)
{
	return fl->source == s->source && fl->flags == s->time_flag && fl->time == s->time &&
	       fl->ip == fl->u.block.start;
}

int jf_block_stream_next(struct jf_block_stream *s, struct jf_block_run *run,
			 struct jf_error *err)
{
	struct jf_decode_stats *stats = jf_decoder_stats_mut(s->dec);
	const struct jf_flow *flows, *fl;
	size_t n, i, nrec = 0;
	uint32_t id;
	int rc;

	memset(run, 0, sizeof(*run));
	/* Counted here, as jf_decoder_next_batch counts, in the one pass over the records. */
	if ((rc = jf_decoder_next_batch_uncounted(s->dec, &flows, &n, err)) <= 0)
		return rc;
	if (room(s, n) < 0) {
		for (i = 0; i < n; i++)
			jf_decode_stats_count(stats, &flows[i]);
		return no_memory(err);
	}
	for (i = 0; i < n; i++) {
		fl = &flows[i];
		id = JF_BLOCK_STREAM_RECORD;
		if (fl->kind == JF_FLOW_BLOCK && block_fits_context(s, fl))
			id = id_of(s, &fl->u.block);
		s->ids[i] = id;
		if (id != JF_BLOCK_STREAM_RECORD) {
			/* jf_decode_stats_count's count of a block, inline */
			stats->blocks++;
			stats->insns += fl->u.block.ninsn;
			if (fl->flags & JF_FLOW_HAS_TIME)
				jf_decode_stats_span(stats, fl->time, fl->time);
			continue;
		}
		jf_decode_stats_count(stats, fl);
		s->records[nrec++] = *fl;
		s->source = fl->source;
		s->time_flag = fl->flags & JF_FLOW_HAS_TIME;
		s->time = fl->time;
	}
	run->ids = s->ids;
	run->n = n;
	run->records = s->records;
	run->nrecords = nrec;
	return 1;
}

const struct jf_block *jf_block_stream_block(const struct jf_block_stream *s, uint32_t id)
{
	return id < s->nblocks ? &s->blocks[id] : NULL;
}

size_t jf_block_stream_blocks(const struct jf_block_stream *s)
{
	return s->nblocks;
}

void jf_block_stream_record(const struct jf_block_stream *s, uint32_t id,
			    const struct jf_flow *prev, struct jf_flow *out)
{
	memset(out, 0, sizeof(*out));
	out->kind = JF_FLOW_BLOCK;
	if (prev) {
		out->source = prev->source;
		out->flags = prev->flags & JF_FLOW_HAS_TIME;
		out->time = prev->time;
	}
	if (id < s->nblocks) {
		out->u.block = s->blocks[id];
		out->ip = out->u.block.start;
	}
}
