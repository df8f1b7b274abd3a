/* LuaJIT through jitflow's emitter (tools/runtimes/luajit), checked against what LuaJIT
 * itself reports: each program of tests/luajit runs under `jitflow record` (which loads
 * the module by itself, through LUA_INIT) inside tests/luajit/texit_counts.lua, which
 * counts LuaJIT's "texit" VM event per (flushes, trace, exit), split at the moment a side
 * trace for the exit was compiled, and writes down every trace LuaJIT compiled (parent
 * trace and exit, link type) and its "trace" events (start, abort, flush). Then, from the
 * report of the recording alone (luajit_check.c): every trace as LuaJIT described it;
 * every exit's exits to the interpreter, before and after its side trace, as LuaJIT
 * counted them; every side trace's entries equal the exits of its parent exit that went
 * on to it, and at least one side trace was entered; recordings started and aborted and
 * flushes as LuaJIT reported them; no decode error and no data lost. Recorded with
 * --save-code, so the report decodes the saved pages (only the bytes that ran kept).
 * The module's handlers, bracketed by INSTRUMENTATION_BEGIN / _END, count as
 * instrumentation: one bracket per handler run, as many as LuaJIT's trace events.
 * LuaJIT keeps one handler per VM event, and the module keeps its own beside the
 * program's: phases also runs with the oracle's "trace" handler attached before the
 * module, and under luajit -jv (whose output is then the oracle for the trace events);
 * each run's report must match LuaJIT as exactly as the others. The module's tracing
 * phases open and close at LuaJIT's own trace start and stop/abort events; and the
 * interpreter range it finds holds the bytecode handlers a -joff program runs.
 * A missing luajit fails (tools/setup.sh installs it). */
#include "luajit_check.h"
#include "luajit_phases_check.h"
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The module brackets each run of its handler, and its start (describing the runtime),
 * and the report counts each bracket as one stretch of instrumentation: LuaJIT's trace
 * events give the number of handler runs, so the zone file holds exactly that many begin
 * and end events plus the start's, and the report enters instrumentation that many times
 * plus the emitter's calls outside any bracket (opening the emitter, its flush at exit:
 * at most 4 in all). Unbracketed, every emitter call in a handler would be an entry of
 * its own. */
static void handlers_are_instrumentation(const char *dump, const cJSON *report,
					 const char *texit_path, const char *name)
{
	long runs = jf_test_luajit_trace_events(texit_path, NULL), begins, ends, entries = 0;
	const cJSON *tr;

	begins = jf_test_occurrences(dump, "kind=\"instrumentation-begin\"");
	ends = jf_test_occurrences(dump, "kind=\"instrumentation-end\"");
	if (begins != runs + 1 || ends != runs + 1)
		fail_msg("%s: %ld instrumentation begin and %ld end events for %ld handler runs "
			 "(LuaJIT's trace events) and the module's start", name, begins, ends, runs);

	cJSON_ArrayForEach(tr, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(report, "split"), "total"), "transitions")) {
		if (!strcmp(cJSON_GetObjectItemCaseSensitive(tr, "to")->valuestring, "instrumentation"))
			entries += (long)jf_test_num(tr, "count");
	}
	if (entries < runs || entries > runs + 4)
		fail_msg("%s: the report enters instrumentation %ld times for %ld handler runs",
			 name, entries, runs);
	printf("%s: %ld handler runs, %ld brackets, %ld entries into instrumentation\n", name,
	       runs, begins, entries);
}

/* Who else listens to LuaJIT's "trace" event beside jitflow's module (LuaJIT keeps one
 * handler per event; the module keeps its own in front of the program's):
 *   HANDLER_AFTER   texit_counts.lua's handler, attached after the module (which jitflow
 *                   record loads first, through LUA_INIT);
 *   HANDLER_BEFORE  the same handler attached before the module, which texit_counts.lua
 *                   then loads itself (LUA_INIT set to nothing: jitflow record leaves it);
 *   JV              luajit -jv's handler, the only one: texit_counts.lua reads the trace
 *                   events from what -jv writes, so -jv's output is the oracle for them. */
enum trace_listener { HANDLER_AFTER, HANDLER_BEFORE, JV };

