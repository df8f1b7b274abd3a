/* An AArch64 recording against OpenCSD's trc_pkt_lister (see a64_snapshot_check.h). */
#include "a64_snapshot_check.h"

#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>

#include "jitflow/coresight.h"

uint64_t jf_test_a64_instructions(const struct cs_run *run)
{
	const struct cs_items *items = &run->id[JF_TEST_A64_TRACE_ID];
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < items->n; i++)
		if (items->v[i].kind == 'R')
			n += items->v[i].ninsn;
	return n;
}

void jf_test_a64_decoder_matches(const char *dir, const char *name, const struct cs_run *lister)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { { 0 } };
	struct jf_decoder *dec;
	struct cs_run ours;
	char path[1200], *summary;
	size_t i;

	snprintf(path, sizeof(path), "%s/recording.txt", dir);
	summary = jf_test_read_file(path, NULL);
	/* The snapshot holds one version of the code: where code changed, neither decoder
	 * can be exact without the zone files (which the lister does not read). */
	assert_int_equal(jf_test_number_after(summary, "code_conflicts = "), 0);
	dec = jf_cs_snapshot_decoder_new(dir, map, &err);
	if (!dec)
		fail_msg("%s: %s", dir, err.msg);
	cs_run_from_decoder(&ours, dec);
	assert_int_equal(cs_run_compare(lister, &ours, name), 0);
	assert_int_equal(lister->decode_errors, 0);
	assert_int_equal(ours.decode_errors, 0);
	for (i = 0; i < lister->id[JF_TEST_A64_TRACE_ID].n; i++)
		assert_int_equal(lister->id[JF_TEST_A64_TRACE_ID].v[i].kind, 'R'); /* no missing code */
	fprintf(stderr, "%s: %llu ranges, %llu instructions\n", name,
		(unsigned long long)lister->ranges,
		(unsigned long long)jf_test_a64_instructions(lister));
	/* Every instruction QEMU ran inside the filter (all of them without one), less
	 * those an Overflow hid: the recorder loses instructions only where it writes one
	 * (a signal's handler that never returned, after a conditional branch). */
	if (!jf_test_number_after(summary, "overflows = "))
		assert_int_equal(jf_test_number_after(summary, "lost_instructions = "), 0);
	assert_int_equal(jf_test_a64_instructions(lister),
			 (uint64_t)jf_test_number_after(summary, "instructions = ") -
			 (uint64_t)jf_test_number_after(summary, "filtered_instructions = ") -
			 (uint64_t)jf_test_number_after(summary, "lost_instructions = "));
	assert_int_equal(jf_test_number_after(summary, "discontinuities = "), 0);
	assert_int_equal(jf_test_number_after(summary, "unended_threads = "), 0);
	assert_int_equal(jf_test_number_after(summary, "bad_translations = "), 0);
	assert_int_equal(jf_test_number_after(summary, "unknown_translations = "), 0);
	free(summary);
	cs_run_free(&ours);
	jf_decoder_free(dec);
	jf_codemap_free(map);
}

void jf_test_a64_snapshot_matches_lister(const char *dir, const char *name,
					 struct cs_run *lister)
{
	cs_run_from_lister_snapshot(lister, dir, jf_test_tmpdir());
	jf_test_a64_decoder_matches(dir, name, lister);
}
