/* PyPy's VM phases, iteration marks and threads, recorded with `jitflow record` (Debian's
 * pypy3): tests/data/pypy/vm_phases.py marks 5 iterations on the main thread, then two
 * threads compile and run loops of their own. One recording serves every check here
 * (PyPy's start-up alone is ~70 M instructions); a second one runs a program with
 * --jit off. The oracles: PyPy's own stamps and counters in its log (read here with
 * sscanf), the recorder's jit-code.txt (where each piece of code first ran, on which
 * thread: found by comparing bytes, not by the TSC), and the program's printed count. */
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/pypylog.h"
#include "jitflow/pypylog_clock.h"

static char rec[4096], log_path[4200];
static cJSON *report;
static struct jf_pypylog *log;
static struct jf_pypylog_clock_placement *marks;
static long iterations_printed;

static int record(void **state)
{
	const char *tmp = jf_test_tmpdir();
	char cmd[8192], path[4300], *out = NULL;
	struct jf_error err;

	(void)state;
	jf_test_require_tools("command -v pypy3", "pypy3");
	snprintf(rec, sizeof(rec), "%s/rec", tmp);
	snprintf(cmd, sizeof(cmd), "PYTHONPATH='%s/tools/runtimes/pypy' '%s' record -o '%s' -- "
		 "pypy3 '%s/tests/data/pypy/vm_phases.py' 2>/dev/null", jf_test_binary_dir(),
		 jf_test_cli(), rec, jf_test_source_dir());
	if (jf_test_run(cmd, &out) != 0 || sscanf(out, "%ld", &iterations_printed) != 1)
		return -1;
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), rec);
	report = jf_test_run_json(cmd);
	snprintf(log_path, sizeof(log_path), "%s/pypylog.log", rec);
	snprintf(path, sizeof(path), "%s/clock-reads.txt", rec);
	if (!report || jf_pypylog_read(&log, log_path, &err) ||
	    jf_pypylog_place_marks(log, path, &marks, &err))
		return -1;
	return 0;
}

static int release(void **state)
{
	(void)state;
	cJSON_Delete(report);
	jf_pypylog_clock_placement_free(marks);
	jf_pypylog_free(log);
	return 0;
}

/* Stamps of section lines whose name starts with prefix ("{jit-tracing" opens), in the
 * log's order, read with sscanf. */
static size_t section_stamps(const char *prefix, uint64_t *out, size_t cap)
{
	FILE *f = fopen(log_path, "r");
	char line[512], name[256];
	unsigned long long tsc;
	size_t n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "[%llx] %255s", &tsc, name) == 2 &&
		    !strncmp(name, prefix, strlen(prefix)) && n < cap)
			out[n++] = tsc;
	fclose(f);
	return n;
}

/* Every section PyPy stamped is one TSC read of the recording: placed, each on a read of
 * its own, and each section closes on the thread it opened on. */
static void test_every_stamp_is_one_tsc_read(void **state)
{
	uint64_t stamps[4096];
	size_t i, k = 0, n = section_stamps("{jit-tracing", stamps, 4096);

	(void)state;
	assert_int_equal(marks->unplaced + marks->shared + marks->crossed + marks->bad_lines, 0);
	assert_int_equal(marks->placed, log->nmarks);
	assert_true(n >= 3);
	for (i = 0; i < log->nmarks; i++)
		if (log->marks[i].kind == JF_PYPY_MARK_PHASE_BEGIN &&
		    log->marks[i].phase == JF_PHASE_TRACING)
			assert_int_equal(log->marks[i].tsc, stamps[k++]);
	assert_int_equal(k, n);
	printf("%zu marks, %" PRIu64 " TSC reads, %zu threads\n", log->nmarks, marks->reads,
	       marks->ntids);
}

/* Where code first ran (jit-code.txt, by bytes): the first block in [start, end). */
static int first_run(uint64_t start, uint64_t end, int32_t *tid, uint64_t *pos)
{
	char path[4300], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int found = 0;

	snprintf(path, sizeof(path), "%s/jit-code.txt", rec);
	f = fopen(path, "r");
	assert_non_null(f);
	while (!found && getline(&line, &cap, f) > 0) {
		long long t;
		unsigned long long p, pc;

		if (sscanf(line, "%lld %llu %llx", &t, &p, &pc) == 3 && pc >= start && pc < end) {
			*tid = (int32_t)t;
			*pos = p;
			found = 1;
		}
	}
	free(line);
	fclose(f);
	return found;
}

/* The mark of kind/phase nearest the log line `line`: the last before it (before = 1) or
 * the first after it. */
static long mark_near(uint32_t line, int before, uint8_t kind, uint8_t phase)
{
	long i, found = -1;

	for (i = 0; i < (long)log->nmarks; i++) {
		const struct jf_pypylog_mark *m = &log->marks[i];

		if (m->kind != kind || m->phase != phase)
			continue;
		if (before && m->line < line)
			found = i;
		if (!before && m->line > line)
			return i;
	}
	return found;
}

