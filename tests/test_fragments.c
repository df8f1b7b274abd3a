/* The recordings checked into traces/: each decodes on any machine (from its saved code
 * and zone files), its report says exactly what the runtime counted itself, it decodes
 * exactly the instructions the recorder counted, and it still prints the expected report
 * (a regression check of the output format). */
#include "report_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_recording(const char *name)
{
	char dir[1024], path[1200], cmd[4096], *got, *want, *stat, *manifest;
	const char *n;

	snprintf(dir, sizeof(dir), "%s/traces/%s", jf_test_source_dir(), name);

	/* The oracle: the runtime's own counters. */
	snprintf(path, sizeof(path), "%s/counters.json", dir);
	jf_test_report_matches_counters(dir, path, name);

	/* Every instruction the recorder ran, decoded. */
	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s' --json", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &stat), 0);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	manifest = jf_test_read_file(path, NULL);
	n = strstr(manifest, "\"instructions\": ");
	assert_non_null(n);
	n += strlen("\"instructions\": ");
	snprintf(path, sizeof(path), "\"instructions\":%llu,", strtoull(n, NULL, 10));
	if (!strstr(stat, path))
		fail_msg("%s: the recorder ran %s but jitflow stat says %s", name, n, stat);
	assert_non_null(strstr(stat, "\"lost_bytes\":0,"));

	/* The report as it was when the recording was checked in. */
	snprintf(cmd, sizeof(cmd), "'%s' report '%s'", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &got), 0);
	snprintf(path, sizeof(path), "%s/expected-report.txt", dir);
	want = jf_test_read_file(path, NULL);
	/* The report names its source by the path given; compare from the second line. */
	if (strcmp(strchr(got, '\n'), strchr(want, '\n')))
		fail_msg("%s: the report differs from expected-report.txt:\n%s", name, got);
	free(got);
	free(want);
	free(stat);
	free(manifest);
}

static void test_minivm_bridge(void **state) { check_recording("minivm-bridge"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minivm_bridge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
