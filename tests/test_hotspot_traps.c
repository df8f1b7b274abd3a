/* HotSpot's uncommon traps as jitflow's guard exits, against the JVM's own LogCompilation
 * of the same recorded run.
 *
 * tests/hotspot/Traps.java, run with C2 alone and -Xbatch under `jitflow record`, takes an
 * unstable_if, a class_check and a null_check trap and has a frame deoptimized by class
 * loading. The JVM logs every trap it takes (`<uncommon_trap thread=T reason=R ...
 * compile_id=C>` and the frames, innermost first, `<jvms bci=B .../>`) and every frame it
 * deoptimizes (`<deoptimized ...>`). The report's HotSpot section must list the same
 * traps: as many exits per (compile id, bci of the innermost frame, reason) as the log
 * has, and no other; the guard exits of each thread are the log's traps of that thread
 * (jitflow's tids are the OS's, as the log's); the entries into UncommonTrapBlob are the
 * trap count, those into DeoptimizationBlob the deoptimized frames. The same log checks
 * the report's trap frames (one trap is in an inlined frame), OSR entries, deoptimizations
 * per nmethod and the nmethod seen made not entrant (hotspot_log_check.c). The program
 * prints a sum its construction fixes, so the run itself is checked too.
 *
 * Java threads by name and the split per thread: tests/hotspot/Threads.java runs the same
 * loop on a thread "jf-hot" through a method C1 compiles within its first calls and on a
 * thread "jf-cold" through one CompileCommand excludes; each prints its OS tid as the
 * kernel gives it (/proc/thread-self). The report's threads of those tids carry those
 * names (the agent's THREAD_NAME records from ThreadStart); no nmethod of cold() or
 * coldRun() exists, and "jf-cold" ran almost nothing in compiled code (the JDK's own code
 * it runs when it starts and ends may be compiled: about 1000 instructions of its 9.6 M
 * were); most of what "jf-hot" ran was compiled code (C1 compiles hot() within its first
 * 20 calls of 1000, thresholds scaled by 0.1). HotSpot posts an nmethod's
 * CompiledMethodLoad from its Service Thread, after Java threads may have run the code
 * for a while (docs/hotspot.md, "Ordering"), in some runs for all of jf-hot's work; the
 * recorder's observed code (docs/recorder.md) gives those blocks their bytes as they ran
 * and the record, once it applies, their nmethod: so neither thread runs a block outside
 * known code, and the recording decodes with no error. The same program run once more
 * under QEMU alone with Java Flight Recorder checks the split against JFR's execution
 * samples of each thread's loop (check_split_against_jfr). The shares are read from the
 * HotSpot section's per-thread table (hotspot.threads).
 *
 * Garbage collection: after both threads, main allocates THREAD_GARBAGE 4 KB arrays that
 * nothing keeps, in a 4 MB young generation (SerialGC), and the JVM logs each collection
 * (-Xlog:gc, a "Pause Young" or "Pause Full" line). The collections the report counts
 * (calls into a collecting VM operation) are the log's lines; the collections and every
 * instruction counted as GC are on one thread (the VM Thread, which runs every collection
 * under SerialGC), none on jf-hot or jf-cold. */
#include "hotspot_check.h"
#include "hotspot_log_check.h"
#include "jfr_samples.h"
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 20000L
#define MAX_TRAPS 64
#define THREAD_CALLS 3000L
#define THREAD_N 1000L /* a multiple of 8: each call sums n / 8 runs of 0..7 */
#define THREAD_GARBAGE 12000L /* 4 KB arrays: 48 MB through a young generation of 4 MB */
#define GC_OPTIONS "-Xmx32m -Xmn4m"
#define THREAD_OPTIONS                                                                      \
	"-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xbatch -XX:CompileThresholdScaling=0.1 " \
	"-XX:CompileCommand=quiet '-XX:CompileCommand=exclude,Threads::cold*'"
