/* PyPy (Debian's pypy3) recorded with `jitflow record`: every loop entry, label pass and
 * bridge entry that jitflow counts from the trace equals PyPy's own counter
 * (jit-backend-counts, written by PyPy at exit into the recording's pypylog.log, and read
 * here with sscanf, not with jitflow's reader), with no decode error and nothing lost, and
 * every instruction QEMU ran decoded (the recorder's count).
 *
 * The program (tests/data/pypy/phases.py) has a phase change, a polymorphic call site
 * (guard_class failing into bridges), nested loops and bridges of bridges; PyPy runs it
 * with a low JIT threshold so it compiles early.
 * Takes a minute or a few: PyPy starts up with about 70 million instructions. phases.py
 * is also recorded with --filter=jit (only the JIT's code traced). */
#include "json_check.h"
#include "pypy_counts.h"
#include "pypylog_restamp.h"
#include "test_support.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every instruction the recorder counted decoded, no error, nothing lost. */
static void assert_decoded_whole(const cJSON *report, double instructions)
{
	const cJSON *summary = cJSON_GetObjectItemCaseSensitive(report, "summary");

	assert_int_equal(jf_test_num(summary, "instructions"), instructions);
	assert_int_equal(jf_test_num(summary, "decode_errors"), 0);
	assert_int_equal(jf_test_num(summary, "lost_bytes"), 0);
}

/* One recording for every test here, and one report of it: PyPy's start-up alone is
 * ~70 M instructions. */
static cJSON *phases_report;

static int record_phases(void **state)
{
	const char *tmp = jf_test_tmpdir();
	char cmd[8192];

	(void)state;
	jf_test_require_tools("command -v pypy3", "pypy3");
	snprintf(cmd, sizeof(cmd), "cp '%s/tests/data/pypy/phases.py' '%s/' && cd '%s' && "
		 "'%s' record -o rec -- pypy3 --jit threshold=200,trace_eagerness=20 phases.py "
		 "> phases.out", jf_test_source_dir(), tmp, tmp, jf_test_cli());
	if (jf_test_run(cmd, NULL) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "'%s' report '%s/rec' --json", jf_test_cli(), tmp);
	phases_report = jf_test_run_json(cmd);
	return phases_report ? 0 : -1;
}

static int free_report(void **state)
{
	(void)state;
	cJSON_Delete(phases_report);
	return 0;
}

static void test_counts_equal_pypys_own(void **state)
{
	const char *tmp = jf_test_tmpdir();
	char path[4096];
	cJSON *manifest;
	const cJSON *report = phases_report, *pypy, *b;
	int bridges_of_bridges = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/rec/manifest.json", tmp);
	manifest = jf_test_json_file(path);
	assert_decoded_whole(report, jf_test_num(manifest, "instructions"));
	pypy = cJSON_GetObjectItemCaseSensitive(report, "pypy");
	snprintf(path, sizeof(path), "%s/rec/pypylog.log", tmp);
	assert_true(jf_test_pypy_counts_match(pypy, path) >= 20);
	jf_test_pypy_bridges_match_guards(pypy);
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(pypy, "bridges"))
		bridges_of_bridges += jf_test_num(b, "parent") > 1000000; /* parent is a bridge (a descr) */
	assert_true(bridges_of_bridges > 0);
	cJSON_Delete(manifest);
}

/* phases.py with only PyPy's JIT code traced (--filter=jit): each entry from the
 * interpreter is a TIP.PGE at the loop's entry; every count still equals PyPy's, and every
 * instruction inside the filter is decoded. */
static void test_counts_through_filter(void **state)
{
	const char *tmp = jf_test_tmpdir();
	char cmd[8192], dir[4096], path[4200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' record --filter=jit -o filtered -- pypy3 --jit "
		 "threshold=200,trace_eagerness=20 phases.py > filtered.out", tmp, jf_test_cli());
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(dir, sizeof(dir), "%s/filtered", tmp);
	snprintf(path, sizeof(path), "%s/pypylog.log", dir);
	assert_true(jf_test_pypy_filtered_recording_matches(dir, path) >= 20);
}

