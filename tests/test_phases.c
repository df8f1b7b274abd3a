/* VM phases on a scripted run: PHASE_BEGIN / PHASE_END records written by the real
 * emitter and read back by the real reader, between blocks a decoder would report.
 *
 * The script (one thread): interpreter code; iteration 0; trace 5 is recorded (a tracing
 * span over interpreter and runtime code, with a call of the emitter inside it) and
 * compiled (a compiling span with a GC span nested in it, and code after its COMPILE_END);
 * iteration 1; an exit is handled; a PHASE_END that no BEGIN opened; trace 6's tracing
 * span is still open when the trace ends. Every count below follows from the script's
 * block sizes. Then the merge property: cut at every step, inside spans too, the two
 * parts merged give the whole's phases exactly. */
#include "test_support.h"

#include <stdio.h>
#include <string.h>

#include "jitflow/analysis.h"
#include "jitflow/emitter.h"
#include "jitflow/zone.h"

enum {
	INTERP = 0x1000,  /* the interpreter's eval loop [0x1000, 0x2000) */
	RUNTIME = 0x3000, /* the runtime's native code [0x3000, 0x4000) */
	EMITTER = 0x5000, /* the emitter's code (instrumentation) [0x5000, 0x5100) */
};

/* The records, in the order the script writes them. */
enum { R_INTERP, R_EMITTER, R_ITER0, R_START5, R_TRACE_BEGIN, R_TRACE_END, R_COMPILE_PHASE,
       R_COMPILE5, R_GC_BEGIN, R_GC_END, R_COMPILED5, R_COMPILE_PHASE_END, R_ITER1,
       R_EXIT_BEGIN, R_EXIT_END, R_STRAY_END, R_START6, R_TRACE6_BEGIN, R_COUNT };

struct step {
	int record;       /* >= 0: record number `record`; else the flow */
	struct jf_flow flow;
};

static struct step steps[64];
static int nsteps;
static uint64_t now, insns;
static struct jf_zone_record records[R_COUNT];
static struct jf_zone_reader *reader;
static uint64_t insns_at[R_COUNT]; /* instructions of the flow before each record */

static void block(uint64_t start, uint32_t n, enum jf_block_end end)
{
	struct step *s = &steps[nsteps++];

	memset(s, 0, sizeof(*s));
	s->record = -1;
	s->flow.kind = JF_FLOW_BLOCK;
	s->flow.ip = start;
	s->flow.u.block.start = start;
	s->flow.u.block.last = start + n - 1;
	s->flow.u.block.ninsn = n;
	s->flow.u.block.next = start + n;
	s->flow.u.block.last_size = 1;
	s->flow.u.block.isa = JF_ISA_X86_64;
	s->flow.u.block.end = (uint8_t)end;
	now += n;
	insns += n;
	s->flow.time = now;
	s->flow.flags = JF_FLOW_HAS_TIME;
}

static void record(int n)
{
	insns_at[n] = insns;
	steps[nsteps++].record = n;
}