#define JFR_TAIL 0.00135      /* one-sided 3 sigma */
#define JFR_TIME_RATIO 20.0   /* an interpreted instruction's time over a compiled one's, at most */

struct trap {
	long compile_id, bci, tid, count;
	char reason[48];
};

struct traps {
	struct trap t[MAX_TRAPS];
	int n;
};

/* Records `java ARGS` (options, class, its arguments) with the classes of tests/hotspot
 * into dir; returns the program's stdout. */
static char *record_java(const char *dir, const char *args)
{
	char cmd[8192], *out;

	snprintf(cmd, sizeof(cmd),
		 "env -u JAVA_TOOL_OPTIONS -u JDK_JAVA_OPTIONS -u JITFLOW_ZONE_DIR "
		 "'%s' record --emulate -o '%s' -- java -cp '%s/tests/hotspot' %s 2>'%s.stderr'",
		 jf_test_cli(), dir, jf_test_binary_dir(), args, dir);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("%s failed (see %s.stderr)", cmd, dir);
	return out;
}

/* Adds one exit (count) of a trap to set, merged with an equal one. */
static void add_trap(struct traps *set, long compile_id, long bci, long tid, const char *reason,
		     long count)
{
	int i;

	for (i = 0; i < set->n; i++) {
		struct trap *t = &set->t[i];

		if (t->compile_id == compile_id && t->bci == bci && t->tid == tid &&
		    !strcmp(t->reason, reason)) {
			t->count += count;
			return;
		}
	}
	if (set->n == MAX_TRAPS)
		fail_msg("more than %d different traps", MAX_TRAPS);
	set->t[set->n] = (struct trap){ compile_id, bci, tid, count, "" };
	snprintf(set->t[set->n].reason, sizeof(set->t[set->n].reason), "%s", reason);
	set->n++;
}

/* The traps the JVM took (runtime <uncommon_trap thread=...> elements; those without a
 * thread are the compilers' notes of traps they compiled in). */
static void logged_traps(const char *log, struct traps *set)
{
	const char *el = log;
	char reason[48];

	memset(set, 0, sizeof(*set));
	while ((el = strstr(el, "<uncommon_trap thread='")) != NULL) {
		const char *jvms = strstr(el, "<jvms ");

		if (jf_test_log_attribute(el, "reason", reason, sizeof(reason)) < 0 || !jvms)
			fail_msg("LogCompilation: a trap without reason or frames: %.160s", el);
		add_trap(set, jf_test_log_number(el, "compile_id"), jf_test_log_number(jvms, "bci"),
			 jf_test_log_number(el, "thread"), reason, 1);
		el++;
	}
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	for (; (text = strstr(text, what)) != NULL; text++)
		n++;
	return n;
}

/* The report's traps (thread unknown: 0) and, per reason, whether the log has one. */
static void reported_traps(const cJSON *hotspot, struct traps *set)
{
	const cJSON *t;

	memset(set, 0, sizeof(*set));
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(hotspot, "traps")) {
		const char *reason = jf_test_str(t, "reason");

		add_trap(set, (long)jf_test_num(t, "compile_id"), (long)jf_test_num(t, "bci"), 0,
			 reason ? reason : "(not told)", (long)jf_test_num(t, "exits"));
	}
}

static void print_traps(const char *title, const struct traps *set)
{
	int i;

	fprintf(stderr, "%s:\n", title);
	for (i = 0; i < set->n; i++)
		fprintf(stderr, "  compile id %ld bci %ld %s: %ld\n", set->t[i].compile_id,
			set->t[i].bci, set->t[i].reason, set->t[i].count);
}

/* The logged traps without their threads. */
static void without_threads(const struct traps *logged, struct traps *out)
{
	int i;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < logged->n; i++)
		add_trap(out, logged->t[i].compile_id, logged->t[i].bci, 0, logged->t[i].reason,
			 logged->t[i].count);
}

