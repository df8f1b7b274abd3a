/* Golden test on a recording checked into traces/recorded-fib (made by jitflow record):
 * jitflow's decoder must produce exactly the instruction sequence that Linux perf's own
 * Intel PT decoder produced from the same perf.data (stored beside it), and jitflow stat
 * its expected table. See traces/recorded-fib/README.md. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_decode_equals_perf(void **state)
{
	char cmd[2048], *out = NULL;
	const char *src = jf_test_source_dir();

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/traces/recorded-fib' && '%s' decode --perf perf.data --image-dir . | "
		 "awk '/^[0-9a-f]+$/ { sub(/^0+/, \"\"); print }' | "
		 "cmp - expected-perf-instructions.txt && echo same", src, jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_string_equal(out, "same\n");
	free(out);
}

/* stat's table on the recording with DECODER (--decoder=...), its lines on how it decoded
 * left out, and without the lines that match EXCLUDE (grep -E; "" none). */
static char *stat_table(const char *decoder, const char *exclude)
{
	char cmd[2048], *out = NULL;

	snprintf(cmd, sizeof(cmd), "cd '%s/traces/recorded-fib' && '%s' stat --perf perf.data "
		 "--image-dir . --decoder=%s | grep -v '^decode' | grep -vE '%s'",
		 jf_test_source_dir(), jf_test_cli(), decoder, exclude[0] ? exclude : "^$");
	assert_int_equal(jf_test_run(cmd, &out), 0);
	return out;
}

/* libipt's block decoder gives the expected table; the fast path (whose blocks end at
 * every branch, so that only their number differs) the same but for the block count. */
static void test_stat(void **state)
{
	char cmd[2048], *out, *fast, *expected = NULL, *expected_but_blocks;
	const char *src = jf_test_source_dir();

	(void)state;
	out = stat_table("libipt-block", "");
	snprintf(cmd, sizeof(cmd), "%s/traces/recorded-fib/expected-stat.txt", src);
	expected = jf_test_read_file(cmd, NULL);
	assert_string_equal(out, expected);
	fast = stat_table("fast", "^blocks ");
	snprintf(cmd, sizeof(cmd), "grep -v '^blocks ' '%s/traces/recorded-fib/expected-stat.txt'",
		 src);
	assert_int_equal(jf_test_run(cmd, &expected_but_blocks), 0);
	assert_string_equal(fast, expected_but_blocks);
	/* ... and its instruction count is perf's. */
	assert_non_null(strstr(out, "instructions    34365\n"));
	snprintf(cmd, sizeof(cmd), "wc -l < '%s/traces/recorded-fib/expected-perf-instructions.txt'",
		 src);
	free(expected);
	assert_int_equal(jf_test_run(cmd, &expected), 0);
	assert_int_equal(strtol(expected, NULL, 10), 34365);
	free(out);
	free(fast);
	free(expected);
	free(expected_but_blocks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_equals_perf),
		cmocka_unit_test(test_stat),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
