/* A JIT recording made here (minivm under `jitflow record`, QEMU) takes the fast path on
 * every AUX buffer after the one in which the runtime compiles its loop and bridge, and
 * stat, decode and report give what libipt's block decoder gives on every buffer
 * (perf_fast_check.h; report's whole JSON). The recorder's observed-code file (code as
 * it first ran) places its last records where the loop's exit path first runs, near the
 * trace's end: they hold the bytes minivm's zone file put there and change nothing, so
 * they do not keep the code from being settled (jf_zone_image_code_settled). That premise
 * is checked (such a record lies past the first buffer), and the instructions decoded are
 * QEMU's count. A missing qemu-x86_64 fails. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_fast_check.h"

/* minivm compiles the loop (after 50 back-edges), then a bridge for the guard on the
 * branch taken every 7th iteration (after 10 exits); both in the first AUX buffer of
 * about six. */
static const char program[] =
	"var n = 0;\n"
	"var sum = 0;\n"
	"while (n < 20000) {\n"
	"  if (n % 7 == 3) { sum = sum + 2; } else { sum = sum + 1; }\n"
	"  n = n + 1;\n"
	"}\n"
	"print sum;\n";

/* The recording folder, made once. */
static char rec[1024];

static int record(void **state)
{
	const char *dir = jf_test_tmpdir(), *minivm = getenv("MINIVM");
	char path[1024], cmd[4096];
	char *out = NULL;

	(void)state;
	if (!minivm)
		return -1;
	snprintf(path, sizeof(path), "%s/bridge.mvm", dir);
	jf_test_write_file(path, program, sizeof(program) - 1);
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' record -o rec --emulate -- '%s' --zone-dir rec "
		 "bridge.mvm 2>&1", dir, jf_test_cli(), minivm);
	if (jf_test_run(cmd, &out) != 0) {
		fprintf(stderr, "jitflow record failed:\n%s", out);
		free(out);
		return -1;
	}
	free(out);
	snprintf(rec, sizeof(rec), "%s/rec", dir);
	return 0;
}

/* The position (instructions of its thread) of the observed-code file's last record. */
static long last_observed_position(void)
{
	char cmd[2048], *out = NULL, *last, *p;
	long ts;

	snprintf(cmd, sizeof(cmd), "'%s' zone dump '%s'/observed-code-*.dump", jf_test_cli(), rec);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	last = NULL;
	for (p = strstr(out, " PATCH "); p; p = strstr(p + 1, " PATCH "))
		last = p;
	assert_non_null(last);
	ts = jf_test_number_after(last, "ts=");
	free(out);
	return ts;
}

static void test_fast_after_the_compiles(void **state)
{
	char cmd[2048], *manifest, *stat = NULL;
	long instructions;
	int count;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s/manifest.json", rec);
	manifest = jf_test_read_file(cmd, NULL);
	instructions = jf_test_number_after(manifest, "\"instructions\": ");
	free(manifest);
	/* The premise: an observed record still to apply well after the first buffer. */
	assert_true(last_observed_position() > instructions / 2);
	for (count = 0; count < 2; count++) {
		struct jf_pt_fast_report fp;
		struct jf_perf_session_report rep;
		uint64_t of;

		rep = jf_check_perf_fast(rec, NULL, count, 0, &fp, &of);
		assert_true(rep.buffers >= 4);
		assert_int_equal(rep.fast_buffers, rep.buffers - 1);
	}
	snprintf(cmd, sizeof(cmd), "'%s' stat --json --recording '%s'", jf_test_cli(), rec);
	assert_int_equal(jf_test_run(cmd, &stat), 0);
	assert_int_equal(jf_test_number_after(stat, "\"instructions\":"), instructions);
	free(stat);
}

static void test_report_as_block_decoder(void **state)
{
	char cmd[2048], *fast = NULL, *ref = NULL;

	(void)state;
	snprintf(cmd, sizeof(cmd), "'%s' report --json '%s'", jf_test_cli(), rec);
	assert_int_equal(jf_test_run(cmd, &fast), 0);
	snprintf(cmd, sizeof(cmd), "'%s' report --json --decoder=libipt-block '%s'", jf_test_cli(),
		 rec);
	assert_int_equal(jf_test_run(cmd, &ref), 0);
	assert_true(strlen(ref) > 1000);
	assert_string_equal(fast, ref);
	free(fast);
	free(ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fast_after_the_compiles),
		cmocka_unit_test(test_report_as_block_decoder),
	};

	jf_test_require_tools("qemu-x86_64 --version", "qemu-x86_64 (qemu-user)");
	return jf_test_exit(cmocka_run_group_tests(tests, record, NULL));
}
