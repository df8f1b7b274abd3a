/* jitflow stacks: call stacks rebuilt from recordings of small C programs
 * (tests/programs/stacks_*.c) whose semantics fix how often each stack is entered, and
 * checked against perf's own decoder: the calls `perf script --itrace=c` sees, per target
 * address, are the entries of the stacks topped by a function entered there. The JIT
 * frames of the checked-in minivm and LuaJIT recordings are their regions, and every stack's
 * instructions add up to the report's; the guest frames of the checked-in PyPy recording
 * are Python functions its log's merge points name. On real captures, stacks restart where libipt's
 * reference decoder reports errors. A missing perf or qemu-x86_64 fails
 * (tools/setup.sh installs both). */
#include "json_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JF_TEST_STACK_DEPTH 300

static const char *program(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/tests/programs/recprog_%s", jf_test_binary_dir(), name);
	return path;
}

/* Record program `name` (with args) into a fresh folder, its output into FOLDER.out;
 * returns the folder. */
static const char *recorded(const char *name, const char *args)
{
	static char dir[512];
	char cmd[4096], *out = NULL;

	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "%s record --emulate -o %s -- %s %s >%s.out 2>%s.err",
		 jf_test_cli(), dir, program(name), args, dir, dir);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("failed: %s", cmd);
	free(out);
	return dir;
}

/* `stacks --json` of inputs (a recording folder, or the inputs of a trace). */
static cJSON *stacks_json(const char *inputs)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "%s stacks %s --json", jf_test_cli(), inputs);
	return jf_test_run_json(cmd);
}

static const cJSON *stacks_of(const cJSON *doc)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, "stacks");

	if (!cJSON_IsArray(v))
		fail_msg("no \"stacks\" array");
	return v;
}

/* The stack's frame names joined by ';', bottom first, into buf. */
static const char *frames_text(const cJSON *stack, char *buf, size_t size)
{
	const cJSON *f;
	size_t len = 0;

	buf[0] = 0;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(stack, "frames")) {
		len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ";" : "",
					jf_test_str(f, "name"));
		if (len >= size)
			fail_msg("stack too long for the test's buffer");
	}
	return buf;
}

static int ends_with_frames(const char *text, const char *suffix)
{
	size_t n = strlen(text), k = strlen(suffix);

	return n >= k && !strcmp(text + n - k, suffix) && (n == k || text[n - k - 1] == ';');
}

/* Entries of the stacks whose top frames are `suffix` (thread tid, or any when 0). */
static long entries_ending(const cJSON *doc, const char *suffix, int tid)
{
	static char text[65536];
	const cJSON *s;
	long n = 0;

	cJSON_ArrayForEach(s, stacks_of(doc)) {
		if (tid && (int)jf_test_num(s, "tid") != tid)
			continue;
		if (ends_with_frames(frames_text(s, text, sizeof(text)), suffix))
			n += (long)jf_test_num(s, "entries");
	}
	return n;
}

/* Whether any stack's frames contain `part`. */
static int any_stack_has(const cJSON *doc, const char *part)
{
	static char text[65536];
	const cJSON *s;

	cJSON_ArrayForEach(s, stacks_of(doc))
		if (strstr(frames_text(s, text, sizeof(text)), part))
			return 1;
	return 0;
}

/* The frames of the stack that ends in `suffix` (unique), into buf. */
static const char *stack_ending(const cJSON *doc, const char *suffix, char *buf, size_t size)
{
	const cJSON *s, *found = NULL;

	cJSON_ArrayForEach(s, stacks_of(doc)) {
		if (ends_with_frames(frames_text(s, buf, size), suffix)) {
			if (found)
				fail_msg("two stacks end in %s", suffix);
			found = s;
		}
	}
	if (!found)
		fail_msg("no stack ends in %s", suffix);
	return frames_text(found, buf, size);
}

static long count(const cJSON *doc, const char *key)
{
	return (long)jf_test_num(doc, key);
}

/* perf's calls per target address (`--itrace=c`, system calls left out: their target is
 * 0) against the entries of the stacks topped by a native function entered there, but
 * for a signal's handler, which no call enters. */
