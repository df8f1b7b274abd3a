/* jitflow record: programs run under QEMU; their recordings are checked with Linux perf's
 * own Intel PT decoder (`perf script --itrace=...`), an oracle independent of jitflow, and
 * against counts fixed by the programs' semantics (and printed by the programs themselves).
 * A missing perf or qemu-x86_64 fails (tools/setup.sh installs both). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir_of_run[512];

static const char *program(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/tests/programs/recprog_%s", jf_test_binary_dir(), name);
	return path;
}

/* Record program `name` into TMP/name; returns jitflow's exit status, the program's
 * stdout in *out. */
static int record_args(const char *name, const char *options, const char *args, char **out)
{
	char cmd[4096];
	int status;

	snprintf(dir_of_run, sizeof(dir_of_run), "%s/%s%s%s", jf_test_tmpdir(), name,
		 options[0] ? "-opt" : "", args[0] ? "-args" : "");
	snprintf(cmd, sizeof(cmd), "%s record --emulate %s -o %s -- %s %s 2>%s.err",
		 jf_test_cli(), options, dir_of_run, program(name), args, dir_of_run);
	status = jf_test_run(cmd, out);
	return status;
}

static int record_with(const char *name, const char *options, char **out)
{
	return record_args(name, options, "", out);
}

static int record(const char *name, char **out)
{
	return record_with(name, "", out);
}

/* A symbol's address in the program, as nm (binutils) reads it from the file. */
static unsigned long long symbol(const char *name, const char *sym)
{
	char cmd[4096], *out = NULL;
	unsigned long long addr = 0;

	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"%s\" { print $1 }'", program(name), sym);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	addr = strtoull(out, NULL, 16);
	free(out);
	assert_true(addr != 0);
	return addr;
}

/* How many of perf's branch samples go to addr (in thread tid, or all when tid is 0). */
static long branches_to(unsigned long long addr, int tid)
{
	char cmd[4096], *out = NULL;
	long n;

	snprintf(cmd, sizeof(cmd),
		 "perf script -i %s/perf.data --itrace=b -F tid,addr 2>/dev/null | "
		 "awk '$3 == \"%llx\" && (%d == 0 || $1 == %d)' | wc -l",
		 dir_of_run, addr, tid, tid);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	n = strtol(out, NULL, 10);
	free(out);
	return n;
}

/* perf's decode errors (--itrace=e); must be none. */
static void assert_no_perf_errors(void)
{
	char cmd[4096], *out = NULL;

	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data --itrace=e 2>&1", dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	if (strstr(out, "error"))
		fail_msg("perf reports decode errors:\n%.2000s", out);
	free(out);
}

/* perf's instruction count (--itrace=i1i: one sample per instruction) equals what QEMU
 * ran, as the manifest reports it. */
