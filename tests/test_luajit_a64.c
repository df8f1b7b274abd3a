/* LuaJIT's arm64 JIT under `jitflow record --arch aarch64`: Debian's luajit:arm64 (unpacked
 * from the .debs tools/setup.sh --tests downloads into the build folder) runs under
 * qemu-aarch64 with jitflow's module (LUA_INIT, and the emitter library built for AArch64,
 * which jitflow record picks for an AArch64 program), and the ETMv4 recording is checked
 * against what did not come from jitflow:
 *   - texit: tests/luajit/phases.lua inside tests/luajit/texit_counts.lua, as test_luajit.c
 *     does on x86-64: every trace LuaJIT compiled (root or side, parent and exit, link) and
 *     every exit's exits to the interpreter before and after its side trace, as LuaJIT's
 *     own "trace" and "texit" events counted them (luajit_check.c), from the report of the
 *     recording alone. LuaJIT re-points branches and exit stubs to side traces there:
 *     the module's PATCH records place the new bytes in the decode, which then holds
 *     exactly the instructions QEMU ran. The module's tracing phases open and close at
 *     LuaJIT's own trace start and stop/abort events (luajit_phases_check.c), and its exit
 *     handler's range starts where every exit LuaJIT's "texit" event reports entered.
 *   - lister: phases.lua alone with side traces turned off (-Ohotexit above any exit
 *     count), so that no code changes in place (recording.txt's code_conflicts is 0) and
 *     the snapshot's memory images are the code that ran: jitflow decodes it to the same
 *     instruction ranges as OpenCSD's trc_pkt_lister, range by range, with no error and no
 *     missing code, and they hold exactly the instructions QEMU ran.
 *   - interpreter only: tests/luajit/interpreter_only.lua with -joff, the interpreter's
 *     range the module finds (dispatch table, unwind table) against the program's
 *     semantics, as on x86-64: nothing jitted or traced, every run's trips at one cost.
 * A missing luajit .deb, qemu-aarch64 or trc_pkt_lister fails (tools/setup.sh installs them). */
#include "cs_trace_compare.h"
#include "json_check.h"
#include "luajit_check.h"
#include "luajit_phases_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/coresight.h"

enum { TRACE_ID = 0x10 }; /* the recorder's ETM (TRCTRACEIDR) */

static char root[900]; /* luajit:arm64 unpacked: ROOT/usr/bin/luajit */

static int unpack_luajit(void **state)
{
	char cmd[4096];

	(void)state;
	snprintf(root, sizeof(root), "%s/luajit-arm64", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s' && for deb in '%s'/arm64-debs/*"
		 "luajit*_arm64.deb; do dpkg-deb -x \"$deb\" '%s' || exit 1; done && test -x "
		 "'%s/usr/bin/luajit'", root, root, jf_test_binary_dir(), root, root);
	if (jf_test_run(cmd, NULL) != 0)
		fail_msg("luajit:arm64 not unpacked from %s/arm64-debs (`%s` fails): "
			 "tools/setup.sh --tests downloads it; run it", jf_test_binary_dir(), cmd);
	return 0;
}

/* jitflow record --arch aarch64 -o DIR -- luajit:arm64 LUAJIT_ARGS; the user's own settings
 * are not ours, so the module and the library are the ones jitflow record finds. The
 * program's output goes to *out (NULL: nowhere). */
static void record(const char *dir, const char *luajit_args, char **out)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' && env -u LUA_INIT -u LUA_PATH -u JITFLOW_ZONE_DIR -u JITFLOW_EMIT_LIB "
		 "LD_LIBRARY_PATH='%s/usr/lib/aarch64-linux-gnu' '%s' record --arch aarch64 -o '%s' "
		 "-- '%s/usr/bin/luajit' %s %s 2>/dev/null", dir, root, jf_test_cli(), dir, root,
		 luajit_args, out ? "" : ">/dev/null");
	assert_int_equal(jf_test_run(cmd, out), 0);
}

static long summary_value(const char *dir, const char *key)
{
	char path[1200], *text;
	long v;

	snprintf(path, sizeof(path), "%s/recording.txt", dir);
	text = jf_test_read_file(path, NULL);
	v = (long)jf_test_number_after(text, key);
	free(text);
	return v;
}