static void write_records(void)
{
	static const struct { uint32_t kind; uint64_t arg; } events[] = {
		[R_ITER0] = {JF_EVENT_ITERATION, 0},
		[R_START5] = {JF_EVENT_TRACE_START, 5},
		[R_TRACE_BEGIN] = {JF_EVENT_PHASE_BEGIN, JF_PHASE_TRACING},
		[R_TRACE_END] = {JF_EVENT_PHASE_END, JF_PHASE_TRACING},
		[R_COMPILE_PHASE] = {JF_EVENT_PHASE_BEGIN, JF_PHASE_COMPILING},
		[R_COMPILE5] = {JF_EVENT_COMPILE_BEGIN, 5},
		[R_GC_BEGIN] = {JF_EVENT_PHASE_BEGIN, JF_PHASE_GC},
		[R_GC_END] = {JF_EVENT_PHASE_END, JF_PHASE_GC},
		[R_COMPILED5] = {JF_EVENT_COMPILE_END, 5},
		[R_COMPILE_PHASE_END] = {JF_EVENT_PHASE_END, JF_PHASE_COMPILING},
		[R_ITER1] = {JF_EVENT_ITERATION, 1},
		[R_EXIT_BEGIN] = {JF_EVENT_PHASE_BEGIN, JF_PHASE_EXIT_HANDLING},
		[R_EXIT_END] = {JF_EVENT_PHASE_END, JF_PHASE_EXIT_HANDLING},
		[R_STRAY_END] = {JF_EVENT_PHASE_END, JF_PHASE_TRACING},
		[R_START6] = {JF_EVENT_TRACE_START, 6},
		[R_TRACE6_BEGIN] = {JF_EVENT_PHASE_BEGIN, JF_PHASE_TRACING},
	};
	struct jf_emitter *em;
	struct jf_zone_record rec;
	struct jf_error err;
	char dir[256], path[512];
	int i, n = 0;

	snprintf(dir, sizeof(dir), "%s", jf_test_tmpdir());
	em = jf_emitter_open(dir, JF_EMIT_CLOCK_MONOTONIC | JF_EMIT_NO_MARKER_CALLS);
	assert_non_null(em);
	assert_true(jf_emit_interp_range(em, JF_INTERP_EVAL_LOOP, INTERP, 0x2000, "eval"));
	assert_true(jf_emit_interp_range(em, JF_INTERP_INSTRUMENTATION, EMITTER, EMITTER + 0x100,
					 "emitter"));
	for (i = R_ITER0; i < R_COUNT; i++)
		assert_true(jf_emit_event(em, events[i].kind, events[i].arg));
	snprintf(path, sizeof(path), "%s", jf_emitter_path(em));
	jf_emitter_close(em);

	if (reader)
		jf_zone_reader_close(reader);
	assert_int_equal(jf_zone_reader_open(&reader, path, &err), 0);
	while (jf_zone_next(reader, &rec, &err) > 0) {
		/* The clock, marker and close records, and the emitter's range of its own
		 * code in this process, play no part in the script. */
		if (rec.id == JF_ZONE_CLOCK || rec.id == JF_ZONE_MARKER ||
		    rec.id == JF_JITDUMP_CODE_CLOSE ||
		    (rec.id == JF_ZONE_INTERP_RANGE && rec.u.interp_range.start != INTERP &&
		     rec.u.interp_range.start != EMITTER))
			continue;
		assert_true(n < R_COUNT);
		/* The flow names no thread: it is source 0's, tid -1 (see jf_thread). */
		rec.tid = (uint32_t)-1;
		records[n++] = rec;
	}
	assert_int_equal(n, R_COUNT);
	assert_int_equal(records[R_STRAY_END].u.event.kind, JF_EVENT_PHASE_END);
}

static void build_script(void)
{
	write_records();
	nsteps = 0;
	now = insns = 0;
	record(R_INTERP);
	record(R_EMITTER);
	block(INTERP, 10, JF_END_JUMP_INDIRECT);
	record(R_ITER0);
	record(R_START5);
	record(R_TRACE_BEGIN);
	block(INTERP + 0x40, 7, JF_END_CALL);        /* tracing: the interpreter recording */
	block(RUNTIME, 3, JF_END_CALL);              /* tracing: the tracer */
	block(EMITTER, 3, JF_END_RETURN);            /* instrumentation, even in a phase */
	block(RUNTIME + 3, 2, JF_END_JUMP);          /* tracing: back in the tracer */
	record(R_TRACE_END);
	record(R_COMPILE_PHASE);
	record(R_COMPILE5);
	block(RUNTIME + 0x100, 11, JF_END_CALL);     /* compiling trace 5 */
	record(R_GC_BEGIN);
	block(RUNTIME + 0x200, 4, JF_END_RETURN);    /* a collection inside the compiler */
	record(R_GC_END);
	block(RUNTIME + 0x10b, 2, JF_END_JUMP);      /* compiling */
	record(R_COMPILED5);
	block(RUNTIME + 0x120, 1, JF_END_RETURN);    /* compiling, after COMPILE_END: trace 5's */
	record(R_COMPILE_PHASE_END);
	record(R_ITER1);
	block(INTERP + 0x80, 6, JF_END_CALL);        /* interpreting */
	record(R_EXIT_BEGIN);
	block(RUNTIME + 0x300, 5, JF_END_RETURN);    /* exit handling */
	record(R_EXIT_END);
	record(R_STRAY_END);
	block(INTERP + 0x90, 4, JF_END_JUMP);        /* interpreting */
	record(R_START6);
	record(R_TRACE6_BEGIN);
	block(INTERP + 0xa0, 8, JF_END_JUMP);        /* tracing trace 6, never closed */
}

