/* jf_pt_parallel_run (jitflow/pt_parallel.h): a raw Intel PT trace decoded by several
 * threads into parts, each part filled on the thread that decoded it and taken on the
 * calling thread in trace order. The oracle is the single decoder (jf_pt_fast_decoder_new,
 * which test_pt_fast checks against libipt's block decoder): the parts taken one after the
 * other must hold exactly its records, in its order, each once, and the decoder's stats
 * must be its stats. On the real captures in ../shared/traces, concatenated (many
 * segments), with bytes overwritten (errors and resynchronisations inside segments and at
 * seams), at several segment sizes and thread counts, with every seam joined and with none
 * (the calling thread's own parts). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/codemap.h"
#include "jitflow/pt.h"
#include "jitflow/pt_fast.h"
#include "jitflow/pt_parallel.h"

#include "flow_buffer.h"

/* The reference records, and how far the parts taken so far have matched them. */
struct parts {
	const struct jf_flow *want;
	size_t nwant, pos, taken, empty;
	int mismatch;
	char what[200];
};

static int same_flow(const struct jf_flow *a, const struct jf_flow *b)
{
	if (a->kind != b->kind || a->flags != b->flags || a->offset != b->offset ||
	    a->ip != b->ip || a->time != b->time)
		return 0;
	if (a->kind == JF_FLOW_BLOCK)
		return a->u.block.start == b->u.block.start && a->u.block.last == b->u.block.last &&
		       a->u.block.ninsn == b->u.block.ninsn;
	if (a->kind == JF_FLOW_ERROR)
		return a->u.error.code == b->u.error.code &&
		       !strcmp(a->u.error.text, b->u.error.text);
	if (a->kind == JF_FLOW_LOST)
		return a->u.lost.bytes == b->u.lost.bytes && a->u.lost.insns == b->u.lost.insns;
	return 1;
}

static int part_take(void *ctx, void *self, uint64_t reached, struct jf_error *err)
{
	struct parts *c = ctx;
	struct jf_flow_buffer *p = self;
	struct jf_flow f;
	size_t i, pos;

	(void)reached;
	(void)err;
	c->taken++;
	c->empty += p->count == 0;
	for (i = 0, pos = 0; pos < p->len && !c->mismatch; i++, c->pos++) {
		pos = jf_flow_buffer_get(p, pos, &f);
		if (c->pos >= c->nwant || !same_flow(&f, &c->want[c->pos])) {
			fprintf(stderr, "%s: part %zu, its record %zu (offset 0x%llx) is not the "
				"single decoder's record %zu\n", c->what, c->taken, i,
				(unsigned long long)f.offset, c->pos);
			c->mismatch = 1;
		}
	}
	jf_flow_buffer_part_free(p);
	return 0;
}

static const struct jf_pt_part_ops ops = { jf_flow_buffer_part_new, jf_flow_buffer_part_flow,
					    part_take, jf_flow_buffer_part_free, NULL };

/* Records given in runs (part_flows), on any worker. */
static size_t run_records;

static int part_flows(void *part, const struct jf_flow *f, size_t n)
{
	size_t i;

	__atomic_add_fetch(&run_records, n, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++)
		if (jf_flow_buffer_push(part, &f[i]) < 0)
			return -1;
	return 0;
}

/* The same parts, given most records in runs. */
static const struct jf_pt_part_ops run_ops = { jf_flow_buffer_part_new, jf_flow_buffer_part_flow,
						part_take, jf_flow_buffer_part_free, part_flows };

static void config(struct jf_pt_config *cfg, const uint8_t *trace, size_t size)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->trace = trace;
	cfg->size = size;
	/* As `jitflow report` decodes (pt_parallel.h requires the first two). */
	cfg->end_on_call = cfg->end_on_jump = cfg->join_cache_splits = 1;
}

static void same_stats(const char *what, const struct jf_decode_stats *a,
		       const struct jf_decode_stats *b)
{
	if (a->insns != b->insns || a->blocks != b->blocks || a->events != b->events ||
	    a->errors != b->errors || a->overflows != b->overflows ||
	    a->lost_bytes != b->lost_bytes || a->lost_insns != b->lost_insns ||
	    a->has_time != b->has_time || a->first_time != b->first_time ||
	    a->last_time != b->last_time || a->trace_bytes != b->trace_bytes ||
	    memcmp(a->errors_by_code, b->errors_by_code, sizeof(a->errors_by_code)))
		fail_msg("%s: decode statistics differ from one thread's (insns %llu / %llu, "
			 "errors %llu / %llu)", what, (unsigned long long)a->insns,
			 (unsigned long long)b->insns, (unsigned long long)a->errors,
			 (unsigned long long)b->errors);
}

/* trace decoded into parts made by part_ops with opt must give the single decoder's records
 * (want). */