static void assert_calls_match_perf(const char *dir, const cJSON *doc)
{
	char cmd[2048], *perf = NULL, line[64], mine[64];
	const cJSON *s;
	enum { MAX_TARGETS = 4096 };
	static struct { unsigned long long addr; long perf, jitflow; } t[MAX_TARGETS];
	size_t n = 0, i;
	char *p;

	snprintf(cmd, sizeof(cmd),
		 "perf script -i %s/perf.data --itrace=c -F addr 2>/dev/null | awk '{ print $NF }'",
		 dir);
	assert_int_equal(jf_test_run(cmd, &perf), 0);
	for (p = strtok(perf, "\n"); p; p = strtok(NULL, "\n")) {
		unsigned long long a = strtoull(p, NULL, 16);

		if (!a)
			continue;
		for (i = 0; i < n && t[i].addr != a; i++)
			;
		if (i == n) {
			assert_true(n < MAX_TARGETS);
			t[n].addr = a;
			t[n].perf = t[n].jitflow = 0;
			n++;
		}
		t[i].perf++;
	}
	free(perf);
	cJSON_ArrayForEach(s, stacks_of(doc)) {
		const cJSON *frames = cJSON_GetObjectItemCaseSensitive(s, "frames");
		int depth = cJSON_GetArraySize(frames);
		const cJSON *top = cJSON_GetArrayItem(frames, depth - 1);
		const cJSON *below = depth > 1 ? cJSON_GetArrayItem(frames, depth - 2) : NULL;
		unsigned long long a;

		if (strcmp(jf_test_str(top, "kind"), "native") || !jf_test_num(s, "entries") ||
		    (below && !strcmp(jf_test_str(below, "kind"), "signal")))
			continue;
		a = (unsigned long long)jf_test_num(top, "addr");
		for (i = 0; i < n && t[i].addr != a; i++)
			;
		if (i == n)
			fail_msg("jitflow: %s entered %.0f times at 0x%llx, perf saw no call there",
				 jf_test_str(top, "name"), jf_test_num(s, "entries"), a);
		t[i].jitflow += (long)jf_test_num(s, "entries");
	}
	for (i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "0x%llx: perf %ld", t[i].addr, t[i].perf);
		snprintf(mine, sizeof(mine), "0x%llx: perf %ld", t[i].addr, t[i].jitflow);
		assert_string_equal(mine, line);
	}
}

/* The folded stacks' counts add up to the report's instructions, and so do the JSON's. */
static void assert_folded_sums_to_report(const char *inputs, const cJSON *doc)
{
	char cmd[4096], *out = NULL;
	cJSON *report;
	long report_insns;
	long long folded = 0;
	char *line;

	snprintf(cmd, sizeof(cmd), "%s report %s --json", jf_test_cli(), inputs);
	report = jf_test_run_json(cmd);
	report_insns = (long)jf_test_num(cJSON_GetObjectItemCaseSensitive(report, "summary"),
					 "instructions");
	cJSON_Delete(report);
	snprintf(cmd, sizeof(cmd), "%s stacks %s --folded", jf_test_cli(), inputs);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		const char *space = strrchr(line, ' ');

		assert_non_null(space);
		folded += strtoll(space + 1, NULL, 10);
	}
	free(out);
	assert_true(report_insns > 0);
	assert_int_equal(folded, report_insns);
	assert_int_equal(count(doc, "insns"), report_insns);
}

/* Nothing the reconstruction could not follow. */
static void assert_all_followed(const cJSON *doc)
{
	assert_int_equal(count(doc, "unmatched"), 0);
	assert_int_equal(count(doc, "restarts"), 0);
	assert_int_equal(count(doc, "truncated_calls"), 0);
	assert_false(any_stack_has(doc, "[unknown]"));
}

#define CHAIN_13 "chain;chain;chain;chain;chain;chain;chain;chain;chain;chain;chain;chain;chain"
#define PARITY_10 "is_even;is_odd;is_even;is_odd;is_even;is_odd;is_even;is_odd;is_even;is_odd"

static void test_recursion(void **state)
{
	const char *dir = recorded("stacks_recursion", "");
	cJSON *doc = stacks_json(dir);

	(void)state;
	/* chain(12) 7 times: 13 frames deep, never 14; is_even(9) 3 times: 10 frames. */
	assert_int_equal(entries_ending(doc, "main;" CHAIN_13, 0), 7);
	assert_int_equal(entries_ending(doc, "main;chain", 0), 7);
	assert_false(any_stack_has(doc, CHAIN_13 ";chain"));
	assert_int_equal(entries_ending(doc, "main;" PARITY_10, 0), 3);
	assert_int_equal(entries_ending(doc, "main;is_even", 0), 3);
	assert_false(any_stack_has(doc, PARITY_10 ";is_even"));
	assert_int_equal(count(doc, "unwound"), 0);
	assert_all_followed(doc);
	assert_calls_match_perf(dir, doc);
	assert_folded_sums_to_report(dir, doc);
	cJSON_Delete(doc);
}

/* chain(300) is 301 frames on top of main's 4 (_start, __libc_start_main,
 * __libc_start_call_main, main): 49 calls per chain(300) go deeper than the 256 frames
 * kept; they are counted, and the stacks after them are right again. */
static void test_deeper_than_kept(void **state)
{
	cJSON *doc = stacks_json(recorded("stacks_recursion", "300"));
	char below_main[8192], parity[8192];

	(void)state;
	assert_int_equal(count(doc, "truncated_calls"), 7 * (4 + 301 - 256));
	assert_int_equal(count(doc, "unmatched"), 0);
	assert_int_equal(entries_ending(doc, "main;" PARITY_10, 0), 3);
	stack_ending(doc, "main", below_main, sizeof(below_main));
	stack_ending(doc, "main;" PARITY_10, parity, sizeof(parity));
	assert_memory_equal(parity, below_main, strlen(below_main));
	cJSON_Delete(doc);
}