/* `--pypylog` with a perf.data and no jit-code.txt, as on Intel PT hardware: the log's
 * writes apply at their TSC stamps, converted with the perf.data's TSC conversion. The log
 * is restamped with the recorder's clock (pypylog_restamp.h) RESTAMP_LEAD instructions
 * before each write first ran (a real stamp precedes the run by the rest of PyPy's
 * assembler work; 100 is more than the timing error measured in docs/recorder.md, and
 * 0 passed too when this was written); the counts must equal PyPy's and the trace decode whole, except the
 * code PyPy runs without logging it (its CPU probe: no image without jit-code.txt). */
enum { RESTAMP_LEAD = 100 };

static void test_tsc_stamps_place_writes(void **state)
{
	const char *tmp = jf_test_tmpdir();
	char cmd[8192], log[4096], code[4096], restamped[4096];
	struct jf_test_restamp_stats st;
	cJSON *manifest, *report;
	const cJSON *notes, *n, *summary, *problem;
	int said = 0;
	char ip[32];

	(void)state;
	snprintf(log, sizeof(log), "%s/rec/manifest.json", tmp);
	manifest = jf_test_json_file(log);
	snprintf(log, sizeof(log), "%s/rec/pypylog.log", tmp);
	snprintf(code, sizeof(code), "%s/rec/jit-code.txt", tmp);
	snprintf(restamped, sizeof(restamped), "%s/tsc.pypylog", tmp);
	jf_test_pypylog_restamp(log, code, (uint64_t)jf_test_num(manifest, "instructions"),
				RESTAMP_LEAD, restamped, &st);
	printf("%" PRIu64 " dump sections, %" PRIu64 " of them ran\n", st.sections, st.placed);
	assert_true(st.placed > 20);

	snprintf(cmd, sizeof(cmd), "'%s' report --perf '%s/rec/perf.data' --pypylog '%s' --json",
		 jf_test_cli(), tmp, restamped);
	report = jf_test_run_json(cmd);
	assert_true(jf_test_pypy_counts_match(cJSON_GetObjectItemCaseSensitive(report, "pypy"),
					      restamped) >= 20);
	notes = cJSON_GetObjectItemCaseSensitive(report, "notes");
	cJSON_ArrayForEach(n, notes)
		said += cJSON_IsString(n) && strstr(n->valuestring, "by their TSC stamps") != NULL;
	assert_int_equal(said, 1);

	/* One error: the code PyPy never logged, where it first ran. */
	assert_int_equal(st.unlogged, 1);
	summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
	assert_int_equal(jf_test_num(summary, "decode_errors"), 1);
	problem = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(report, "problems"), 0);
	snprintf(ip, sizeof(ip), "0x%" PRIx64, st.first_unlogged_pc);
	assert_string_equal(jf_test_str(problem, "ip"), ip);
	assert_string_equal(jf_test_str(problem, "text"), "no memory mapped at this address");
	cJSON_Delete(manifest);
	cJSON_Delete(report);
}

/* Freed loops (tests/data/pypy/frees.py): PyPy frees loops (jit-summary, from a PYPYLOG of
 * the test's own, which the recorder keeps) and assembles new ones into their memory (the
 * log's addresses); the trace decodes whole and every counter equals PyPy's. */
