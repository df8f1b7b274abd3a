/* jitflow record of AArch64 programs (the recorder's test programs, cross-compiled into
 * the build folder) under qemu-aarch64: the ETMv4 trace in the snapshot it writes decodes
 * to the same instruction ranges, range by range, in jitflow and in OpenCSD's reference
 * lister trc_pkt_lister; the number of instructions equals what QEMU ran (recording.txt);
 * and the counts the programs' semantics fix are exact: ranges start at a function once
 * per call (it is only entered by BL or BLR, after which a range begins), with the
 * function's address from nm, not from jitflow. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_trace_compare.h"
#include "jitflow/coresight.h"

enum { TRACE_ID = 0x10 }; /* the recorder's ETM (TRCTRACEIDR) */

static char program_path[1024];

static const char *program(const char *name)
{
	snprintf(program_path, sizeof(program_path), "%s/tests/programs/a64_%s",
		 jf_test_binary_dir(), name);
	return program_path;
}

/* Records PROGRAM ARGS into a fresh folder under the test's temporary folder; returns the
 * folder and the program's standard output (malloc'd). */
static const char *record(const char *name, const char *args, char **out)
{
	static char dir[1024];
	char cmd[4096];
	int rc;

	snprintf(dir, sizeof(dir), "%s/rec-%s", jf_test_tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && '%s' record -o '%s' -- '%s' %s", dir,
		 jf_test_cli(), dir, program(name), args);
	rc = jf_test_run(cmd, out);
	if (rc != 0)
		fail_msg("%s: exit status %d", cmd, rc);
	return dir;
}

static uint64_t instructions(const struct cs_run *run)
{
	const struct cs_items *items = &run->id[TRACE_ID];
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < items->n; i++)
		if (items->v[i].kind == 'R')
			n += items->v[i].ninsn;
	return n;
}

/* Records name, decodes the snapshot with jitflow and with the lister, and checks that
 * both give the same ranges, no error, no code missing, and every instruction QEMU ran.
 * lister is left filled for the caller's counts. */
static char *record_and_compare(const char *name, const char *args, struct cs_run *lister)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { { 0 } };
	struct jf_decoder *dec;
	struct cs_run ours;
	char path[1200], *summary, *out;
	const char *dir = record(name, args, &out);
	size_t i;

	cs_run_from_lister_snapshot(lister, dir, jf_test_tmpdir());
	dec = jf_cs_snapshot_decoder_new(dir, map, &err);
	if (!dec)
		fail_msg("%s: %s", dir, err.msg);
	cs_run_from_decoder(&ours, dec);
	assert_int_equal(cs_run_compare(lister, &ours, name), 0);
	assert_int_equal(lister->decode_errors, 0);
	assert_int_equal(ours.decode_errors, 0);
	for (i = 0; i < lister->id[TRACE_ID].n; i++)
		assert_int_equal(lister->id[TRACE_ID].v[i].kind, 'R'); /* no missing code */
	snprintf(path, sizeof(path), "%s/recording.txt", dir);
	summary = jf_test_read_file(path, NULL);
	fprintf(stderr, "%s: %llu ranges, %llu instructions\n", name,
		(unsigned long long)lister->ranges, (unsigned long long)instructions(lister));
	assert_int_equal(instructions(lister),
			 (uint64_t)jf_test_number_after(summary, "instructions = "));
	assert_int_equal(jf_test_number_after(summary, "lost_instructions = "), 0);
	assert_int_equal(jf_test_number_after(summary, "discontinuities = "), 0);
	assert_int_equal(jf_test_number_after(summary, "unended_threads = "), 0);
	assert_int_equal(jf_test_number_after(summary, "bad_translations = "), 0);
	assert_int_equal(jf_test_number_after(summary, "unknown_translations = "), 0);
	free(summary);
	cs_run_free(&ours);
	jf_decoder_free(dec);
	jf_codemap_free(map);
	return out;
}

/* The address of a function in the program, from nm (static programs: where it runs). */
static uint64_t symbol(const char *name, const char *sym)
{
	char cmd[1200], *out;
	unsigned long long addr;

	snprintf(cmd, sizeof(cmd), "nm '%s' | awk '$3 == \"%s\" { print $1 }'", program(name),
		 sym);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	if (sscanf(out, "%llx", &addr) != 1)
		fail_msg("%s: no symbol %s in nm's output", program(name), sym);
	free(out);
	return addr;
}

static uint64_t ranges_at(const struct cs_run *run, uint64_t addr)
{
	const struct cs_items *items = &run->id[TRACE_ID];
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < items->n; i++)
		if (items->v[i].kind == 'R' && items->v[i].start == addr)
			n++;
	return n;
}

/* fib(20) enters fib 2 * fib(21) - 1 = 21891 times, each a BL (recursion). */
static void test_fib(void **state)
{
	struct cs_run lister;
	char *out = record_and_compare("fib", "20", &lister);

	(void)state;
	assert_non_null(strstr(out, "fib(20)=6765"));
	assert_int_equal(ranges_at(&lister, symbol("fib", "fib")), 21891);
	free(out);
	cs_run_free(&lister);
}

