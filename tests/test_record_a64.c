/* jitflow record of AArch64 programs (the recorder's test programs, cross-compiled into
 * the build folder) under qemu-aarch64: the ETMv4 trace in the snapshot it writes decodes
 * to the same instruction ranges, range by range, in jitflow and in OpenCSD's reference
 * lister trc_pkt_lister; the cs_etm perf.data beside it lists the same instructions, in
 * the same order, in Linux perf (`perf script --itrace=i1i`) and in `jitflow decode
 * --perf`; every Timestamp packet the lister shows holds the number of instructions the
 * lister decoded before it (the synthetic clock); the number of instructions equals what
 * QEMU ran (recording.txt); and the counts the programs' semantics fix are exact: ranges
 * start at a function once per call (it is only entered by BL or BLR, after which a range
 * begins), with the function's address from nm, not from jitflow. A cut or corrupt
 * perf.data of the recorder is reported where it breaks. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a64_snapshot_check.h"
#include "cs_trace_compare.h"
#include "jitflow/coresight.h"

enum { TRACE_ID = JF_TEST_A64_TRACE_ID };
/* The synthetic clock's value before the first instruction (perf time, ns). */
#define CLOCK_BASE 1000000000ull

static char program_path[1024];

static const char *program(const char *name)
{
	snprintf(program_path, sizeof(program_path), "%s/tests/programs/a64_%s",
		 jf_test_binary_dir(), name);
	return program_path;
}

/* Records PROGRAM ARGS (with --filter=FILTER unless NULL; with formatted, the trace
 * buffers in CoreSight formatter frames) into a fresh folder under the test's temporary
 * folder; returns the folder and the program's standard output (malloc'd). */