static void assert_instruction_counts_agree(void)
{
	char cmd[4096], *out = NULL, *m;
	long long perf_count, manifest_count;

	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data --itrace=i1i -F ip 2>/dev/null | "
		 "wc -l", dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	perf_count = strtoll(out, NULL, 10);
	free(out);
	snprintf(cmd, sizeof(cmd), "cat %s/manifest.json", dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	m = strstr(out, "\"instructions\": ");
	assert_non_null(m);
	manifest_count = strtoll(m + strlen("\"instructions\": "), NULL, 10);
	free(out);
	assert_true(perf_count > 1000);
	assert_int_equal(perf_count, manifest_count);
}

/* jitflow's own decoder (libipt underneath) against perf's: the same instructions, in the
 * same order, for a single-threaded recording (jitflow decode --perf merges the per-thread
 * buffers by time and does not mark every switch, so threaded recordings compare counts). */
static void assert_jitflow_decode_matches_perf(int same_sequence)
{
	char cmd[4096], *out = NULL;
	const char *j = "/jitflow-insns.txt", *p = "/perf-insns.txt";

	snprintf(cmd, sizeof(cmd),
		 "%s decode --perf %s/perf.data | awk '/^[0-9a-f]+$/ { sub(/^0+/, \"\"); print }' "
		 "> %s%s && perf script -i %s/perf.data --itrace=i1i -F ip 2>/dev/null | "
		 "awk '{ print $1 }' > %s%s && wc -l < %s%s && wc -l < %s%s",
		 jf_test_cli(), dir_of_run, dir_of_run, j, dir_of_run, dir_of_run, p, dir_of_run, j,
		 dir_of_run, p);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	{
		long a = strtol(out, NULL, 10), b = strtol(strchr(out, '\n') + 1, NULL, 10);

		assert_true(a > 1000);
		assert_int_equal(a, b);
	}
	free(out);
	if (!same_sequence)
		return;
	snprintf(cmd, sizeof(cmd), "cmp %s%s %s%s", dir_of_run, j, dir_of_run, p);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	free(out);
}

static long printed(const char *out, const char *key)
{
	char pattern[64];

	snprintf(pattern, sizeof(pattern), "%s=", key);
	return jf_test_number_after(out, pattern);
}

static void test_fib_recursion(void **state)
{
	char *out = NULL;

	(void)state;
	assert_int_equal(record("fib", &out), 0);
	assert_string_equal(out, "fib(20)=6765\n"); /* stdout passes through */
	free(out);
	assert_no_perf_errors();
	/* fib(20) enters fib 21891 times: 1 call from main, 21890 recursive calls. */
	assert_int_equal(branches_to(symbol("fib", "fib"), 0), 21891);
	assert_instruction_counts_agree();
	assert_jitflow_decode_matches_perf(1);
}

/* perf's instruction samples (--itrace=i1i) of the run: all, or those in symbol sym. */
static long perf_instructions_in(const char *sym)
{
	char cmd[4096], *out = NULL;
	long n;

	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data --itrace=i1i -F ip %s%s "
		 "2>/dev/null | wc -l", dir_of_run, sym ? "-S " : "", sym ? sym : "");
	assert_int_equal(jf_test_run(cmd, &out), 0);
	n = strtol(out, NULL, 10);
	free(out);
	return n;
}

/* --filter=START-END around fib: perf decodes the filtered recording without an error;
 * every instruction in it is one of fib's, exactly as many as perf finds in fib in the
 * unfiltered recording; the 21890 recursive calls stay inside the filter (branches), the
 * call from main enters it (TIP.PGE) and the last return leaves it (TIP.PGD). */
static void test_range_filter(void **state)
{
	char options[128], *out = NULL;
	unsigned long long start = symbol("fib", "fib"), end;
	long in_fib;

	(void)state;
	{
		char cmd[4096];

		snprintf(cmd, sizeof(cmd), "nm -S %s | awk '$4 == \"fib\" { print $2 }'",
			 program("fib"));
		assert_int_equal(jf_test_run(cmd, &out), 0);
		end = start + strtoull(out, NULL, 16);
		free(out);
	}
	assert_int_equal(record("fib", &out), 0);
	free(out);
	in_fib = perf_instructions_in("fib");
	assert_true(in_fib > 21891);
	snprintf(options, sizeof(options), "--filter=%llx-%llx", start, end);
	assert_int_equal(record_with("fib", options, &out), 0);
	assert_string_equal(out, "fib(20)=6765\n");
	free(out);
	assert_no_perf_errors();
	assert_int_equal(perf_instructions_in(NULL), in_fib);
	assert_int_equal(perf_instructions_in("fib"), in_fib);
	/* 21890 recursive calls and the start of the trace (perf's "tr strt" 0 => fib) */
	assert_int_equal(branches_to(start, 0), 21891);
	{
		char cmd[4096];

		snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data --itrace=b -F flags,addr "
			 "2>/dev/null | grep -c 'tr strt\\|tr end'", dir_of_run);
		assert_int_equal(jf_test_run(cmd, &out), 0);
		assert_string_equal(out, "2\n"); /* into fib from main, back out to main */
		free(out);
	}
	assert_jitflow_decode_matches_perf(1);
}

/* For a PIE: where the program was loaded (its MMAP2's start minus the file offset; the
 * text segment's address equals its offset in the file, as the linker lays PIEs out). */