static int same_traps(const struct traps *a, const struct traps *b)
{
	int i, j;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++) {
		for (j = 0; j < b->n; j++)
			if (!memcmp(&a->t[i], &b->t[j], offsetof(struct trap, reason)) &&
			    !strcmp(a->t[i].reason, b->t[j].reason))
				break;
		if (j == b->n)
			return 0;
	}
	return 1;
}

static double thread_guard_exits(const cJSON *report, long tid)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(report, "split"), "threads"))
		if ((long)jf_test_num(t, "tid") == tid)
			return jf_test_num(t, "guard_exits");
	return -1;
}

static double blob_entries(const cJSON *hotspot, const char *key)
{
	return jf_test_num(cJSON_GetObjectItemCaseSensitive(hotspot, key), "entries");
}

static void check_reasons_provoked(const struct traps *logged, const char *log_path)
{
	static const char *const provoked[] = { "unstable_if", "class_check", "null_check" };
	size_t i;
	int j;

	for (i = 0; i < sizeof(provoked) / sizeof(provoked[0]); i++) {
		for (j = 0; j < logged->n && strcmp(logged->t[j].reason, provoked[i]); j++)
			;
		if (j == logged->n)
			fail_msg("%s: no %s trap taken: Traps.java no longer provokes it", log_path,
				 provoked[i]);
	}
}

/* The text report says how many traps were taken, in HotSpot's words. */
static void check_text(const char *dir, int total)
{
	char cmd[2048], said[64], *text;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s'", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &text), 0);
	snprintf(said, sizeof(said), "Uncommon traps (%d taken at ", total);
	if (!strstr(text, said) || !strstr(text, " unstable_if ") || !strstr(text, " class_check ") ||
	    !strstr(text, " null_check "))
		fail_msg("%s: the text report does not say \"%s...\" with the three reasons", dir,
			 said);
	free(text);
}

/* Traps runs with C2 alone: see check_c2_only below. */
static void check_c2_only(const cJSON *report, const struct traps *logged);

/* Frames, OSR entries, deoptimizations by nmethod and nmethods seen made not entrant,
 * against the same LogCompilation (tests/hotspot/Traps.java says what its construction
 * fixes: one trap in an inlined frame, warm's and spin's OSR nmethods entered once each,
 * one frame deoptimized, weighAgain's nmethod the only one called after it was made not
 * entrant, once). */
static void check_entries(const char *log, const cJSON *hotspot, const char *dir)
{
	int inlined = jf_test_trap_frames_match(log, hotspot);
	int osr = jf_test_osr_entries_match(log, hotspot, "Traps ");
	int deopts = jf_test_deoptimized_match(log, hotspot);
	int unseen = jf_test_not_entrant_match(log, hotspot, "Traps weighAgain");

	if (inlined != 1 || osr != 2)
		fail_msg("%s: %d traps in inlined frames and %d OSR nmethods of Traps; the program "
			 "has 1 and 2", dir, inlined, osr);
	printf("%s: trap frames as LogCompilation's (%d in an inlined frame); %d OSR nmethods of "
	       "Traps entered once each; %d deoptimized frames tied to their nmethods; "
	       "weighAgain's nmethod seen made not entrant, %d others made not entrant not seen "
	       "(never called through their entry again, or OSR)\n", dir, inlined, osr, deopts,
	       unseen);
}

