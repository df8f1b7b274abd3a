/* Warm-up across executions on minivm programs that warm up in known ways
 * (the .mvm files in tests/warmup), recorded as a matrix of 3 benchmarks x 5 executions run by GNU
 * parallel, as a batch engine would run it.
 *
 * What the programs and minivm's thresholds fix (--hot=50: the inner loop, 200 iterations,
 * is compiled during outer iteration 0; --bridge=10: the inner trace's loop-exit guard exits
 * once per outer iteration, so its bridge is compiled during iteration 10):
 *   guard_fails   x turns odd at iteration 20: the inner trace's guard on it fails every
 *                 inner iteration, a bridge takes over; costlier after: slowdown.
 *   flush_every   jit_flush() at 0, 15, 30, 45: everything recompiled each time, the last
 *                 time within the last quarter: no steady state.
 *   phase_change  a cheaper inner loop from iteration 30 on, compiled anew: warm-up.
 * Changepoints must be those iterations (within one), the events at them the compilations,
 * frees, bridges and the guard the programs cause. `jitflow merge` of warm-up reports must
 * equal the report of all executions, byte for byte, whatever the grouping and order. */
#include <cjson/cJSON.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "test_support.h"

#define EXECUTIONS 5

static char matrix[1024];

static char *run(const char *cmd)
{
	char *out = NULL;

	if (jf_test_run(cmd, &out) != 0)
		fail_msg("failed: %s", cmd);
	return out;
}

/* The recordings, reports and timelines of the matrix, through GNU parallel, one
 * tools/warmup-job.sh per execution. */
static int record_matrix(void **state)
{
	char cmd[8192];

	(void)state;
	snprintf(matrix, sizeof(matrix), "%s/matrix", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd),
		 "JITFLOW='%s' parallel --halt now,fail=1 -j2 "
		 "\"'%s/tools/warmup-job.sh' '%s'/{1}/exec-{2} -- "
		 "'%s' --hot=50 --bridge=10 '%s/tests/warmup'/{1}.mvm\" "
		 "::: guard_fails flush_every phase_change ::: 1 2 3 4 5",
		 jf_test_cli(), jf_test_source_dir(), matrix, getenv("JITFLOW_MINIVM"),
		 jf_test_source_dir());
	free(run(cmd));
	return 0;
}

static cJSON *warmup_of(const char *bench)
{
	char cmd[2048], *out;
	cJSON *doc;

	snprintf(cmd, sizeof(cmd), "'%s' warmup --json '%s/%s'/exec-*", jf_test_cli(), matrix,
		 bench);
	out = run(cmd);
	doc = cJSON_Parse(out);
	if (!doc)
		fail_msg("not JSON: %s", out);
	free(out);
	return doc;
}

/* Every changepoint of the execution is one of want[] within one iteration, and each of
 * want[] is found. Returns the changepoints. */
static cJSON *expect_changepoints(cJSON *exec, const int *want, int nwant)
{
	cJSON *cps = cJSON_GetObjectItem(exec, "changepoints"), *cp;
	int i, found;

	if (cJSON_GetArraySize(cps) != nwant)
		fail_msg("%s: %d changepoints, the program fixes %d",
			 cJSON_GetObjectItem(exec, "name")->valuestring, cJSON_GetArraySize(cps),
			 nwant);
	for (i = 0; i < nwant; i++) {
		found = 0;
		cJSON_ArrayForEach(cp, cps) {
			int at = cJSON_GetObjectItem(cp, "iteration")->valueint;

			found |= at >= want[i] - 1 && at <= want[i] + 1;
		}
		if (!found)
			fail_msg("%s: no changepoint at iteration %d",
				 cJSON_GetObjectItem(exec, "name")->valuestring, want[i]);
	}
	return cps;
}

/* The changepoint at iteration `at` (within one). */
static cJSON *changepoint_at(cJSON *cps, int at)
{
	cJSON *cp;

	cJSON_ArrayForEach(cp, cps) {
		int i = cJSON_GetObjectItem(cp, "iteration")->valueint;

		if (i >= at - 1 && i <= at + 1)
			return cp;
	}
	fail_msg("no changepoint at %d", at);
	return NULL;
}

/* How many of the changepoint's events of `kind` contain `text`. */
static int events_with(cJSON *cp, const char *kind, const char *text)
{
	cJSON *e, *list = cJSON_GetObjectItem(cJSON_GetObjectItem(cp, "events"), kind);
	int n = 0;

	cJSON_ArrayForEach(e, list) {
		const char *s = cJSON_IsString(e) ? e->valuestring :
			cJSON_GetObjectItem(e, "guard")->valuestring;

		n += strstr(s, text) != NULL;
	}
	return n;
}

