/* Signals under `jitflow record` (plugin backend), checked per thread against two
 * independent decoders (Linux perf's and jitflow's, through tests/recorder/signal_counts.sh)
 * and against the counts the test programs' semantics fix:
 *   - sigbranches: a timer's signals over a hot path of indirect calls, returns and an
 *     indirect jump (a signal right after an indirect branch is a handler entry, not the
 *     branch going to the handler): every call and every handler entry exact, no OVF;
 *   - sigstress: 8 threads started back to back, signals to each (pthread_kill and a
 *     per-thread timer), siglongjmp out of a handler, a fork: every thread's calls and
 *     handler entries exact, under its own thread id, in each of a few recordings
 *     (tools/bench/signal-stress.sh runs 50);
 *   - threadstart: 4 threads started back to back: every thread's calls under its own
 *     thread id (tools/bench/tid-check.sh runs 30 per backend);
 *   - sigjmp_timer: a process-wide timer's handler leaving a busy loop by siglongjmp;
 *   - sigpoll: a SIGSEGV handler resuming the thread elsewhere (an OVF each time): the
 *     instructions perf and jitflow decode are QEMU's less those the recorder says an
 *     OVF hides.
 * A missing perf or qemu-x86_64 fails (tools/setup.sh installs both). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STRESS_RECORDINGS = 3, STRESS_WORKERS = 8, TID_RECORDINGS = 3, TID_WORKERS = 4 };

static const char *program(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/tests/programs/recprog_%s", jf_test_binary_dir(), name);
	return path;
}

/* Record program `name` into dir; returns the program's stdout. */
static char *record(const char *name, const char *dir)
{
	char cmd[4096], *out = NULL;

	snprintf(cmd, sizeof(cmd), "%s record --emulate -o %s -- %s 2>%s.err", jf_test_cli(), dir,
		 program(name), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	return out;
}

/* The output of signal_counts.sh for symbols (space-separated) of program name. */
static char *counts(const char *name, const char *dir, const char *symbols)
{
	char cmd[4096], *out = NULL;

	snprintf(cmd, sizeof(cmd), "sh %s/tests/recorder/signal_counts.sh %s %s %s %s",
		 jf_test_source_dir(), jf_test_cli(), dir, program(name), symbols);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	return out;
}

/* The count signal_counts.sh printed for (decoder, tid, symbol, what); 0 when absent.
 * tid 0: the only thread that has one. */
static long count_of(const char *counts, const char *decoder, int tid, const char *symbol,
		     const char *what)
{
	const char *line = counts;

	while (line && *line) {
		char d[16], s[64], w[16];
		int t;
		long n;

		if (sscanf(line, "%15s %d %63s %15s %ld", d, &t, s, w, &n) == 5 &&
		    !strcmp(d, decoder) && (!tid || t == tid) && !strcmp(s, symbol) &&
		    !strcmp(w, what))
			return n;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return 0;
}

static long printed(const char *out, const char *key)
{
	char pattern[64];

	snprintf(pattern, sizeof(pattern), "%s=", key);
	return jf_test_number_after(out, pattern);
}

/* A number in the recording's manifest.json ("key": N; the first one). */
static long manifest_number(const char *dir, const char *key)
{
	char path[600], pattern[96], *m;
	long n;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	m = jf_test_read_file(path, NULL);
	snprintf(pattern, sizeof(pattern), "\"%s\": ", key);
	n = jf_test_number_after(m, pattern);
	free(m);
	return n;
}

/* perf's decode errors (--itrace=e): none but an "Overflow packet" for each OVF the
 * recorder wrote and counted in the manifest (a handler left by siglongjmp right after a
 * conditional branch, whose direction never shows). */
static void assert_no_perf_errors(const char *dir)
{
	char cmd[4096], *out = NULL;
	long ovf = 0;
	const char *p;

	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data --itrace=e 2>/dev/null", dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	for (p = strstr(out, "Overflow packet"); p; p = strstr(p + 1, "Overflow packet"))
		ovf++;
	assert_int_equal(ovf, manifest_number(dir, "written_as_overflow"));
	for (p = strstr(out, "error"); p; p = strstr(p + 1, "error")) {
		const char *eol = strchr(p, '\n'), *o = strstr(p, "Overflow packet");

		if (!o || (eol && eol < o)) /* an error on a line that is not an OVF's */
			fail_msg("perf reports decode errors:\n%.2000s", out);
	}
	free(out);
}

static void test_signals_after_indirect_branches(void **state)
{
	static const char *const ops[] = { "op_add", "op_xor", "op_mul", "op_neg" };
	char dir[600], *out, *c;
	long ticks, rounds;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/sigbranches", jf_test_tmpdir());
	out = record("sigbranches", dir);
	ticks = printed(out, "tick");
	rounds = printed(out, "rounds");
	free(out);
	assert_true(ticks > 0);
	assert_no_perf_errors(dir);
	c = counts("sigbranches", dir, "on_timer op_add op_xor op_mul op_neg");
	/* The handler: entered by the signal only, as often as it counted itself. */
	assert_int_equal(count_of(c, "perf", 0, "on_timer", "starts"), ticks);
	assert_int_equal(count_of(c, "perf", 0, "on_timer", "calls"), 0);
	assert_int_equal(count_of(c, "jitflow", 0, "on_timer", "blocks"), ticks);
	/* Each op: called through the table once per round, never "called" by a signal. */
	for (i = 0; i < 4; i++) {
		assert_int_equal(count_of(c, "perf", 0, ops[i], "calls"), rounds);
		assert_int_equal(count_of(c, "jitflow", 0, ops[i], "blocks"), rounds);
	}
	free(c);
	/* Every delivery placed exactly: none written as an overflow. */
	assert_int_equal(manifest_number(dir, "written_as_overflow"), 0);
	assert_int_equal(manifest_number(dir, "target_never_ran"), 0);
	assert_int_equal(manifest_number(dir, "unexplained_transfers"), 0);
}

/* One recording of sigstress: every worker's counts under the tid it printed. */
static void check_stress_recording(const char *dir)
{
	char *out = record("sigstress", dir), *c, path[700];
	const char *line;
	int workers = 0;

	assert_no_perf_errors(dir);
	c = counts("sigstress", dir, "work on_usr1 on_usr2 on_alrm");
	for (line = strstr(out, "worker "); line; line = strstr(line + 1, "worker ")) {
		int k, tid, usr1, usr2, alrm;
		long work;

		assert_int_equal(sscanf(line, "worker %d tid=%d work=%ld usr1=%d usr2=%d alrm=%d", &k,
					&tid, &work, &usr1, &usr2, &alrm), 6);
		/* Fixed by the program: 20000 + 1000 k calls, 10 SIGUSR1, 5 SIGUSR2. */
		assert_int_equal(work, 20000 + 1000 * k);
		assert_int_equal(usr1, 10);
		assert_int_equal(usr2, 5);
		assert_int_equal(count_of(c, "perf", tid, "work", "calls"), work);
		assert_int_equal(count_of(c, "jitflow", tid, "work", "blocks"), work);
		assert_int_equal(count_of(c, "perf", tid, "on_usr1", "starts"), usr1);
		assert_int_equal(count_of(c, "jitflow", tid, "on_usr1", "blocks"), usr1);
		assert_int_equal(count_of(c, "perf", tid, "on_usr2", "starts"), usr2);
		assert_int_equal(count_of(c, "jitflow", tid, "on_usr2", "blocks"), usr2);
		assert_int_equal(count_of(c, "perf", tid, "on_alrm", "starts"), alrm);
		assert_int_equal(count_of(c, "jitflow", tid, "on_alrm", "blocks"), alrm);
		workers++;
	}
	assert_int_equal(workers, STRESS_WORKERS);
	/* The fork is reported, not followed. */
	assert_true(strstr(out, "fork child exit=7") != NULL);
	free(out);
	free(c);
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	out = jf_test_read_file(path, NULL);
	assert_true(strstr(out, "the child process is not followed") != NULL);
	free(out);
}

static void test_threads_with_signals(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < STRESS_RECORDINGS; i++) {
		char dir[600];

		snprintf(dir, sizeof(dir), "%s/sigstress-%d", jf_test_tmpdir(), i);
		check_stress_recording(dir);
	}
}

/* threadstart: 4 workers started back to back, worker K calling work() 1000 (K + 1)
 * times; each worker's calls under the tid it printed, in perf and in jitflow, in each of
 * a few recordings (tools/bench/tid-check.sh runs 30 per backend). */
static void test_threads_started_together(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < TID_RECORDINGS; i++) {
		char dir[600], *out, *c;
		const char *line;
		int workers = 0;

		snprintf(dir, sizeof(dir), "%s/threadstart-%d", jf_test_tmpdir(), i);
		out = record("threadstart", dir);
		assert_no_perf_errors(dir);
		c = counts("threadstart", dir, "work");
		for (line = strstr(out, "worker "); line; line = strstr(line + 1, "worker ")) {
			int k, tid;
			long work;

			assert_int_equal(sscanf(line, "worker %d tid=%d work=%ld", &k, &tid, &work), 3);
			assert_int_equal(work, 1000 * (k + 1));
			assert_int_equal(count_of(c, "perf", tid, "work", "calls"), work);
			assert_int_equal(count_of(c, "jitflow", tid, "work", "blocks"), work);
			workers++;
		}
		assert_int_equal(workers, TID_WORKERS);
		free(out);
		free(c);
	}
}