static unsigned long long pie_base(const char *name)
{
	char cmd[4096], *out = NULL;
	unsigned long long start, pgoff;

	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data --show-mmap-events "
		 "2>/dev/null | grep 'MMAP2.*%s$' | sed 's/.*\\[0x\\([0-9a-f]*\\)(.*@ "
		 "0x\\([0-9a-f]*\\) .*/\\1 \\2/'", dir_of_run, program(name));
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strchr(out, ' '));
	start = strtoull(out, NULL, 16);
	pgoff = strtoull(strchr(out, ' ') + 1, NULL, 16);
	free(out);
	return start - pgoff;
}

/* Dynamically linked PIE and static PIE: the loader's, libc's and the program's load
 * addresses come from the log (first block, mmap calls, the jump to the entry point). */
static void test_position_independent(void **state)
{
	static const char *const names[] = { "fib_dyn", "fib_spie" };
	char *out = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		unsigned long long base;

		assert_int_equal(record(names[i], &out), 0);
		assert_string_equal(out, "fib(20)=6765\n");
		free(out);
		assert_no_perf_errors();
		base = pie_base(names[i]);
		assert_int_equal(branches_to(base + symbol(names[i], "fib"), 0), 21891);
		assert_instruction_counts_agree();
		assert_jitflow_decode_matches_perf(1);
	}
}

/* A longer recording (several AUX buffers per thread, each starting with PSB+): perf and
 * jitflow decode every buffer boundary without loss. */
static void test_several_buffers(void **state)
{
	char cmd[4096], *out = NULL;

	(void)state;
	assert_int_equal(record_args("fib", "", "25", &out), 0);
	assert_string_equal(out, "fib(25)=75025\n");
	free(out);
	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data -D 2>/dev/null | "
		 "grep -c 'PERF_RECORD_AUXTRACE '", dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_true(strtol(out, NULL, 10) >= 3);
	free(out);
	assert_no_perf_errors();
	assert_int_equal(branches_to(symbol("fib", "fib"), 0), 242785);
	assert_instruction_counts_agree();
	assert_jitflow_decode_matches_perf(1);
}

/* Without timing packets (timeless decoding in perf), the branches are the same. */
static void test_fib_without_timing(void **state)
{
	char *out = NULL;

	(void)state;
	assert_int_equal(record_with("fib", "--no-timing", &out), 0);
	free(out);
	assert_no_perf_errors();
	assert_int_equal(branches_to(symbol("fib", "fib"), 0), 21891);
	assert_instruction_counts_agree();
	assert_jitflow_decode_matches_perf(1);
}

static void test_branches_and_indirect_calls(void **state)
{
	char *out = NULL;

	(void)state;
	assert_int_equal(record("branches", &out), 0);
	assert_no_perf_errors();
	assert_int_equal(branches_to(symbol("branches", "op_add"), 0), 1000);
	assert_int_equal(branches_to(symbol("branches", "op_xor"), 0), 1000);
	assert_int_equal(branches_to(symbol("branches", "op_mul"), 0), 1000);
	/* Data-dependent: the program counts it itself. */
	assert_true(printed(out, "on_rare") > 0);
	assert_int_equal(branches_to(symbol("branches", "on_rare"), 0), printed(out, "on_rare"));
	free(out);
	assert_instruction_counts_agree();
	assert_jitflow_decode_matches_perf(1);
}

static void test_qsort_longjmp_signals(void **state)
{
	char *out = NULL;

	(void)state;
	/* The program exits with 3: jitflow passes it through and still writes the file. */
	assert_int_equal(record("callbacks", &out), 3);
	assert_no_perf_errors();
	assert_true(printed(out, "compare") > 0);
	assert_int_equal(branches_to(symbol("callbacks", "compare"), 0), printed(out, "compare"));
	assert_int_equal(branches_to(symbol("callbacks", "thrower"), 0), 100);
	assert_int_equal(printed(out, "caught"), 100);
	assert_int_equal(branches_to(symbol("callbacks", "handler"), 0), 10);
	free(out);
	assert_instruction_counts_agree();
	assert_jitflow_decode_matches_perf(1);
}