/* Each loop and bridge was traced and compiled on the thread that first ran it, before
 * it ran: its jit-backend section closes (TSC-placed) on the thread, and at or before the
 * position, where jit-code.txt saw its bytes run first; its tracing began earlier still. */
static void test_traces_compiled_on_their_thread_before_they_ran(void **state)
{
	size_t i, checked = 0, workers = 0;

	(void)state;
	for (i = 0; i < log->ntraces; i++) {
		const struct jf_pypylog_trace *t = &log->traces[i];
		long end = mark_near(t->line, 0, JF_PYPY_MARK_PHASE_END, JF_PHASE_COMPILING);
		long begin = mark_near(t->line, 1, JF_PYPY_MARK_PHASE_BEGIN, JF_PHASE_TRACING);
		int32_t tid;
		uint64_t pos;

		if (!t->entry || !first_run(t->entry, t->code_end, &tid, &pos))
			continue; /* never ran */
		assert_true(end >= 0 && begin >= 0);
		if (marks->at[end].tid != tid || marks->at[end].position > pos ||
		    marks->at[begin].tid != tid || marks->at[begin].position > marks->at[end].position)
			fail_msg("%s (line %" PRIu32 "): first ran on thread %d at %" PRIu64 "; "
				 "tracing began on %d at %" PRIu64 ", compiling ended on %d at %"
				 PRIu64, t->name, t->line, tid, pos, marks->at[begin].tid,
				 marks->at[begin].position, marks->at[end].tid, marks->at[end].position);
		checked++;
		workers += tid != marks->tids[0];
	}
	assert_true(checked >= 4);
	assert_true(workers >= 2); /* the two threads' loops */
}

/* A counter of jit-backend-counts ("entry 4:201", "TargetToken(T):N", "bridge B:N"),
 * read with sscanf; -1 if the log has none. */
static double pypy_count(const char *what, const char *id)
{
	FILE *f = fopen(log_path, "r");
	char line[512], want[128];
	double found = -1;
	size_t n = (size_t)snprintf(want, sizeof(want), !strcmp(what, "TargetToken") ?
				    "%s(%s):" : "%s %s:", what, id);
	int in = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "{jit-backend-counts"))
			in = 1;
		else if (strstr(line, "jit-backend-counts}"))
			in = 0;
		else if (in && !strncmp(line, want, n))
			found = strtod(line + n, NULL);
	}
	fclose(f);
	return found;
}

/* Each loop's and bridge's making (the report's tracing and compiling instructions of its
 * row) lies between the stamps of the tracing section that made it: no more than the
 * instructions its thread ran from the section's opening to its closing (positions of the
 * recorder's TSC reads), the rest being collections inside it; none is in two phases:
 * the phases and jitted code of each thread add up to no more than its instructions. */
static void test_making_lies_within_its_sections(void **state)
{
	const cJSON *t, *th;
	size_t i, rows = 0;

	(void)state;
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(report, "traces")) {
		const cJSON *tr = cJSON_GetObjectItemCaseSensitive(t, "tracing");
		const cJSON *co = cJSON_GetObjectItemCaseSensitive(t, "compiling");
		double made = tr ? jf_test_num(tr, "instructions") +
				   jf_test_num(co, "instructions") : 0;
		uint64_t id = (uint64_t)jf_test_num(t, "id");
		long begin = -1, end = -1;

		if (made <= 0)
			continue;
		for (i = 0; i < log->ntraces && begin < 0; i++) {
			const struct jf_pypylog_trace *x = &log->traces[i];

			if ((x->kind == JF_PYPY_LOOP ? x->number : x->guard) != id)
				continue;
			begin = mark_near(x->line, 1, JF_PYPY_MARK_PHASE_BEGIN, JF_PHASE_TRACING);
			end = mark_near(x->line, 0, JF_PYPY_MARK_PHASE_END, JF_PHASE_TRACING);
		}
		assert_true(begin >= 0 && end >= 0);
		assert_int_equal(marks->at[begin].tid, marks->at[end].tid);
		printf("trace %" PRIu64 ": tracing + compiling %.0f of %" PRIu64 " instructions "
		       "in its jit-tracing section\n", id, made,
		       marks->at[end].position - marks->at[begin].position);
		assert_true(made <= (double)(marks->at[end].position - marks->at[begin].position));
		rows++;
	}
	assert_true(rows >= 4);
	cJSON_ArrayForEach(th, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		report, "phases"), "threads")) {
		const cJSON *in = cJSON_GetObjectItemCaseSensitive(th, "instructions"), *v;
		const cJSON *split_thread = NULL, *s;
		double sum = 0;

		cJSON_ArrayForEach(v, in)
			sum += v->valuedouble;
		cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
			report, "split"), "threads"))
			if (jf_test_num(s, "tid") == jf_test_num(th, "tid"))
				split_thread = s;
		assert_non_null(split_thread);
		in = cJSON_GetObjectItemCaseSensitive(split_thread, "instructions");
		{
			double total = 0;

			cJSON_ArrayForEach(v, in)
				total += v->valuedouble;
			assert_true(sum <= total);
		}
	}
}

