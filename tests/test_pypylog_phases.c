/* PyPy's timed log sections as VM phases, and jitflow's iteration marks: read from log
 * text written here by hand (the sections' names as Debian's pypy3 7.3.11 writes them),
 * then placed by a recording's TSC reads (clock-reads.txt, also written here), and
 * written as a zone file per thread. Every expected value is fixed by the text above it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/pypylog.h"
#include "jitflow/pypylog_clock.h"
#include "jitflow/pypylog_zone.h"
#include "jitflow/zone.h"
#include "jitflow/zone_format.h"
#include "test_support.h"

/* Nesting as PyPy writes it: a minor collection inside tracing, the optimizer and the
 * backend inside tracing, the backend's dump inside the backend. */
static const char nested_log[] =
	"[10] {gc-set-nursery-size\n"          /* start-up configuration: not a phase */
	"nursery size: 270336\n"
	"[11] gc-set-nursery-size}\n"
	"[20] {jit-tracing\n"
	"[21] {gc-minor\n"
	"[22] {gc-minor-walkroots\n"
	"[23] gc-minor-walkroots}\n"
	"minor collect, total memory used: 0\n"
	"[24] gc-minor}\n"
	"[25] {jit-optimize\n"
	"[26] jit-optimize}\n"
	"[27] {jit-backend\n"
	"[28] {jit-backend-addr\n"
	"Loop 4 (f;x.py:1-2~#0 LOAD_FAST) has address 0x1000 to 0x1100 (bootstrap 0x1000)\n"
	"[29] jit-backend-addr}\n"
	"[2a] jit-backend}\n"
	"[2b] jit-tracing}\n"
	"[30] {jit-blackhole\n"
	"[31] jit-blackhole}\n"
	"[40] {jitflow-iteration\n"
	"7\n"
	"[41] jitflow-iteration}\n"
	"[50] {jit-backend-counts\n"         /* written at exit: not a phase */
	"[51] jit-backend-counts}\n";

struct want {
	uint64_t tsc;
	uint8_t kind, phase;
};

#define B JF_PYPY_MARK_PHASE_BEGIN
#define E JF_PYPY_MARK_PHASE_END

static const struct want nested_marks[] = {
	{ 0x20, B, JF_PHASE_TRACING }, { 0x21, B, JF_PHASE_GC }, { 0x22, B, JF_PHASE_GC },
	{ 0x23, E, JF_PHASE_GC }, { 0x24, E, JF_PHASE_GC }, { 0x25, B, JF_PHASE_COMPILING },
	{ 0x26, E, JF_PHASE_COMPILING }, { 0x27, B, JF_PHASE_COMPILING },
	{ 0x2a, E, JF_PHASE_COMPILING }, { 0x2b, E, JF_PHASE_TRACING },
	{ 0x30, B, JF_PHASE_EXIT_HANDLING }, { 0x31, E, JF_PHASE_EXIT_HANDLING },
	{ 0x40, JF_PYPY_MARK_ITERATION, 0 },
};

static struct jf_pypylog *parse(const char *text, size_t size)
{
	struct jf_pypylog *log;
	struct jf_error err;

	assert_int_equal(jf_pypylog_parse(&log, text, size, "phases.log", &err), 0);
	return log;
}

static void sections_become_phase_marks(void **state)
{
	struct jf_pypylog *log = parse(nested_log, strlen(nested_log));
	size_t i;

	(void)state;
	assert_int_equal(log->problems, 0);
	assert_int_equal(log->nmarks, sizeof(nested_marks) / sizeof(nested_marks[0]));
	for (i = 0; i < log->nmarks; i++) {
		assert_int_equal(log->marks[i].tsc, nested_marks[i].tsc);
		assert_int_equal(log->marks[i].kind, nested_marks[i].kind);
		assert_int_equal(log->marks[i].phase, nested_marks[i].phase);
	}
	assert_int_equal(log->marks[12].arg, 7);
	assert_int_equal(log->marks[12].line, 20);
	jf_pypylog_free(log);
}

/* Cut anywhere: never a crash; sections still open have a begin and no end, and the cut
 * is reported (a cut line may name another section: "{jit-backend-addr" cut to
 * "{jit-backend" opens one more). Cut right after "[20] {jit-tracing": one begin, one
 * problem. */