static void test_freed_loops_reused_memory(void **state)
{
	const char *tmp = jf_test_tmpdir();
	char cmd[8192], path[4096], line[512];
	unsigned long long lo[256], hi[256], a, b, boot;
	unsigned n, freed = 0;
	size_t nloops = 0, i, reused = 0;
	cJSON *manifest, *report;
	FILE *log;

	(void)state;
	snprintf(cmd, sizeof(cmd), "cp '%s/tests/data/pypy/frees.py' '%s/' && cd '%s' && "
		 "PYPYLOG=jit-backend-dump,jit-backend-addr,jit-log-opt,jit-backend-counts,"
		 "jit-summary:frees.log '%s' record -o frees -- pypy3 --jit threshold=200 "
		 "frees.py > frees.out", jf_test_source_dir(), tmp, tmp, jf_test_cli());
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(path, sizeof(path), "%s/frees/pypylog.log", tmp);
	log = fopen(path, "r");
	assert_non_null(log);
	while (fgets(line, sizeof(line), log)) {
		const char *has = strstr(line, ") has address 0x");

		sscanf(line, "Freed # of loops: %u", &freed);
		if (strncmp(line, "Loop ", 5) || !has ||
		    sscanf(has, ") has address %llx to %llx (bootstrap %llx)", &a, &b, &boot) != 3)
			continue;
		for (i = 0; i < nloops; i++)
			if (boot < hi[i] && lo[i] < b)
				break;
		reused += i < nloops;
		assert_true(nloops < 256);
		lo[nloops] = boot;
		hi[nloops++] = b;
	}
	fclose(log);
	printf("PyPy freed %u loops; %zu of %zu loops were assembled over an earlier one\n",
	       freed, reused, nloops);
	assert_true(freed > 0);
	assert_true(reused > 0);

	snprintf(path, sizeof(path), "%s/frees/manifest.json", tmp);
	manifest = jf_test_json_file(path);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s/frees' --json", jf_test_cli(), tmp);
	report = jf_test_run_json(cmd);
	assert_decoded_whole(report, jf_test_num(manifest, "instructions"));
	snprintf(path, sizeof(path), "%s/frees/pypylog.log", tmp);
	n = (unsigned)jf_test_pypy_counts_match(cJSON_GetObjectItemCaseSensitive(report, "pypy"),
						 path);
	assert_true(n >= 3 * nloops);
	cJSON_Delete(manifest);
	cJSON_Delete(report);
}

/* The line of phases.py where `def NAME` is (1-based), the nth such line (from 0), or 0. */
static unsigned def_line(const char *source, const char *name, int nth)
{
	char line[512], def[96];
	unsigned n = 0;
	FILE *f = fopen(source, "r");

	assert_non_null(f);
	snprintf(def, sizeof(def), "def %s(", name);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, def) && !nth--) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

/* `jitflow bytecodes` groups by Python code object (CODE_OBJECT records from the merge
 * points): each one's file is phases.py and its line the `def` line of that function in
 * the program text; poly, nested and the three f methods (inlined into poly) all show. */
static void test_code_objects_are_the_programs_functions(void **state)
{
	const char *tmp = jf_test_tmpdir();
	char source[4096];
	const cJSON *b, *co;
	int poly = 0, nested = 0, methods = 0;

	(void)state;
	snprintf(source, sizeof(source), "%s/phases.py", tmp);
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(phases_report, "bytecodes")) {
		const char *name, *file;
		double line;

		co = cJSON_GetObjectItemCaseSensitive(b, "code_object");
		if (!co)
			continue;
		name = jf_test_str(co, "name");
		file = jf_test_str(co, "file");
		line = jf_test_num(co, "line");
		if (strcmp(file, source))
			continue; /* PyPy's own library code (os.py ...) */
		if (!strcmp(name, "f")) {
			assert_true(line == def_line(source, "f", 0) || line == def_line(source, "f", 1) ||
				    line == def_line(source, "f", 2));
			methods |= 1 << (line == def_line(source, "f", 0) ? 0 :
					 line == def_line(source, "f", 1) ? 1 : 2);
		} else {
			assert_true(line > 0);
			assert_int_equal(line, def_line(source, name, 0));
			poly += !strcmp(name, "poly");
			nested += !strcmp(name, "nested");
		}
	}
	assert_true(poly > 0);
	assert_true(nested > 0);
	assert_int_equal(methods, 7);
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
				    "jit-backend-counts,jit-tracing,"));
	assert_non_null(strstr(out, ",jitflow-iteration:"));
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
		cmocka_unit_test(test_tsc_stamps_place_writes),
		cmocka_unit_test(test_code_objects_are_the_programs_functions),
		cmocka_unit_test(test_freed_loops_reused_memory),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, record_phases, free_report));
}