/* 1000 calls through each entry of a table of function pointers (BLR), and on_rare as
 * often as the program says it ran. */
static void test_branches(void **state)
{
	struct cs_run lister;
	char *out = record_and_compare("branches", "", &lister);

	(void)state;
	assert_int_equal(ranges_at(&lister, symbol("branches", "op_add")), 1000);
	assert_int_equal(ranges_at(&lister, symbol("branches", "op_xor")), 1000);
	assert_int_equal(ranges_at(&lister, symbol("branches", "op_mul")), 1000);
	assert_int_equal(ranges_at(&lister, symbol("branches", "on_rare")),
			 jf_test_number_after(out, "on_rare="));
	free(out);
	cs_run_free(&lister);
}

/* work() runs 10 times in main and 1000 and 2000 times in two threads: 3010 in all, and
 * the trace names three contexts (thread IDs). */
static void test_threads(void **state)
{
	struct cs_run lister;
	char *out = record_and_compare("threads", "", &lister), *contexts, cmd[1200];

	(void)state;
	assert_int_equal(ranges_at(&lister, symbol("threads", "work")), 3010);
	snprintf(cmd, sizeof(cmd), "cd '%s' && trc_pkt_lister -ss_dir '%s/rec-threads' -decode "
		 "-logstdout | grep -o 'CTXTID=0x[0-9a-f]*' | sort -u | wc -l", jf_test_tmpdir(),
		 jf_test_tmpdir());
	assert_int_equal(jf_test_run(cmd, &contexts), 0);
	assert_int_equal(atoi(contexts), 3);
	free(contexts);
	free(out);
	cs_run_free(&lister);
}

/* Ranges starting at addr in the lister's decode of dir, per context ID (thread): up to
 * max threads' IDs in tids and their counts in counts; returns how many threads. */
static int ranges_at_per_thread(const char *dir, uint64_t addr, long *tids, uint64_t *counts,
				int max)
{
	char cmd[2048], line[4096];
	unsigned long long start;
	long context = -1;
	int n = 0, i;
	const char *p;
	FILE *in;

	snprintf(cmd, sizeof(cmd), "cd '%s' && trc_pkt_lister -ss_dir '%s' -decode -logstdout",
		 jf_test_tmpdir(), dir);
	in = popen(cmd, "r");
	assert_non_null(in);
	while (fgets(line, sizeof(line), in)) {
		if (strstr(line, "OCSD_GEN_TRC_ELEM_PE_CONTEXT") && (p = strstr(line, "CTXTID="))) {
			context = strtol(p + 7, NULL, 16);
			continue;
		}
		p = strstr(line, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=");
		if (!p || sscanf(p, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=%llx:", &start) != 1 ||
		    start != addr)
			continue;
		for (i = 0; i < n && tids[i] != context; i++)
			;
		if (i == n) {
			assert_true(n < max);
			tids[n] = context;
			counts[n++] = 0;
		}
		counts[i]++;
	}
	assert_int_equal(pclose(in), 0);
	return n;
}

/* Four workers started back to back, running at the same time (the trace goes from one
 * to another): worker K calls work() 1000 (K + 1) times on its own thread, whose ID it
 * prints. */
static void test_threadstart(void **state)
{
	struct cs_run lister;
	char *out = record_and_compare("threadstart", "", &lister), dir[1100];
	const char *line = out;
	uint64_t work = symbol("threadstart", "work"), counts[8];
	long tids[8];
	int workers = 0, threads, i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/rec-threadstart", jf_test_tmpdir());
	threads = ranges_at_per_thread(dir, work, tids, counts, 8);
	assert_int_equal(threads, 4);
	while ((line = strstr(line, "worker ")) != NULL) {
		unsigned long k, n;
		long tid;

		assert_int_equal(sscanf(line, "worker %lu tid=%ld work=%lu", &k, &tid, &n), 3);
		assert_int_equal(n, 1000 * (k + 1));
		for (i = 0; i < threads && tids[i] != tid; i++)
			;
		assert_true(i < threads);
		assert_int_equal(counts[i], n);
		workers++;
		line++;
	}
	assert_int_equal(workers, 4);
	assert_int_equal(ranges_at(&lister, work), 10000);
	free(out);
	cs_run_free(&lister);
}

/* A dynamically linked PIE: the loader, libc and the program where QEMU put them. */
static void test_fib_dynamic(void **state)
{
	struct cs_run lister;
	char *out = record_and_compare("fib_dyn", "12", &lister);

	(void)state;
	assert_non_null(strstr(out, "fib(12)=144"));
	free(out);
	cs_run_free(&lister);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fib),
		cmocka_unit_test(test_branches),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_threadstart),
		cmocka_unit_test(test_fib_dynamic),
	};
	char check[1200];

	jf_test_require_tools("command -v trc_pkt_lister", "trc_pkt_lister (libopencsd-bin)");
	jf_test_require_tools("command -v qemu-aarch64", "qemu-aarch64 (qemu-user)");
	snprintf(check, sizeof(check), "test -x '%s'", program("fib"));
	jf_test_require_tools(check, "the AArch64 test programs, built with aarch64-linux-gnu-gcc "
			      "(gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