static void test_longjmp(void **state)
{
	const char *dir = recorded("stacks_longjmp", "");
	cJSON *doc = stacks_json(dir);
	const cJSON *notes = cJSON_GetObjectItemCaseSensitive(doc, "notes"), *n;
	char main_stack[8192], after[8192];

	(void)state;
	assert_int_equal(entries_ending(doc, "main;attempt;outer;middle;inner", 0), 4);
	/* Each attempt's return to main leaves inner, middle, outer and longjmp's frames. */
	assert_int_equal(count(doc, "unwound"), 4);
	assert_int_equal(cJSON_GetArraySize(notes), 4);
	cJSON_ArrayForEach(n, notes) {
		assert_string_equal(jf_test_str(n, "kind"), "unwound");
		assert_true(jf_test_num(n, "ip") > 0);
		assert_true(jf_test_num(n, "offset") > 0);
		assert_true(jf_test_num(n, "frames") >= 4);
	}
	/* After the jumps, main's stack is what it was. */
	assert_int_equal(entries_ending(doc, "main;after_jumps", 0), 1);
	stack_ending(doc, "main", main_stack, sizeof(main_stack));
	stack_ending(doc, "after_jumps", after, sizeof(after));
	assert_string_equal(after + strlen(main_stack), ";after_jumps");
	assert_memory_equal(after, main_stack, strlen(main_stack));
	assert_all_followed(doc);
	assert_calls_match_perf(dir, doc);
	assert_folded_sums_to_report(dir, doc);
	cJSON_Delete(doc);
}

static void test_signal_handler(void **state)
{
	const char *dir = recorded("stacks_signal", "");
	cJSON *doc = stacks_json(dir);
	char handler[8192], main_stack[8192], after[8192];

	(void)state;
	assert_int_equal(count(doc, "signals"), 5);
	assert_int_equal(entries_ending(doc, "[signal];on_usr1", 0), 5);
	assert_int_equal(entries_ending(doc, "[signal];on_usr1;handler_work", 0), 5);
	/* Delivered over deliver()'s raise, and nowhere else. */
	stack_ending(doc, "[signal];on_usr1;handler_work", handler, sizeof(handler));
	assert_non_null(strstr(handler, ";main;deliver;raise;"));
	stack_ending(doc, "main", main_stack, sizeof(main_stack));
	stack_ending(doc, "after_signals", after, sizeof(after));
	assert_string_equal(after + strlen(main_stack), ";after_signals");
	assert_int_equal(count(doc, "unwound"), 0);
	assert_all_followed(doc);
	assert_calls_match_perf(dir, doc);
	assert_folded_sums_to_report(dir, doc);
	cJSON_Delete(doc);
}

/* A 0.2 ms timer interrupting a busy loop wherever it is (tests/programs/alarm.c): each
 * delivery, also one let in by the rt_sigreturn of the handler before, is a [signal] frame
 * over main's loop, as many as the handler counted. */
static void test_timer_signals(void **state)
{
	char path[1024], *out;
	const char *dir = recorded("alarm", "");
	cJSON *doc = stacks_json(dir);
	long hits;

	(void)state;
	snprintf(path, sizeof(path), "%s.out", dir);
	out = jf_test_read_file(path, NULL);
	hits = jf_test_number_after(out, "on_alarm=");
	free(out);
	assert_in_range(hits, 20, 21);
	assert_int_equal(count(doc, "signals"), hits);
	assert_int_equal(entries_ending(doc, "main;[signal];on_alarm", 0), hits);
	assert_int_equal(entries_ending(doc, "main;[signal]", 0), hits);
	assert_false(any_stack_has(doc, "[signal];[signal]"));
	assert_all_followed(doc);
	assert_calls_match_perf(dir, doc);
	assert_folded_sums_to_report(dir, doc);
	cJSON_Delete(doc);
}

static void test_two_threads(void **state)
{
	const char *dir = recorded("stacks_threads", "");
	cJSON *doc = stacks_json(dir);
	static char text[65536];
	const cJSON *s;
	int tids[2] = { 0, 0 };
	long calls[2];

	(void)state;
	cJSON_ArrayForEach(s, stacks_of(doc)) {
		int tid = (int)jf_test_num(s, "tid");

		if (!ends_with_frames(frames_text(s, text, sizeof(text)), "start_thread;worker"))
			continue;
		assert_true(tids[1] == 0);
		tids[tids[0] ? 1 : 0] = tid;
	}
	assert_true(tids[0] && tids[1] && tids[0] != tids[1]);
	calls[0] = entries_ending(doc, "start_thread;worker;leaf_work", tids[0]);
	calls[1] = entries_ending(doc, "start_thread;worker;leaf_work", tids[1]);
	/* The first thread made 3 calls, the second 5 (thread ids grow). */
	assert_int_equal(tids[0] < tids[1] ? calls[0] : calls[1], 3);
	assert_int_equal(tids[0] < tids[1] ? calls[1] : calls[0], 5);
	assert_all_followed(doc);
	assert_calls_match_perf(dir, doc);
	assert_folded_sums_to_report(dir, doc);
	cJSON_Delete(doc);
}