/* sigjmp_timer: a process-wide timer whose handler leaves by siglongjmp out of a busy
 * loop of indirect calls (the program that once seemed to hang under the recorder: it
 * was the program's own race, see docs/reliability.md). It ends, every handler entry is
 * a trace start at the handler in perf and a block in jitflow, as many as it counted, both
 * decoders count the same calls of each op, and the calls are as many as the program's
 * finished iterations plus at most one per signal. */
static void test_timer_longjmp_out_of_busy_loop(void **state)
{
	static const char *const ops[] = { "op_a", "op_b" };
	char dir[600], *out, *c;
	long hits, iterations, calls = 0;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/sigjmp_timer", jf_test_tmpdir());
	out = record("sigjmp_timer", dir);
	hits = printed(out, "on_alrm");
	iterations = printed(out, "iterations");
	free(out);
	assert_true(hits >= 20);
	assert_no_perf_errors(dir);
	c = counts("sigjmp_timer", dir, "on_alrm op_a op_b");
	assert_int_equal(count_of(c, "perf", 0, "on_alrm", "starts"), hits);
	assert_int_equal(count_of(c, "jitflow", 0, "on_alrm", "blocks"), hits);
	/* Under emulation one op may never run between two signals; together they ran
	 * once per finished iteration plus at most once per signal that cut a call short. */
	for (i = 0; i < 2; i++) {
		long op_calls = count_of(c, "perf", 0, ops[i], "calls");

		assert_int_equal(count_of(c, "jitflow", 0, ops[i], "blocks"), op_calls);
		calls += op_calls;
	}
	assert_true(iterations >= 0);
	assert_in_range(calls, iterations, iterations + hits);
	free(c);
}

