/* The recordings checked into traces/: each decodes on any machine (from its saved code
 * and zone files), its report says exactly what the runtime counted itself (minivm's
 * counters, LuaJIT's texit and trace events, PyPy's jit-backend-counts, CPython's
 * pystats), it decodes
 * exactly the instructions the recorder counted, and it still prints the expected report
 * (a regression check of the output format). */
#include "cpython_check.h"
#include "json_check.h"
#include "luajit_check.h"
#include "pypy_counts.h"
#include "report_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every instruction the recorder ran (manifest.json in dir), decoded, nothing lost. */
static void check_decodes_all(const char *dir, const char *name)
{
	char path[1200], cmd[4096], *stat, *manifest;
	const char *n;

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
	free(stat);
	free(manifest);
}

/* An AArch64 recording (a snapshot folder): every instruction QEMU ran (recording.txt's
 * instructions) decoded, nothing lost. */
static void check_decodes_qemu_count(const char *dir, const char *name)
{
	char path[1200], cmd[4096], *summary;
	cJSON *stat;
	long ran;

	snprintf(path, sizeof(path), "%s/recording.txt", dir);
	summary = jf_test_read_file(path, NULL);
	ran = jf_test_number_after(summary, "instructions = ");
	free(summary);
	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s' --json", jf_test_cli(), dir);
	stat = jf_test_run_json(cmd);
	if (jf_test_num(stat, "instructions") != (double)ran || jf_test_num(stat, "lost_bytes"))
		fail_msg("%s: QEMU ran %ld instructions, jitflow stat decodes %.0f (%.0f bytes lost)",
			 name, ran, jf_test_num(stat, "instructions"), jf_test_num(stat, "lost_bytes"));
	cJSON_Delete(stat);
}

/* A recording made with --filter: every instruction the recorder traced (the manifest's
 * filter.traced_instructions), decoded with no error, nothing lost. */
static void check_decodes_traced(const char *dir, const char *name)
{
	char path[1200], cmd[4096];
	cJSON *manifest, *stat;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	manifest = jf_test_json_file(path);
	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s' --json", jf_test_cli(), dir);
	stat = jf_test_run_json(cmd);
	if (jf_test_num(stat, "instructions") !=
	    jf_test_num(cJSON_GetObjectItemCaseSensitive(manifest, "filter"), "traced_instructions"))
		fail_msg("%s: jitflow stat decoded %.0f instructions, the recorder traced %.0f", name,
			 jf_test_num(stat, "instructions"),
			 jf_test_num(cJSON_GetObjectItemCaseSensitive(manifest, "filter"),
				     "traced_instructions"));
	assert_int_equal(jf_test_num(stat, "errors"), 0);
	assert_int_equal(jf_test_num(stat, "lost_bytes"), 0);
	cJSON_Delete(manifest);
	cJSON_Delete(stat);
}

/* The report of dir as it was when the recording was checked in (expected). */
static void check_expected_report(const char *dir, const char *expected, const char *name)
{
	char cmd[4096], *got, *want;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s'", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &got), 0);
	want = jf_test_read_file(expected, NULL);
	/* The report names its source by the path given; compare from the second line. */
	if (strcmp(strchr(got, '\n'), strchr(want, '\n')))
		fail_msg("%s: the report differs from %s:\n%s", name, expected, got);
	free(got);
	free(want);
}

/* program.lua's first loop is `for i = 1, 2000` (its semantics fix the 2000). LuaJIT ran it
 * in its interpreter up to the iteration it recorded (the loop variable its own trace
 * event left on the program's stack, in texit.txt); every later iteration begins in root
 * trace 1: JFORL enters the trace, an exit finishes its iteration in the interpreter or in
 * side trace 2 and both go on into trace 1 again. So trace 1 begins 2000 - that index. */
static void check_luajit_iterations(const char *dir, const char *texit)
{
	char cmd[4096];
	cJSON *report;
	const cJSON *t;
	double recorded = jf_test_luajit_recorded_index(texit, 1), iterations = -1;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(report, "luajit"), "traces")) {
		if (jf_test_num(t, "id") == 1)
			iterations = jf_test_num(t, "iterations");
	}
	if (iterations != 2000 - recorded)
		fail_msg("luajit: trace 1 began %.0f iterations; the loop runs 2000 and LuaJIT "
			 "ran %.0f of them before its trace", iterations, recorded);
	cJSON_Delete(report);
}

/* minivm-bridge's program.mvm loops `while (i < 3000)`, and minivm reports each iteration
 * of it where it begins (interpreter or trace): the report's iterations are 0 to 2999, in
 * order, none lost or doubled. */
static void check_minivm_iterations(const char *dir)
{
	char cmd[4096];
	cJSON *report;
	const cJSON *it;
	double index = 0;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(report, "iterations")) {
		if (jf_test_num(it, "index") != index)
			fail_msg("minivm-bridge: iteration %.0f where %.0f was due", jf_test_num(it, "index"),
				 index);
		index++;
	}
	if (index != 3000)
		fail_msg("minivm-bridge: %.0f iterations; the program runs 3000", index);
	cJSON_Delete(report);
}

static void check_recording(const char *name)
{
	char dir[1024], path[1200];

	snprintf(dir, sizeof(dir), "%s/traces/%s", jf_test_source_dir(), name);

	/* The oracle: the runtime's own counters. */
	snprintf(path, sizeof(path), "%s/counters.json", dir);
	jf_test_report_matches_counters(dir, path, name);
	check_minivm_iterations(dir);
	check_decodes_all(dir, name);
	snprintf(path, sizeof(path), "%s/expected-report.txt", dir);
	check_expected_report(dir, path, name);
}