/* A thread's call-stack track in a timeline, as read back here. */
struct stack_track_read {
	double tid;
	long long total;     /* clock units under its bottom frames */
	int depth, deepest;
	const char *open[JF_TEST_STACK_DEPTH];
	long long since[JF_TEST_STACK_DEPTH], last;
	int worker;          /* a frame named worker began */
};

/* Read the call-stack tracks (process 3) of timeline `path` with cJSON: every end event
 * closes the frame that began last on its thread, times never go back, and each thread's
 * bottom frames add up its total; returns how many threads, into t[]. */
static size_t read_stack_tracks(const char *path, struct stack_track_read *t, size_t max)
{
	size_t size = 0;
	char *text = jf_test_read_file(path, &size);
	cJSON *doc = text ? cJSON_ParseWithLength(text, size) : NULL;
	const cJSON *e;
	size_t n = 0, k;

	if (!doc)
		fail_msg("%s is not JSON", path);
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "traceEvents")) {
		const char *ph = jf_test_str(e, "ph");
		long long ts;
		struct stack_track_read *r;

		if (jf_test_num(e, "pid") != 3 || (strcmp(ph, "B") && strcmp(ph, "E")))
			continue;
		for (k = 0; k < n && t[k].tid != jf_test_num(e, "tid"); k++)
			;
		if (k == n) {
			assert_true(n < max);
			memset(&t[n], 0, sizeof(t[n]));
			t[n++].tid = jf_test_num(e, "tid");
		}
		r = &t[k];
		/* microseconds with three decimals: whole clock units */
		ts = (long long)(jf_test_num(e, "ts") * 1000 + 0.5);
		assert_true(ts >= r->last);
		r->last = ts;
		if (!strcmp(ph, "B")) {
			assert_true(r->depth < JF_TEST_STACK_DEPTH);
			r->open[r->depth] = jf_test_str(e, "name");
			r->since[r->depth++] = ts;
			if (r->depth > r->deepest)
				r->deepest = r->depth;
			r->worker |= !strcmp(jf_test_str(e, "name"), "worker");
			continue;
		}
		if (!r->depth)
			fail_msg("thread %.0f: end of '%s' with no frame open", r->tid,
				 jf_test_str(e, "name"));
		if (strcmp(r->open[r->depth - 1], jf_test_str(e, "name")))
			fail_msg("thread %.0f: end of '%s' while '%s' is open", r->tid,
				 jf_test_str(e, "name"), r->open[r->depth - 1]);
		if (--r->depth == 0)
			r->total += ts - r->since[0];
	}
	for (k = 0; k < n; k++)
		assert_int_equal(t[k].depth, 0);
	cJSON_Delete(doc);
	free(text);
	return n;
}

/* The per-thread time of the report's split (all classes). */
static long long split_time(const cJSON *report, double tid)
{
	const cJSON *t, *c;
	long long sum = 0;

	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(report, "split"), "threads")) {
		if (jf_test_num(t, "tid") != tid)
			continue;
		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(t, "time"))
			sum += (long long)c->valuedouble;
	}
	return sum;
}

/* The time `stacks --json` gives the stacks in which worker runs. */
static double worker_time(const char *dir)
{
	cJSON *doc = stacks_json(dir);
	const cJSON *st, *f;
	double time = 0;

	cJSON_ArrayForEach(st, stacks_of(doc))
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(st, "frames"))
			if (!strcmp(jf_test_str(f, "name"), "worker"))
				time += jf_test_num(st, "time");
	cJSON_Delete(doc);
	return time;
}

struct svg_frame {
	long long from, to;
	double y;
	int row;
};