static void check_parts_with(const char *name, const uint8_t *trace, size_t size,
			     struct jf_codemap *map, const struct jf_flow *want, size_t nwant,
			     const struct jf_decode_stats *want_stats,
			     const struct jf_pt_parallel_options *given,
			     const struct jf_pt_part_ops *part_ops)
{
	struct jf_pt_parallel_options opt = *given;
	struct jf_pt_parallel_report rep;
	struct jf_pt_config cfg;
	struct jf_error err = { "" };
	struct parts c;
	struct jf_decoder *dec;

	memset(&c, 0, sizeof(c));
	memset(&rep, 0, sizeof(rep));
	c.want = want;
	c.nwant = nwant;
	snprintf(c.what, sizeof(c.what), "%s -j %d --segment-size %llu%s", name, opt.jobs,
		 (unsigned long long)opt.segment_size, opt.no_joins ? " (no joins)" : "");
	opt.fast = 1;
	opt.parts = part_ops;
	opt.parts_ctx = &c;
	config(&cfg, trace, size);
	dec = jf_pt_parallel_decoder_new(&cfg, map, &opt, &rep, &err);
	assert_non_null(dec);
	if (jf_pt_parallel_run(dec, &err) != 0)
		fail_msg("%s: %s", c.what, err.msg[0] ? err.msg : "decoded on one thread");
	if (c.mismatch || c.pos != nwant)
		fail_msg("%s: the parts hold %zu records where one thread gives %zu%s", c.what,
			 c.pos, nwant, c.mismatch ? " (a record differs)" : "");
	same_stats(c.what, jf_decoder_stats(dec), want_stats);
	/* The threads did split the trace: parts from workers (where seams joined) and
	 * from the calling thread (where not). */
	if (rep.segments < 3 || c.taken < 2 || (!opt.no_joins && rep.joins == 0) ||
	    (opt.no_joins && rep.joins != 0))
		fail_msg("%s: %llu segments, %llu joins, %zu parts taken: not split as expected",
			 c.what, (unsigned long long)rep.segments, (unsigned long long)rep.joins,
			 c.taken);
	printf("%s: %zu records in %zu parts (%zu empty), %llu segments, %llu seams joined, "
	       "%llu decoded on serially\n", c.what, nwant, c.taken, c.empty,
	       (unsigned long long)rep.segments, (unsigned long long)rep.joins,
	       (unsigned long long)rep.serial);
	jf_decoder_free(dec);
}

/* trace decoded into parts with opt must give the single decoder's records (want), also
 * where the parts take runs of records (those inside a segment, away from its seams). */
static void check_parts(const char *name, const uint8_t *trace, size_t size,
			struct jf_codemap *map, const struct jf_flow *want, size_t nwant,
			const struct jf_decode_stats *want_stats,
			const struct jf_pt_parallel_options *given)
{
	check_parts_with(name, trace, size, map, want, nwant, want_stats, given, &ops);
	run_records = 0;
	check_parts_with(name, trace, size, map, want, nwant, want_stats, given, &run_ops);
	if (!run_records)
		fail_msg("%s: none of %zu records given in runs", name, nwant);
}

/* name's trace concatenated `times` times (with bytes overwritten when damage is set). */
static void check_capture(const char *name, uint64_t base, int times, int damage)
{
	static const struct jf_pt_parallel_options opts[] = {
		{ .jobs = 2, .segment_size = 4096 }, { .jobs = 3, .segment_size = 5600 },
		{ .jobs = 2, .segment_size = 16384 }, { .jobs = 2, .segment_size = 4096, .no_joins = 1 },
		{ .jobs = 3, .segment_size = 16384, .no_joins = 1 },
	};
	const char *dir = jf_test_shared_traces();
	char path[4096], what[64];
	struct jf_error err = { "" };
	struct jf_pt_config cfg;
	struct jf_codemap *map;
	struct jf_decoder *one;
	struct jf_flow f, *want = NULL;
	size_t n, i, total, nwant = 0, cap = 0;
	unsigned char *all;
	int rc;

	all = jf_test_concatenated_capture(name, times, damage, &total);
	snprintf(path, sizeof(path), "%s/intel-pt/%s/data", dir, name);
	map = jf_codemap_new();
	assert_non_null(map);
	free(jf_test_read_file(path, &n));
	assert_int_equal(jf_codemap_add_file(map, path, 0, n, base, NULL, &err), 0);
	config(&cfg, all, total);
	one = jf_pt_fast_decoder_new(&cfg, map, &err);
	assert_non_null(one);
	while ((rc = jf_decoder_next(one, &f, &err)) > 0) {
		if (nwant == cap) {
			cap = cap ? 2 * cap : 4096;
			want = realloc(want, cap * sizeof(*want));
			assert_non_null(want);
		}
		want[nwant++] = f;
	}
	assert_int_equal(rc, 0);
	snprintf(what, sizeof(what), "%s x%d%s", name, times, damage ? " damaged" : "");
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		check_parts(what, all, total, map, want, nwant, jf_decoder_stats(one), &opts[i]);
	jf_decoder_free(one);
	jf_codemap_free(map);
	free(want);
	free(all);
}

static void test_foo(void **state)
{
	(void)state;
	if (!jf_test_shared_traces())
		skip();
	check_capture("foo", 0x7ffff7819000ull, 4, 0);
}

static void test_foo_damaged(void **state)
{
	(void)state;
	if (!jf_test_shared_traces())
		skip();
	check_capture("foo", 0x7ffff7819000ull, 4, 1);
}

static void test_unzip(void **state)
{
	(void)state;
	if (!jf_test_shared_traces())
		skip();
	check_capture("Unzip", 0x400000, 6, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foo),
		cmocka_unit_test(test_foo_damaged),
		cmocka_unit_test(test_unzip),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
