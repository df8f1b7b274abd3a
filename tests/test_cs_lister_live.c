/* The CoreSight backend against OpenCSD's reference lister run live (trc_pkt_lister from
 * libopencsd-bin): on the synthetic snapshot written by this test, and on the small
 * shared ete_ip capture when ../shared is present. A missing trc_pkt_lister fails
 * (tools/setup.sh installs it). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_synthetic.h"
#include "cs_trace_compare.h"
#include "jitflow/coresight.h"

static int compare_live(const char *dir, const char *what, uint64_t min_ranges)
{
	char cmd[2048];
	struct cs_run lister, ours;
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { { 0 } };
	struct jf_decoder *dec;
	FILE *p;
	int rc;

	/* The lister also writes trc_pkt_lister.ppl into its working folder: keep that in
	 * the temporary folder. */
	snprintf(cmd, sizeof(cmd), "cd '%s' && trc_pkt_lister -ss_dir '%s' -decode -logstdout",
		 jf_test_tmpdir(), dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	cs_run_from_lister(&lister, p);
	assert_int_equal(pclose(p), 0);
	dec = jf_cs_snapshot_decoder_new(dir, map, &err);
	if (!dec)
		fail_msg("%s: %s", what, err.msg);
	cs_run_from_decoder(&ours, dec);
	fprintf(stderr, "%s: %llu ranges, lister %llu\n", what, (unsigned long long)ours.ranges,
		(unsigned long long)lister.ranges);
	rc = cs_run_compare(&lister, &ours, what);
	assert_true(lister.ranges >= min_ranges);
	assert_int_equal(ours.decode_errors, lister.decode_errors);
	cs_run_free(&lister);
	cs_run_free(&ours);
	jf_decoder_free(dec);
	jf_codemap_free(map);
	return rc;
}

static void test_synthetic_snapshot(void **state)
{
	char dir[512], cmd[600];

	snprintf(dir, sizeof(dir), "%s/live", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	cs_syn_write_snapshot(dir);
	assert_int_equal(compare_live(dir, "synthetic", 6), 0);
}

static void test_shared_ete_ip(void **state)
{
	const char *shared = jf_test_shared_traces();
	char dir[1024];

	if (!shared)
		skip();
	snprintf(dir, sizeof(dir), "%s/coresight/ete_ip", shared);
	assert_int_equal(compare_live(dir, "ete_ip", 600), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic_snapshot),
		cmocka_unit_test(test_shared_ete_ip),
	};

	jf_test_require_tools("command -v trc_pkt_lister", "trc_pkt_lister (libopencsd-bin)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