/* Each execution of the benchmark has the class, and the benchmark is consistent (the
 * emulated recordings of one program are alike). Calls check() per execution. */
static void each_execution(const char *bench, const char *cls, void (*check)(cJSON *exec))
{
	cJSON *doc = warmup_of(bench), *b, *exec;
	int n = 0;

	b = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "warmup_benchmarks"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "warmup_benchmarks")), 1);
	assert_string_equal(cJSON_GetObjectItem(b, "verdict")->valuestring, "consistent");
	cJSON_ArrayForEach(exec, cJSON_GetObjectItem(b, "executions")) {
		assert_string_equal(cJSON_GetObjectItem(exec, "class")->valuestring, cls);
		/* 60 outer iterations: the last row runs on to the program's exit. */
		assert_int_equal(cJSON_GetObjectItem(exec, "iterations")->valueint, 59);
		check(exec);
		n++;
	}
	assert_int_equal(n, EXECUTIONS);
	cJSON_Delete(doc);
}

static void guard_fails_check(cJSON *exec)
{
	static const int want[] = { 1, 10, 11, 20, 21 };
	cJSON *cps = expect_changepoints(exec, want, 5), *at20;

	assert_int_equal(events_with(changepoint_at(cps, 1), "compiled", "trace 1 (loop"), 1);
	assert_int_equal(events_with(changepoint_at(cps, 10), "bridges_attached", "to guard 1/"), 1);
	at20 = changepoint_at(cps, 20);
	assert_int_equal(events_with(at20, "bridges_attached", "to guard 1/"), 1);
	/* The guard that starts failing: listed, and the one the bridge is attached to. */
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(at20, "events"),
								 "guards")), 1);
	{
		cJSON *g = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(at20, "events"),
								  "guards"), 0);
		char attached[64];

		snprintf(attached, sizeof(attached), "to guard %s",
			 cJSON_GetObjectItem(g, "guard")->valuestring);
		assert_int_equal(events_with(at20, "bridges_attached", attached), 1);
		assert_true(cJSON_GetObjectItem(g, "exits_per_iteration_before")->valuedouble < 1);
		/* one exit per inner iteration of the failing one (200), give or take a timeline
		 * window's worth at the edges */
		assert_true(cJSON_GetObjectItem(g, "exits_per_iteration_after")->valuedouble >= 190);
	}
}

static void flush_every_check(cJSON *exec)
{
	static const int want[] = { 1, 10, 11, 15, 16, 25, 26, 30, 31, 40, 41, 45, 46, 55, 56 };
	cJSON *cps = expect_changepoints(exec, want, 15), *cp;
	int at, freed = events_with(changepoint_at(cps, 15), "freed", "at 0x");

	/* Each flush frees what the one before it left (the same loop, trace and bridge, each
	 * time), and code is freed at no other changepoint. */
	assert_true(freed > 0);
	for (at = 15; at <= 45; at += 15) {
		assert_int_equal(events_with(changepoint_at(cps, at), "freed", "at 0x"), freed);
		assert_int_equal(events_with(changepoint_at(cps, at), "compiled", "(loop"), 1);
	}
	cJSON_ArrayForEach(cp, cps) {
		int i = cJSON_GetObjectItem(cp, "iteration")->valueint;

		if (i % 15 > 1)
			assert_int_equal(events_with(cp, "freed", ""), 0);
	}
}

/* The share of `phase` either side of changepoint cp when it moved (else returns 0). */
static int phase_moved(const cJSON *cp, const char *phase, double *before, double *after)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(cp, "phases_moved")) {
		if (!strcmp(cJSON_GetObjectItemCaseSensitive(m, "phase")->valuestring, phase)) {
			*before = cJSON_GetObjectItemCaseSensitive(m, "share_before")->valuedouble;
			*after = cJSON_GetObjectItemCaseSensitive(m, "share_after")->valuedouble;
			return 1;
		}
	}
	return 0;
}