/* LUA_PATH for jitflow's module as jitflow record finds it: runtimes/luajit beside the
 * jitflow binary. */
static void module_path(char *out, size_t size)
{
	char *slash;

	snprintf(out, size, "%s", jf_test_cli());
	slash = strrchr(out, '/');
	assert_non_null(slash);
	snprintf(slash, size - (size_t)(slash - out), "/runtimes/luajit/?.lua;;");
}

static void check_run(const char *name, enum trace_listener listener)
{
	static const char *const suffix[] = { "", "-handler-before", "-jv" };
	char dir[1024], cmd[8192], texit[1200], jv[1200], env[1200], flag[1300] = "",
		mode[1300] = "", modules[1024], *dump;
	cJSON *report;

	snprintf(dir, sizeof(dir), "%s/%s%s", jf_test_tmpdir(), name, suffix[listener]);
	snprintf(texit, sizeof(texit), "%s-texit.txt", dir);
	snprintf(jv, sizeof(jv), "%s-jv.txt", dir);
	/* The module is loaded by jitflow record itself (the user's settings are not ours),
	 * or for HANDLER_BEFORE by texit_counts.lua. */
	snprintf(env, sizeof(env), "-u LUA_INIT -u LUA_PATH");
	if (listener == HANDLER_BEFORE) {
		module_path(modules, sizeof(modules));
		snprintf(env, sizeof(env), "LUA_INIT= LUA_PATH='%s'", modules);
		snprintf(mode, sizeof(mode), "require-jitflow");
	} else if (listener == JV) {
		snprintf(flag, sizeof(flag), "-jv='%s'", jv);
		snprintf(mode, sizeof(mode), "'jv=%s'", jv);
	}
	snprintf(cmd, sizeof(cmd),
		 "env -u JITFLOW_ZONE_DIR -u JITFLOW_EMIT_LIB %s '%s' record --emulate --save-code "
		 "-o '%s' -- luajit -Ohotloop=8 -Ohotexit=3 %s '%s/tests/luajit/texit_counts.lua' "
		 "'%s' '%s/tests/luajit/%s.lua' %s >/dev/null 2>&1", env, jf_test_cli(), dir, flag,
		 jf_test_source_dir(), texit, jf_test_source_dir(), name, mode);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	assert_true(jf_test_luajit_report_matches(dir, texit, name) > 0);
	snprintf(cmd, sizeof(cmd), "'%s' zone dump '%s'/jit-*.dump", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &dump), 0);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	handlers_are_instrumentation(dump, report, texit, name);
	jf_test_luajit_tracing_matches(dump, report, texit, name);
	cJSON_Delete(report);
	free(dump);
}

static void test_phases(void **state) { (void)state; check_run("phases", HANDLER_AFTER); }
static void test_types_flush(void **state) { (void)state; check_run("types_flush", HANDLER_AFTER); }
static void test_handler_before_module(void **state)
{
	(void)state;
	check_run("phases", HANDLER_BEFORE);
}
static void test_jv(void **state) { (void)state; check_run("phases", JV); }

/* jit.attach's documented rules with the module's vmevents.lua listening, checked by
 * tests/luajit/attach_semantics.lua itself (exit status 0) without the recorder; here,
 * that LuaJIT reported each error of the program's failing handler, once per event it
 * got (the script says how many). */
static void test_attach_semantics(void **state)
{
	char cmd[4096], modules[1024], *out, *line;
	long events = -1, reported;

	(void)state;
	module_path(modules, sizeof(modules));
	snprintf(cmd, sizeof(cmd), "env -u LUA_INIT LUA_PATH='%s' luajit -Ohotloop=8 "
		 "'%s/tests/luajit/attach_semantics.lua' 2>&1", modules, jf_test_source_dir());
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("attach_semantics.lua failed:\n%s", out);
	line = strstr(out, "a handler that fails");
	assert_non_null(line);
	assert_int_equal(sscanf(strchr(line, ':') + 1, "%ld", &events), 1);
	reported = jf_test_occurrences(out, "VM handler failed: ");
	if (reported != events || jf_test_occurrences(out, "the program's handler fails") != events)
		fail_msg("LuaJIT reported %ld failures of the program's handler for %ld events:\n%s",
			 reported, events, out);
	printf("%s", out);
	free(out);
}