static void check_threads(const char *name, int pie)
{
	char cmd[4096], *out = NULL, *line;
	unsigned long long work = symbol(name, "work");
	long counts[8] = { 0 };
	int tids[8] = { 0 }, n = 0, i;

	assert_int_equal(record(name, &out), 0);
	free(out);
	assert_no_perf_errors();
	if (pie)
		work += pie_base(name);
	/* One stream per thread: main calls work 10 times, the workers 1000 and 2000. */
	snprintf(cmd, sizeof(cmd),
		 "perf script -i %s/perf.data --itrace=b -F tid,addr 2>/dev/null | "
		 "awk '$3 == \"%llx\" { n[$1]++ } END { for (t in n) print t, n[t] }' | sort -n",
		 dir_of_run, work);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	for (line = strtok(out, "\n"); line && n < 8; line = strtok(NULL, "\n"), n++)
		sscanf(line, "%d %ld", &tids[n], &counts[n]);
	free(out);
	assert_int_equal(n, 3);
	for (i = 0; i < 3; i++)
		assert_true(tids[i] > 0);
	assert_int_equal(counts[0], 10);   /* tids grow: main, first worker, second */
	assert_int_equal(counts[1], 1000);
	assert_int_equal(counts[2], 2000);
	assert_instruction_counts_agree();
	assert_jitflow_decode_matches_perf(0);
}

/* Asynchronous signals: the timer interrupts the loop between any two blocks (after a
 * conditional branch too: where it went shows only when the handler returns); the handler
 * is entered as often as the program counted and the interrupted code resumes where it
 * was, with no decode error in perf or jitflow. */
static void test_async_signals(void **state)
{
	char *out = NULL;

	(void)state;
	assert_int_equal(record("alarm", &out), 0);
	/* 20, or 21 when the timer fired again while the 20th handler ran */
	assert_true(printed(out, "on_alarm") >= 20);
	assert_no_perf_errors();
	assert_int_equal(branches_to(symbol("alarm", "on_alarm"), 0), printed(out, "on_alarm"));
	free(out);
	assert_instruction_counts_agree();
	assert_jitflow_decode_matches_perf(1);
}

static void test_threads(void **state)
{
	(void)state;
	check_threads("threads", 0);
	check_threads("threads_dyn", 1);
}

/* The JIT program: code written into an RWX page, described by the zone emitter, run,
 * rewritten at the same address and run again. After `perf inject --jit` (which reads the
 * zone file the recorder copied and put on the trace's clock), perf's instruction samples
 * inside the page are exactly the instructions the program ran there, split by version. */