static void phase_change_check(cJSON *exec)
{
	static const int want[] = { 1, 10, 11, 30, 31, 40, 41 };
	cJSON *cps = expect_changepoints(exec, want, 7);
	double before, after;

	/* the second phase's loop (line 14 of the program) compiled when it starts */
	assert_int_equal(events_with(changepoint_at(cps, 30), "compiled", "phase_change.mvm:14"), 1);
	/* minivm's phases there: iterations 11-29 record and compile nothing (the first
	 * loop's trace and bridge are made); iteration 30 interprets the new loop, records
	 * and compiles its trace; from 31 to 39 nothing is compiled (its bridge comes after
	 * the tenth exit, at 40). */
	assert_true(phase_moved(changepoint_at(cps, 30), "tracing", &before, &after));
	assert_true(before == 0 && after > 0);
	assert_true(phase_moved(changepoint_at(cps, 30), "compiling", &before, &after));
	assert_true(before == 0 && after > 0);
	assert_true(phase_moved(changepoint_at(cps, 30), "interpreting", &before, &after));
	assert_true(after > before);
	/* (the changepoint after the one at 30: changepoint_at(cps, 31) would find 30's) */
	assert_non_null(changepoint_at(cps, 30)->next);
	assert_true(phase_moved(changepoint_at(cps, 30)->next, "compiling", &before, &after));
	assert_true(before > 0 && after == 0);
}

static void guard_fails(void **state)
{
	(void)state;
	each_execution("guard_fails", "slowdown", guard_fails_check);
}

static void flush_every(void **state)
{
	(void)state;
	each_execution("flush_every", "no steady state", flush_every_check);
}

static void phase_change(void **state)
{
	(void)state;
	each_execution("phase_change", "warmup", phase_change_check);
}

/* `jitflow warmup --json ARGS > OUT` */
static void warmup_to(const char *args, const char *out)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' warmup --json %s > '%s'", matrix,
		 jf_test_cli(), args, out);
	free(run(cmd));
}

static void merge_to(const char *args, const char *out)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' merge %s > '%s'", matrix, jf_test_cli(), args,
		 out);
	free(run(cmd));
}

static void same_file(const char *a, const char *b)
{
	char pa[1200], pb[1200];
	size_t na, nb;
	char *x, *y;

	snprintf(pa, sizeof(pa), "%s/%s", matrix, a);
	snprintf(pb, sizeof(pb), "%s/%s", matrix, b);
	x = jf_test_read_file(pa, &na);
	y = jf_test_read_file(pb, &nb);
	if (na != nb || memcmp(x, y, na))
		fail_msg("%s and %s differ", a, b);
	free(x);
	free(y);
}

static void merge_any_grouping(void **state)
{
	(void)state;
	warmup_to("guard_fails/exec-* flush_every/exec-* phase_change/exec-*", "all.json");
	/* by benchmark, merged in another order */
	warmup_to("guard_fails/exec-*", "g.json");
	warmup_to("flush_every/exec-*", "f.json");
	warmup_to("phase_change/exec-*", "p.json");
	merge_to("p.json g.json f.json", "merged-by-benchmark.json");
	same_file("all.json", "merged-by-benchmark.json");
	/* by execution number across benchmarks, odd and even, given in reverse */
	warmup_to("phase_change/exec-5 flush_every/exec-3 guard_fails/exec-1 phase_change/exec-3 "
		  "flush_every/exec-1 guard_fails/exec-5 phase_change/exec-1 flush_every/exec-5 "
		  "guard_fails/exec-3", "odd.json");
	warmup_to("guard_fails/exec-4 guard_fails/exec-2 flush_every/exec-4 flush_every/exec-2 "
		  "phase_change/exec-4 phase_change/exec-2", "even.json");
	merge_to("even.json odd.json", "merged-by-execution.json");
	same_file("all.json", "merged-by-execution.json");
	/* a merge of merges, and of a report with a merge */
	merge_to("g.json f.json", "gf.json");
	merge_to("gf.json p.json", "merged-nested.json");
	same_file("all.json", "merged-nested.json");
	/* reports of single executions mixed with a merged report */
	merge_to("f.json p.json guard_fails/exec-3/report.json guard_fails/exec-1 "
		  "guard_fails/exec-2 guard_fails/exec-5/ guard_fails/exec-4", "merged-mixed.json");
	same_file("all.json", "merged-mixed.json");
}

/* The HTML page: a chart per execution, a marked line per changepoint (5, 15 and 7 per
 * execution of the three programs). */
static void html_page(void **state)
{
	char cmd[2048], *out;

	(void)state;
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' warmup --html page.html */exec-* > /dev/null && "
		 "grep -c '<svg' page.html && grep -c 'class=\"cp\"' page.html", matrix,
		 jf_test_cli());
	out = run(cmd);
	assert_string_equal(out, "15\n135\n");
	free(out);
}

