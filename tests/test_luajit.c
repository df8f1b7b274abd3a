/* LuaJIT through jitflow's emitter (tools/runtimes/luajit), checked against LuaJIT's own
 * count of trace exits: each program of tests/luajit runs under `jitflow record` (which
 * loads the module by itself, through LUA_INIT) inside tests/luajit/texit_counts.lua,
 * which counts LuaJIT's "texit" VM event per (flushes, trace, exit). Then, from the
 * report of the recording alone:
 *   - every exit LuaJIT reports to its exit handler is a guard of the report, and every
 *     guard's to_interpreter equals LuaJIT's count for it exactly;
 *   - every side trace's entries equal the exits of its parent exit that went on to it
 *     (exits - to_interpreter), and at least one side trace was entered;
 *   - no decode error and no data lost;
 *   - the module's handlers, bracketed by INSTRUMENTATION_BEGIN / _END, count as
 *     instrumentation: in these small programs they run more instructions than all of
 *     LuaJIT's own native code and interpreter (without the brackets the report shows
 *     ~3% instrumentation, the emitter's own code, and ~97% native).
 * Skipped when luajit is not installed. */
#include "test_support.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The module numbers traces after the k-th jit.flush() as number + k * 2^32. */
#define FLUSH_STRIDE 4294967296.0

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v))
		fail_msg("missing number \"%s\"", key);
	return v->valuedouble;
}

struct texit {
	double trace, exit, count;
	int matched;
};

static size_t read_texits(const char *path, struct texit *t, size_t max)
{
	char *text = jf_test_read_file(path, NULL), *line, *save = NULL;
	size_t n = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long f, tr, e, c;

		if (sscanf(line, "%llu %llu %llu %llu", &f, &tr, &e, &c) != 4)
			fail_msg("%s: bad line '%s'", path, line);
		assert_true(n < max);
		t[n].trace = (double)tr + (double)f * FLUSH_STRIDE;
		t[n].exit = (double)e;
		t[n].count = (double)c;
		t[n].matched = 0;
		n++;
	}
	free(text);
	return n;
}

static const cJSON *find_guard(const cJSON *traces, double trace, double exit)
{
	const cJSON *t, *g;

	cJSON_ArrayForEach(t, traces) {
		if (num(t, "id") != trace)
			continue;
		cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(t, "guards")) {
			if (num(g, "id") == exit)
				return g;
		}
	}
	return NULL;
}

static void check_program(const char *name)
{
	char dir[1024], cmd[8192], path[1200], *out;
	struct texit texits[512];
	size_t n, i;
	cJSON *report;
	const cJSON *traces, *t, *g, *summary;
	int sides_entered = 0, guards = 0;

	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), name);
	snprintf(path, sizeof(path), "%s/texit.txt", jf_test_tmpdir());
	/* The module is loaded by jitflow record itself; the user's settings are not ours. */
	snprintf(cmd, sizeof(cmd),
		 "env -u LUA_INIT -u LUA_PATH -u JITFLOW_ZONE_DIR -u JITFLOW_EMIT_LIB "
		 "'%s' record --emulate -o '%s' -- luajit -Ohotloop=8 -Ohotexit=3 "
		 "'%s/tests/luajit/texit_counts.lua' '%s' '%s/tests/luajit/%s.lua' >/dev/null 2>&1",
		 jf_test_cli(), dir, jf_test_source_dir(), path, jf_test_source_dir(), name);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	n = read_texits(path, texits, sizeof(texits) / sizeof(texits[0]));
	assert_true(n > 0);

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	report = cJSON_Parse(out);
	free(out);
	assert_non_null(report);
	summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
	assert_int_equal(num(summary, "decode_errors"), 0);
	assert_int_equal(num(summary, "lost_bytes"), 0);
	traces = cJSON_GetObjectItemCaseSensitive(report, "traces");
	{
		const cJSON *split = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(report, "split"), "total");
		const cJSON *insns = cJSON_GetObjectItemCaseSensitive(split, "instructions");
		double instr = num(insns, "instrumentation");

		assert_true(instr > 0);
		if (instr <= num(insns, "native") + num(insns, "interpreter"))
			fail_msg("%s: the handlers are not counted as instrumentation: %.0f "
				 "instructions of instrumentation, %.0f native", name, instr,
				 num(insns, "native"));
	}

	for (i = 0; i < n; i++) {
		g = find_guard(traces, texits[i].trace, texits[i].exit);
		if (!g)
			fail_msg("%s: LuaJIT counted %.0f exits of trace %.0f exit %.0f; the report "
				 "has no such guard", name, texits[i].count, texits[i].trace,
				 texits[i].exit);
	}
	cJSON_ArrayForEach(t, traces) {
		cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(t, "guards")) {
			double want = 0;

			for (i = 0; i < n; i++) {
				if (texits[i].trace == num(t, "id") && texits[i].exit == num(g, "id"))
					want = texits[i].count;
			}
			if (num(g, "to_interpreter") != want)
				fail_msg("%s: trace %.0f exit %.0f: %.0f exits to the interpreter, "
					 "LuaJIT counted %.0f", name, num(t, "id"), num(g, "id"),
					 num(g, "to_interpreter"), want);
			assert_true(num(g, "exits") == num(g, "to_interpreter") + num(g, "to_bridge"));
			guards++;
		}
		if (!strcmp(cJSON_GetObjectItemCaseSensitive(t, "kind")->valuestring, "bridge")) {
			g = find_guard(traces, num(t, "parent_trace"), num(t, "parent_guard"));
			assert_non_null(g);
			if (num(t, "entries") != num(g, "to_bridge"))
				fail_msg("%s: side trace %.0f entered %.0f times, its parent exit went "
					 "to it %.0f times", name, num(t, "id"), num(t, "entries"),
					 num(g, "to_bridge"));
			sides_entered += num(t, "entries") > 0;
		}
	}
	assert_true(guards > 0);
	assert_true(sides_entered > 0);
	cJSON_Delete(report);
}

static int have_luajit(void)
{
	return jf_test_run("command -v luajit >/dev/null 2>&1", NULL) == 0;
}

static void test_phases(void **state) { (void)state; check_program("phases"); }
static void test_types_flush(void **state) { (void)state; check_program("types_flush"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_types_flush),
	};

	if (!have_luajit()) {
		printf("skipped: luajit is not installed (tools/setup.sh installs it)\n");
		return JF_TEST_SKIP;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