static void test_traps_match_logcompilation(void **state)
{
	char dir[1024], log_path[1200], cmd[8192], *out, *log;
	struct traps logged, logged_any_thread, reported;
	cJSON *report;
	const cJSON *hotspot;
	int i, deoptimized, total = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/traps", jf_test_tmpdir());
	snprintf(log_path, sizeof(log_path), "%s/traps-compilation.log", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd),
		 "-XX:-TieredCompilation -Xbatch -XX:+UseSerialGC -XX:CompileCommand=quiet "
		 "-XX:CompileCommand=exclude,Traps::maybeLoad "
		 "-XX:CompileCommand=dontinline,Traps::weighAgain -XX:+UnlockDiagnosticVMOptions "
		 "-XX:+LogCompilation -XX:LogFile='%s' Traps %ld", log_path, N);
	out = record_java(dir, cmd);
	if (atol(out) != 3 * (N * (N + 1) + 11 * N) + 7 + 3 - 1 + 6 + N + N + 2 + 1)
		fail_msg("Traps printed %s", out);
	free(out);

	log = jf_test_read_file(log_path, NULL);
	logged_traps(log, &logged);
	check_reasons_provoked(&logged, log_path);
	deoptimized = count_of(log, "<deoptimized ");
	if (!deoptimized || !strstr(log, "<dependency_failed ") ||
	    !strstr(log, "witness='Traps$Heavier'"))
		fail_msg("%s: loading Traps$Heavier deoptimized no frame", log_path);

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	hotspot = cJSON_GetObjectItemCaseSensitive(report, "hotspot");
	if (!cJSON_IsObject(hotspot))
		fail_msg("%s: the report has no HotSpot section", dir);
	check_entries(log, hotspot, dir);
	free(log);
	reported_traps(hotspot, &reported);
	without_threads(&logged, &logged_any_thread);
	if (!same_traps(&logged_any_thread, &reported)) {
		print_traps("LogCompilation's traps", &logged_any_thread);
		print_traps("the report's", &reported);
		fail_msg("%s: the report's uncommon traps are not LogCompilation's", dir);
	}
	for (i = 0; i < logged.n; i++) {
		int j, of_thread = 0;

		for (j = 0; j < logged.n; j++)
			of_thread += (int)(logged.t[j].tid == logged.t[i].tid) * (int)logged.t[j].count;
		if (thread_guard_exits(report, logged.t[i].tid) != of_thread)
			fail_msg("%s: thread %ld: %.0f guard exits in the report, %d traps logged",
				 dir, logged.t[i].tid, thread_guard_exits(report, logged.t[i].tid),
				 of_thread);
		total += (int)logged.t[i].count;
	}
	if (jf_test_num(hotspot, "trap_exits") != total ||
	    blob_entries(hotspot, "uncommon_traps") != total)
		fail_msg("%s: %.0f trap exits and %.0f entries into UncommonTrapBlob, %d traps "
			 "logged", dir, jf_test_num(hotspot, "trap_exits"),
			 blob_entries(hotspot, "uncommon_traps"), total);
	if (blob_entries(hotspot, "deoptimizations") != deoptimized)
		fail_msg("%s: %.0f entries into DeoptimizationBlob, %d frames deoptimized", dir,
			 blob_entries(hotspot, "deoptimizations"), deoptimized);
	check_text(dir, total);
	check_c2_only(report, &logged);
	printf("%s: %d traps and %d deoptimized frames as LogCompilation logs them; %.0f decode "
	       "errors\n", dir, total, deoptimized,
	       jf_test_num(cJSON_GetObjectItemCaseSensitive(report, "summary"), "decode_errors"));
	cJSON_Delete(report);
}

/* Thread tid in the threads of the report's section ("split": the generic split;
 * "hotspot": the HotSpot section's per-thread table). */
static const cJSON *thread_in(const cJSON *report, const char *section, long tid)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(report, section), "threads"))
		if ((long)jf_test_num(t, "tid") == tid)
			return t;
	fail_msg("no thread %ld in the report's %s threads", tid, section);
	return NULL;
}

static const cJSON *thread_of(const cJSON *report, long tid)
{
	return thread_in(report, "split", tid);
}

static double class_insns(const cJSON *thread, const char *cls)
{
	return jf_test_num(cJSON_GetObjectItemCaseSensitive(thread, "instructions_by_class"), cls);
}

/* The sum of the members of object `key` of o. */
static double sum_of(const cJSON *o, const char *key)
{
	const cJSON *c;
	double sum = 0;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, key))
		sum += c->valuedouble;
	return sum;
}

static double thread_insns(const cJSON *thread)
{
	return sum_of(thread, "instructions_by_class");
}

