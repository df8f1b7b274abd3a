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
 * instrumentation: in these small programs they run more instructions than all of
 * LuaJIT's own native code and interpreter (without the brackets the report shows ~3%
 * instrumentation, the emitter's own code, and ~97% native).
 * A missing luajit fails (tools/setup.sh installs it). */
#include "luajit_check.h"
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>

#include <stdio.h>

/* The handlers' instructions are instrumentation, not LuaJIT's native code. */
static void instrumentation_outweighs_runtime(const char *dir, const char *name)
{
	char cmd[4096];
	cJSON *report;
	const cJSON *insns;
	double instr;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	insns = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(report, "split"), "total"), "instructions");
	instr = jf_test_num(insns, "instrumentation");
	if (instr <= jf_test_num(insns, "native") + jf_test_num(insns, "interpreter"))
		fail_msg("%s: the handlers are not counted as instrumentation: %.0f instructions "
			 "of instrumentation, %.0f native", name, instr, jf_test_num(insns, "native"));
	cJSON_Delete(report);
}

static void check_program(const char *name)
{
	char dir[1024], cmd[8192], path[1200];

	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), name);
	snprintf(path, sizeof(path), "%s/%s-texit.txt", jf_test_tmpdir(), name);
	/* The module is loaded by jitflow record itself; the user's settings are not ours. */
	snprintf(cmd, sizeof(cmd),
		 "env -u LUA_INIT -u LUA_PATH -u JITFLOW_ZONE_DIR -u JITFLOW_EMIT_LIB "
		 "'%s' record --emulate --save-code -o '%s' -- luajit -Ohotloop=8 -Ohotexit=3 "
		 "'%s/tests/luajit/texit_counts.lua' '%s' '%s/tests/luajit/%s.lua' >/dev/null 2>&1",
		 jf_test_cli(), dir, jf_test_source_dir(), path, jf_test_source_dir(), name);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	assert_true(jf_test_luajit_report_matches(dir, path, name) > 0);
	instrumentation_outweighs_runtime(dir, name);
}

static void test_phases(void **state) { (void)state; check_program("phases"); }
static void test_types_flush(void **state) { (void)state; check_program("types_flush"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phases),
		cmocka_unit_test(test_types_flush),
	};

	jf_test_require_tools("command -v luajit", "luajit");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