enum {
	TRACING = 7 + 3 + 2 + 8, COMPILING = 11 + 2 + 1, GC = 4, EXIT_HANDLING = 5,
	INTERPRETING = 10 + 6 + 4, INSTRUMENTATION = 3,
};

static void run(struct jf_analysis *a, int from, int to)
{
	int i;

	assert_int_equal(jf_analysis_add_native(a, RUNTIME, RUNTIME + 0x1000, JF_CLASS_RUNTIME,
						"runtime"), 0);
	for (i = 0; i < to; i++) {
		const struct jf_zone_record *rec = steps[i].record >= 0 ? &records[steps[i].record] : NULL;

		if (rec && i < from)
			assert_int_equal(jf_analysis_replay_record(a, reader, rec), 0);
		else if (rec)
			assert_int_equal(jf_analysis_zone_record(a, reader, rec), 0);
		else if (i >= from)
			assert_int_equal(jf_analysis_flow(a, &steps[i].flow), 0);
	}
}

static const struct jf_trace_result *trace(const struct jf_analysis_result *r, uint64_t id)
{
	size_t i;

	for (i = 0; i < r->ntraces; i++)
		if (r->traces[i].trace_id == id)
			return &r->traces[i];
	fail_msg("no trace %llu", (unsigned long long)id);
	return NULL;
}