/* sigpoll: a SIGSEGV handler resumes the thread elsewhere from a block that a direct jump
 * continues, as a JVM's safepoint poll does; each fault is an OVF. A decoder skips both
 * blocks of that straight-line run, and the recorder's hidden instructions must say so:
 * the JIT code changes it places by position (observed-code files) are counted from the
 * instructions a decoder sees, so a shortfall here applied every later change of the
 * thread late. QEMU's traced instructions less the hidden ones equal what perf's decoder
 * and jitflow's (libipt's block decoder and the fast path) count. */
static void test_poll_resumed_elsewhere(void **state)
{
	char dir[600], cmd[4096], *out;
	long seen, polls;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/sigpoll", jf_test_tmpdir());
	out = record("sigpoll", dir);
	polls = printed(out, "polls");
	free(out);
	assert_int_equal(polls, 16);
	assert_int_equal(manifest_number(dir, "written_as_overflow"), polls);
	assert_no_perf_errors(dir);
	seen = manifest_number(dir, "traced_instructions") -
	       manifest_number(dir, "hidden_instructions");
	snprintf(cmd, sizeof(cmd), "%s/perf.data", dir);
	assert_int_equal(jf_test_perf_instructions(cmd), seen);
	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s' --decoder=libipt-block", jf_test_cli(),
		 dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_int_equal(jf_test_number_after(out, "instructions"), seen);
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s'", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_int_equal(jf_test_number_after(out, "instructions"), seen);
	free(out);
	printf("%s: %ld polls, each an OVF; %ld instructions seen by perf and jitflow, as the "
	       "recorder's traced less hidden\n", dir, polls, seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals_after_indirect_branches),
		cmocka_unit_test(test_threads_with_signals),
		cmocka_unit_test(test_threads_started_together),
		cmocka_unit_test(test_timer_longjmp_out_of_busy_loop),
		cmocka_unit_test(test_poll_resumed_elsewhere),
	};

	jf_test_require_tools("perf --version && qemu-x86_64 --version",
			      "perf (linux-perf) or qemu-x86_64 (qemu-user)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