/* Instructions in nmethods (the HotSpot description's class of compiled code). */
static double compiled_insns(const cJSON *thread)
{
	return class_insns(thread, "trace");
}

/* A thread's row of the HotSpot section's per-thread table. */
static const cJSON *hotspot_row(const cJSON *report, long tid)
{
	return thread_in(report, "hotspot", tid);
}

/* A column of a row's instructions ("c1", "interpreter", ...), and their sum. */
static double row_insns(const cJSON *row, const char *column)
{
	return jf_test_num(cJSON_GetObjectItemCaseSensitive(row, "instructions"), column);
}

static double row_total(const cJSON *row)
{
	return sum_of(row, "instructions");
}

/* Traps runs with C2 alone (-XX:-TieredCompilation): no thread ran C1 code, and each
 * thread that took a trap ran C2 code in the per-thread table. */
static void check_c2_only(const cJSON *report, const struct traps *logged)
{
	const cJSON *t;
	int i;

	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(report, "hotspot"), "threads"))
		if (row_insns(t, "c1") != 0)
			fail_msg("thread %.0f: %.0f instructions in C1 code, C2 alone compiles",
				 jf_test_num(t, "tid"), row_insns(t, "c1"));
	for (i = 0; i < logged->n; i++)
		if (!(row_insns(hotspot_row(report, logged->t[i].tid), "c2") > 0))
			fail_msg("thread %ld took a trap in C2 code and ran no C2 code",
				 logged->t[i].tid);
}

/* The log's collections against the report's: the same count, all on one thread, which
 * also ran every GC instruction, and that thread neither jf-hot nor jf-cold. */
static void check_collections(const cJSON *report, const char *log_path, long hot_tid,
			      long cold_tid)
{
	char *log = jf_test_read_file(log_path, NULL);
	int logged, reported = 0, gc_threads = 0;
	long gc_tid = 0;
	const cJSON *t;

	if (!log)
		fail_msg("no GC log %s", log_path);
	logged = count_of(log, "Pause Young") + count_of(log, "Pause Full");
	free(log);
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
				      cJSON_GetObjectItemCaseSensitive(report, "hotspot"), "threads")) {
		double n = jf_test_num(t, "collections"), gc = row_insns(t, "gc");

		reported += (int)n;
		if (n > 0 || gc > 0) {
			gc_threads++;
			gc_tid = (long)jf_test_num(t, "tid");
			if (!(n > 0 && gc > 0))
				fail_msg("thread %ld: %.0f collections and %.0f GC instructions", gc_tid,
					 n, gc);
		}
	}
	if (logged < 5 || reported != logged || gc_threads != 1 || gc_tid == hot_tid ||
	    gc_tid == cold_tid)
		fail_msg("%s: %d collections logged; the report counts %d on %d threads (the last "
			 "%ld); expected the same on one thread, the VM Thread", log_path, logged,
			 reported, gc_threads, gc_tid);
	printf("%s: %d collections, as the report counts on thread %ld, which ran %.0f GC "
	       "instructions\n", log_path, logged, gc_tid,
	       row_insns(hotspot_row(report, gc_tid), "gc"));
}

static void check_thread_name(const cJSON *thread, const char *name, long tid)
{
	const char *got = jf_test_str(thread, "name");

	if (!got || strcmp(got, name))
		fail_msg("thread %ld is named \"%s\" in the report; the program ran \"%s\" on it",
			 tid, got ? got : "", name);
}

/* The share of time in the interpreter of a thread that ran a share p of its interpreted
 * and compiled instructions in the interpreter, if an interpreted instruction takes r times
 * as long as a compiled one. */
static double time_share(double p, double r)
{
	return r * p / (r * p + 1 - p);
}