static int by_y(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The frames of one thread's part [from, to) of a `timeline --svg` picture: its times from
 * each <title> "NAME (START to END)", its row from the rank of its rect's y among the
 * part's. Returns how many (at most max). */
static size_t svg_frames(const char *from, const char *to, struct svg_frame *f, size_t max)
{
	double ys[4096];
	size_t n = 0, nys = 0, i, k;
	const char *g;

	for (g = from; (g = strstr(g, "<g><title>")) && g < to && n < max; g++) {
		const char *end = strstr(g, "</title>"), *q = end, *y;

		while (q > g && strncmp(q, " (", 2))
			q--;
		y = strstr(end, " y=\"");
		if (sscanf(q, " (%lld to %lld)", &f[n].from, &f[n].to) != 2 || !y ||
		    sscanf(y + 4, "%lf", &f[n].y) != 1)
			fail_msg("timeline --svg: a frame without its times or row");
		for (k = 0; k < nys && ys[k] != f[n].y; k++)
			;
		if (k == nys && nys < 4096)
			ys[nys++] = f[n].y;
		n++;
	}
	qsort(ys, nys, sizeof(*ys), by_y);
	for (i = 0; i < n; i++)
		for (k = 0; k < nys; k++)
			if (ys[k] == f[i].y)
				f[i].row = (int)k;
	return n;
}

/* `timeline --svg`'s picture, read back from its elements: in each thread's part, every
 * frame lies within a frame of the row above it, the bottom row's frames do not overlap,
 * and they cover exactly the time the report's split gives the thread (the titles carry
 * clock units, not pixels). */
static void check_timeline_svg(const char *dir, const cJSON *report)
{
	static struct svg_frame f[20000];
	char cmd[4096], path[1200], *svg, *out = NULL;
	const char *part[9], *p;
	size_t nparts = 0, i, n, k, j;

	snprintf(path, sizeof(path), "%s/stacks-timeline.svg", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "%s timeline %s --svg %s", jf_test_cli(), dir, path);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	free(out);
	svg = jf_test_read_file(path, NULL);
	for (p = svg; (p = strstr(p, "font-weight=\"bold\">thread ")) && nparts < 8; p++)
		part[nparts++] = p;
	part[nparts] = svg + strlen(svg);
	assert_int_equal(nparts, 3);
	for (i = 0; i < nparts; i++) {
		int tid = atoi(part[i] + strlen("font-weight=\"bold\">thread "));
		long long bottom = 0;

		n = svg_frames(part[i], part[i + 1], f, 20000);
		assert_true(n > 0 && n < 20000);
		for (k = 0; k < n; k++) {
			if (f[k].from > f[k].to)
				fail_msg("%s: thread %d: a frame ends before it starts", path, tid);
			for (j = 0; j < n; j++) {
				if (f[k].row == 0 && f[j].row == 0 && j != k &&
				    f[j].from < f[k].to && f[k].from < f[j].to)
					fail_msg("%s: thread %d: bottom frames overlap", path, tid);
				if (f[k].row && f[j].row == f[k].row - 1 && f[j].from <= f[k].from &&
				    f[k].to <= f[j].to)
					break;
			}
			if (f[k].row && j == n)
				fail_msg("%s: thread %d: a frame (%lld to %lld) outside the row below's",
					 path, tid, f[k].from, f[k].to);
			if (f[k].row == 0)
				bottom += f[k].to - f[k].from;
		}
		assert_int_equal(bottom, split_time(report, tid));
	}
	free(svg);
}

/* The timeline's call-stack tracks of the thread pool program, read by the test's own
 * reader: frames nest, and each thread's frames cover exactly the time the report's split
 * gives it, at the finest resolution and at one that joins everything. */
static void test_timeline_stack_tracks(void **state)
{
	const char *dir = recorded("stacks_threads", "");
	static const char *const resolutions[] = { "1", "1000000000" };
	struct stack_track_read t[8];
	char cmd[4096], path[1200], *out = NULL;
	cJSON *report;
	size_t n, i, k;
	int worker = 0, deepest = 0;

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s report %s --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/stacks-timeline-%zu.json", jf_test_tmpdir(), i);
		snprintf(cmd, sizeof(cmd), "%s timeline %s -o %s --stacks --resolution %s",
			 jf_test_cli(), dir, path, resolutions[i]);
		assert_int_equal(jf_test_run(cmd, &out), 0);
		free(out);
		out = NULL;
		n = read_stack_tracks(path, t, 8);
		/* The main thread and its two workers. */
		assert_int_equal(n, 3);
		for (k = 0; k < n; k++) {
			assert_true(t[k].total > 0);
			assert_int_equal(t[k].total, split_time(report, t[k].tid));
			if (i == 0) {
				worker += t[k].worker;
				deepest = t[k].deepest > deepest ? t[k].deepest : deepest;
			}
		}
	}
	/* At the finest resolution the workers' own frames show, where time went to them:
	 * time reaches a stack as the trace's timing packets come, so a short call between
	 * two of them may have none (the stacks report says which). */
	if (worker_time(dir) > 0)
		assert_true(worker >= 1);
	assert_true(deepest >= 3);
	check_timeline_svg(dir, report);
	cJSON_Delete(report);
}

/* Every jitted frame of dir's stacks is one of its report's regions, stacks end in each
 * of the regions named (entered at least once), and the folded stacks sum to the report. */
static void check_jit_frames(const char *dir, const char *const *regions, size_t nregions)
{
	char cmd[2048];
	cJSON *doc, *report;
	const cJSON *s, *f, *r;
	long jitted = 0;
	size_t i;

	doc = stacks_json(dir);
	snprintf(cmd, sizeof(cmd), "%s report %s --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	cJSON_ArrayForEach(s, stacks_of(doc)) {
		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(s, "frames")) {
			int named = 0;

			if (strcmp(jf_test_str(f, "kind"), "jitted"))
				continue;
			cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(report, "regions"))
				named |= !strcmp(jf_test_str(r, "name"), jf_test_str(f, "name"));
			if (!named)
				fail_msg("jitted frame '%s' is no region of the report",
					 jf_test_str(f, "name"));
			jitted++;
		}
	}
	assert_true(jitted >= (long)nregions);
	for (i = 0; i < nregions; i++)
		if (entries_ending(doc, regions[i], 0) == 0)
			fail_msg("%s: no stack ends in '%s'", dir, regions[i]);
	assert_folded_sums_to_report(dir, doc);
	cJSON_Delete(report);
	cJSON_Delete(doc);
}

