/* PyPy's arm64 JIT under `jitflow record --arch aarch64`: Debian's pypy3:arm64 7.3.11
 * (unpacked from the .debs tools/setup.sh --tests downloads into the build folder, with
 * the arm64 libraries it needs beside it) runs tests/data/pypy/loop.py under qemu-aarch64
 * with --filter=jit, and the report of the ETMv4 recording, which reads PyPy's log placed
 * by the recorder's jit-code.txt, is checked against what did not come from jitflow:
 *   - the program's own output (its sum);
 *   - PyPy's own counters. This PyPy's AArch64 backend emits them but never prints them
 *     (no jit-backend-counts section: its CPU class does not pass finish_once on to the
 *     assembler), so the counters are those PyPy printed for the same program on x86-64
 *     (tests/data/pypy/loop.pypylog, recorded with the same PyPy 7.3.11): the metainterp,
 *     its thresholds (loops, trace_eagerness) and so its decisions are the same on both
 *     backends. Loop 1's entries, its two labels' passes (in the order of the labels) and
 *     the bridge's entries must equal them;
 *   - the bridge is entered exactly as often as its guard exits after it was attached.
 * The decode has no error, nothing lost and no unknown code. A missing .deb or
 * qemu-aarch64 fails (tools/setup.sh installs and downloads them). */
#include "json_check.h"
#include "pypy_counts.h"
#include "test_support.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char root[900]; /* pypy3:arm64 unpacked: ROOT/usr/bin/pypy3 */

static int unpack_pypy(void **state)
{
	char cmd[4096];

	(void)state;
	snprintf(root, sizeof(root), "%s/pypy-arm64", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s' && cd '%s/arm64-debs' && for deb in "
		 "pypy3_*_arm64.deb pypy3-lib_*_arm64.deb libffi8_*_arm64.deb libbz2-1.0_*_arm64.deb "
		 "libexpat1_*_arm64.deb zlib1g_*_arm64.deb libtinfo6_*_arm64.deb; do "
		 "dpkg-deb -x \"$deb\" '%s' || exit 1; done && test -x '%s/usr/bin/pypy3'",
		 root, root, jf_test_binary_dir(), root, root);
	if (jf_test_run(cmd, NULL) != 0)
		fail_msg("pypy3:arm64 not unpacked from %s/arm64-debs (`%s` fails): "
			 "tools/setup.sh --tests downloads it; run it", jf_test_binary_dir(), cmd);
	return 0;
}

/* PyPy's x86-64 counters for loop.py, read with sscanf. */
struct x86_counts {
	uint64_t entry, labels[2], bridge;
	int nlabels, nbridges;
};

static void read_x86_counts(struct x86_counts *c)
{
	char path[4096], *text, *line;
	unsigned long long id, n;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/tests/data/pypy/loop.pypylog", jf_test_source_dir());
	text = jf_test_read_file(path, NULL);
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (sscanf(line, "entry %llu:%llu", &id, &n) == 2 && id == 1)
			c->entry = n;
		else if (sscanf(line, "TargetToken(%llu):%llu", &id, &n) == 2 && c->nlabels < 2)
			c->labels[c->nlabels++] = n;
		else if (sscanf(line, "bridge %llu:%llu", &id, &n) == 2 && !c->nbridges++)
			c->bridge = n;
	}
	free(text);
	assert_int_equal(c->nlabels, 2);
	assert_int_equal(c->nbridges, 1);
}

static void loop_counts_equal_pypys(void **state)
{
	char dir[1024], prog[1200], cmd[8192], *out = NULL;
	cJSON *report;
	const cJSON *pypy, *summary, *loop, *bridge, *label;
	struct x86_counts x86;
	int i = 0;

	(void)state;
	read_x86_counts(&x86);
	snprintf(dir, sizeof(dir), "%s/loop", jf_test_tmpdir());
	snprintf(prog, sizeof(prog), "%s/tests/data/pypy/loop.py", jf_test_source_dir());
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' && env -u PYPYLOG LD_LIBRARY_PATH='%s/usr/lib/aarch64-linux-gnu:%s/lib/"
		 "aarch64-linux-gnu' '%s' record --arch aarch64 --filter=jit -o '%s' -- "
		 "'%s/usr/bin/pypy3' '%s' 2>/dev/null", dir, root, root, jf_test_cli(), dir, root,
		 prog);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "376225\n")); /* what run(3000) returns */
	free(out);

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json 2>/dev/null", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
	assert_int_equal(jf_test_num(summary, "decode_errors"), 0);
	assert_int_equal(jf_test_num(summary, "lost_bytes"), 0);
	assert_int_equal(jf_test_num(summary, "unknown_code_blocks"), 0);
	pypy = cJSON_GetObjectItemCaseSensitive(report, "pypy");
	assert_non_null(pypy);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pypy, "loops")), 1);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pypy, "bridges")), 1);
	loop = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pypy, "loops"), 0);
	bridge = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pypy, "bridges"), 0);
	assert_int_equal(jf_test_num(loop, "id"), 1);
	assert_int_equal(jf_test_num(loop, "entries"), x86.entry);
	cJSON_ArrayForEach(label, cJSON_GetObjectItemCaseSensitive(loop, "labels")) {
		assert_true(i < 2);
		assert_int_equal(jf_test_num(label, "passes"), x86.labels[i++]);
	}
	assert_int_equal(i, 2);
	assert_int_equal(jf_test_num(bridge, "entries"), x86.bridge);
	jf_test_pypy_bridges_match_guards(pypy);
	cJSON_Delete(report);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(loop_counts_equal_pypys),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, unpack_pypy, NULL));
}