static void test_phases_follow_the_script(void **state)
{
	struct jf_analysis *a = jf_analysis_new(NULL);
	struct jf_analysis_result r;
	struct jf_iteration_result it;
	const struct jf_split_result *s;
	const struct jf_trace_result *t5, *t6;

	(void)state;
	build_script();
	run(a, 0, nsteps);
	assert_int_equal(jf_analysis_result(a, &r), 0);
	s = &r.total;
	assert_int_equal(s->by_class[JF_CLASS_TRACING], TRACING);
	assert_int_equal(s->by_class[JF_CLASS_COMPILING], COMPILING);
	assert_int_equal(s->by_class[JF_CLASS_GC], GC);
	assert_int_equal(s->by_class[JF_CLASS_EXIT_HANDLING], EXIT_HANDLING);
	assert_int_equal(s->by_class[JF_CLASS_INTERPRETER], INTERPRETING);
	assert_int_equal(s->by_class[JF_CLASS_INSTRUMENTATION], INSTRUMENTATION);
	assert_int_equal(s->by_class[JF_CLASS_RUNTIME], 0);
	/* No instruction is in two phases: they and the rest are every instruction. */
	assert_int_equal(r.insns, TRACING + COMPILING + GC + EXIT_HANDLING + INTERPRETING +
				  INSTRUMENTATION);
	/* The phases are native in the coarse split. */
	assert_int_equal(s->insns[JF_SPLIT_NATIVE], TRACING + COMPILING + GC + EXIT_HANDLING);
	assert_int_equal(s->insns[JF_SPLIT_INTERPRETER], INTERPRETING);
	assert_int_equal(s->phase_spans[JF_PHASE_TRACING], 2);
	assert_int_equal(s->phase_spans[JF_PHASE_COMPILING], 1);
	assert_int_equal(s->phase_spans[JF_PHASE_GC], 1);
	assert_int_equal(s->phase_spans[JF_PHASE_EXIT_HANDLING], 1);
	assert_int_equal(r.phases_told, (1u << JF_PHASE_TRACING) | (1u << JF_PHASE_COMPILING) |
					(1u << JF_PHASE_GC) | (1u << JF_PHASE_EXIT_HANDLING));

	/* What each trace cost to make; a block's time is its instruction count, and the
	 * first block of the thread has none. */
	t5 = trace(&r, 5);
	t6 = trace(&r, 6);
	assert_int_equal(t5->tracing_insns, 7 + 3 + 2);
	assert_int_equal(t5->compiling_insns, COMPILING);
	assert_int_equal(t5->tracing_time, 7 + 3 + 2);
	assert_int_equal(t5->compiling_time, COMPILING);
	assert_int_equal(t6->tracing_insns, 8);
	assert_int_equal(t6->compiling_insns, 0);
	assert_int_equal(s->time_by_class[JF_CLASS_TRACING], TRACING);
	assert_int_equal(s->time_by_class[JF_CLASS_GC], GC);

	/* Per iteration: iteration 0 made trace 5; iteration 1 (open at the end) the rest. */
	assert_int_equal(r.niterations, 2);
	assert_int_equal(jf_analysis_iteration(&r, 0, &it), 0);
	assert_int_equal(it.insns_by_class[JF_CLASS_TRACING], 7 + 3 + 2);
	assert_int_equal(it.insns_by_class[JF_CLASS_COMPILING], COMPILING);
	assert_int_equal(it.insns_by_class[JF_CLASS_GC], GC);
	assert_int_equal(it.insns_by_class[JF_CLASS_INSTRUMENTATION], INSTRUMENTATION);
	assert_int_equal(jf_analysis_iteration(&r, 1, &it), 0);
	assert_int_equal(it.insns_by_class[JF_CLASS_INTERPRETER], 6 + 4);
	assert_int_equal(it.insns_by_class[JF_CLASS_EXIT_HANDLING], EXIT_HANDLING);
	assert_int_equal(it.insns_by_class[JF_CLASS_TRACING], 8);

	/* The stray END and the BEGIN left open: counted and located. */
	assert_int_equal(r.phase_problem_count, 2);
	assert_int_equal(r.nphase_problems, 2);
	assert_int_equal(r.phase_problems[0].kind, JF_PHASE_UNMATCHED_END);
	assert_int_equal(r.phase_problems[0].phase, JF_PHASE_TRACING);
	assert_int_equal(r.phase_problems[0].record_offset, records[R_STRAY_END].offset);
	assert_int_equal(r.phase_problems[0].insn, insns_at[R_STRAY_END]);
	assert_true(r.phase_problems[0].has_time);
	assert_int_equal(r.phase_problems[0].time, insns_at[R_STRAY_END]);
	assert_int_equal(r.phase_problems[1].kind, JF_PHASE_UNCLOSED);
	assert_int_equal(r.phase_problems[1].record_offset, records[R_TRACE6_BEGIN].offset);
	assert_int_equal(r.phase_problems[1].insn, insns_at[R_TRACE6_BEGIN]);
	assert_int_equal(r.phase_problems[1].tid, -1);
	jf_analysis_result_free(&r);
	jf_analysis_free(a);
}

static void assert_same_phases(const struct jf_analysis_result *x,
			       const struct jf_analysis_result *y, int cut)
{
	size_t i;
	int c;

	for (c = 0; c < JF_CLASS_COUNT; c++) {
		if (x->total.by_class[c] != y->total.by_class[c] ||
		    x->total.time_by_class[c] != y->total.time_by_class[c])
			fail_msg("cut at step %d: class %s differs", cut, jf_code_class_name(c));
	}
	assert_memory_equal(x->total.phase_spans, y->total.phase_spans,
			    sizeof(x->total.phase_spans));
	assert_int_equal(x->ntraces, y->ntraces);
	for (i = 0; i < x->ntraces; i++) {
		const struct jf_trace_result *p = &x->traces[i], *q = &y->traces[i];

		if (p->tracing_insns != q->tracing_insns || p->tracing_time != q->tracing_time ||
		    p->compiling_insns != q->compiling_insns ||
		    p->compiling_time != q->compiling_time)
			fail_msg("cut at step %d: trace %llu's making differs", cut,
				 (unsigned long long)p->trace_id);
	}
	assert_int_equal(x->niterations, y->niterations);
	for (i = 0; i < x->niterations; i++) {
		struct jf_iteration_result p, q;

		assert_int_equal(jf_analysis_iteration(x, i, &p), 0);
		assert_int_equal(jf_analysis_iteration(y, i, &q), 0);
		if (memcmp(p.insns_by_class, q.insns_by_class, sizeof(p.insns_by_class)))
			fail_msg("cut at step %d: iteration %zu's classes differ", cut, i);
	}
	assert_int_equal(x->phases_told, y->phases_told);
	assert_int_equal(x->phase_problem_count, y->phase_problem_count);
	assert_int_equal(x->nphase_problems, y->nphase_problems);
	for (i = 0; i < x->nphase_problems; i++) {
		const struct jf_phase_problem *p = &x->phase_problems[i], *q = &y->phase_problems[i];

		if (p->kind != q->kind || p->phase != q->phase || p->insn != q->insn ||
		    p->record_offset != q->record_offset || p->tid != q->tid)
			fail_msg("cut at step %d: phase problem %zu differs", cut, i);
	}
}