/* The label ops PyPy logged for loop `number`. */
static size_t logged_labels(uint64_t number)
{
	const struct jf_pypylog_trace *t = jf_pypylog_loop(log, number);
	size_t i, n = 0;

	assert_non_null(t);
	for (i = 0; i < t->nops; i++)
		n += log->ops[t->first_op + i].kind == JF_PYPY_OP_LABEL;
	return n;
}

/* Every loop of the three threads (the main thread's main_loop and the library loops it
 * compiled, the workers' thirds and fifths) and every bridge, decoded from three threads'
 * traces: every entry, label pass and bridge entry equals PyPy's counter, and every loop
 * PyPy counted is in the report with all its labels. */
static void test_threads_counts_equal_pypys_own(void **state)
{
	const cJSON *summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
	const cJSON *pypy = cJSON_GetObjectItemCaseSensitive(report, "pypy"), *t, *l, *b;
	int loops = 0, counted_loops = 0, named = 0, compared = 0, bridges = 0;
	char id[32];
	size_t i;

	(void)state;
	assert_int_equal(jf_test_num(summary, "decode_errors"), 0);
	assert_int_equal(jf_test_num(summary, "lost_bytes"), 0);
	assert_int_equal(jf_test_num(summary, "threads"), 3);
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(pypy, "loops")) {
		const char *name = cJSON_GetObjectItemCaseSensitive(t, "name")->valuestring;
		int labels = 0;

		loops++;
		named += strstr(name, "(main_loop;") || strstr(name, "(thirds;") ||
			 strstr(name, "(fifths;");
		snprintf(id, sizeof(id), "%.0f", jf_test_num(t, "id"));
		assert_true(pypy_count("entry", id) > 0);
		assert_int_equal(jf_test_num(t, "entries"), pypy_count("entry", id));
		compared++;
		cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(t, "labels")) {
			assert_int_equal(jf_test_num(l, "passes"), pypy_count("TargetToken",
				cJSON_GetObjectItemCaseSensitive(l, "token")->valuestring));
			compared++;
			labels++;
		}
		assert_int_equal(labels, logged_labels((uint64_t)jf_test_num(t, "id")));
		cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(pypy, "bridges")) {
			if (jf_test_num(b, "parent") != jf_test_num(t, "id"))
				continue;
			assert_int_equal(jf_test_num(b, "entries"), pypy_count("bridge",
				cJSON_GetObjectItemCaseSensitive(b, "id")->valuestring));
			compared++;
			bridges++;
		}
	}
	for (i = 0; i < log->ncounts; i++)
		counted_loops += log->counts[i].kind == JF_PYPY_COUNT_ENTRY;
	assert_int_equal(named, 3);
	assert_int_equal(loops, counted_loops);
	assert_int_equal(bridges, cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pypy,
										      "bridges")));
	printf("%d counters of %d loops and %d bridges on three threads equal PyPy's\n",
	       compared, loops, bridges);
}

/* The program's marks are the report's iterations: as many as it printed, in order. */
static void test_iterations_are_the_programs(void **state)
{
	const cJSON *it;
	long n = 0;

	(void)state;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(report, "iterations")) {
		assert_int_equal(jf_test_num(it, "index"), n);
		assert_true(jf_test_num(it, "instructions") > 0);
		n++;
	}
	assert_int_equal(n, iterations_printed);
}

/* With the JIT off nothing is traced, compiled or left: only collections are phases,
 * and no instruction is jitted. */
static void test_jit_off_has_only_gc(void **state)
{
	char dir[4200], cmd[8192], path[4300];
	struct jf_pypylog *off;
	struct jf_pypylog_clock_placement *pl;
	struct jf_error err;
	cJSON *r;
	size_t i, gc = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/off", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "'%s' record -o '%s' -- pypy3 --jit off -c "
		 "'print(sum(str(i).count(\"1\") for i in range(20000)))' >/dev/null 2>&1",
		 jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(path, sizeof(path), "%s/pypylog.log", dir);
	assert_int_equal(jf_pypylog_read(&off, path, &err), 0);
	snprintf(path, sizeof(path), "%s/clock-reads.txt", dir);
	assert_int_equal(jf_pypylog_place_marks(off, path, &pl, &err), 0);
	for (i = 0; i < off->nmarks; i++) {
		assert_int_equal(off->marks[i].phase, JF_PHASE_GC);
		gc++;
	}
	assert_true(gc > 0);
	assert_int_equal(pl->placed, off->nmarks);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	r = jf_test_run_json(cmd);
	assert_non_null(r);
	assert_int_equal(jf_test_num(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "split"),
						 "total"), "instructions"), "jitted"), 0);
	cJSON_Delete(r);
	jf_pypylog_clock_placement_free(pl);
	jf_pypylog_free(off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_stamp_is_one_tsc_read),
		cmocka_unit_test(test_traces_compiled_on_their_thread_before_they_ran),
		cmocka_unit_test(test_making_lies_within_its_sections),
		cmocka_unit_test(test_threads_counts_equal_pypys_own),
		cmocka_unit_test(test_iterations_are_the_programs),
		cmocka_unit_test(test_jit_off_has_only_gc),
	};

	return cmocka_run_group_tests(tests, record, release);
}