/* Java Flight Recorder as a second oracle of the split: the same program with the same
 * options, run under qemu-x86_64 (the recorder's emulator) without the recorder, sampled
 * by JFR every millisecond. Not under the recorder: there JFR's start-up alone ran 3.3 G
 * guest instructions (the whole recording is 0.3 G without it) and most samples were
 * lost, since HotSpot gives up a sample when the thread has not taken the suspend signal
 * within 2 ms. JFR samples time, jitflow counts instructions: under QEMU an interpreted
 * instruction takes longer than a compiled one (each bytecode ends in an indirect jump,
 * which QEMU looks up; a compiled loop chains its translated blocks), so the sampled
 * share of interpreted frames is compared with the time share jitflow's instruction
 * share gives for any ratio up to JFR_TIME_RATIO either way, within the binomial
 * sampling error (JFR_TAIL on each side). Only samples in each thread's own loop
 * (hotRun, coldRun) count: the first run of code costs QEMU its translation, so the
 * few samples JFR takes while a thread starts fall on code it ran for the first time. */
static void check_split_against_jfr(const cJSON *hot, const cJSON *cold)
{
	static const char *const names[] = { "jf-hot", "jf-cold" }, *const loops[] = { "hotRun",
										   "coldRun" };
	const cJSON *threads[] = { hot, cold };
	char jfr[1024], cmd[8192], *out;
	int i;

	snprintf(jfr, sizeof(jfr), "%s/threads.jfr", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd),
		 "env -u JAVA_TOOL_OPTIONS -u JDK_JAVA_OPTIONS qemu-x86_64 \"$(command -v java)\" "
		 "-cp '%s/tests/hotspot' '-XX:StartFlightRecording=filename=%s,"
		 "jdk.ExecutionSample#period=1ms' " THREAD_OPTIONS " Threads %ld %ld 2>'%s.stderr'",
		 jf_test_binary_dir(), jfr, THREAD_CALLS, THREAD_N, jfr);
	if (jf_test_run(cmd, &out) != 0 || !strstr(out, " jf-cold "))
		fail_msg("%s failed (see %s.stderr)", cmd, jfr);
	free(out);
	for (i = 0; i < 2; i++) {
		double p = class_insns(threads[i], "interpreter") /
			   (class_insns(threads[i], "interpreter") + compiled_insns(threads[i]));
		double q_lo = time_share(p, 1 / JFR_TIME_RATIO), q_hi = time_share(p, JFR_TIME_RATIO);
		struct jf_jfr_samples n;

		jf_jfr_count_samples(jfr, names[i], "Threads", loops[i], &n);
		if (n.interpreted + n.compiled == 0 ||
		    !jf_binomial_fits(n.interpreted, n.interpreted + n.compiled, q_lo, q_hi,
				      JFR_TAIL))
			fail_msg("%s: JFR sampled %s's loop %ld times interpreted and %ld times in "
				 "compiled code; jitflow counted %.4f%% of its interpreted and "
				 "compiled instructions in the interpreter, %.2f%%..%.2f%% of its time",
				 jfr, names[i], n.interpreted, n.compiled, 100 * p, 100 * q_lo,
				 100 * q_hi);
		printf("%s: JFR: %ld of %ld samples of its loop interpreted (%ld other, %ld "
		       "outside it); jitflow: %.4f%% of its instructions interpreted\n", names[i],
		       n.interpreted, n.interpreted + n.compiled, n.other, n.outside, 100 * p);
	}
}

/* Where the report's first problems happened (kind, what, offset, IP, time, text), printed
 * before a failure on them so that a failing run says where without its recording. */
static void print_problems(const cJSON *report)
{
	const cJSON *p;
	int shown = 0;

	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(report, "problems")) {
		char *text = cJSON_PrintUnformatted(p);

		if (shown++ == 8)
			break;
		printf("problem: %s\n", text ? text : "?");
		free(text);
	}
	fflush(stdout);
}