/* The module's iteration marker: tests/luajit/iterations.lua marks each of its 12 runs
 * (its own count, printed with its result). Under the recorder the report has exactly
 * those iterations, in order, each with instructions and with jitted code from the second
 * on (LuaJIT compiles the inner loop of 500 iterations in the first, -Ohotloop=8); the
 * program prints the same with and without jitflow (the marker is then a no-op). */
static void test_iterations(void **state)
{
	char dir[1024], cmd[4096], *recorded, *plain;
	const cJSON *it;
	cJSON *report;
	long runs = 0, sum = 0, n = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/iterations", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "env -u LUA_INIT -u LUA_PATH luajit -Ohotloop=8 "
		 "'%s/tests/luajit/iterations.lua'", jf_test_source_dir());
	assert_int_equal(jf_test_run(cmd, &plain), 0);
	assert_int_equal(sscanf(plain, "%ld %ld", &runs, &sum), 2);
	snprintf(cmd, sizeof(cmd), "env -u LUA_INIT -u LUA_PATH -u JITFLOW_ZONE_DIR "
		 "-u JITFLOW_EMIT_LIB '%s' record --emulate --save-code -o '%s' -- luajit "
		 "-Ohotloop=8 '%s/tests/luajit/iterations.lua' 2>/dev/null", jf_test_cli(), dir,
		 jf_test_source_dir());
	assert_int_equal(jf_test_run(cmd, &recorded), 0);
	assert_string_equal(recorded, plain);

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	assert_int_equal(jf_test_num(cJSON_GetObjectItemCaseSensitive(report, "summary"),
				     "decode_errors"), 0);
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(report, "iterations")) {
		n++;
		if ((long)jf_test_num(it, "index") != n || jf_test_num(it, "instructions") <= 0 ||
		    (n > 1 && jf_test_num(it, "jitted_instructions") <= 0))
			fail_msg("iteration %ld: index %.0f, %.0f instructions, %.0f jitted", n,
				 jf_test_num(it, "index"), jf_test_num(it, "instructions"),
				 jf_test_num(it, "jitted_instructions"));
	}
	if (n != runs)
		fail_msg("%ld iterations in the report, the program marked %ld", n, runs);
	printf("iterations: %ld marked, %ld in the report\n", runs, n);
	cJSON_Delete(report);
	free(recorded);
	free(plain);
}

/* The interpreter range the module finds (the VM's code, from its dispatch table and its
 * unwind table) holds LuaJIT's bytecode handlers: tests/luajit/interpreter_only.lua, run
 * with -joff, marks 8 runs of an inner loop of run * 1000 trips of two bytecodes that
 * allocate nothing. Each run then costs the one before it plus 1000 trips: the report's
 * per-iteration instructions give one trip's cost c (the nearest whole number; the
 * emitter's iteration mark moves a few instructions between runs), and the interpreter's
 * instructions hold all the program's trips at c each, plus the few bytecodes outside the
 * inner loop (under a tenth of the loop). Without JIT nothing is jitted, nothing is traced
 * (no recording, no tracing phase), no trace is left and no code is unknown. */
static void test_interpreter_only(void **state)
{
	char dir[1024], cmd[4096], *out;
	long runs = 0, trips = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/interpreter_only", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "env -u LUA_INIT -u LUA_PATH -u JITFLOW_ZONE_DIR "
		 "-u JITFLOW_EMIT_LIB '%s' record --emulate --save-code -o '%s' -- luajit -joff "
		 "'%s/tests/luajit/interpreter_only.lua' 2>/dev/null", jf_test_cli(), dir,
		 jf_test_source_dir());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_int_equal(sscanf(out, "%ld %ld", &runs, &trips), 2);
	free(out);
	jf_test_luajit_interpreter_only(dir, runs, trips);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_types_flush),
		cmocka_unit_test(test_handler_before_module),
		cmocka_unit_test(test_jv),
		cmocka_unit_test(test_attach_semantics),
		cmocka_unit_test(test_iterations),
		cmocka_unit_test(test_interpreter_only),
	};

	jf_test_require_tools("command -v luajit", "luajit");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
