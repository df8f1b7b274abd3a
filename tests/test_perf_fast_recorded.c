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

/* Four phases, each a loop compiled into a trace that jit_flush() then frees: minivm loads
 * code and frees it until the end of the run, so the buffers after the first decode while
 * code still changes, and the recorder's observed-code records (a trace's code as it
 * first ran) lie at instruction counts all through the run. */
static const char phases[] =
	"func phase(k, n) {\n"
	"  var i = 0;\n"
	"  var s = 0;\n"
	"  while (i < n) {\n"
	"    if (k == 0) { s = s + i; }\n"
	"    if (k == 1) { s = s + i * 2; }\n"
	"    if (k == 2) { s = s - i; }\n"
	"    i = i + 1;\n"
	"  }\n"
	"  return s;\n"
	"}\n"
	"print phase(0, 20000);\n"
	"jit_flush();\n"
	"print phase(1, 20000);\n"
	"jit_flush();\n"
	"print phase(2, 20000);\n"
	"jit_flush();\n"
	"print phase(0, 20000);\n";

/* The recording folders, made once (phases also without timing packets: the session's
 * merge then goes by the buffers' offsets). */
static char rec[1024], rec_phases[2][1024];

/* `jitflow record` (with options) of the program text into the folder name under the
 * test's folder. */
static int record_program(const char *name, const char *options, const char *text,
			  size_t size, char *rec_dir, size_t rec_size)
{
	const char *dir = jf_test_tmpdir(), *minivm = getenv("MINIVM");
	char path[1024], cmd[4096];
	char *out = NULL;

	if (!minivm)
		return -1;
	snprintf(path, sizeof(path), "%s/%s.mvm", dir, name);
	jf_test_write_file(path, text, size);
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' record -o '%s' --emulate %s -- '%s' "
		 "--zone-dir '%s' '%s.mvm' 2>&1", dir, jf_test_cli(), name, options, minivm, name,
		 name);
	if (jf_test_run(cmd, &out) != 0) {
		fprintf(stderr, "jitflow record failed:\n%s", out);
		free(out);
		return -1;
	}
	free(out);
	snprintf(rec_dir, rec_size, "%s/%s", dir, name);
	return 0;
}

static int record(void **state)
{
	(void)state;
	if (record_program("rec", "", program, sizeof(program) - 1, rec, sizeof(rec)) < 0 ||
	    record_program("phases", "", phases, sizeof(phases) - 1, rec_phases[0],
			   sizeof(rec_phases[0])) < 0)
		return -1;
	return record_program("untimed", "--no-timing", phases, sizeof(phases) - 1,
			      rec_phases[1], sizeof(rec_phases[1]));
}

/* The position (instructions of its thread) of the last observed-code record of the
 * recording in folder dir. */
static long last_observed_position(const char *dir)
{
	char cmd[2048], *out = NULL, *last, *p;
	long ts;

	snprintf(cmd, sizeof(cmd), "'%s' zone dump '%s'/observed-code-*.dump", jf_test_cli(), dir);
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
	char cmd[2048], *stat = NULL;
	long instructions;
	int count;

	(void)state;
	instructions = jf_test_recorded_instructions(rec);
	/* The premise: an observed record still to apply well after the first buffer. */
	assert_true(last_observed_position(rec) > instructions / 2);
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

/* Where code still changes, stat takes the fast path's blocks (or the block decoder's) and
 * counts those at which no zone record is due (jitflow/count_gate.h) without passing them
 * through the zone filter one by one; its counts are still those of libipt's block
 * decoder (perf_fast_check.h), though observed-code records are placed by instruction
 * count all through the run and the runtime's zone records apply by marker calls. */
static void test_counted_while_code_changes(void **state)
{
	char cmd[4096], *stat = NULL;
	struct jf_perf_session_report rep;
	struct jf_pt_fast_report fp;
	long instructions, blocks;
	uint64_t of;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		const char *dir = rec_phases[i];

		instructions = jf_test_recorded_instructions(dir);
		/* The premise: records placed by position up to the end. */
		assert_true(last_observed_position(dir) > instructions * 9 / 10);
		rep = jf_check_perf_fast(dir, NULL, 1, 0, &fp, &of);
		/* The fast path decoded buffers while code changed: it met code still to
		 * change (decoded ahead over it, or left it to the block decoder). */
		assert_true(rep.fast_buffers > 0);
		assert_true(fp.changing_stretches + fp.hand_overs > 0);
		snprintf(cmd, sizeof(cmd), "'%s' stat --json --recording '%s'", jf_test_cli(), dir);
		assert_int_equal(jf_test_run(cmd, &stat), 0);
		assert_int_equal(jf_test_number_after(stat, "\"instructions\":"), instructions);
		blocks = jf_test_number_after(stat, "\"blocks\":");
		free(stat);
		/* Most blocks were counted without a record. */
		assert_true(rep.counted_blocks > (uint64_t)blocks / 2);
		assert_true(rep.counted_blocks < (uint64_t)blocks);
		/* decode returns every block, as the block decoder does. */
		rep = jf_check_perf_fast(dir, NULL, 0, 0, &fp, &of);
		assert_int_equal(rep.counted_blocks, 0);
	}
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
		cmocka_unit_test(test_counted_while_code_changes),
		cmocka_unit_test(test_report_as_block_decoder),
	};

	jf_test_require_tools("qemu-x86_64 --version", "qemu-x86_64 (qemu-user)");
	return jf_test_exit(cmocka_run_group_tests(tests, record, NULL));
}
