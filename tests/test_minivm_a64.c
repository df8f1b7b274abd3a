/* minivm's AArch64 build (minivm_a64: its tracing JIT with arm64 copy-and-patch stencils,
 * tools/minivm/aarch64.cmake) recorded by `jitflow record` under qemu-aarch64.
 *
 * Every example, and tests/minivm/a64_stencils.mvm: the output is NAME.expected (computed
 * from the programs' meaning), and `jitflow report DIR` of the recording alone (its cs_etm
 * perf.data and the zone file the recorder copied into it, no --zone) gives, for every
 * trace minivm compiled, its entries and iterations, for every guard its exits and passes,
 * exactly as minivm's compiled code counted them (--counters), with no decode error or
 * loss, having decoded every instruction QEMU ran. The copy is minivm's own file, its
 * records dated by their marker calls (recording.txt: one zone file, no note).
 *
 * a64_stencils.mvm uses every kind of stencil and patches no exit stub (--bridge=0), so the
 * snapshot's one image of the code is what ran: there jitflow's instruction ranges equal
 * trc_pkt_lister's, range by range (a64_snapshot_check.h); it is small enough for the
 * lister's full listing. Its counts are also fixed by its meaning: 600 iterations, 50 of
 * them interpreted before the trace (--hot=50), the guard of "i % 250 == 0" failing at
 * i = 250 and 500, each time re-entering the trace at the next back-edge.
 *
 * The report decodes in this process (JITFLOW_ISOLATE=0): the child process that guards
 * against OpenCSD's crashes on corrupt streams answers one record at a time while zone
 * files change the code, which on these well-formed streams only makes the test many
 * times slower. */
#include "a64_snapshot_check.h"
#include "minivm_examples.h"
#include "report_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char minivm[1024];

/* Records minivm_a64 OPTIONS SOURCE into TMP/name; checks its output against expected and
 * the report against its counters. Returns the recording folder (static). */
static const char *record_and_check(const char *name, const char *options, const char *source,
				    const char *expected)
{
	static char dir[1024];
	const char *tmp = jf_test_tmpdir();
	char zones[1024], counters[1024], inputs[3072], cmd[8192], path[1100], *out, *want,
		*summary;
	uint64_t decoded = 0;

	snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
	snprintf(zones, sizeof(zones), "%s/%s.zones", tmp, name);
	snprintf(counters, sizeof(counters), "%s/%s.counters.json", tmp, name);
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' '%s' && mkdir -p '%s' && '%s' record -o '%s' -- '%s' %s "
		 "--counters '%s' --zone-dir '%s' '%s'",
		 dir, zones, zones, jf_test_cli(), dir, minivm, options, counters, zones, source);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("%s: failed", cmd);
	want = jf_test_read_file(expected, NULL);
	if (strcmp(out, want))
		fail_msg("%s: output\n%s\nexpected (%s)\n%s", name, out, expected, want);
	snprintf(inputs, sizeof(inputs), "'%s'", dir);
	jf_test_report_inputs_match_counters(inputs, counters, name, &decoded);
	snprintf(path, sizeof(path), "%s/recording.txt", dir);
	summary = jf_test_read_file(path, NULL);
	assert_int_equal(decoded, (uint64_t)jf_test_number_after(summary, "instructions = "));
	assert_int_equal(jf_test_number_after(summary, "lost_instructions = "), 0);
	assert_int_equal(jf_test_number_after(summary, "zone_files = "), 1);
	if (strstr(summary, "zone_note = "))
		fail_msg("%s: %s", name, strstr(summary, "zone_note = "));
	/* Retiming rewrites timestamps in place: the copy is as long as minivm's file. */
	snprintf(cmd, sizeof(cmd), "test \"$(stat -c %%s '%s'/jit-*.dump)\" = "
		 "\"$(stat -c %%s '%s'/jit-*.dump)\"", zones, dir);
	if (system(cmd) != 0)
		fail_msg("%s: the zone file's copy in %s differs in size from %s's", name, dir,
			 zones);
	free(summary);
	free(want);
	free(out);
	return dir;
}

static void check_example(const char *name)
{
	const char *src = jf_test_source_dir();
	char source[1300], expected[1300];

	snprintf(source, sizeof(source), "%s/tools/minivm/examples/%s.mvm", src, name);
	snprintf(expected, sizeof(expected), "%s/tools/minivm/examples/%s.expected", src, name);
	record_and_check(name, "", source, expected);
}

static void test_every_example(void **state)
{
	(void)state;
	jf_test_each_minivm_example(check_example);
}

static long long number_after_in(const char *json, const char *what)
{
	const char *p = strstr(json, what);

	if (!p)
		fail_msg("no %s in %s", what, json);
	return atoll(p + strlen(what));
}

static void test_every_stencil_against_the_lister(void **state)
{
	const char *src = jf_test_source_dir();
	char source[1024], expected[1024], counters[1100], *json;
	struct cs_run lister;
	const char *dir;

	(void)state;
	snprintf(source, sizeof(source), "%s/tests/minivm/a64_stencils.mvm", src);
	snprintf(expected, sizeof(expected), "%s/tests/minivm/a64_stencils.expected", src);
	dir = record_and_check("a64_stencils", "--bridge=0", source, expected);
	jf_test_a64_snapshot_matches_lister(dir, "a64_stencils", &lister);
	cs_run_free(&lister);
	snprintf(counters, sizeof(counters), "%s/a64_stencils.counters.json", jf_test_tmpdir());
	json = jf_test_read_file(counters, NULL);
	assert_int_equal(number_after_in(json, "\"entries\":"), 3);
	assert_int_equal(number_after_in(json, "\"iterations\":"), 550);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_stencil_against_the_lister),
		cmocka_unit_test(test_every_example),
	};
	char check[1200];

	snprintf(minivm, sizeof(minivm), "%s/tools/minivm/minivm_a64", jf_test_binary_dir());
	jf_test_require_tools("command -v trc_pkt_lister", "trc_pkt_lister (libopencsd-bin)");
	jf_test_require_tools("command -v qemu-aarch64", "qemu-aarch64 (qemu-user)");
	snprintf(check, sizeof(check), "test -x '%s'", minivm);
	jf_test_require_tools(check, "minivm built for AArch64 with aarch64-linux-gnu-gcc "
			      "(gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)");
	setenv("JITFLOW_ISOLATE", "0", 1);
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