static void truncated_logs_keep_their_begins(void **state)
{
	size_t cut, n = strlen(nested_log);
	const char *after = strstr(nested_log, "{jit-tracing\n") + strlen("{jit-tracing\n");
	struct jf_pypylog *log;

	(void)state;
	for (cut = 0; cut <= n; cut++) {
		log = parse(nested_log, cut);
		assert_true(log->nmarks <= sizeof(nested_marks) / sizeof(nested_marks[0]) + 1);
		jf_pypylog_free(log);
	}
	log = parse(nested_log, (size_t)(after - nested_log));
	assert_int_equal(log->nmarks, 1);
	assert_int_equal(log->marks[0].kind, B);
	assert_int_equal(log->unclosed, 1);
	assert_int_equal(log->problems, 1);
	assert_non_null(strstr(log->problem[0], "phases.log:4: the log ends inside 1 open"));
	jf_pypylog_free(log);
}

/* A garbled index is located and the mark kept (index 0); a close that names another
 * section still ends the phase that was open (begins and ends stay paired). */
static void corrupt_sections_are_located(void **state)
{
	static const char text[] =
		"[40] {jitflow-iteration\n"
		"seven\n"
		"[41] jitflow-iteration}\n"
		"[50] {jit-tracing\n"
		"[51] gc-minor}\n";
	struct jf_pypylog *log = parse(text, strlen(text));

	(void)state;
	assert_int_equal(log->problems, 2);
	assert_non_null(strstr(log->problem[0], "phases.log:2: expected an iteration index"));
	assert_non_null(strstr(log->problem[1], "phases.log:5: section end \"gc-minor}\""));
	assert_int_equal(log->nmarks, 3);
	assert_int_equal(log->marks[0].arg, 0);
	assert_int_equal(log->marks[2].kind, E);
	assert_int_equal(log->marks[2].phase, JF_PHASE_TRACING);
	jf_pypylog_free(log);
}

static struct jf_pypylog_clock_placement *place(const struct jf_pypylog *log, const char *reads)
{
	struct jf_pypylog_clock_placement *pl;
	struct jf_error err;
	FILE *f = fmemopen((void *)reads, strlen(reads), "r");

	assert_non_null(f);
	assert_int_equal(jf_pypylog_place_marks_stream(log, f, "clock-reads.txt", &pl, &err), 0);
	fclose(f);
	return pl;
}

/* Two threads: thread 7 traces (stamps 0x20..0x2b, read at 0x1f.. and placed at its
 * reads' positions), thread 9 runs a collection of its own in between (0x22, 0x23) and
 * the blackhole. A read's stamp is at least the read's TSC and below the next read. */
static void marks_are_placed_on_the_reading_thread(void **state)
{
	static const char reads[] =
		"# jitflow clock-reads 1\n"
		"7 100 1f\n"  /* -> 0x20 */
		"7 150 21\n"  /* -> 0x21 */
		"9 40 22\n"   /* -> 0x22 */
		"9 45 23\n"   /* -> 0x23 */
		"7 160 24\n"  /* -> 0x24 */
		"7 170 25\n7 180 26\n7 190 27\n7 200 2a\n7 210 2b\n"
		"9 60 2f\n9 70 31\n"  /* blackhole on thread 9 */
		"7 300 40\n";         /* the iteration */
	struct jf_pypylog *log = parse(nested_log, strlen(nested_log));
	struct jf_pypylog_clock_placement *pl = place(log, reads);

	(void)state;
	assert_int_equal(pl->reads, 13);
	assert_int_equal(pl->placed, 13);
	assert_int_equal(pl->unplaced + pl->shared + pl->crossed + pl->bad_lines, 0);
	assert_int_equal(pl->ntids, 2);
	assert_int_equal(pl->tids[0], 7);
	assert_int_equal(pl->tids[1], 9);
	assert_int_equal(pl->at[0].position, 100);
	assert_int_equal(pl->at[2].tid, 9);
	assert_int_equal(pl->at[2].position, 40);
	assert_int_equal(pl->at[9].tid, 7);
	assert_int_equal(pl->at[9].position, 210);
	assert_int_equal(pl->at[10].tid, 9);  /* 0x30 read at 0x2f */
	assert_int_equal(pl->at[10].position, 60);
	assert_int_equal(pl->at[12].position, 300);
	jf_pypylog_clock_placement_free(pl);
	jf_pypylog_free(log);
}

