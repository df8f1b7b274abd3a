/* PyPy (Debian's pypy3) recorded with `jitflow record`: every loop entry, label pass and
 * bridge entry that jitflow counts from the trace equals PyPy's own counter
 * (jit-backend-counts, written by PyPy at exit into the recording's pypylog.log, and read
 * here with sscanf, not with jitflow's reader), with no decode error and nothing lost, and
 * every instruction QEMU ran decoded (the recorder's count).
 *
 * The program (tests/data/pypy/phases.py) has a phase change, a polymorphic call site
 * (guard_class failing into bridges), nested loops and bridges of bridges; PyPy runs it
 * with a low JIT threshold so it compiles early. Skipped where pypy3 is not installed.
 * Takes a minute or a few: PyPy starts up with about 70 million instructions. Recorded
 * twice: whole, and with --filter=jit (only the JIT's code traced). */
#include "json_check.h"
#include "pypy_counts.h"
#include "test_support.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Record phases.py into TMP/rec with the recorder options given and compare. */
static void check_phases(const char *options, const char *rec)
{
	const char *tmp = jf_test_tmpdir();
	char cmd[8192], path[4096];
	cJSON *manifest, *stat, *report;
	const cJSON *pypy, *b, *filter;
	int bridges_of_bridges = 0;

	if (jf_test_run("command -v pypy3 >/dev/null", NULL) != 0) {
		printf("pypy3 is not installed: skipped\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd), "cp '%s/tests/data/pypy/phases.py' '%s/' && cd '%s' && "
		 "'%s' record %s -o %s -- pypy3 --jit threshold=200,trace_eagerness=20 phases.py "
		 "> %s.out", jf_test_source_dir(), tmp, tmp, jf_test_cli(), options, rec, rec);
	assert_int_equal(jf_test_run(cmd, NULL), 0);

	snprintf(path, sizeof(path), "%s/%s/manifest.json", tmp, rec);
	manifest = jf_test_json_file(path);
	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s/%s' --json", jf_test_cli(), tmp, rec);
	stat = jf_test_run_json(cmd);
	/* Every instruction traced is decoded: all QEMU ran, or those inside the filter. */
	filter = cJSON_GetObjectItemCaseSensitive(manifest, "filter");
	assert_int_equal(jf_test_num(stat, "instructions"),
			 filter ? jf_test_num(filter, "traced_instructions") :
			 jf_test_num(manifest, "instructions"));
	assert_int_equal(jf_test_num(stat, "errors"), 0);
	assert_int_equal(jf_test_num(stat, "lost_bytes"), 0);

	snprintf(cmd, sizeof(cmd), "'%s' report '%s/%s' --json", jf_test_cli(), tmp, rec);
	report = jf_test_run_json(cmd);
	pypy = cJSON_GetObjectItemCaseSensitive(report, "pypy");
	assert_non_null(pypy);

	snprintf(path, sizeof(path), "%s/%s/pypylog.log", tmp, rec);
	assert_true(jf_test_pypy_counts_match(pypy, path) >= 20);
	jf_test_pypy_bridges_match_guards(pypy);
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(pypy, "bridges"))
		bridges_of_bridges += jf_test_num(b, "parent") > 1000000; /* parent is a bridge (a descr) */
	assert_true(bridges_of_bridges > 0);
	cJSON_Delete(manifest);
	cJSON_Delete(stat);
	cJSON_Delete(report);
}

static void test_counts_equal_pypys_own(void **state)
{
	(void)state;
	check_phases("", "rec");
}

/* The same with only PyPy's JIT code traced (--filter=jit): each entry from the
 * interpreter is a TIP.PGE at the loop's entry, every other count is unchanged. */
static void test_counts_through_filter(void **state)
{
	(void)state;
	check_phases("--filter=jit", "filtered");
}

/* PYPYLOG is set for programs named pypy*, into the recording folder; a user's own is
 * kept and its file copied there. Checked with a stand-in named pypy-env (env, which
 * prints the environment), which runs in a moment under QEMU. */
static void test_pypylog_is_set_or_kept(void **state)
{
	const char *tmp = jf_test_tmpdir();
	char cmd[8192], path[4096], *out, *copied;

	(void)state;
	snprintf(cmd, sizeof(cmd), "cd '%s' && ln -sf \"$(command -v env)\" pypy-env && "
		 "'%s' record -o set -- ./pypy-env 2>/dev/null | grep '^PYPYLOG='", tmp,
		 jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	snprintf(path, sizeof(path), "/set/pypylog.log\n");
	assert_non_null(strstr(out, "PYPYLOG=jit-backend-dump,jit-backend-addr,jit-log-opt,"
				    "jit-backend-counts:"));
	assert_non_null(strstr(out, path));
	free(out);

	snprintf(cmd, sizeof(cmd), "cd '%s' && echo 'a log of my own' > mine.log && "
		 "PYPYLOG=jit-log-opt:mine.log '%s' record -o kept -- ./pypy-env 2>&1 >/dev/null "
		 "| grep PYPYLOG", tmp, jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "PYPYLOG does not enable jit-backend-dump"));
	assert_non_null(strstr(out, "PYPYLOG does not enable jit-backend-counts"));
	assert_null(strstr(out, "does not enable jit-log-opt"));
	free(out);
	snprintf(path, sizeof(path), "%s/kept/pypylog.log", tmp);
	copied = jf_test_read_file(path, NULL);
	assert_string_equal(copied, "a log of my own\n");
	free(copied);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pypylog_is_set_or_kept),
		cmocka_unit_test(test_counts_equal_pypys_own),
		cmocka_unit_test(test_counts_through_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
