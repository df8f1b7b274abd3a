/* Exactness of the CoreSight backend on real captures: for every snapshot in
 * ../shared/traces/coresight, the executed ranges (start, end, instruction count, trace
 * index) and missing-code gaps per trace ID equal those in the stored output of OpenCSD's
 * reference lister (expected-lister-1.3.3.txt.gz: `trc_pkt_lister -ss_dir DIR -decode
 * -logstdout`), and errors the lister reports are reported too. */
#include "test_support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_trace_compare.h"
#include "jitflow/coresight.h"

static const char *shared;

/* The STM sources a snapshot's trace.ini routes to a buffer, from its device files. */
static unsigned long long stm_sources(const char *dir)
{
	char cmd[4608 + 256], *out = NULL;
	unsigned long long n;

	snprintf(cmd, sizeof(cmd), "cd '%s' && for f in device_*.ini; do grep -q '^type=STM' "
		 "\"$f\" && grep -q \"^$(sed -n 's/^name=//p' \"$f\" | tr -d '\\r')=\" trace.ini "
		 "&& echo \"$f\"; done | wc -l", dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	n = strtoull(out, NULL, 10);
	free(out);
	return n;
}

static int check_snapshot(const char *dir, const char *name, unsigned lookahead)
{
	char path[4608], cmd[4608 + 64];
	struct cs_run expected, got;
	struct jf_error err = { { 0 } };
	struct jf_codemap *map = jf_codemap_new();
	struct jf_decoder *dec;
	FILE *in;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/expected-lister-1.3.3.txt.gz", dir);
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s'", path);
	in = popen(cmd, "r");
	assert_non_null(in);
	cs_run_from_lister(&expected, in);
	assert_int_equal(pclose(in), 0);

	dec = jf_cs_snapshot_decoder_open(dir, map, lookahead, &err);
	if (!dec)
		fail_msg("%s: %s", name, err.msg);
	cs_run_from_decoder(&got, dec);

	fprintf(stderr, "%s (lookahead %u): %llu ranges (lister %llu); errors: %llu decode, "
		"%llu setup (lister %llu, %llu)\n", name, lookahead, (unsigned long long)got.ranges,
		(unsigned long long)expected.ranges, (unsigned long long)got.decode_errors,
		(unsigned long long)got.setup_errors, (unsigned long long)expected.decode_errors,
		(unsigned long long)expected.setup_errors);
	if (cs_run_compare(&expected, &got, name) < 0)
		rc = -1;
	/* Where the lister reports an error we do; where it reports none, neither do we.
	 * Sources we cannot decode are setup errors, reported like the lister's: the lister's
	 * own (ITM), and the STM sources, which the lister decodes and jitflow does not. */
	if (got.decode_errors != expected.decode_errors ||
	    got.setup_errors != expected.setup_errors + stm_sources(dir)) {
		fprintf(stderr, "%s: error counts differ from the lister's\n", name);
		rc = -1;
	}
	if (expected.ranges == 0)
		rc = -1; /* a test that compares nothing proves nothing */
	cs_run_free(&expected);
	cs_run_free(&got);
	jf_decoder_free(dec);
	jf_codemap_free(map);
	return rc;
}

static void test_every_snapshot_matches_the_lister(void **state)
{
	char dir[4096];
	struct dirent *de;
	DIR *d;
	int checked = 0, failed = 0;

	snprintf(dir, sizeof(dir), "%s/coresight", shared);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		char snap[4096 + 256], expected[4096 + 300];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(snap, sizeof(snap), "%s/%s", dir, de->d_name);
		snprintf(expected, sizeof(expected), "%s/expected-lister-1.3.3.txt.gz", snap);
		f = fopen(expected, "r");
		if (!f)
			continue;
		fclose(f);
		checked++;
		/* Decoding lazily (one record ahead, as for code that changes while decoding)
		 * and ahead (the snapshot default) must give the same, exact result. */
		if (check_snapshot(snap, de->d_name, 1) < 0)
			failed++;
		if (check_snapshot(snap, de->d_name, JF_CS_SNAPSHOT_LOOKAHEAD) < 0)
			failed++;
	}
	closedir(d);
	assert_int_equal(failed, 0);
	assert_true(checked >= 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_snapshot_matches_the_lister),
	};

	shared = jf_test_shared_traces();
	if (!shared)
		return JF_TEST_SKIP;
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
