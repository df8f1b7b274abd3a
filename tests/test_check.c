/* jitflow check on the checked-in recording: its report against itself passes; a copy
 * where a guard fails more often, or a trace lost its share, or a trace is gone, fails
 * with exit status 1 and names what regressed; bad input is a usage error. */
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char base_path[512];
static cJSON *base;

static int setup(void **state)
{
	char cmd[2048], *out;

	snprintf(base_path, sizeof(base_path), "%s/base.json", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "'%s' report '%s/traces/minivm-bridge' --json > '%s' && cat '%s'",
		 jf_test_cli(), jf_test_source_dir(), base_path, base_path);
	if (jf_test_run(cmd, &out) != 0)
		return -1;
	base = cJSON_Parse(out);
	free(out);
	return base ? 0 : -1;
}

static int teardown(void **state)
{
	cJSON_Delete(base);
	return 0;
}

/* Write a changed copy of the baseline and run check on it; return the exit status. */
static int check_changed(void (*change)(cJSON *doc), const char *expect_in_output)
{
	char path[512], cmd[2048], *text, *out;
	cJSON *doc = cJSON_Duplicate(base, 1);
	int rc;

	if (change)
		change(doc);
	text = cJSON_PrintUnformatted(doc);
	snprintf(path, sizeof(path), "%s/now.json", jf_test_tmpdir());
	jf_test_write_file(path, text, strlen(text));
	snprintf(cmd, sizeof(cmd), "'%s' check '%s' --baseline '%s'", jf_test_cli(), path, base_path);
	rc = jf_test_run(cmd, &out);
	if (expect_in_output && !strstr(out, expect_in_output))
		fail_msg("check printed '%s', expected it to mention '%s'", out, expect_in_output);
	free(out);
	free(text);
	cJSON_Delete(doc);
	return rc;
}

static cJSON *trace(cJSON *doc, int i)
{
	return cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "traces"), i);
}

static void guard_fails_more(cJSON *doc)
{
	cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(trace(doc, 0), "guards"), 0);
	double rate = cJSON_GetObjectItemCaseSensitive(g, "failure_rate")->valuedouble;

	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(g, "failure_rate"), rate + 0.1);
}

static void guard_fails_a_little_more(cJSON *doc)
{
	cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(trace(doc, 0), "guards"), 0);
	double rate = cJSON_GetObjectItemCaseSensitive(g, "failure_rate")->valuedouble;

	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(g, "failure_rate"), rate + 0.01);
}

static void trace_share_drops(cJSON *doc)
{
	cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(trace(doc, 0), "share"), 0.0);
}

static void trace_gone(cJSON *doc)
{
	cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(doc, "traces"), 0);
}

static void test_same_report_passes(void **state)
{
	assert_int_equal(check_changed(NULL, "no regressions"), 0);
}

static void test_regressions_fail(void **state)
{
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(base, "traces")) > 0);
	assert_int_equal(check_changed(guard_fails_more, "failure rate"), 1);
	assert_int_equal(check_changed(trace_share_drops, "share"), 1);
	assert_int_equal(check_changed(trace_gone, "gone"), 1);
	/* Within the default tolerance (0.02): not a regression. */
	assert_int_equal(check_changed(guard_fails_a_little_more, "no regressions"), 0);
}

static void test_bad_input_is_usage_error(void **state)
{
	char cmd[2048], path[512];

	snprintf(path, sizeof(path), "%s/not.json", jf_test_tmpdir());
	jf_test_write_file(path, "{\"traces\": [", 12);
	snprintf(cmd, sizeof(cmd), "'%s' check '%s' --baseline '%s' 2>&1", jf_test_cli(), path, base_path);
	assert_int_equal(jf_test_run(cmd, NULL), 2);
	snprintf(cmd, sizeof(cmd), "'%s' check '%s' 2>&1", jf_test_cli(), base_path);
	assert_int_equal(jf_test_run(cmd, NULL), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_report_passes),
		cmocka_unit_test(test_regressions_fail),
		cmocka_unit_test(test_bad_input_is_usage_error),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