/* minivm's checked-in recording: the loop trace and its bridge. */
static void test_minivm_jit_frames(void **state)
{
	static const char *const regions[] = { "trace 1 (loop at program.mvm:7 in main)",
					       "bridge 2 (trace 1 guard 5, pc 17 in main)" };
	char dir[1024];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/traces/minivm-bridge", jf_test_source_dir());
	check_jit_frames(dir, regions, 2);
}

/* LuaJIT's checked-in recording (unpacked into the test's folder): its root trace and the
 * side trace attached to exit 1, named as the module names them (no pc maps: jit.util
 * gives no machine-code offset per bytecode, so a trace's frame is the trace). */
static void test_luajit_jit_frames(void **state)
{
	static const char *const regions[] = { "trace 1 program.lua:4 -> loop",
					       "trace 2 (side 1/1) program.lua:5 -> root" };
	char dir[1024], cmd[4096], *out = NULL;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/luajit-side-trace", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s' && tar -xJf "
		 "'%s/traces/luajit-side-trace/recording.tar.xz' -C '%s'", dir, dir,
		 jf_test_source_dir(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	free(out);
	check_jit_frames(dir, regions, 2);
}

/* Whether "NAME (FILE:LINE)" is a Python function one of PyPy's merge points names in log
 * (`debug_merge_point(DEPTH, DEPTH, 'NAME;FILE:FIRSTLINE-LINE~#PC OP')`), read here with
 * sscanf, apart from jitflow's reader of the log. */
static int merge_point_function(const char *log, const char *frame)
{
	FILE *f = fopen(log, "r");
	char line[4096], name[256], file[1024], text[1400];
	const char *at;
	unsigned first;
	int depth, found = 0;

	if (!f)
		fail_msg("cannot open %s", log);
	while (!found && fgets(line, sizeof(line), f)) {
		if (!(at = strstr(line, "debug_merge_point(")) ||
		    sscanf(at, "debug_merge_point(%d, %*d, '%255[^;];%1023[^:]:%u-", &depth, name,
			   file, &first) != 4)
			continue;
		snprintf(text, sizeof(text), "%s (%s:%u)", name, file, first);
		found = !strcmp(text, frame);
	}
	fclose(f);
	return found;
}

/* Whether PyPy's log has a merge point of function `frame` ("NAME (FILE:LINE)") inlined
 * into `below` (at depth d, where the last merge point of depth d - 1 before it in the same
 * trace names `below`), or, with below "", one at depth 0. Read with sscanf, apart from
 * jitflow's reader of the log. */
static int merge_point_inside(const char *log, const char *frame, const char *below)
{
	FILE *f = fopen(log, "r");
	char line[4096], name[256], file[1024], last[8][1400];
	const char *at;
	unsigned first;
	int depth, found = 0;

	if (!f)
		fail_msg("cannot open %s", log);
	memset(last, 0, sizeof(last));
	while (!found && fgets(line, sizeof(line), f)) {
		if (strstr(line, "{jit-log-opt"))
			memset(last, 0, sizeof(last)); /* a trace's log begins */
		if (!(at = strstr(line, "debug_merge_point(")) ||
		    sscanf(at, "debug_merge_point(%d, %*d, '%255[^;];%1023[^:]:%u-", &depth, name,
			   file, &first) != 4 || depth < 0 || depth >= 8)
			continue;
		snprintf(last[depth], sizeof(last[depth]), "%s (%s:%u)", name, file, first);
		found = !strcmp(last[depth], frame) &&
			!strcmp(depth ? last[depth - 1] : "", below);
	}
	fclose(f);
	return found;
}

/* s with XML's &lt; &gt; &amp; &quot; &#39; unescaped, into buf. */
static void xml_text(char *buf, size_t size, const char *s)
{
	static const char *const ent[][2] = { { "&lt;", "<" }, { "&gt;", ">" }, { "&amp;", "&" },
					      { "&quot;", "\"" }, { "&#39;", "'" } };
	size_t n = 0, k;

	while (*s && n + 1 < size) {
		for (k = 0; k < sizeof(ent) / sizeof(ent[0]); k++)
			if (!strncmp(s, ent[k][0], strlen(ent[k][0])))
				break;
		if (k < sizeof(ent) / sizeof(ent[0])) {
			buf[n++] = ent[k][1][0];
			s += strlen(ent[k][0]);
		} else {
			buf[n++] = *s++;
		}
	}
	buf[n] = 0;
}

/* Instructions that the frames of `stacks --svg` titled "NAME (N instructions, ...)" give
 * name in svg, read with strstr and sscanf. */
static long long svg_frames_named(const char *svg, const char *name)
{
	FILE *f = fopen(svg, "r");
	char line[4096], title[1024];
	long long n = 0, count;
	const char *at;
	size_t len = strlen(name);

	if (!f)
		fail_msg("cannot open %s", svg);
	while (fgets(line, sizeof(line), f)) {
		if (!(at = strstr(line, "<title>")))
			continue;
		xml_text(title, sizeof(title), at + 7);
		if (!strncmp(title, name, len) &&
		    sscanf(title + len, " (%lld instructions", &count) == 1)
			n += count;
	}
	fclose(f);
	return n;
}

/* The flame graph of PyPy's stacks, alone and in the HTML report: the whole is the report's
 * instructions, and each Python function's frames add up to the stacks topped by it (on
 * this recording every such stack is wide enough to be drawn). */
static void assert_svg_matches(const char *dir, const cJSON *doc)
{
	char svg[1200], html[1200], cmd[4096], text[65536];
	const cJSON *s, *f, *g;
	long long report_insns;
	cJSON *report;
	int checked = 0;

	snprintf(svg, sizeof(svg), "%s/pypy-stacks.svg", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "%s stacks %s --svg %s", jf_test_cli(), dir, svg);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(cmd, sizeof(cmd), "%s report %s --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	report_insns = (long long)jf_test_num(cJSON_GetObjectItemCaseSensitive(report, "summary"),
					      "instructions");
	cJSON_Delete(report);
	assert_int_equal(svg_frames_named(svg, "all"), report_insns);
	snprintf(html, sizeof(html), "%s/pypy-report.html", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "%s report %s --html %s --stacks", jf_test_cli(), dir, html);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	cJSON_ArrayForEach(s, stacks_of(doc)) {
		const cJSON *top = NULL;
		long long want = 0;

		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(s, "frames"))
			top = f;
		if (!top || strcmp(jf_test_str(top, "kind"), "guest"))
			continue;
		/* A flame graph draws a frame wherever the function is on a stack: under an
		 * inlined callee's frame too. */
		cJSON_ArrayForEach(g, stacks_of(doc)) {
			char *save = NULL, *frame;

			frames_text(g, text, sizeof(text)); /* into text, which strtok_r cuts */
			for (frame = strtok_r(text, ";", &save); frame; frame = strtok_r(NULL, ";", &save))
				if (!strcmp(frame, jf_test_str(top, "name")))
					want += (long long)jf_test_num(g, "insns");
		}
		assert_int_equal(svg_frames_named(svg, jf_test_str(top, "name")), want);
		/* The HTML report with --stacks draws the same frames. */
		assert_int_equal(svg_frames_named(html, jf_test_str(top, "name")), want);
		checked++;
	}
	assert_true(checked > 0);
}