static void test_parts_cut_inside_phases_merge_to_the_whole(void **state)
{
	struct jf_analysis *whole = jf_analysis_new(NULL);
	struct jf_analysis_result expect;
	int cut;

	(void)state;
	build_script();
	run(whole, 0, nsteps);
	assert_int_equal(jf_analysis_result(whole, &expect), 0);
	for (cut = 1; cut < nsteps; cut++) {
		struct jf_analysis *first = jf_analysis_new(NULL), *second = jf_analysis_new(NULL);
		struct jf_analysis_result got;

		run(first, 0, cut);
		run(second, cut, nsteps);
		assert_int_equal(jf_analysis_merge(first, second), 0);
		assert_int_equal(jf_analysis_result(first, &got), 0);
		assert_same_phases(&got, &expect, cut);
		jf_analysis_result_free(&got);
		jf_analysis_free(first);
		jf_analysis_free(second);
	}
	jf_analysis_result_free(&expect);
	jf_analysis_free(whole);
}

/* An END that closes a span below the innermost one closes those above it too, each
 * counted as a BEGIN without END; a phase number this version does not know is not
 * counted at all. */
static void test_an_end_below_the_innermost_closes_the_spans_above(void **state)
{
	struct jf_analysis *a = jf_analysis_new(NULL);
	struct jf_analysis_result r;
	struct jf_zone_record rec;

	(void)state;
	memset(&rec, 0, sizeof(rec));
	rec.id = JF_ZONE_EVENT;
	rec.tid = (uint32_t)-1;
	rec.u.event.kind = JF_EVENT_PHASE_BEGIN;
	rec.u.event.arg = JF_PHASE_COMPILING;
	rec.offset = 100;
	assert_int_equal(jf_analysis_zone_record(a, NULL, &rec), 0);
	rec.u.event.arg = JF_PHASE_GC;
	rec.offset = 200;
	assert_int_equal(jf_analysis_zone_record(a, NULL, &rec), 0);
	rec.u.event.arg = 99;
	assert_int_equal(jf_analysis_zone_record(a, NULL, &rec), 0);
	rec.u.event.kind = JF_EVENT_PHASE_END;
	rec.u.event.arg = JF_PHASE_COMPILING;
	rec.offset = 300;
	assert_int_equal(jf_analysis_zone_record(a, NULL, &rec), 0);
	nsteps = 0;
	block(INTERP, 9, JF_END_JUMP);
	assert_int_equal(jf_analysis_flow(a, &steps[0].flow), 0);
	assert_int_equal(jf_analysis_result(a, &r), 0);
	assert_int_equal(r.total.by_class[JF_CLASS_UNKNOWN], 9); /* no phase open any more */
	assert_int_equal(r.phase_problem_count, 1);
	assert_int_equal(r.phase_problems[0].kind, JF_PHASE_UNCLOSED);
	assert_int_equal(r.phase_problems[0].phase, JF_PHASE_GC);
	assert_int_equal(r.phase_problems[0].record_offset, 200);
	assert_int_equal(r.total.phase_spans[JF_PHASE_COMPILING], 1);
	assert_int_equal(r.total.phase_spans[JF_PHASE_GC], 1);
	jf_analysis_result_free(&r);
	jf_analysis_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phases_follow_the_script),
		cmocka_unit_test(test_parts_cut_inside_phases_merge_to_the_whole),
		cmocka_unit_test(test_an_end_below_the_innermost_closes_the_spans_above),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);

	if (reader)
		jf_zone_reader_close(reader);
	return jf_test_exit(failed);
}