static void check_jit(const char *variant, const char *options, const char *args)
{
	char cmd[4096], *out = NULL, zone_dir[600];
	unsigned long long page;
	long a = -1, b = -1;
	char *line;

	snprintf(zone_dir, sizeof(zone_dir), "%s/%s-zone", jf_test_tmpdir(), variant);
	snprintf(dir_of_run, sizeof(dir_of_run), "%s/%s", jf_test_tmpdir(), variant);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && JITFLOW_ZONE_DIR=%s %s record --emulate %s -o %s "
		 "-- %s %s 2>%s.err", zone_dir, zone_dir, jf_test_cli(), options, dir_of_run,
		 program("jit"), args, dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "jit_instructions=350"));
	page = strtoull(strstr(out, "page=") + 5, NULL, 16);
	assert_true(page != 0);
	free(out);
	snprintf(cmd, sizeof(cmd), "perf inject --jit -i %s/perf.data -o %s/perf.jit.data 2>&1",
		 dir_of_run, dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	free(out);
	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.jit.data --itrace=e 2>&1 | "
		 "grep 'instruction trace error'", dir_of_run);
	assert_int_not_equal(jf_test_run(cmd, &out), 0); /* grep finds none */
	free(out);
	/* jitted-PID-0.so is version A (2 instructions, 100 runs), -1.so version B (3, 50). */
	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.jit.data --itrace=i1i -F ip,dso "
		 "2>/dev/null | grep -o 'jitted-[0-9]*-[0-9]*.so' | sed 's/.*-//' | sort | uniq -c",
		 dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		long n;
		char which[32];

		if (sscanf(line, "%ld %31s", &n, which) != 2)
			continue;
		if (!strcmp(which, "0.so"))
			a = n;
		else if (!strcmp(which, "1.so"))
			b = n;
	}
	free(out);
	assert_int_equal(a, 200);
	assert_int_equal(b, 150);

	/* jitflow's decoder with the copied zone file: the same counts, and each version's
	 * own instructions at the same address before and after the rewrite. */
	snprintf(cmd, sizeof(cmd), "%s decode --perf %s/perf.data --zone %s/jit-*.dump --asm | "
		 "grep '^%016llx\\|^%016llx\\|^%016llx' | sort | uniq -c | "
		 "awk '{ print $1, $3, $4 }'", jf_test_cli(), dir_of_run, dir_of_run, page,
		 page + 3, page + 5);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "100 mov eax,"));
	assert_non_null(strstr(out, "50 lea eax,"));
	assert_non_null(strstr(out, "50 add eax,"));
	assert_non_null(strstr(out, "150 ret "));
	free(out);
	/* jitflow's exit status, then its output (a pipe would hide the status). */
	snprintf(cmd, sizeof(cmd), "%s decode --perf %s/perf.data --zone %s/jit-*.dump > "
		 "%s/decoded.txt", jf_test_cli(), dir_of_run, dir_of_run, dir_of_run);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(cmd, sizeof(cmd), "grep -c 'error' %s/decoded.txt", dir_of_run);
	jf_test_run(cmd, &out);
	assert_int_equal(strtol(out, NULL, 10), 0);
	free(out);
}

static void test_jit_rewrite(void **state)
{
	(void)state;
	check_jit("jit", "", "");
}

/* The same JIT writing like a plain jitdump writer (no marker calls; each record written
 * before its code runs): the zone file's records are dated by their write() calls. */
static void test_jit_without_markers(void **state)
{
	char cmd[4096], *out = NULL;

	(void)state;
	check_jit("jit-nomarkers", "", "--no-markers");
	snprintf(cmd, sizeof(cmd), "cat %s/manifest.json", dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "each record is dated by the write() that completed it"));
	free(out);
}

/* --filter=jit: only the JIT's page is traced (Intel PT's address-range filtering). perf
 * decodes it without an error, and every instruction it decodes is one of the 350 that the
 * program ran in its page; jitflow enters each version as often as the program called it
 * (100 and 50), each call coming back into the trace with a TIP.PGE. (The marker function
 * lies outside the filter: the zone file is dated by its writes.) */
/* What --filter=jit traced of the last check_jit run: the 350 instructions of the page
 * alone, and jitflow's report of the recording (REPORT_ARGS) counts each version's runs. */