static void test_threads_by_name_and_split(void **state)
{
	char dir[1024], cmd[8192], gc_log[1100], *out;
	long hot_sum, cold_sum, hot_tid, cold_tid;
	cJSON *report;
	const cJSON *hot, *cold, *hot_row, *cold_row, *g;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/threads", jf_test_tmpdir());
	snprintf(gc_log, sizeof(gc_log), "%s.gc.log", dir);
	snprintf(cmd, sizeof(cmd),
		 THREAD_OPTIONS " " GC_OPTIONS " '-Xlog:gc:file=%s' Threads %ld %ld %ld", gc_log,
		 THREAD_CALLS, THREAD_N, THREAD_GARBAGE);
	out = record_java(dir, cmd);
	if (sscanf(out, "%ld %ld jf-hot %ld jf-cold %ld", &hot_sum, &cold_sum, &hot_tid,
		   &cold_tid) != 4 || hot_sum != THREAD_CALLS * THREAD_N * 7 / 2 ||
	    cold_sum != THREAD_CALLS / 10 * THREAD_N * 7 / 2)
		fail_msg("Threads printed %s", out);
	free(out);

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	hot = thread_of(report, hot_tid);
	cold = thread_of(report, cold_tid);
	check_thread_name(hot, "jf-hot", hot_tid);
	check_thread_name(cold, "jf-cold", cold_tid);
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(report, "regions")) {
		const char *name = jf_test_str(g, "name");

		if (name && strstr(name, "Threads.cold"))
			fail_msg("%s: %s was compiled, CompileCommand excludes it", dir, name);
	}
	hot_row = hotspot_row(report, hot_tid);
	cold_row = hotspot_row(report, cold_tid);
	if (row_total(hot_row) != thread_insns(hot) || row_total(cold_row) != thread_insns(cold))
		fail_msg("%s: the HotSpot table's rows (%.0f, %.0f) are not the threads' "
			 "instructions (%.0f, %.0f)", dir, row_total(hot_row), row_total(cold_row),
			 thread_insns(hot), thread_insns(cold));
	if (!(1000 * (row_insns(cold_row, "c1") + row_insns(cold_row, "c2")) < row_total(cold_row)) ||
	    !(2 * row_insns(cold_row, "interpreter") > row_total(cold_row)))
		fail_msg("%s: jf-cold ran %.0f instructions in C1 code and %.0f in the "
			 "interpreter of its %.0f; its own work is interpreted only", dir,
			 row_insns(cold_row, "c1"), row_insns(cold_row, "interpreter"),
			 row_total(cold_row));
	if (jf_test_num(cJSON_GetObjectItemCaseSensitive(report, "summary"), "decode_errors") != 0 ||
	    class_insns(hot, "unknown") != 0 || class_insns(cold, "unknown") != 0) {
		print_problems(report);
		fail_msg("%s: %.0f decode errors; %.0f of jf-hot's and %.0f of jf-cold's "
			 "instructions outside known code; the observed code describes all of it",
			 dir, jf_test_num(cJSON_GetObjectItemCaseSensitive(report, "summary"),
					  "decode_errors"),
			 class_insns(hot, "unknown"), class_insns(cold, "unknown"));
	}
	if (!(2 * row_insns(hot_row, "c1") > row_total(hot_row)) || row_insns(hot_row, "c2") != 0)
		fail_msg("%s: jf-hot ran %.0f of its %.0f instructions in C1 code (and %.0f in C2 "
			 "code, which -XX:TieredStopAtLevel=1 never makes), not most", dir,
			 row_insns(hot_row, "c1"), row_total(hot_row), row_insns(hot_row, "c2"));
	printf("%s: jf-hot %.0f of %.0f instructions in C1 code, jf-cold %.0f of %.0f in the "
	       "interpreter and %.0f in C1 code; no decode error, no unknown code\n", dir,
	       row_insns(hot_row, "c1"), row_total(hot_row), row_insns(cold_row, "interpreter"),
	       row_total(cold_row), row_insns(cold_row, "c1"));
	check_collections(report, gc_log, hot_tid, cold_tid);
	check_split_against_jfr(hot, cold);
	cJSON_Delete(report);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_traps_match_logcompilation),
		cmocka_unit_test(test_threads_by_name_and_split),
	};

	if (!jf_test_hotspot_agent_built())
		return 1;
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
