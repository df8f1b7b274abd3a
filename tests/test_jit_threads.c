/* A zone record that one thread writes, applied exactly in the merged decode of all
 * threads: tests/programs/jit_threads.c writes 8 versions of a function at
 * one address on its main thread and runs each, right after writing it, 20 times on a
 * second thread. Version v is v + 2 instructions, so the report's region "version v"
 * must hold exactly 20 * (v + 2) instructions (the program's semantics are the oracle),
 * with no decode error and nothing lost. Recorded a few times with each recorder backend:
 * how the threads interleave differs from run to run. */
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { VERSIONS = 8, RUNS = 20, RECORDINGS = 3 };

static double summary_num(const cJSON *report, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(report, "summary"), key);

	assert_true(cJSON_IsNumber(v));
	return v->valuedouble;
}

static void record_and_check(const char *backend, int run)
{
	const char *tmp = jf_test_tmpdir(), *prog = getenv("JITFLOW_JIT_THREADS_PROGRAM");
	char dir[512], cmd[4096], *out;
	uint64_t insns[VERSIONS + 1] = { 0 };
	const cJSON *r;
	cJSON *report;
	int v;

	assert_non_null(prog);
	snprintf(dir, sizeof(dir), "%s/%s-%d", tmp, backend, run);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/zones' && JITFLOW_ZONE_DIR='%s/zones' '%s' record "
		 "--backend=%s -o '%s/rec' -- '%s' > /dev/null", dir, dir, jf_test_cli(), backend,
		 dir, prog);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s/rec' --json", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	report = cJSON_Parse(out);
	free(out);
	assert_non_null(report);
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(report, "regions")) {
		const char *name = cJSON_GetObjectItemCaseSensitive(r, "name")->valuestring;

		if (sscanf(name, "version %d", &v) == 1 && v >= 1 && v <= VERSIONS)
			insns[v] += (uint64_t)cJSON_GetObjectItemCaseSensitive(r, "instructions")
					    ->valuedouble;
	}
	for (v = 1; v <= VERSIONS; v++) {
		if (insns[v] != (uint64_t)RUNS * (uint64_t)(v + 2))
			fail_msg("%s recording %d: version %d: %llu instructions, the program ran "
				 "%d", backend, run, v, (unsigned long long)insns[v], RUNS * (v + 2));
	}
	assert_int_equal(summary_num(report, "decode_errors"), 0);
	assert_int_equal(summary_num(report, "lost_bytes"), 0);
	cJSON_Delete(report);
}

static void test_plugin_backend(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < RECORDINGS; i++)
		record_and_check("plugin", i);
}

static void test_log_backend(void **state)
{
	(void)state;
	record_and_check("log", 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plugin_backend),
		cmocka_unit_test(test_log_backend),
	};

	jf_test_require_tools("qemu-x86_64 --version", "qemu-x86_64 (qemu-user)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
