/* The compact block stream of a trace decoded on several threads (pt_parallel.h:
 * jf_pt_parallel_block_stream_new). Each part, on the worker that decodes its segment,
 * turns records into entries as jf_block_stream_next does, with a block table of its own;
 * the calling thread, taking the parts in trace order, renumbers a part's ids into the
 * stream's table (one lookup per distinct block of the part, then one load per entry) and
 * gives its run on. So the work per block stays on the workers, and the calling thread's
 * is a pass over 4-byte entries. */
#include "jitflow/pt_parallel.h"

#include "block_stream_internal.h"
#include "decoder_internal.h"

#include <stdlib.h>
#include <string.h>

struct part {
	struct jf_block_table table;       /* the part's own ids */
	uint32_t *ids;
	size_t n, cap_ids;
	struct jf_flow *records;
	size_t nrecords, cap_records;
	/* The worker does not know the record before the part (it is the previous part's
	 * last): it takes the part's first record's own context for it. Where that was
	 * wrong and the first record became an id, the stream gives it as a record (first)
	 * instead; every entry after it is then as one decoder's stream has it. */
	int started;
	struct jf_flow first;
	struct jf_block_context first_context, context;
};

static int grow(void **array, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 1024;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (!(p = realloc(*array, n * size)))
		return -1;
	*array = p;
	*cap = n;
	return 0;
}

static void *part_new(void *ctx, struct jf_codemap *map)
{
	struct part *pt = calloc(1, sizeof(*pt));

	(void)ctx;
	(void)map;
	if (pt && jf_block_table_init(&pt->table) < 0) {
		free(pt);
		return NULL;
	}
	return pt;
}

static void part_free(void *part)
{
	struct part *pt = part;

	jf_block_table_fini(&pt->table);
	free(pt->ids);
	free(pt->records);
	free(pt);
}

/* The part's next n records: runs of blocks its table holds in one loop (as the stream
 * over one decoder, jf_block_ids_held), the rest one by one. */
static int part_flows(void *part, const struct jf_flow *f, size_t n)
{
	struct part *pt = part;
	uint64_t insns = 0; /* not needed: pt_parallel.c counts the part's records */
	uint32_t *ids;
	size_t i;

	if (!n)
		return 0;
	if (!pt->started) {
		pt->started = 1;
		pt->first = *f;
		jf_block_context_of(&pt->first_context, f);
		pt->context = pt->first_context;
	}
	if (grow((void **)&pt->ids, &pt->cap_ids, pt->n + n, sizeof(*pt->ids)) < 0)
		return -1;
	ids = pt->ids + pt->n;
	for (i = 0; i < n; i++) {
		if ((i = jf_block_ids_held(&pt->table, &pt->context, f, i, n, ids, &insns)) == n)
			break;
		ids[i] = jf_block_entry(&pt->table, &pt->context, &f[i]);
		if (ids[i] != JF_BLOCK_STREAM_RECORD)
			continue;
		if (grow((void **)&pt->records, &pt->cap_records, pt->nrecords + 1,
			 sizeof(*pt->records)) < 0)
			return -1;
		pt->records[pt->nrecords++] = f[i];
	}
	pt->n += n;
	return 0;
}

static int part_flow(void *part, const struct jf_flow *f)
{
	return part_flows(part, f, 1);
}

/* The part's ids in the stream's table, in place: one lookup per distinct block of the
 * part, then one load per entry. map is s->renumber one slot on: JF_BLOCK_STREAM_RECORD
 * (UINT32_MAX) plus one is 0, whose slot holds JF_BLOCK_STREAM_RECORD, so that the loop
 * over the entries has no compare (at 16 threads it is on the calling thread, the
 * critical path: 9 instructions per entry with one, callgrind). */
static int renumber(struct jf_block_stream *s, struct part *pt)
{
	size_t i, nblocks = pt->table.nblocks;
	uint32_t *map;

	if (grow((void **)&s->renumber, &s->cap_renumber, nblocks + 1,
		 sizeof(*s->renumber)) < 0)
		return -1;
	map = s->renumber;
	map[0] = JF_BLOCK_STREAM_RECORD;
	for (i = 0; i < nblocks; i++) {
		map[i + 1] = jf_block_table_id(&s->table, &pt->table.blocks[i]);
		if (map[i + 1] == JF_BLOCK_STREAM_RECORD)
			return -1;
	}
#pragma GCC unroll 4
	for (i = 0; i < pt->n; i++)
		pt->ids[i] = map[(uint32_t)(pt->ids[i] + 1)];
	return 0;
}

/* The next part in trace order: its run, in the stream's ids, to on_run. */
static int part_take(void *ctx, void *part, uint64_t reached, struct jf_error *err)
{
	struct jf_block_stream *s = ctx;
	struct part *pt = part;
	struct jf_block_run run;
	int first_record = pt->n && pt->ids[0] != JF_BLOCK_STREAM_RECORD &&
			   !jf_block_context_same(&s->context, &pt->first_context);
	size_t nrec = 0;
	int rc = 0;

	(void)reached;
	if (!pt->n)
		goto done;
	if (renumber(s, pt) < 0 ||
	    jf_block_stream_room(s, 0, pt->nrecords + (size_t)first_record) < 0) {
		rc = jf_fail(err, "block stream: out of memory");
		goto done;
	}
	if (first_record) {
		s->records[nrec++] = pt->first;
		pt->ids[0] = JF_BLOCK_STREAM_RECORD;
	}
	/* The context after the run: its last record's. */
	if (pt->nrecords) {
		memcpy(s->records + nrec, pt->records, pt->nrecords * sizeof(*pt->records));
		s->context = pt->context;
	} else if (first_record) {
		s->context = pt->first_context;
	}
	nrec += pt->nrecords;
	run.ids = pt->ids; /* the part is freed after on_run */
	run.n = pt->n;
	run.records = s->records;
	run.nrecords = nrec;
	rc = s->on_run(s->on_run_ctx, s, &run, err) < 0 ? -1 : 0;
done:
	part_free(pt);
	return rc;
}

static const struct jf_pt_part_ops id_parts = { part_new, part_flow, part_take, part_free,
						part_flows };

static int run_parts(struct jf_block_stream *s, struct jf_error *err)
{
	return jf_pt_parallel_run(s->dec, err);
}

struct jf_block_stream *jf_pt_parallel_block_stream_new(const struct jf_pt_config *cfg,
							struct jf_codemap *map,
							const struct jf_pt_parallel_options *opt,
							struct jf_pt_parallel_report *report,
							struct jf_error *err)
{
	struct jf_pt_parallel_options o = *opt;
	struct jf_block_stream *s;

	if (opt->parts) {
		jf_fail(err, "parallel block stream: its parts are its own");
		return NULL;
	}
	/* The stream before its decoder: the parts' context is the stream. */
	if (!(s = jf_block_stream_new(NULL, err)))
		return NULL;
	o.parts = &id_parts;
	o.parts_ctx = s;
	if (!(s->dec = jf_pt_parallel_decoder_new(cfg, map, &o, report, err))) {
		jf_block_stream_free(s);
		return NULL;
	}
	s->owns_dec = 1;
	s->run_parts = run_parts;
	return s;
}