/* The recording's zone file, as `jitflow zone dump` lists it (the caller frees it). */
static char *zone_dump(const char *dir)
{
	char cmd[4096], *out;

	snprintf(cmd, sizeof(cmd), "'%s' zone dump '%s'/jit-*.dump", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	return out;
}

/* Where the module says LuaJIT's exit handler starts (its INTERP_RANGE of kind deopt). */
static uint64_t exit_handler_start(const char *dir)
{
	char *dump = zone_dump(dir), *at = strstr(dump, "kind=\"deopt\" start=0x");
	unsigned long long start = 0;

	if (!at || sscanf(at, "kind=\"deopt\" start=0x%llx", &start) != 1)
		fail_msg("%s: no exit handler range in the zone file", dir);
	free(dump);
	return start;
}

/* Every exit that LuaJIT's "texit" event reports went through its exit handler (the
 * exits to side traces go there directly): the decoded blocks that start where the module
 * says the handler starts are as many as those events. */
static void exits_enter_the_handler(const char *dir, const char *texit)
{
	char cmd[4096], *out;
	uint64_t handler = exit_handler_start(dir);
	long entries;

	snprintf(cmd, sizeof(cmd), "'%s' decode --recording '%s' --blocks | grep -c '^%016llx '; "
		 "true", jf_test_cli(), dir, (unsigned long long)handler);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	entries = atol(out);
	free(out);
	printf("phases (arm64): %ld entries into the exit handler at 0x%llx, %.0f texit events\n",
	       entries, (unsigned long long)handler, jf_test_luajit_texits(texit));
	assert_true(entries > 0 && (double)entries == jf_test_luajit_texits(texit));
}

static void test_texit(void **state)
{
	char dir[1024], texit[1200], args[4096], cmd[4096], *dump;
	cJSON *report;
	double decoded;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/phases", jf_test_tmpdir());
	snprintf(texit, sizeof(texit), "%s-texit.txt", dir);
	snprintf(args, sizeof(args), "-Ohotloop=8 -Ohotexit=3 '%s/tests/luajit/texit_counts.lua' "
		 "'%s' '%s/tests/luajit/phases.lua'", jf_test_source_dir(), texit,
		 jf_test_source_dir());
	record(dir, args, NULL);
	assert_int_equal(summary_value(dir, "lost_instructions = "), 0);
	/* Decoded in this process: the child that guards against OpenCSD's crashes answers a
	 * recording with zone files one record at a time (lockstep), about 30x slower;
	 * test_cs_isolation covers that path. */
	setenv("JITFLOW_ISOLATE", "0", 1);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	assert_true(jf_test_luajit_json_matches(report, texit, "phases (arm64)") > 0);
	decoded = jf_test_num(cJSON_GetObjectItemCaseSensitive(report, "summary"), "instructions");
	if (decoded != (double)summary_value(dir, "instructions = "))
		fail_msg("phases (arm64): %.0f instructions decoded, QEMU ran %ld", decoded,
			 summary_value(dir, "instructions = "));
	dump = zone_dump(dir);
	jf_test_luajit_tracing_matches(dump, report, texit, "phases (arm64)");
	printf("phases (arm64): %.0f instructions decoded through %ld patches, as QEMU ran\n",
	       decoded, jf_test_occurrences(dump, " PATCH "));
	exits_enter_the_handler(dir, texit);
	free(dump);
	cJSON_Delete(report);
}

static void test_lister(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { { 0 } };
	struct cs_run lister, ours;
	struct jf_decoder *dec;
	char dir[1024], args[4096];
	uint64_t n = 0;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/phases-no-side-traces", jf_test_tmpdir());
	snprintf(args, sizeof(args), "-Ohotloop=8 -Ohotexit=65000 '%s/tests/luajit/phases.lua'",
		 jf_test_source_dir());
	record(dir, args, NULL);
	assert_int_equal(summary_value(dir, "code_conflicts = "), 0);
	assert_int_equal(summary_value(dir, "lost_instructions = "), 0);

	cs_run_from_lister_snapshot(&lister, dir, jf_test_tmpdir());
	dec = jf_cs_snapshot_decoder_new(dir, map, &err);
	if (!dec)
		fail_msg("%s: %s", dir, err.msg);
	cs_run_from_decoder(&ours, dec);
	assert_int_equal(cs_run_compare(&lister, &ours, "phases (arm64, no side traces)"), 0);
	assert_int_equal(lister.decode_errors, 0);
	for (i = 0; i < lister.id[TRACE_ID].n; i++) {
		assert_int_equal(lister.id[TRACE_ID].v[i].kind, 'R'); /* no missing code */
		n += lister.id[TRACE_ID].v[i].ninsn;
	}
	printf("phases (arm64, no side traces): %llu ranges, %llu instructions, as the lister; "
	       "QEMU ran %ld\n", (unsigned long long)lister.ranges, (unsigned long long)n,
	       summary_value(dir, "instructions = "));
	assert_int_equal(n, summary_value(dir, "instructions = "));
	cs_run_free(&lister);
	cs_run_free(&ours);
	jf_decoder_free(dec);
	jf_codemap_free(map);
}

/* The interpreter's range the module finds on arm64 holds LuaJIT's bytecode handlers, as
 * test_luajit.c checks it on x86-64 (luajit_phases_check.h). */
static void test_interpreter_only(void **state)
{
	char dir[1024], args[4096], *out;
	long runs = 0, trips = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/interpreter_only", jf_test_tmpdir());
	snprintf(args, sizeof(args), "-joff '%s/tests/luajit/interpreter_only.lua'",
		 jf_test_source_dir());
	record(dir, args, &out);
	assert_int_equal(sscanf(out, "%ld %ld", &runs, &trips), 2);
	free(out);
	setenv("JITFLOW_ISOLATE", "0", 1);
	jf_test_luajit_interpreter_only(dir, runs, trips);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_texit),
		cmocka_unit_test(test_lister),
		cmocka_unit_test(test_interpreter_only),
	};

	jf_test_require_tools("command -v qemu-aarch64", "qemu-aarch64 (qemu-user)");
	jf_test_require_tools("command -v trc_pkt_lister", "trc_pkt_lister (libopencsd-bin)");
	jf_test_require_tools("command -v dpkg-deb", "dpkg-deb (dpkg)");
	return jf_test_exit(cmocka_run_group_tests(tests, unpack_luajit, NULL));
}