/* PyPy's checked-in recording: over each trace's frame, the Python function its pc map
 * says the code is in (loop.py's run, and the f it inlines); every such frame is a
 * function a merge point of PyPy's log names, over the function the log inlines it into
 * (f over run: merge points of depth 1 after run's of depth 0) or over none (depth 0), and
 * the stacks' instructions add up to the report's. */
static void test_pypy_guest_frames(void **state)
{
	char dir[1024], log[1200];
	cJSON *doc;
	const cJSON *s, *f;
	uint64_t guest_insns = 0;
	int run = 0, inlined = 0;
	const char *below;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/traces/pypy-loop", jf_test_source_dir());
	snprintf(log, sizeof(log), "%s/pypylog.log", dir);
	doc = stacks_json(dir);
	cJSON_ArrayForEach(s, stacks_of(doc)) {
		const cJSON *top = NULL;

		cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(s, "frames")) {
			const char *name = jf_test_str(f, "name");

			below = top && !strcmp(jf_test_str(top, "kind"), "guest") ?
				jf_test_str(top, "name") : "";
			top = f;
			if (strcmp(jf_test_str(f, "kind"), "guest"))
				continue;
			if (!merge_point_function(log, name))
				fail_msg("guest frame '%s' is no function of PyPy's merge points", name);
			if (!merge_point_inside(log, name, below))
				fail_msg("guest frame '%s' over '%s': no merge point of the log nests "
					 "them so", name, below);
			run += !strncmp(name, "run (/tmp/pypy-loop/loop.py:", 28);
			inlined += !strncmp(name, "f (/tmp/pypy-loop/loop.py:", 26) &&
				   !strncmp(below, "run (/tmp/pypy-loop/loop.py:", 28);
		}
		if (top && !strcmp(jf_test_str(top, "kind"), "guest"))
			guest_insns += (uint64_t)jf_test_num(s, "insns");
	}
	assert_true(run > 0);
	assert_true(inlined > 0);
	assert_true(guest_insns > 0);
	assert_folded_sums_to_report(dir, doc);
	assert_svg_matches(dir, doc);
	cJSON_Delete(doc);
}