static void check_jit_traced_alone(const char *report_args)
{
	char cmd[4096], *out = NULL;

	snprintf(cmd, sizeof(cmd), "grep -o '\"traced_instructions\": [0-9]*' %s/manifest.json "
		 "| head -1", dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_string_equal(out, "\"traced_instructions\": 350\n");
	free(out);
	snprintf(cmd, sizeof(cmd), "%s report %s --json | "
		 "grep -o '\"name\":\"version [AB]\",\"addr\"[^}]*\"entries\":[0-9]*' | "
		 "sed 's/\"name\":\"\\([^\"]*\\)\".*\"entries\":/\\1 /'", jf_test_cli(),
		 report_args);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_string_equal(out, "version A 100\nversion B 50\n"); /* the regions */
	free(out);
}

static void test_jit_filtered(void **state)
{
	char cmd[4096], *out = NULL;

	(void)state;
	check_jit("jit-filtered", "--filter=jit", "--no-markers");
	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.jit.data --itrace=i1i -F ip 2>/dev/null "
		 "| wc -l", dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_int_equal(strtol(out, NULL, 10), 350);
	free(out);
	snprintf(cmd, sizeof(cmd), "--perf %s/perf.data --zone %s/jit-*.dump", dir_of_run,
		 dir_of_run);
	check_jit_traced_alone(cmd);
}

/* The same filter on a JIT that keeps its code writable or executable, never both
 * (CPython's): the page becomes executable by mprotect, not by mmap, and is still traced;
 * the emitter's marker calls lie outside the filter, so the zone file's copy says its
 * records apply by their timestamps (the records were flushed before the code ran). */
static void test_jit_filtered_wx(void **state)
{
	char cmd[4096], *out = NULL;

	(void)state;
	check_jit("jit-filtered-wx", "--filter=jit", "--wx");
	snprintf(cmd, sizeof(cmd), "grep -c 'its marker function .* lies outside --filter=jit' "
		 "%s/manifest.json", dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_string_equal(out, "1\n");
	free(out);
	check_jit_traced_alone(dir_of_run);
}

/* `jitflow record` killed (SIGKILL) while it writes: the perf.data it leaves has the
 * header written when the recording began (data size 0: an unfinished recording), so its
 * records up to the cut decode, without errors, and the cut is reported where the file
 * ends, never as a silent short count. fib(40) runs for minutes under the recorder; it is
 * killed once 2 MB of the file are written (and its QEMU with it: "[q]" keeps pkill from
 * matching the shell that runs it). Its FIFO's folder, which a SIGKILL leaves, goes in the
 * test's own temporary folder. */
static void test_killed_recording(void **state)
{
	char cmd[4096], *out = NULL;
	const char *tmp = jf_test_tmpdir();

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && { TMPDIR=\"$PWD\" '%s' record -o killed -- '%s' 40 >/dev/null 2>&1 & pid=$!; "
		 "for i in $(seq 600); do s=$(stat -c %%s killed/perf.data 2>/dev/null || echo 0); "
		 "[ \"$s\" -gt 2000000 ] && break; sleep 0.1; done; kill -9 $pid; wait $pid; "
		 "pkill -9 -f '[q]emu-x86_64.*recprog_fib 40'; true; }", tmp, jf_test_cli(),
		 program("fib"));
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s/killed' --json", jf_test_cli(), tmp);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	if (jf_test_number_after(out, "\"instructions\":") < 1000000 ||
	    jf_test_number_after(out, "\"errors\":") != 0 || !strstr(out, "\"file-cut\""))
		fail_msg("the killed recording: %s", out);
	free(out);
}

/* fork and posix_spawn: the children are not followed, and the manifest says so. */
static void test_fork_reported(void **state)
{
	char cmd[4096], *out = NULL;

	(void)state;
	assert_int_equal(record("forks", &out), 0);
	assert_string_equal(out, "system=5 child=7\n");
	free(out);
	snprintf(cmd, sizeof(cmd), "cat %s/manifest.json", dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "the child process is not followed"));
	assert_non_null(strstr(out, "execve(\\\"/bin/sh\\\""));
	free(out);
}

/* A program killed by a signal: jitflow exits with 128 + signal and the file decodes. */
static void test_killed_program(void **state)
{
	char *out = NULL;

	(void)state;
	assert_int_equal(record("aborts", &out), 128 + 6);
	assert_string_equal(out, "before abort\n");
	free(out);
	assert_no_perf_errors();
	assert_instruction_counts_agree();
	assert_jitflow_decode_matches_perf(1);
}

/* A thread stopped by another's exit_group while it runs user code: QEMU reported its
 * last block as begun, but how far it ran is unknown, so the recording ends the thread's
 * trace at that block's start (an interruption) and says so (ended_in_block, its
 * instructions in hidden_instructions). perf decodes every other instruction QEMU ran. */
