/* The compact block stream (block_stream.h): a decoder's records in bulk, blocks turned into
 * ids of a table of distinct blocks. */
#include "jitflow/block_stream.h"

#include "block_stream_internal.h"
#include "decoder_internal.h"

#include <stdlib.h>
#include <string.h>

static int no_memory(struct jf_error *err)
{
	return jf_fail(err, "block stream: out of memory");
}

struct jf_block_stream *jf_block_stream_new(struct jf_decoder *dec, struct jf_error *err)
{
	struct jf_block_stream *s = calloc(1, sizeof(*s));

	if (!s || jf_block_table_init(&s->table) < 0) {
		free(s);
		no_memory(err);
		return NULL;
	}
	/* At the start, a block is an id in the context jf_block_stream_record gives
	 * without a record before it: source 0, no time. */
	jf_block_context_of(&s->context, &(const struct jf_flow){ .kind = JF_FLOW_BLOCK });
	s->dec = dec;
	return s;
}

void jf_block_stream_free(struct jf_block_stream *s)
{
	if (!s)
		return;
	if (s->owns_dec)
		jf_decoder_free(s->dec);
	jf_block_table_fini(&s->table);
	free(s->ids);
	free(s->records);
	free(s->renumber);
	free(s);
}

int jf_block_stream_room(struct jf_block_stream *s, size_t n, size_t nrecords)
{
	void *p;

	if (n > s->cap_ids) {
		if (!(p = realloc(s->ids, n * sizeof(*s->ids))))
			return -1;
		s->ids = p;
		s->cap_ids = n;
	}
	if (nrecords > s->cap_records) {
		if (!(p = realloc(s->records, nrecords * sizeof(*s->records))))
			return -1;
		s->records = p;
		s->cap_records = nrecords;
	}
	return 0;
}

int jf_block_stream_next(struct jf_block_stream *s, struct jf_block_run *run,
			 struct jf_error *err)
{
	struct jf_decode_stats *stats = jf_decoder_stats_mut(s->dec);
	const struct jf_flow *flows, *fl;
	size_t n, i, nrec = 0;
	uint64_t blocks = 0, insns = 0;
	uint32_t id, *ids;
	int rc;

	memset(run, 0, sizeof(*run));
	if (s->run_parts)
		return jf_fail(err, "block stream: decoded on several threads: read it with "
			       "jf_block_stream_run");
	/* Counted here, as jf_decoder_next_batch counts, in the one pass over the records. */
	if ((rc = jf_decoder_next_batch_uncounted(s->dec, &flows, &n, err)) <= 0)
		return rc;
	if (jf_block_stream_room(s, n, n) < 0) {
		for (i = 0; i < n; i++)
			jf_decode_stats_count(stats, &flows[i]);
		return no_memory(err);
	}
	ids = s->ids;
	for (i = 0; i < n; i++) {
		/* jf_decode_stats_count's count of the blocks given as ids, inline: their
		 * number, instructions and time (all the context's, whose span is its
		 * time) */
		size_t held = jf_block_ids_held(&s->table, &s->context, flows, i, n, ids, &insns);

		if (held > i && (s->context.time_flag & JF_FLOW_HAS_TIME))
			jf_decode_stats_span(stats, s->context.time, s->context.time);
		blocks += held - i;
		if ((i = held) == n)
			break;
		/* A record, or a block new to the table. */
		fl = &flows[i];
		id = jf_block_entry(&s->table, &s->context, fl);
		ids[i] = id;
		if (id != JF_BLOCK_STREAM_RECORD) {
			blocks++;
			insns += fl->u.block.ninsn;
			if (fl->flags & JF_FLOW_HAS_TIME)
				jf_decode_stats_span(stats, fl->time, fl->time);
			continue;
		}
		jf_decode_stats_count(stats, fl);
		s->records[nrec++] = *fl;
	}
	stats->blocks += blocks;
	stats->insns += insns;
	run->ids = s->ids;
	run->n = n;
	run->records = s->records;
	run->nrecords = nrec;
	return 1;
}

int jf_block_stream_run(struct jf_block_stream *s, jf_block_run_fn fn, void *ctx,
			struct jf_error *err)
{
	struct jf_block_run run;
	int rc;

	if (s->run_parts) {
		s->on_run = fn;
		s->on_run_ctx = ctx;
		rc = s->run_parts(s, err);
		if (rc <= 0)
			return rc;
		s->run_parts = NULL; /* one thread after all: its records are pulled */
	}
	while ((rc = jf_block_stream_next(s, &run, err)) > 0)
		if (fn(ctx, s, &run, err) < 0)
			return -1;
	return rc;
}

const struct jf_decode_stats *jf_block_stream_stats(const struct jf_block_stream *s)
{
	return jf_decoder_stats(s->dec);
}

const struct jf_block *jf_block_stream_block(const struct jf_block_stream *s, uint32_t id)
{
	return id < s->table.nblocks ? &s->table.blocks[id] : NULL;
}

size_t jf_block_stream_blocks(const struct jf_block_stream *s)
{
	return s->table.nblocks;
}

const struct jf_block *jf_block_stream_table(const struct jf_block_stream *s)
{
	return s->table.blocks;
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
	if (id < s->table.nblocks) {
		out->u.block = s->table.blocks[id];
		out->ip = out->u.block.start;
	}
}