/* The inputs of real capture `name` (../shared/traces/intel-pt), or NULL (skipped). */
static const char *capture_inputs(const char *name, const char *base)
{
	static char inputs[2048];
	const char *shared = jf_test_shared_traces();

	if (!shared)
		return NULL;
	snprintf(inputs, sizeof(inputs), "--raw '%s/intel-pt/%s/data:%s' --pt '%s/intel-pt/%s/trace'",
		 shared, name, base, shared, name);
	return inputs;
}

/* A real capture of a C program (libxdc's foo): no longjmp, exception or signal, so every
 * return lands where a frame returns to. */
static void test_real_capture_followed(void **state)
{
	const char *inputs = capture_inputs("foo", "0x7ffff7819000");
	cJSON *doc;

	(void)state;
	if (!inputs)
		skip();
	doc = stacks_json(inputs);
	assert_true(count(doc, "calls") > 1000);
	assert_int_equal(count(doc, "unwound"), 0);
	assert_int_equal(count(doc, "unmatched"), 0);
	assert_int_equal(count(doc, "restarts"), 0);
	assert_folded_sums_to_report(inputs, doc);
	cJSON_Delete(doc);
}

/* A real capture with decode errors (Unzip): each time decoding loses track the stack
 * restarts below [unknown], located where libipt's reference decoder (ptxed, its output
 * in expected-ptxed.txt.gz) reports the error: the same trace offset and IP. */
static void test_real_capture_errors(void **state)
{
	const char *inputs = capture_inputs("Unzip", "0x400000");
	char cmd[2048], *ptxed = NULL, site[64];
	cJSON *doc;
	const cJSON *n;
	long lost = 0;

	(void)state;
	if (!inputs)
		skip();
	doc = stacks_json(inputs);
	snprintf(cmd, sizeof(cmd), "zcat '%s/intel-pt/Unzip/expected-ptxed.txt.gz' | grep error",
		 jf_test_shared_traces());
	assert_int_equal(jf_test_run(cmd, &ptxed), 0);
	cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(doc, "notes")) {
		assert_string_equal(jf_test_str(n, "kind"), "lost track");
		snprintf(site, sizeof(site), "[%llx, %llx: error",
			 (unsigned long long)jf_test_num(n, "offset"),
			 (unsigned long long)jf_test_num(n, "ip"));
		if (!strstr(ptxed, site))
			fail_msg("stack restarted at %s, where ptxed reports no error", site);
		lost++;
	}
	free(ptxed);
	assert_true(lost > 0);
	assert_int_equal(lost, count(doc, "restarts"));
	assert_true(any_stack_has(doc, "[unknown]"));
	assert_folded_sums_to_report(inputs, doc);
	cJSON_Delete(doc);
}

/* -j N on a raw stream decodes its segments on N threads and one analysis takes the joined
 * flow, so the stacks are those of one thread to the byte: on both real captures (Unzip's
 * decode errors too), cut into 4 KB segments so that there are seams to join. */
static void test_parallel_decode(void **state)
{
	static const char *const captures[][2] = { { "foo", "0x7ffff7819000" },
						   { "Unzip", "0x400000" } };
	char cmd[4096], *one, *many, *stat, *threads;
	size_t i;
	int segments = 0;

	(void)state;
	if (!capture_inputs("foo", "0"))
		skip();
	for (i = 0; i < 2; i++) {
		const char *inputs = capture_inputs(captures[i][0], captures[i][1]);

		snprintf(cmd, sizeof(cmd), "%s stat %s -j 4 --segment-size 4K", jf_test_cli(), inputs);
		assert_int_equal(jf_test_run(cmd, &stat), 0);
		threads = strstr(stat, "decode threads");
		if (!threads || sscanf(threads, "decode threads %*d (%d segments", &segments) != 1 ||
		    segments < 2)
			fail_msg("%s: not decoded in segments: %s", captures[i][0], stat);
		free(stat);
		snprintf(cmd, sizeof(cmd), "%s stacks %s --json -j 1", jf_test_cli(), inputs);
		assert_int_equal(jf_test_run(cmd, &one), 0);
		snprintf(cmd, sizeof(cmd), "%s stacks %s --json -j 4 --segment-size 4K", jf_test_cli(),
			 inputs);
		assert_int_equal(jf_test_run(cmd, &many), 0);
		if (strcmp(one, many))
			fail_msg("%s: stacks -j 4 differ from -j 1", captures[i][0]);
		free(one);
		free(many);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_deeper_than_kept),
		cmocka_unit_test(test_longjmp),
		cmocka_unit_test(test_signal_handler),
		cmocka_unit_test(test_timer_signals),
		cmocka_unit_test(test_two_threads),
		cmocka_unit_test(test_timeline_stack_tracks),
		cmocka_unit_test(test_minivm_jit_frames),
		cmocka_unit_test(test_luajit_jit_frames),
		cmocka_unit_test(test_pypy_guest_frames),
		cmocka_unit_test(test_real_capture_followed),
		cmocka_unit_test(test_real_capture_errors),
		cmocka_unit_test(test_parallel_decode),
	};

	jf_test_require_tools("perf --version && qemu-x86_64 --version",
			      "perf (linux-perf) or qemu-x86_64 (qemu-user)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