static void test_thread_stopped_in_block(void **state)
{
	char cmd[4096], *out = NULL;
	long long perf_count, visible;

	(void)state;
	assert_int_equal(record("spin_exit", &out), 0);
	assert_string_equal(out, "spun\n");
	free(out);
	assert_no_perf_errors();
	snprintf(cmd, sizeof(cmd), "grep -c '\"ended_in_block\": true' %s/manifest.json",
		 dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_int_equal(strtol(out, NULL, 10), 1);
	free(out);
	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data --itrace=i1i -F ip 2>/dev/null | "
		 "wc -l; grep -o '\"instructions\": [0-9]*' %s/manifest.json | head -1 | "
		 "cut -d' ' -f2; grep -o '\"hidden_instructions\": [0-9]*' %s/manifest.json | "
		 "awk '{ n += $2 } END { print n }'", dir_of_run, dir_of_run, dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	{
		char *second = strchr(out, '\n') + 1, *third = strchr(second, '\n') + 1;
		long long hidden = strtoll(third, NULL, 10);

		perf_count = strtoll(out, NULL, 10);
		visible = strtoll(second, NULL, 10) - hidden;
		assert_true(hidden > 0);
	}
	free(out);
	assert_true(perf_count > 1000);
	assert_int_equal(perf_count, visible);
}

/* A distribution's own dynamically linked program, with stdin passed through. */
static void test_system_program(void **state)
{
	char cmd[4096], *out = NULL;

	(void)state;
	snprintf(dir_of_run, sizeof(dir_of_run), "%s/cat", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "echo 'through stdin' | %s record --emulate -o %s -- cat "
		 "2>%s.err", jf_test_cli(), dir_of_run, dir_of_run);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_string_equal(out, "through stdin\n");
	free(out);
	assert_no_perf_errors();
	assert_instruction_counts_agree();
	assert_jitflow_decode_matches_perf(1);
}

static void test_cli_errors(void **state)
{
	char cmd[4096], *out = NULL;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s record --help", jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "usage: jitflow record"));
	free(out);
	snprintf(cmd, sizeof(cmd), "%s record 2>/dev/null", jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 2);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s record --emulate -o %s/none -- /nonexistent/program 2>&1",
		 jf_test_cli(), jf_test_tmpdir());
	assert_int_equal(jf_test_run(cmd, &out), 1);
	assert_non_null(strstr(out, "/nonexistent/program: program not found"));
	free(out);
	/* Not an x86-64 ELF program: named, with the offset and what was expected. */
	snprintf(cmd, sizeof(cmd), "printf '#!/bin/sh\\n' > %s/script.sh && chmod +x %s/script.sh && "
		 "%s record --emulate -o %s/none -- %s/script.sh 2>&1", jf_test_tmpdir(),
		 jf_test_tmpdir(), jf_test_cli(), jf_test_tmpdir(), jf_test_tmpdir());
	assert_int_equal(jf_test_run(cmd, &out), 1);
	assert_non_null(strstr(out, "script.sh: offset 0: expected an ELF file"));
	free(out);
	snprintf(cmd, sizeof(cmd), "%s record --emulate --filter=jit,4000-zz -- true 2>&1",
		 jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 2);
	assert_non_null(strstr(out, "--filter: '4000-zz' is neither 'jit' nor a range START-END"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_errors),
		cmocka_unit_test(test_fib_recursion),
		cmocka_unit_test(test_fib_without_timing),
		cmocka_unit_test(test_range_filter),
		cmocka_unit_test(test_several_buffers),
		cmocka_unit_test(test_position_independent),
		cmocka_unit_test(test_branches_and_indirect_calls),
		cmocka_unit_test(test_qsort_longjmp_signals),
		cmocka_unit_test(test_async_signals),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_jit_rewrite),
		cmocka_unit_test(test_jit_without_markers),
		cmocka_unit_test(test_jit_filtered),
		cmocka_unit_test(test_jit_filtered_wx),
		cmocka_unit_test(test_fork_reported),
		cmocka_unit_test(test_killed_recording),
		cmocka_unit_test(test_killed_program),
		cmocka_unit_test(test_thread_stopped_in_block),
		cmocka_unit_test(test_system_program),
	};

	jf_test_require_tools("perf --version && qemu-x86_64 --version",
			      "perf (linux-perf) or qemu-x86_64 (qemu-user)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