/* Reads that do not explain the log: counted and located, never a crash. */
static void bad_reads_are_counted_and_located(void **state)
{
	static const char reads[] =
		"# jitflow clock-reads 1\n"
		"7 100\n"         /* cut short */
		"7 100 2x\n"      /* garbage after the TSC */
		"7 200 21\n"      /* the first read: 0x20 is below it */
		"9 300 2b\n";     /* one read for 0x21..0x2a and 0x2b on another thread */
	struct jf_pypylog *log = parse(nested_log, strlen(nested_log));
	struct jf_pypylog_clock_placement *pl = place(log, reads);

	(void)state;
	assert_int_equal(pl->bad_lines, 2);
	assert_non_null(strstr(pl->problem[0], "clock-reads.txt:2: expected \"TID POSITION TSC\""));
	assert_non_null(strstr(pl->problem[1], "clock-reads.txt:3:"));
	assert_int_equal(pl->unplaced, 1);
	assert_non_null(strstr(pl->problem[2], "phases.log:4: stamp 20 is below every TSC read"));
	assert_int_equal(pl->placed, 12);
	/* 0x22..0x2a on the read of 0x21, 0x30..0x40 on the read of 0x2b */
	assert_int_equal(pl->shared, 10);
	jf_pypylog_clock_placement_free(pl);
	jf_pypylog_free(log);
}

/* A thread's zone file: its events, in order, stamped with their positions; the tracing
 * section that holds Loop 4's jit-backend-addr made Loop 4 (TRACE_START after its begin,
 * COMPILE_END after its end). */
static void marks_zone_holds_one_threads_events(void **state)
{
	static const char reads[] = "7 100 1f\n7 150 21\n9 40 22\n9 45 23\n7 160 24\n"
		"7 170 25\n7 180 26\n7 190 27\n7 200 2a\n7 210 2b\n9 60 2f\n9 70 31\n7 300 40\n";
	static const uint32_t kinds9[] = { JF_EVENT_PHASE_BEGIN, JF_EVENT_PHASE_END,
					   JF_EVENT_PHASE_BEGIN, JF_EVENT_PHASE_END };
	static const uint64_t at9[] = { 40, 45, 60, 70 };
	static const uint64_t args9[] = { JF_PHASE_GC, JF_PHASE_GC, JF_PHASE_EXIT_HANDLING,
					  JF_PHASE_EXIT_HANDLING };
	struct jf_pypylog *log = parse(nested_log, strlen(nested_log));
	struct jf_pypylog_clock_placement *pl = place(log, reads);
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	struct jf_error err;
	char path[4096];
	uint64_t events;
	size_t n = 0;
	int marker = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/marks-9.zone", jf_test_tmpdir());
	assert_int_equal(jf_pypylog_write_marks_zone(log, pl, 9, path, &events, &err), 0);
	assert_int_equal(events, 4);
	assert_int_equal(jf_zone_reader_open(&r, path, &err), 0);
	while (jf_zone_next(r, &rec, &err) == 1) {
		if (rec.id == JF_ZONE_MARKER) {
			marker = (rec.u.marker.methods & JF_ZONE_MARKER_POSITION) != 0;
			continue;
		}
		assert_int_equal(rec.id, JF_ZONE_EVENT);
		assert_true(n < 4);
		assert_int_equal(rec.tid, 9);
		assert_int_equal(rec.timestamp, at9[n]);
		assert_int_equal(rec.u.event.kind, kinds9[n]);
		assert_int_equal(rec.u.event.arg, args9[n]);
		n++;
	}
	assert_int_equal(n, 4);
	assert_true(marker);
	jf_zone_reader_close(r);

	snprintf(path, sizeof(path), "%s/marks-7.zone", jf_test_tmpdir());
	assert_int_equal(jf_pypylog_write_marks_zone(log, pl, 7, path, &events, &err), 0);
	assert_int_equal(events, 8 + 1 + 2); /* 8 phase marks, the iteration, the trace's two */
	assert_int_equal(jf_zone_reader_open(&r, path, &err), 0);
	n = 0;
	while (jf_zone_next(r, &rec, &err) == 1) {
		if (rec.id != JF_ZONE_EVENT)
			continue;
		if (n == 1 || n == 9) /* right after the tracing begin, and after its end */
			assert_int_equal(rec.u.event.kind, n == 1 ? JF_EVENT_TRACE_START :
					 JF_EVENT_COMPILE_END);
		if (n == 1 || n == 9) {
			assert_int_equal(rec.u.event.arg, 4);
			assert_int_equal(rec.timestamp, n == 1 ? 100 : 210);
		}
		n++;
	}
	assert_int_equal(n, 11);
	jf_zone_reader_close(r);
	jf_pypylog_clock_placement_free(pl);
	jf_pypylog_free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sections_become_phase_marks),
		cmocka_unit_test(truncated_logs_keep_their_begins),
		cmocka_unit_test(corrupt_sections_are_located),
		cmocka_unit_test(marks_are_placed_on_the_reading_thread),
		cmocka_unit_test(bad_reads_are_counted_and_located),
		cmocka_unit_test(marks_zone_holds_one_threads_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
