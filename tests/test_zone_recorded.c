/* End to end, through a real runtime: minivm (the example tracing JIT) runs a loop whose
 * guard fails until a bridge is attached (its exit stub is patched to jump there), under
 * `jitflow record` (QEMU; Intel PT packets from the executed blocks), writing its zone file
 * with the emitter and its own counters. `jitflow decode --perf` must find the zone file
 * by itself (the runtime's executable mapping of jit-PID.dump in the sideband) and name the
 * JIT code so that the runtime's counters, an account independent of the trace, come out
 * exactly: trace entries, bridge entries, exits through the stub before (v1) and after
 * (v2) its patch. A missing qemu-x86_64 fails. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char program[] =
	"var i = 0;\n"
	"var warm = 1;\n"
	"var a = 0;\n"
	"var b = 0;\n"
	"while (i < 3000) {\n"
	"  if (i == 60) { warm = 0; }\n"
	"  if (warm) {\n"
	"    a = a + 1;\n"
	"  } else {\n"
	"    b = b + i % 7;\n"
	"  }\n"
	"  i = i + 1;\n"
	"}\n"
	"print a;\n";

/* The number after "key": in the JSON object that follows the first occurrence of
 * anchor (the runtime's counters are a small fixed-shape file). */
static long counter(const char *json, const char *anchor, const char *key)
{
	const char *p = strstr(json, anchor);
	char k[64];

	if (!p)
		fail_msg("counters: '%s' not found in %s", anchor, json);
	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(p, k);
	if (!p)
		fail_msg("counters: '%s' not found after '%s'", key, anchor);
	return strtol(p + strlen(k), NULL, 10);
}

/* Listing lines whose block starts at the region's offset 0x... and version given. */
static long lines_ending(const char *text, const char *suffix)
{
	const char *line = text;
	size_t n = strlen(suffix);
	long count = 0;

	while (*line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);

		if (len >= n && !memcmp(line + len - n, suffix, n))
			count++;
		if (!end)
			break;
		line = end + 1;
	}
	return count;
}

static char *contains_line(char *text, const char *needle)
{
	return strstr(text, needle);
}

static void test_runtime_counters_from_the_trace(void **state)
{
	const char *dir = jf_test_tmpdir(), *minivm = getenv("MINIVM");
	char path[1024], cmd[4096];
	char *out = NULL, *json = NULL;
	long stub_v1, stub_v2_entries;

	assert_non_null(minivm);
	snprintf(path, sizeof(path), "%s/side.mvm", dir);
	jf_test_write_file(path, program, sizeof(program) - 1);
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' record -o rec --emulate -- '%s' --counters "
		 "rec/counters.json --zone-dir rec side.mvm 2>&1", dir, jf_test_cli(), minivm);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("jitflow record failed:\n%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/rec/counters.json", dir);
	json = jf_test_read_file(cmd, NULL);
	/* no --zone: the zone file is found through the perf.data */
	snprintf(cmd, sizeof(cmd), "cd '%s/rec' && '%s' decode --perf perf.data --blocks", dir,
		 jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_null(contains_line(out, "error"));

	assert_int_equal(lines_ending(out, "  trace 1 (loop at side.mvm:5 in main) v1+0x0"),
			 counter(json, "\"kind\":\"loop\"", "entries"));
	assert_int_equal(lines_ending(out, "  bridge 2 (trace 1 guard 5, pc 28 in main) v1+0x0"),
			 counter(json, "\"kind\":\"bridge\"", "entries"));
	/* guard 5's exits: through its stub as compiled (v1) until the bridge existed, then
	 * through the patched stub (v2) into the bridge */
	stub_v1 = lines_ending(out, "  exit stub (trace 1 guard 5) v1+0x0");
	stub_v2_entries = counter(json, "\"kind\":\"bridge\"", "entries");
	assert_true(stub_v1 > 0);
	assert_int_equal(stub_v1 + stub_v2_entries, counter(json, "\"id\":5,", "exits"));
	assert_true(lines_ending(out, "  exit stub (trace 1 guard 5) v2+0x0") >= stub_v2_entries);
	free(out);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_counters_from_the_trace),
	};

	jf_test_require_tools("qemu-x86_64 --version", "qemu-x86_64 (qemu-user)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