/* traces/NAME/recording.tar.xz unpacked into the temporary folder: src gets traces/NAME,
 * dir the unpacked recording. */
static void unpack_recording(const char *name, char src[1024], char dir[1024])
{
	char cmd[4096];

	snprintf(src, 1024, "%s/traces/%s", jf_test_source_dir(), name);
	snprintf(dir, 1024, "%s/%s", jf_test_tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && tar -xJf '%s/recording.tar.xz' -C '%s'", dir,
		 src, dir);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
}

/* A LuaJIT recording is kept as recording.tar.xz (its perf.data and saved code are
 * several times smaller so): unpacked into the temporary folder, then checked against
 * LuaJIT's own events recorded at the same time (texit.txt), decoded whole, and
 * compared with the expected report. Needs no luajit. */
static void check_luajit_recording(const char *name)
{
	char src[1024], dir[1024], path[1200];

	unpack_recording(name, src, dir);

	snprintf(path, sizeof(path), "%s/texit.txt", src);
	assert_true(jf_test_luajit_report_matches(dir, path, name) > 0);
	check_luajit_iterations(dir, path);
	check_decodes_all(dir, name);
	snprintf(path, sizeof(path), "%s/expected-report.txt", src);
	check_expected_report(dir, path, name);
}

static void test_minivm_bridge(void **state) { check_recording("minivm-bridge"); }
static void test_luajit_side_trace(void **state) { check_luajit_recording("luajit-side-trace"); }

/* The same program under LuaJIT's arm64 JIT, an ETMv4 recording (a CoreSight snapshot
 * folder with the module's zone file; traces/luajit-arm64-side-trace/README.md): the same
 * checks against LuaJIT's own events, and every instruction QEMU ran decoded (the
 * snapshot's recording.txt says how many; there is no manifest). */
static void test_luajit_arm64_side_trace(void **state)
{
	char src[1024], dir[1024], path[1200];

	(void)state;
	/* Decoded in this process: the child that guards against OpenCSD's crashes answers a
	 * snapshot with zone files one record at a time (lockstep), about 30x slower;
	 * test_cs_isolation covers that path. */
	setenv("JITFLOW_ISOLATE", "0", 1);
	unpack_recording("luajit-arm64-side-trace", src, dir);
	snprintf(path, sizeof(path), "%s/texit.txt", src);
	assert_true(jf_test_luajit_report_matches(dir, path, "luajit-arm64-side-trace") > 0);
	check_luajit_iterations(dir, path);
	check_decodes_qemu_count(dir, "luajit-arm64-side-trace");
	snprintf(path, sizeof(path), "%s/expected-report.txt", src);
	check_expected_report(dir, path, "luajit-arm64-side-trace");
	unsetenv("JITFLOW_ISOLATE");
}

/* PyPy running tests/data/pypy/loop.py, recorded with --filter=jit (traces/pypy-loop/
 * README.md): decoded from its PYPYLOG and jit-code.txt alone (no pypy3 needed), every
 * loop entry, label pass and bridge entry equals PyPy's own jit-backend-counts (stored
 * beside it), every traced instruction is decoded, nothing is lost. */
static void test_pypy_loop(void **state)
{
	char dir[1024], path[1200];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/traces/pypy-loop", jf_test_source_dir());
	snprintf(path, sizeof(path), "%s/jit-backend-counts.txt", dir);
	assert_int_equal(jf_test_pypy_filtered_recording_matches(dir, path), 18);
	snprintf(path, sizeof(path), "%s/expected-report.txt", dir);
	check_expected_report(dir, path, "pypy-loop");
}

/* CPython 3.13's JIT running traces/cpython-guards/program.py with the --enable-pystats
 * build, recorded with --filter=jit (its README.md): decoded from the zone file alone (no
 * CPython needed), every uop's stencil entries and guard exits, the executors made and
 * entered and the uops executed equal pystats' counts of the same run (pystats.txt);
 * every traced instruction is decoded, nothing is lost; the uops of scale, which calls'
 * executor inlined, count in scale's code object (code-objects.txt), and the call stacks
 * show scale's frame on calls' (the module's INLINE_FRAMES, at calls' call of scale). */
static void test_cpython_guards(void **state)
{
	char src[1024], dir[1024], path[1200], stats[1200];

	(void)state;
	unpack_recording("cpython-guards", src, dir);
	snprintf(stats, sizeof(stats), "%s/pystats.txt", src);
	assert_true(jf_test_cpython_matches_pystats(dir, stats, stdout) > 0);
	check_decodes_traced(dir, "cpython-guards");
	/* calls' executor inlines scale: scale's uops count in scale's code object, and
	 * scale's frame lies on calls' */
	snprintf(path, sizeof(path), "%s/code-objects.txt", src);
	jf_test_cpython_inlined(dir, path, stats, "program.py", 0, 1);
	snprintf(path, sizeof(path), "%s/expected-report.txt", src);
	check_expected_report(dir, path, "cpython-guards");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minivm_bridge),
		cmocka_unit_test(test_luajit_side_trace),
		cmocka_unit_test(test_luajit_arm64_side_trace),
		cmocka_unit_test(test_pypy_loop),
		cmocka_unit_test(test_cpython_guards),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
