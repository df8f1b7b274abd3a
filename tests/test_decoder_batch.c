/* jf_decoder_next_batch (decoder.h): records in bulk give exactly the records, in order,
 * and the statistics that libipt's block decoder gives one by one (pt_decoder.c, itself
 * checked against ptxed's reference output in test_pt_shared). The fast decoder
 * (jf_pt_fast_decoder_new) hands out whole stretches between PSBs; it is read here on the
 * real captures in ../shared/traces/intel-pt: clean (foo, and three copies end to end),
 * with decode errors it resynchronises after itself (Unzip), damaged where it hands over
 * to the block decoder (one record per batch there) and cut short. A backend without
 * bulk records (the block decoder itself) gives one per batch. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/codemap.h"
#include "jitflow/pt.h"
#include "jitflow/pt_fast.h"
#include "flow_check.h"

struct batches {
	uint64_t calls, records, most; /* batches, records in all, the largest batch */
};

/* Every record of bulk, read in batches, against ref's, read one by one; then the
 * statistics of both. */
static struct batches same_in_batches(const char *what, struct jf_decoder *bulk,
				      struct jf_decoder *ref)
{
	struct jf_error err = { "" };
	struct batches b = { 0, 0, 0 };
	const struct jf_flow *flows;
	struct jf_flow r;
	size_t n, i;
	int rc;

	assert_non_null(bulk);
	assert_non_null(ref);
	while ((rc = jf_decoder_next_batch(bulk, &flows, &n, &err)) > 0) {
		assert_true(n >= 1);
		b.calls++;
		if (n > b.most)
			b.most = n;
		for (i = 0; i < n; i++, b.records++) {
			assert_int_equal(jf_decoder_next(ref, &r, &err), 1);
			if (!jf_flow_same(&flows[i], &r))
				fail_msg("%s: record %llu differs: %s at 0x%llx offset 0x%llx, "
					 "libipt's %s at 0x%llx offset 0x%llx", what,
					 (unsigned long long)b.records,
					 jf_flow_kind_name((enum jf_flow_kind)flows[i].kind),
					 (unsigned long long)flows[i].ip,
					 (unsigned long long)flows[i].offset,
					 jf_flow_kind_name((enum jf_flow_kind)r.kind),
					 (unsigned long long)r.ip, (unsigned long long)r.offset);
		}
	}
	assert_int_equal(rc, 0);
	assert_null(flows);
	assert_int_equal(n, 0);
	assert_int_equal(jf_decoder_next(ref, &r, &err), 0);
	jf_check_same_stats(jf_decoder_stats(bulk), jf_decoder_stats(ref));
	assert_int_equal(jf_decoder_stats(bulk)->blocks, jf_decoder_stats(ref)->blocks);
	printf("%s: %llu records in %llu batches (at most %llu)\n", what,
	       (unsigned long long)b.records, (unsigned long long)b.calls,
	       (unsigned long long)b.most);
	return b;
}

/* The fast decoder read in batches against the block decoder, with the options `jitflow
 * report` and `decode` use. */
static struct batches check(const char *what, const uint8_t *trace, size_t size,
			    struct jf_codemap *map, int fast)
{
	struct jf_pt_config cfg;
	struct jf_error err = { "" };
	struct jf_decoder *bulk, *ref;
	struct batches b;

	memset(&cfg, 0, sizeof(cfg));
	cfg.trace = trace;
	cfg.size = size;
	cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	ref = jf_pt_decoder_new(&cfg, map, &err);
	bulk = fast ? jf_pt_fast_decoder_new(&cfg, map, &err) : jf_pt_decoder_new(&cfg, map, &err);
	b = same_in_batches(what, bulk, ref);
	jf_decoder_free(bulk);
	jf_decoder_free(ref);
	return b;
}

/* The real capture NAME (code at base) `times` times end to end, damaged or not. */
static struct batches check_capture(const char *what, const char *name, uint64_t base,
				    int times, int damage, int fast)
{
	struct jf_codemap *map = jf_test_capture_code(name, base);
	struct batches b;
	uint8_t *trace;
	size_t size;

	trace = jf_test_concatenated_capture(name, times, damage, &size);
	b = check(what, trace, size, map, fast);
	if (times == 1 && !damage)
		/* Cut inside a packet: the end is the block decoder's error, in a batch too. */
		check("cut short", trace, size / 3 + 1, map, fast);
	free(trace);
	jf_codemap_free(map);
	return b;
}

static void test_foo(void **state)
{
	struct batches b;

	(void)state;
	b = check_capture("foo", "foo", 0x7ffff7819000, 1, 0, 1);
	/* Whole stretches between PSBs: far fewer batches than records. */
	assert_true(b.most > 100);
	assert_true(b.calls * 10 < b.records);
	check_capture("foo x3", "foo", 0x7ffff7819000, 3, 0, 1);
}

/* Decode errors the fast path reports and resynchronises after itself. */
static void test_unzip(void **state)
{
	(void)state;
	check_capture("Unzip", "Unzip", 0x400000, 1, 0, 1);
}

/* Damaged copies: the fast path hands over to the block decoder (records one per batch
 * there) and takes over again after its resynchronisation. */
static void test_damaged(void **state)
{
	(void)state;
	check_capture("foo x4 damaged", "foo", 0x7ffff7819000, 4, 1, 1);
}

/* A backend without bulk records gives one record per batch. */
static void test_one_per_batch(void **state)
{
	struct batches b;

	(void)state;
	b = check_capture("foo, block decoder", "foo", 0x7ffff7819000, 1, 0, 0);
	assert_int_equal(b.most, 1);
	assert_int_equal(b.calls, b.records);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foo),
		cmocka_unit_test(test_unzip),
		cmocka_unit_test(test_damaged),
		cmocka_unit_test(test_one_per_batch),
	};

	if (!jf_test_shared_traces())
		return jf_test_exit(0);
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