/* record --executions N: N fresh recordings, DIR/exec-1 ... DIR/exec-N, DIR's parents made
 * too. */
static void record_executions(void **state)
{
	char cmd[4096], path[1200];
	char *out;
	int i;

	(void)state;
	snprintf(cmd, sizeof(cmd), "'%s' record --executions 2 -o '%s/runs/phase_change' -- '%s' "
		 "'%s/tests/warmup/phase_change.mvm' 2>&1 >/dev/null", jf_test_cli(),
		 jf_test_tmpdir(), getenv("JITFLOW_MINIVM"), jf_test_source_dir());
	out = run(cmd);
	assert_non_null(strstr(out, "execution 1 of 2"));
	assert_non_null(strstr(out, "execution 2 of 2"));
	free(out);
	for (i = 1; i <= 3; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/runs/phase_change/exec-%d/perf.data", jf_test_tmpdir(),
			 i);
		f = fopen(path, "rb");
		if (i <= 2 && !f)
			fail_msg("%s: missing", path);
		if (i == 3 && f)
			fail_msg("%s: a third execution of two", path);
		if (f)
			fclose(f);
	}
}

/* A series longer than PELT is given whole (20000 points) is binned: 50001 marks, the cost
 * 1500 up to iteration 30000 and 1000 from there, give bins of 3 and one changepoint on
 * the bin edge at or next to 30000. */
static void long_series_binned(void **state)
{
	char path[1200], cmd[2048], *out;
	FILE *f;
	cJSON *doc, *exec, *cps;
	int i, at;

	(void)state;
	snprintf(path, sizeof(path), "%s/long/report.json", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/long'", jf_test_tmpdir());
	free(run(cmd));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"iterations\":[", f);
	for (i = 0; i <= 50000; i++)
		fprintf(f, "%s{\"index\":%d,\"instructions\":%d,\"jitted_instructions\":0}",
			i ? "," : "", i, i < 30000 ? 1500 : 1000);
	fputs("]}", f);
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "'%s' warmup --json '%s'", jf_test_cli(), path);
	out = run(cmd);
	doc = cJSON_Parse(out);
	assert_non_null(doc);
	exec = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(doc, "warmup_benchmarks"), 0), "executions"), 0);
	assert_int_equal(cJSON_GetObjectItem(exec, "iterations")->valueint, 50000);
	assert_int_equal(cJSON_GetObjectItem(exec, "bin")->valueint, 3);
	assert_string_equal(cJSON_GetObjectItem(exec, "class")->valuestring, "warmup");
	cps = cJSON_GetObjectItem(exec, "changepoints");
	assert_int_equal(cJSON_GetArraySize(cps), 1);
	at = cJSON_GetObjectItem(cJSON_GetArrayItem(cps, 0), "iteration")->valueint;
	assert_true(at >= 30000 - 2 && at <= 30000 + 2);
	cJSON_Delete(doc);
	free(out);
}

static void bad_inputs(void **state)
{
	char cmd[2048], *out = NULL;

	(void)state;
	snprintf(cmd, sizeof(cmd), "printf '{\"iter' > '%s/cut.json' && '%s' warmup '%s/cut.json' 2>&1",
		 jf_test_tmpdir(), jf_test_cli(), jf_test_tmpdir());
	assert_int_equal(jf_test_run(cmd, &out), 1);
	assert_non_null(strstr(out, "cut.json: offset"));
	free(out);
	snprintf(cmd, sizeof(cmd), "printf '{\"traces\":[]}' > '%s/other.json' && "
		 "'%s' warmup '%s/other.json' 2>&1", jf_test_tmpdir(), jf_test_cli(), jf_test_tmpdir());
	assert_int_equal(jf_test_run(cmd, &out), 1);
	assert_non_null(strstr(out, "expected a jitflow report --json"));
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' record --executions 0 -- true 2>&1", jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 2);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(guard_fails),
		cmocka_unit_test(flush_every),
		cmocka_unit_test(phase_change),
		cmocka_unit_test(merge_any_grouping),
		cmocka_unit_test(html_page),
		cmocka_unit_test(record_executions),
		cmocka_unit_test(long_series_binned),
		cmocka_unit_test(bad_inputs),
	};

	jf_test_require_tools("parallel --version > /dev/null 2>&1", "parallel");
	return cmocka_run_group_tests(tests, record_matrix, NULL);
}