static const char *record(const char *name, const char *args, const char *filter,
			  int formatted, char **out)
{
	static char dir[1024];
	char cmd[4096], option[300] = "";
	int rc;

	if (filter)
		snprintf(option, sizeof(option), "--filter='%s'", filter);
	snprintf(dir, sizeof(dir), "%s/rec-%s%s%s", jf_test_tmpdir(), name,
		 filter ? "-filtered" : "", formatted ? "-formatted" : "");
	/* JITFLOW_ZONE_DIR set (the recorder then leaves it), the same for every recording:
	 * the program's environment, and so the instructions its start-up runs, do not
	 * depend on the recording's folder. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && JITFLOW_ZONE_DIR='%s' '%s' record %s %s -o '%s' "
		 "-- '%s' %s", dir, jf_test_tmpdir(), jf_test_cli(), option,
		 formatted ? "--etm-buffer=formatted" : "", dir, program(name), args);
	rc = jf_test_run(cmd, out);
	if (rc != 0)
		fail_msg("%s: exit status %d", cmd, rc);
	return dir;
}

/* Every timestamp element in the lister's output equals the clock's base plus the
 * instructions of the ranges before it; with a filter (exact = 0) the clock also counts
 * the instructions that ran untraced: timestamps never go back and are at least that.
 * Returns how many there are. */
static uint64_t check_timestamps(const char *listing, int exact)
{
	uint64_t last = 0;
	uint64_t insns = 0, n = 0;
	unsigned long long ts, count;
	const char *p, *end;
	char *num_end;

	for (p = listing; *p; p = *end ? end + 1 : end) {
		/* Each search stays inside its line: timestamps are rare, and a search of the
		 * whole rest of the listing from every line would be quadratic. */
		size_t len;
		const char *range, *stamp;

		end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		len = (size_t)(end - p);
		range = memmem(p, len, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(", 30);
		stamp = memmem(p, len, "OCSD_GEN_TRC_ELEM_TIMESTAMP( [ TS=", 34);
		if (range) {
			range = memmem(range, (size_t)(end - range), "num_i(", 6);
			assert_non_null(range);
			/* strtoull, not sscanf, which measures the whole rest of the listing
			 * on every call. */
			count = strtoull(range + 6, &num_end, 10);
			assert_true(num_end > range + 6 && *num_end == ')');
			insns += count;
		} else if (stamp) {
			ts = strtoull(stamp + 34, &num_end, 16);
			assert_true(num_end > stamp + 34);
			if (exact ? ts != CLOCK_BASE + insns : ts < CLOCK_BASE + insns || ts < last)
				fail_msg("timestamp %llu after %llu instructions", ts - CLOCK_BASE,
					 (unsigned long long)insns);
			last = ts;
			n++;
		}
	}
	return n;
}

static void lister_run(const char *dir, int filtered, struct cs_run *run)
{
	char cmd[2048], *out;
	FILE *p;

	/* The lister writes trc_pkt_lister.ppl into its working folder. */
	snprintf(cmd, sizeof(cmd), "cd '%s' && trc_pkt_lister -ss_dir '%s' -decode -logstdout",
		 jf_test_tmpdir(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	p = fmemopen(out, strlen(out), "r");
	assert_non_null(p);
	cs_run_from_lister(run, p);
	fclose(p);
	assert_true(check_timestamps(out, !filtered) > 0);
	free(out);
}

/* A listing: one executed instruction's address a line, in hex. */
struct listing {
	char *text;
	size_t len, cap;
};

static void listing_add_range(struct listing *l, uint64_t start, uint64_t end)
{
	uint64_t ip;

	for (ip = start; ip < end; ip += 4) {
		if (l->len + 24 > l->cap) {
			l->cap = l->cap ? l->cap * 2 : 1 << 16;
			l->text = realloc(l->text, l->cap);
			assert_non_null(l->text);
		}
		l->len += (size_t)sprintf(l->text + l->len, "%llx\n", (unsigned long long)ip);
	}
}

static const char *listing_text(const struct listing *l)
{
	return l->text ? l->text : "";
}

/* dir/perf.data decoded by Linux perf and by `jitflow decode --perf` (no error) lists the
 * instructions of the lister's ranges. (perf 6.1 lists a range once a later element of the
 * trace follows it: the recorder ends the trace with a Timestamp, so the last range is
 * listed too, also where a filter stopped the trace after it.) */
static void check_perf_data(const char *dir, const struct cs_run *lister)
{
	struct listing want = { 0 }, perf = { 0 }, ours = { 0 };
	const struct cs_items *items = &lister->id[TRACE_ID];
	char cmd[2400], *out, *next;
	unsigned long long ip, start, end;
	unsigned src;
	const char *p;
	size_t i;

	for (i = 0; i < items->n; i++)
		listing_add_range(&want, items->v[i].start, items->v[i].end);
	snprintf(cmd, sizeof(cmd), "perf script -i '%s/perf.data' --itrace=i1i -F ip", dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	/* strtoull, not sscanf: sscanf measures the whole rest of the text at every call. */
	for (p = out;; p = next) {
		ip = strtoull(p, &next, 16);
		if (next == p)
			break;
		listing_add_range(&perf, ip, ip + 4);
	}
	free(out);
	/* In this process (JITFLOW_ISOLATE=0): perf sideband changes the code map while
	 * decoding, so the crash-isolating child would answer one record at a time (about
	 * 20x slower); test_cs_isolation covers that path. */
	snprintf(cmd, sizeof(cmd), "JITFLOW_ISOLATE=0 HOME='%s' '%s' decode --perf '%s/perf.data' "
		 "--format=jsonl",
		 jf_test_tmpdir(), jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_null(strstr(out, "\"kind\":\"error\""));
	/* Nothing is lost before the first A-Sync, which starts the stream. */
	assert_null(strstr(out, "\"reason\":\"no-sync\""));
	for (p = out; (p = strstr(p, "{\"kind\":\"range\",\"source\":")); p++) {
		char line[256];
		size_t len = strcspn(p, "\n");

		/* sscanf on a copy of the line: on the whole text it would measure all of it */
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = 0;
		assert_int_equal(sscanf(line, "{\"kind\":\"range\",\"source\":%u,\"start\":\"%llx\","
					"\"end\":\"%llx\"", &src, &start, &end), 3);
		assert_int_equal(src, TRACE_ID);
		listing_add_range(&ours, start, end);
	}
	free(out);
	assert_true(want.len > 0);
	assert_string_equal(listing_text(&perf), listing_text(&want));
	assert_string_equal(listing_text(&ours), listing_text(&want));
	free(want.text);
	free(perf.text);
	free(ours.text);
}

/* Records name (with --filter=filter unless NULL, in formatter frames when formatted),
 * decodes the snapshot with jitflow and with the lister, and checks that both give the
 * same ranges, no error, no code missing, and every instruction QEMU ran (inside the
 * filter). lister is left filled for the caller's counts. */
static char *record_checked(const char *name, const char *args, const char *filter,
			    int formatted, struct cs_run *lister)
{
	char path[1200], *summary, *out;
	const char *dir = record(name, args, filter, formatted, &out);

	lister_run(dir, filter != NULL, lister);
	check_perf_data(dir, lister);
	jf_test_a64_decoder_matches(dir, name, lister);
	if (!filter) {
		snprintf(path, sizeof(path), "%s/recording.txt", dir);
		summary = jf_test_read_file(path, NULL);
		assert_int_equal(jf_test_number_after(summary, "filtered_instructions = "), 0);
		free(summary);
	}
	return out;
}

static char *record_filtered(const char *name, const char *args, const char *filter,
			     struct cs_run *lister)
{
	return record_checked(name, args, filter, 0, lister);
}

static char *record_and_compare(const char *name, const char *args, struct cs_run *lister)
{
	return record_checked(name, args, NULL, 0, lister);
}

/* A function's address (field 1) or size (field 2) in the program, from nm -S (static
 * programs: where it runs). */
static uint64_t nm_field(const char *name, const char *sym, int field)
{
	char cmd[1200], *out;
	unsigned long long value;

	snprintf(cmd, sizeof(cmd), "nm -S '%s' | awk '$NF == \"%s\" { print $%d }'",
		 program(name), sym, field);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	if (sscanf(out, "%llx", &value) != 1)
		fail_msg("%s: no symbol %s in nm's output", program(name), sym);
	free(out);
	return value;
}

static uint64_t symbol(const char *name, const char *sym)
{
	return nm_field(name, sym, 1);
}

static uint64_t symbol_size(const char *name, const char *sym)
{
	return nm_field(name, sym, 2);
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

static long recording_number(const char *name, const char *key)
{
	char path[1200], *summary;
	long n;

	snprintf(path, sizeof(path), "%s/rec-%s/recording.txt", jf_test_tmpdir(), name);
	summary = jf_test_read_file(path, NULL);
	n = jf_test_number_after(summary, key);
	free(summary);
	return n;
}

/* A 100 us timer over a loop of indirect calls, returns and a jump table: many signals
 * arrive right after an indirect branch or a conditional one, where the handler's first
 * block cannot say where the thread was; its rt_sigreturn does. Every delivery is the
 * handler's entry as often as it counted itself, no discontinuity, nothing lost (checked
 * in record_checked), and each op called once per round. */
static void test_signals_after_branches(void **state)
{
	static const char *const ops[] = { "op_add", "op_xor", "op_mul", "op_neg" };
	struct cs_run lister;
	char *out = record_and_compare("sigbranches", "5000", &lister);
	long ticks = jf_test_number_after(out, "tick="), rounds = jf_test_number_after(out, "rounds=");
	size_t i;

	(void)state;
	assert_true(ticks > 0);
	assert_int_equal(recording_number("sigbranches", "handler_entries = "), ticks);
	assert_int_equal(ranges_at(&lister, symbol("sigbranches", "on_timer")), ticks);
	/* Some of them were placed by an rt_sigreturn: with dozens of deliveries into a
	 * loop of nothing but conditional and indirect branches, none is not a chance. */
	assert_true(recording_number("sigbranches", "signals_resolved = ") > 0);
	/* Each op is one block, entered only by its call: a call's range starts there
	 * once, also when a signal came right after the BLR (the trace resumes there). */
	for (i = 0; i < 4; i++)
		assert_int_equal(ranges_at(&lister, symbol("sigbranches", ops[i])), rounds);
	free(out);
	cs_run_free(&lister);
}

/* A timer's handler that leaves by siglongjmp: no rt_sigreturn ever says where a signal
 * after an indirect branch interrupted the thread (written as the trace leaving there)
 * or after a conditional one (an Overflow, its instructions counted as lost, which
 * record_checked takes off QEMU's count). Every handler entry as counted by the program. */
static void test_signal_handler_longjmp(void **state)
{
	struct cs_run lister;
	char *out = record_and_compare("sigjmp_timer", "", &lister);
	long hits = jf_test_number_after(out, "on_alrm=");

	(void)state;
	assert_true(hits >= 20);
	assert_int_equal(recording_number("sigjmp_timer", "handler_entries = "), hits);
	assert_int_equal(ranges_at(&lister, symbol("sigjmp_timer", "on_alrm")), hits);
	free(out);
	cs_run_free(&lister);
}

/* From the lister's decode of dir, per context ID (thread): the ranges starting at addr,
 * or with addr 0 the instructions of all ranges. Up to max threads' IDs in tids and their
 * counts in counts; returns how many threads. */
static int per_thread(const char *dir, uint64_t addr, long *tids, uint64_t *counts, int max)
{
	char cmd[2048], line[4096];
	unsigned long long start, end;
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
		if (!p || sscanf(p, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=%llx:[%llx]", &start,
				 &end) != 2 || (addr && start != addr))
			continue;
		for (i = 0; i < n && tids[i] != context; i++)
			;
		if (i == n) {
			assert_true(n < max);
			tids[n] = context;
			counts[n++] = 0;
		}
		counts[i] += addr ? 1 : (end - start) / 4;
	}
	assert_int_equal(pclose(in), 0);
	return n;
}

/* Each thread's time in jitflow's split of the recording (its perf.data) is its own: on
 * the synthetic clock (an instruction a nanosecond) exactly the instructions the lister
 * decodes in its context, however the core went from one thread to another; and there is
 * no other thread. Returns how many threads. */
static int check_thread_times(const char *dir)
{
	char cmd[2400], *out, *line, *save = NULL;
	uint64_t insns[16], time[16] = { 0 };
	long tids[16], tid;
	unsigned long long n, t;
	int threads = per_thread(dir, 0, tids, insns, 16), seen = 0, i;

	snprintf(cmd, sizeof(cmd), "HOME='%s' '%s' split '%s' --csv split", jf_test_tmpdir(),
		 jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* tid -1: all threads; no other thread is not a context in the trace. */
		if (sscanf(line, "%ld,%*[a-z],%llu,%llu", &tid, &n, &t) != 3 || tid == -1)
			continue;
		for (i = 0; i < threads && tids[i] != tid; i++)
			;
		if (i == threads)
			fail_msg("thread %ld in jitflow's split is no context in the trace", tid);
		time[i] += t;
	}
	free(out);
	for (i = 0; i < threads; i++) {
		if (time[i] != insns[i])
			fail_msg("thread %ld: time %llu, instructions %llu", tids[i],
				 (unsigned long long)time[i], (unsigned long long)insns[i]);
		seen++;
	}
	return seen;
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
	/* perf names the threads from the context IDs: 10, 1000 and 2000 calls of work(). */
	snprintf(cmd, sizeof(cmd), "perf script -i '%s/rec-threads/perf.data' --itrace=i1i -F "
		 "tid,ip | awk '$2 == \"%llx\" { print $1 }' | sort | uniq -c | awk '{ print $1 }' "
		 "| sort -n | tr '\\n' ' '", jf_test_tmpdir(),
		 (unsigned long long)symbol("threads", "work"));
	assert_int_equal(jf_test_run(cmd, &contexts), 0);
	assert_string_equal(contexts, "10 1000 2000 ");
	free(contexts);
	snprintf(cmd, sizeof(cmd), "%s/rec-threads", jf_test_tmpdir());
	assert_int_equal(check_thread_times(cmd), 3);
	free(out);
	cs_run_free(&lister);
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
	threads = per_thread(dir, work, tids, counts, 8);
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
	assert_int_equal(check_thread_times(dir), 5);
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

/* --filter=START-END over fib, as an address range comparator pair selects it: only fib
 * is traced, entered 2 fib(13) - 1 = 465 times by fib(12), every range inside it. */
static void test_filter_function(void **state)
{
	uint64_t start = symbol("fib", "fib"), end = start + symbol_size("fib", "fib");
	const struct cs_items *items;
	struct cs_run lister;
	char filter[64], *out;
	size_t i;

	(void)state;
	snprintf(filter, sizeof(filter), "%llx-%llx", (unsigned long long)start,
		 (unsigned long long)end);
	out = record_filtered("fib", "12", filter, &lister);
	assert_non_null(strstr(out, "fib(12)=144"));
	assert_int_equal(ranges_at(&lister, start), 465);
	items = &lister.id[TRACE_ID];
	for (i = 0; i < items->n; i++) {
		assert_true(items->v[i].start >= start);
		assert_true(items->v[i].end <= end);
	}
	free(out);
	cs_run_free(&lister);
}

/* --filter=jit: the page a64_jit maps and then makes executable (mprotect) is all that is
 * traced: its 2 instructions, 100 times, at the address the program prints. */
static void test_filter_jit(void **state)
{
	const struct cs_items *items;
	struct cs_run lister;
	unsigned long long page;
	char *out;
	size_t i;

	(void)state;
	out = record_filtered("jit", "", "jit", &lister);
	assert_non_null(strstr(out, "page="));
	assert_int_equal(sscanf(strstr(out, "page="), "page=%llx", &page), 1);
	items = &lister.id[TRACE_ID];
	assert_int_equal(items->n, 100);
	for (i = 0; i < items->n; i++) {
		assert_int_equal(items->v[i].start, page);
		assert_int_equal(items->v[i].end, page + 8);
		assert_int_equal(items->v[i].ninsn, 2);
	}
	free(out);
	cs_run_free(&lister);
}

/* The trace buffers in CoreSight formatter frames (as an ETR writes them, trace ID 0x10 in
 * every frame): the snapshot (format=coresight) and the perf.data (formatted AUX data)
 * pass the same checks as raw ones (lister, perf, jitflow, QEMU's count), with threads
 * that the core goes between; and fib(15) decodes to the very ranges of its raw
 * recording. */
static void test_formatted_buffers(void **state)
{
	struct cs_run raw, formatted;
	char *out, path[1200], *ini;
	size_t i;

	(void)state;
	out = record_checked("threadstart", "", NULL, 1, &formatted);
	snprintf(path, sizeof(path), "%s/rec-threadstart-formatted", jf_test_tmpdir());
	assert_int_equal(check_thread_times(path), 5);
	free(out);
	cs_run_free(&formatted);

	free(record_checked("fib", "15", NULL, 1, &formatted));
	snprintf(path, sizeof(path), "%s/rec-fib-formatted/trace.ini", jf_test_tmpdir());
	ini = jf_test_read_file(path, NULL);
	assert_non_null(strstr(ini, "format=coresight"));
	free(ini);
	free(record_and_compare("fib", "15", &raw));
	assert_true(raw.id[TRACE_ID].n > 0);
	assert_int_equal(formatted.id[TRACE_ID].n, raw.id[TRACE_ID].n);
	for (i = 0; i < raw.id[TRACE_ID].n; i++) {
		assert_int_equal(formatted.id[TRACE_ID].v[i].kind, raw.id[TRACE_ID].v[i].kind);
		assert_int_equal(formatted.id[TRACE_ID].v[i].start, raw.id[TRACE_ID].v[i].start);
		assert_int_equal(formatted.id[TRACE_ID].v[i].end, raw.id[TRACE_ID].v[i].end);
	}
	cs_run_free(&raw);
	cs_run_free(&formatted);
}

static void write_bytes(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, size, f), size);
	assert_int_equal(fclose(f), 0);
}

/* The recorder's perf.data cut inside its trace: what comes before the cut decodes and the
 * rest of the data is reported lost where the file ends; with its ETMv4 magic number
 * damaged: refused, naming the file and the offset of the bad CPU block. */
static void test_cut_and_corrupt_perf_data(void **state)
{
	static const uint8_t etmv4_magic[8] = { 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40 };
	char cmd[2400], want[1400], path[1200], bad[1200], *out, *summary;
	const char *dir = jf_test_tmpdir();
	uint64_t data_offset, data_size, total, trace_bytes;
	struct cs_run lister;
	uint8_t *data, *magic;
	size_t size, at;

	(void)state;
	free(record_and_compare("fib", "12", &lister));
	cs_run_free(&lister);
	snprintf(path, sizeof(path), "%s/rec-fib/recording.txt", dir);
	summary = jf_test_read_file(path, NULL);
	total = (uint64_t)jf_test_number_after(summary, "instructions = ");
	trace_bytes = (uint64_t)jf_test_number_after(summary, "trace_bytes = ");
	free(summary);
	snprintf(path, sizeof(path), "%s/rec-fib/perf.data", dir);
	data = jf_test_read_file(path, &size);
	assert_non_null(data);
	memcpy(&data_offset, data + 40, 8); /* the header's data section */
	memcpy(&data_size, data + 48, 8);
	assert_true(data_offset + data_size <= size);

	/* Halfway into the trace: its AUXTRACE record ends before the EXIT (64 bytes) and the
	 * FINISHED_ROUND (8) at the end of the data. */
	at = (size_t)(data_offset + data_size - 72 - trace_bytes / 2);
	snprintf(bad, sizeof(bad), "%s/cut.data", dir);
	write_bytes(bad, data, at);
	snprintf(cmd, sizeof(cmd), "'%s' stat --perf '%s' 2>&1", jf_test_cli(), bad);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_true(jf_test_number_after(out, "instructions ") > 0);
	assert_true((uint64_t)jf_test_number_after(out, "instructions ") < total);
	snprintf(want, sizeof(want), "file-cut                     1 times, %llu bytes (first at "
		 "offset 0x%zx)", (unsigned long long)(data_offset + data_size - at), at);
	if (!strstr(out, want))
		fail_msg("no \"%s\" in:\n%s", want, out);
	free(out);

	magic = memmem(data, size, etmv4_magic, sizeof(etmv4_magic));
	assert_non_null(magic);
	magic[0] = 0x41;
	snprintf(bad, sizeof(bad), "%s/corrupt.data", dir);
	write_bytes(bad, data, size);
	snprintf(cmd, sizeof(cmd), "'%s' stat --perf '%s' 2>&1", jf_test_cli(), bad);
	assert_int_not_equal(jf_test_run(cmd, &out), 0);
	snprintf(want, sizeof(want), "%s: offset 0x%zx: cs_etm CPU block starts with "
		 "0x4040404040404041, expected", bad, (size_t)(magic - data));
	if (!strstr(out, want))
		fail_msg("no \"%s\" in:\n%s", want, out);
	free(out);
	free(data);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fib),
		cmocka_unit_test(test_branches),
		cmocka_unit_test(test_signals_after_branches),
		cmocka_unit_test(test_signal_handler_longjmp),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_threadstart),
		cmocka_unit_test(test_fib_dynamic),
		cmocka_unit_test(test_cut_and_corrupt_perf_data),
		cmocka_unit_test(test_filter_function),
		cmocka_unit_test(test_filter_jit),
		cmocka_unit_test(test_formatted_buffers),
	};
	char check[1200];

	jf_test_require_tools("command -v trc_pkt_lister", "trc_pkt_lister (libopencsd-bin)");
	jf_test_require_tools("command -v qemu-aarch64", "qemu-aarch64 (qemu-user)");
	jf_test_require_tools("perf version", "perf (linux-perf)");
	snprintf(check, sizeof(check), "test -x '%s'", program("fib"));
	jf_test_require_tools(check, "the AArch64 test programs, built with aarch64-linux-gnu-gcc "
			      "(gcc-aarch64-linux-gnu, libc6-dev-arm64-cross)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
