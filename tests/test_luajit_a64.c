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
 *     the module's PATCH records place the new bytes in the decode.
 *   - lister: the same program with side traces turned off (-Ohotexit above any exit
 *     count), so that no code changes in place (recording.txt's code_conflicts is 0) and
 *     the snapshot's memory images are the code that ran: jitflow decodes it to the same
 *     instruction ranges as OpenCSD's trc_pkt_lister, range by range, with no error and no
 *     missing code. Unlike the C programs of test_record_a64.c, the decoded instructions
 *     do not equal QEMU's count here (a few hundred apart in 5.7 M, both ways: see
 *     docs/recorder.md, limits); both numbers are printed.
 * A missing luajit .deb, qemu-aarch64 or trc_pkt_lister fails (tools/setup.sh installs them). */
#include "cs_trace_compare.h"
#include "luajit_check.h"
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
 * are not ours, so the module and the library are the ones jitflow record finds. */
static void record(const char *dir, const char *luajit_args)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' && env -u LUA_INIT -u LUA_PATH -u JITFLOW_ZONE_DIR -u JITFLOW_EMIT_LIB "
		 "LD_LIBRARY_PATH='%s/usr/lib/aarch64-linux-gnu' '%s' record --arch aarch64 -o '%s' "
		 "-- '%s/usr/bin/luajit' %s >/dev/null 2>&1", dir, root, jf_test_cli(), dir, root,
		 luajit_args);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
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

static void test_texit(void **state)
{
	char dir[1024], texit[1200], args[4096];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/phases", jf_test_tmpdir());
	snprintf(texit, sizeof(texit), "%s-texit.txt", dir);
	snprintf(args, sizeof(args), "-Ohotloop=8 -Ohotexit=3 '%s/tests/luajit/texit_counts.lua' "
		 "'%s' '%s/tests/luajit/phases.lua'", jf_test_source_dir(), texit,
		 jf_test_source_dir());
	record(dir, args);
	assert_int_equal(summary_value(dir, "lost_instructions = "), 0);
	/* Decoded in this process: the child that guards against OpenCSD's crashes answers a
	 * recording with zone files one record at a time (lockstep), about 30x slower;
	 * test_cs_isolation covers that path. */
	setenv("JITFLOW_ISOLATE", "0", 1);
	assert_true(jf_test_luajit_report_matches(dir, texit, "phases (arm64)") > 0);
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
	record(dir, args);
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
	cs_run_free(&lister);
	cs_run_free(&ours);
	jf_decoder_free(dec);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_texit),
		cmocka_unit_test(test_lister),
	};

	jf_test_require_tools("command -v qemu-aarch64", "qemu-aarch64 (qemu-user)");
	jf_test_require_tools("command -v trc_pkt_lister", "trc_pkt_lister (libopencsd-bin)");
	jf_test_require_tools("command -v dpkg-deb", "dpkg-deb (dpkg)");
	return jf_test_exit(cmocka_run_group_tests(tests, unpack_luajit, NULL));
}
