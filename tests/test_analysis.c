/* The analysis on a scripted run of a tiny tracing JIT.
 *
 * Zone records are written by the real emitter and read back by the real reader; the flow
 * is what a decoder would report for this run (blocks end at every branch). The expected
 * numbers follow from the script: the loop runs ITERS iterations per entry, its guard
 * fails on the last, and after BRIDGE_AFTER failures a bridge takes the guard's exits.
 * A handler bracketed by INSTRUMENTATION_BEGIN / _END runs interpreter code that counts
 * as instrumentation. Then the merge property: for every split point, analysing the two parts and merging
 * gives exactly the result of the whole. A listener of the analysis events attached from
 * outside (as a new view would be, without a change to flow.c) hears the script's blocks,
 * loop entries and iterations, guard passes and exits, time and zone records; cut at any
 * point, the two parts' listeners hear each guard branch once. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitflow/analysis.h"
#include "jitflow/emitter.h"
#include "jitflow/zone.h"
#include "analysis_internal.h" /* a->listeners, to attach one from outside */

enum {
	INTERP = 0x1000,        /* interpreter eval loop [0x1000, 0x2000) */
	TRACE = 0x10000,        /* loop trace 7: [0x10000, 0x10040) */
	GUARD_BRANCH = 0x10010, /* its guard 3's conditional branch */
	TRACE_BACK = 0x10020,   /* the back-edge jump to TRACE */
	STUB = 0x10100,         /* the guard's exit stub [0x10100, 0x10110) */
	BRIDGE = 0x11000,       /* bridge 8 on guard 3: [0x11000, 0x11010) */
	ENTRIES = 6, ITERS = 5, BRIDGE_AFTER = 3,
	HANDLER_INSNS = 16,     /* interpreter code run between INSTRUMENTATION_BEGIN/_END */
	AFTER_HANDLER = 10,     /* interpreter code after it, before the trace is entered */
};

struct step {
	int record;               /* >= 0: apply zone record number `record` */
	struct jf_flow flow;
};

static struct step steps[512];
static int nsteps;
static uint64_t now;

static void add_block(uint64_t start, uint64_t last, enum jf_block_end end)
{
	struct step *s = &steps[nsteps++];

	memset(s, 0, sizeof(*s));
	s->record = -1;
	s->flow.kind = JF_FLOW_BLOCK;
	s->flow.ip = start;
	s->flow.u.block.start = start;
	s->flow.u.block.last = last;
	s->flow.u.block.ninsn = (uint32_t)(last - start + 1); /* one-byte instructions */
	s->flow.u.block.next = last + 1;
	s->flow.u.block.last_size = 1;
	s->flow.u.block.isa = JF_ISA_X86_64;
	s->flow.u.block.end = (uint8_t)end;
	now += s->flow.u.block.ninsn;
	s->flow.time = now;
	s->flow.flags = JF_FLOW_HAS_TIME;
}

static void add_record(int n)
{
	steps[nsteps].record = n;
	nsteps++;
}

/* Records, in the order the emitter writes them (see write_zone_file). */
enum { R_INTERP, R_TRACE_CODE, R_TRACE, R_GUARD, R_STUB_CODE, R_STUB, R_PCMAP, R_OPNAME,
       R_ITER0, R_BRIDGE_CODE, R_BRIDGE, R_PATCH, R_HANDLER_BEGIN, R_HANDLER_END,
       R_COUNT_MAX = 64 };

static char zone_path[512];
static struct jf_zone_record records[R_COUNT_MAX];
static int nrecords;
static struct jf_zone_reader *reader;
static uint8_t code[0x2000];

static void write_zone_file(void)
{
	struct jf_emitter *em;
	struct jf_region r;
	struct jf_pc_map_entry pcs[3] = {
		{ .code_offset = 0x00, .bytecode_pc = 10, .op_kind = 1 },
		{ .code_offset = 0x08, .bytecode_pc = 12, .op_kind = 2 },
		{ .code_offset = 0x11, .bytecode_pc = 14, .op_kind = 1 },
	};
	struct jf_error err;
	struct jf_zone_record rec;
	char dir[256];

	snprintf(dir, sizeof(dir), "%s", jf_test_tmpdir());
	em = jf_emitter_open(dir, JF_EMIT_CLOCK_MONOTONIC | JF_EMIT_NO_MARKER_CALLS);
	assert_non_null(em);
	memset(code, 0x90, sizeof(code));
	assert_true(jf_emit_interp_range(em, JF_INTERP_EVAL_LOOP, INTERP, 0x2000, "eval"));
	memset(&r, 0, sizeof(r));
	r.name = "trace 7";
	r.addr = TRACE;
	r.code = code;
	r.size = 0x40;
	r.kind = JF_REGION_TRACE;
	r.trace_id = 7;
	assert_true(jf_emit_region_load(em, &r));
	assert_true(jf_emit_guard(em, 3, 7, GUARD_BRANCH, STUB, 42));
	r.name = "stub 7/3";
	r.addr = STUB;
	r.size = 0x10;
	r.kind = JF_REGION_EXIT_STUB;
	assert_true(jf_emit_region_load(em, &r));
	assert_true(jf_emit_pc_map(em, TRACE, pcs, 3));
	assert_true(jf_emit_op_name(em, 2, "compare"));
	assert_true(jf_emit_event(em, JF_EVENT_ITERATION, 0));
	r.name = "bridge 8";
	r.addr = BRIDGE;
	r.size = 0x10;
	r.kind = JF_REGION_BRIDGE;
	r.trace_id = 8;
	r.parent_trace = 7;
	r.parent_guard = 3;
	assert_true(jf_emit_region_load(em, &r));
	assert_true(jf_emit_patch(em, GUARD_BRANCH, code, 2, "guard 3 -> bridge 8"));
	assert_true(jf_emit_event(em, JF_EVENT_INSTRUMENTATION_BEGIN, 0));
	assert_true(jf_emit_event(em, JF_EVENT_INSTRUMENTATION_END, 0));
	snprintf(zone_path, sizeof(zone_path), "%s", jf_emitter_path(em));
	jf_emitter_close(em);

	if (reader)
		jf_zone_reader_close(reader);
	nrecords = 0;
	assert_int_equal(jf_zone_reader_open(&reader, zone_path, &err), 0);
	while (jf_zone_next(reader, &rec, &err) > 0) {
		/* The clock, marker, close records and the emitter's own code range carry no
		 * code state for this script.
		 * Each region load is a CODE_LOAD followed by its REGION_LOAD: keep both. */
		if (rec.id == JF_ZONE_CLOCK || rec.id == JF_ZONE_MARKER || rec.id == JF_JITDUMP_CODE_CLOSE ||
		    (rec.id == JF_ZONE_INTERP_RANGE &&
		     rec.u.interp_range.kind == JF_INTERP_INSTRUMENTATION))
			continue;
		assert_true(nrecords < R_COUNT_MAX);
		records[nrecords++] = rec;
	}
	assert_int_equal(nrecords, R_HANDLER_END + 1);
	/* The script's flow names no thread: it is source 0's, tid -1 (see jf_thread). */
	records[R_HANDLER_BEGIN].tid = records[R_HANDLER_END].tid = (uint32_t)-1;
	assert_int_equal(records[R_TRACE].id, JF_ZONE_REGION_LOAD);
	assert_int_equal(records[R_PCMAP].id, JF_ZONE_PC_MAP);
}

/* One entry into the loop trace from the interpreter: ITERS iterations; the guard passes
 * on all but the last, which exits to the stub (or, once bridged, to the bridge, which
 * returns to the interpreter). */
static void script_entry(int bridged)
{
	int i;

	add_block(INTERP, INTERP + 9, JF_END_JUMP_INDIRECT);
	for (i = 0; i < ITERS; i++) {
		add_block(TRACE, GUARD_BRANCH, JF_END_COND);
		if (i + 1 < ITERS) {
			add_block(GUARD_BRANCH + 1, TRACE_BACK, JF_END_JUMP);
			continue;
		}
		if (bridged) {
			add_block(BRIDGE, BRIDGE + 4, JF_END_JUMP_INDIRECT);
		} else {
			add_block(STUB, STUB + 3, JF_END_JUMP_INDIRECT);
		}
	}
}

static void build_script(void)
{
	int e;

	write_zone_file();
	nsteps = 0;
	now = 0;
	add_record(R_INTERP);
	add_block(INTERP, INTERP + 20, JF_END_COND);
	for (e = R_TRACE_CODE; e <= R_ITER0; e++)
		add_record(e);
	for (e = 0; e < ENTRIES; e++) {
		if (e == BRIDGE_AFTER) {
			add_record(R_BRIDGE_CODE);
			add_record(R_BRIDGE);
			add_record(R_PATCH);
		}
		script_entry(e >= BRIDGE_AFTER);
	}
	/* At the end, where it changes no transition the counts below expect: a handler
	 * bracketed as instrumentation, then interpreter code again. */
	add_record(R_HANDLER_BEGIN);
	add_block(INTERP + 0x100, INTERP + 0x100 + HANDLER_INSNS - 1, JF_END_RETURN);
	add_record(R_HANDLER_END);
	add_block(INTERP + 0x200, INTERP + 0x200 + AFTER_HANDLER - 1, JF_END_JUMP);
}

/* Steps [from, to); zone records before `from` are replayed as state. */
static void run(struct jf_analysis *a, int from, int to)
{
	int i;

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

static struct jf_analysis *new_analysis(struct jf_codemap *map)
{
	/* Few timeline buckets, so that the script's run makes them coarsen several times. */
	struct jf_analysis_config cfg = { .map = map, .views = 1, .timeline_buckets = 16 };
	struct jf_analysis *a = jf_analysis_new(&cfg);

	assert_non_null(a);
	return a;
}

static struct jf_codemap *code_map(void)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;

	/* One-byte instructions (NOP) everywhere the script runs. */
	assert_int_equal(jf_codemap_add_bytes(map, code, 0x1000, INTERP, "interp", &err), 0);
	assert_int_equal(jf_codemap_add_bytes(map, code, 0x2000, TRACE, "jit", &err), 0);
	return map;
}

static const struct jf_guard_result *guard(const struct jf_analysis_result *r, uint64_t t,
					   uint64_t g)
{
	size_t i;

	for (i = 0; i < r->nguards; i++) {
		if (r->guards[i].trace_id == t && r->guards[i].guard_id == g)
			return &r->guards[i];
	}
	fail_msg("guard %llu/%llu missing", (unsigned long long)t, (unsigned long long)g);
	return NULL;
}

static const struct jf_trace_result *trace(const struct jf_analysis_result *r, uint64_t id)
{
	size_t i;

	for (i = 0; i < r->ntraces; i++) {
		if (r->traces[i].trace_id == id)
			return &r->traces[i];
	}
	fail_msg("trace %llu missing", (unsigned long long)id);
	return NULL;
}

static void test_counts_follow_the_script(void **state)
{
	struct jf_codemap *map;
	struct jf_analysis *a;
	struct jf_analysis_result r;
	const struct jf_trace_result *loop, *bridge;
	const struct jf_guard_result *g;
	uint64_t loop_insns, bridged = ENTRIES - BRIDGE_AFTER;

	build_script();
	map = code_map();
	a = new_analysis(map);
	run(a, 0, nsteps);
	assert_int_equal(jf_analysis_result(a, &r), 0);

	loop = trace(&r, 7);
	bridge = trace(&r, 8);
	g = guard(&r, 7, 3);
	assert_int_equal(loop->entries, ENTRIES);
	assert_int_equal(loop->iterations, ENTRIES * ITERS);
	assert_int_equal(g->exits, ENTRIES);
	assert_int_equal(g->passes, ENTRIES * (ITERS - 1));
	assert_int_equal(g->resume_pc, 42);
	assert_true(g->has_bridge);
	assert_int_equal(g->bridge_id, 8);
	assert_int_equal(g->exits_before_bridge, BRIDGE_AFTER);
	assert_int_equal(loop->exits, ENTRIES);
	assert_int_equal(bridge->kind, JF_REGION_BRIDGE);
	assert_int_equal(bridge->entries, bridged);
	assert_int_equal(bridge->iterations, bridged);
	assert_int_equal(bridge->insns, bridged * 5);

	/* Into the bridge from its guard, once per entry after it was attached (the bridge
	 * goes back to the interpreter): the one pair is the split's trace->trace. */
	assert_int_equal(r.ntrace_links, 1);
	assert_int_equal(r.trace_links[0].from_trace, 7);
	assert_int_equal(r.trace_links[0].to_trace, 8);
	assert_int_equal(r.trace_links[0].count, bridged);
	assert_int_equal(r.total.trace_to_trace, bridged);

	/* Loop instructions: per iteration 17 to the guard, 16 more on passes. */
	loop_insns = ENTRIES * (ITERS * 17 + (ITERS - 1) * 16);
	assert_int_equal(loop->insns, loop_insns);
	assert_int_equal(r.total.insns[JF_SPLIT_JITTED],
			 loop_insns + bridged * 5 + BRIDGE_AFTER * 4);
	assert_int_equal(r.total.insns[JF_SPLIT_INTERPRETER], 21 + AFTER_HANDLER + ENTRIES * 10);
	assert_int_equal(r.total.insns[JF_SPLIT_INSTRUMENTATION], HANDLER_INSNS);
	assert_int_equal(r.total.transitions[JF_SPLIT_JITTED][JF_SPLIT_INSTRUMENTATION], 1);
	assert_int_equal(r.total.transitions[JF_SPLIT_INSTRUMENTATION][JF_SPLIT_INTERPRETER], 1);
	assert_int_equal(r.total.by_class[JF_CLASS_EXIT_STUB], BRIDGE_AFTER * 4);
	/* interpreter -> jitted at every entry; jitted -> interpreter after every exit
	 * but the last (the trace ends inside the bridge). */
	assert_int_equal(r.total.transitions[JF_SPLIT_INTERPRETER][JF_SPLIT_JITTED], ENTRIES);
	assert_int_equal(r.total.transitions[JF_SPLIT_JITTED][JF_SPLIT_INTERPRETER], ENTRIES - 1);
	assert_int_equal(r.total.guard_exits, ENTRIES);

	/* Bytecode ranges of the loop from its pc map: offsets [0,8) -> pc 10..12,
	 * [8,0x11) -> pc 12..14, [0x11, ...) -> pc 14. */
	{
		size_t i;
		uint64_t per[3] = { 0 };

		for (i = 0; i < r.nbytecodes; i++) {
			if (r.bytecodes[i].region_key != 7)
				continue;
			per[r.bytecodes[i].pc_from == 10 ? 0 : r.bytecodes[i].pc_from == 12 ? 1 : 2] +=
				r.bytecodes[i].insns;
		}
		assert_int_equal(per[0], ENTRIES * ITERS * 8);
		assert_int_equal(per[1], ENTRIES * ITERS * 9);
		assert_int_equal(per[2], ENTRIES * (ITERS - 1) * 16);
	}
	assert_true(r.has_pc_maps);
	assert_true(r.has_iterations);
	/* The script's clock is one tick per instruction, stamped at the end of each block:
	 * time adds up to the instructions after the first timestamp (the first block's
	 * 21 instructions ran before any time was known). */
	assert_int_equal(r.total.time[JF_SPLIT_JITTED] + r.total.time[JF_SPLIT_INTERPRETER] +
			 r.total.time[JF_SPLIT_INSTRUMENTATION], r.insns - 21);
	assert_int_equal(r.total.time[JF_SPLIT_INSTRUMENTATION], HANDLER_INSNS);
	assert_int_equal(loop->time, loop->insns);

	/* The timeline had to coarsen to 16 buckets; on the clock its amounts per split class
	 * are the split's time, its guard entries the guard's exits; on the instruction count
	 * the amounts are the split's instructions. */
	{
		const struct jf_timeline_thread *th = &r.timeline.threads[0];
		uint64_t time[JF_SPLIT_COUNT] = { 0 }, insns[JF_SPLIT_COUNT] = { 0 }, exits = 0;
		size_t i;

		assert_int_equal(r.timeline.nthreads, 1);
		assert_true(th->by_time.width > 1);
		for (i = 0; i < th->by_time.nentries; i++) {
			const struct jf_bucket_entry *e = &th->by_time.entries[i];

			if (e->what & JF_BUCKET_GUARD)
				exits += e->amount;
			else
				time[jf_split_of(r.timeline.activities[e->what].cls)] += e->amount;
		}
		for (i = 0; i < th->by_insns.nentries; i++) {
			const struct jf_bucket_entry *e = &th->by_insns.entries[i];

			if (!(e->what & JF_BUCKET_GUARD))
				insns[jf_split_of(r.timeline.activities[e->what].cls)] += e->amount;
		}
		for (i = 0; i < JF_SPLIT_COUNT; i++) {
			assert_int_equal(time[i], r.total.time[i]);
			assert_int_equal(insns[i], r.total.insns[i]);
		}
		assert_int_equal(exits, g->exits);
	}
	jf_analysis_result_free(&r);
	jf_analysis_free(a);
	jf_codemap_free(map);
}

/* Amounts of one series summed per activity or guard. */
static uint64_t series_sum(const struct jf_timeline_series *s, uint32_t what)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < s->nentries; i++)
		if (s->entries[i].what == what)
			sum += s->entries[i].amount;
	return sum;
}

/* The views' data: stacks, timeline buckets on the clock (exactly, bucket by bucket),
 * on the instruction count (in sums: the later part's grid is spread over the first's),
 * and the events. */
static void assert_same_views(const struct jf_analysis_result *x,
			      const struct jf_analysis_result *y, int split)
{
	const struct jf_timeline_result *p = &x->timeline, *q = &y->timeline;
	size_t i, j;

	if (x->nstacks != y->nstacks)
		fail_msg("split %d: %zu stacks, whole %zu", split, x->nstacks, y->nstacks);
	for (i = 0; i < x->nstacks; i++)
		if (memcmp(&x->stacks[i], &y->stacks[i], sizeof(x->stacks[i])))
			fail_msg("split %d: stack %zu (%s) differs", split, i, x->stacks[i].region);
	if (x->ncode_lines != y->ncode_lines ||
	    memcmp(x->code_lines, y->code_lines, x->ncode_lines * sizeof(*x->code_lines)))
		fail_msg("split %d: code lines differ", split);
	if (p->nactivities != q->nactivities ||
	    memcmp(p->activities, q->activities, p->nactivities * sizeof(*p->activities)))
		fail_msg("split %d: activities differ", split);
	if (p->nthreads != q->nthreads)
		fail_msg("split %d: timeline threads differ", split);
	for (i = 0; i < p->nthreads; i++) {
		const struct jf_timeline_series *a = &p->threads[i].by_time, *b = &q->threads[i].by_time;

		if (a->width != b->width || a->nentries != b->nentries)
			fail_msg("split %d: time series: width %llu/%llu, %zu/%zu entries", split,
				 (unsigned long long)a->width, (unsigned long long)b->width,
				 a->nentries, b->nentries);
		for (j = 0; j < a->nentries; j++)
			if (memcmp(&a->entries[j], &b->entries[j], sizeof(a->entries[j])))
				fail_msg("split %d: time bucket entry %zu differs", split, j);
		a = &p->threads[i].by_insns;
		b = &q->threads[i].by_insns;
		for (j = 0; j < b->nentries; j++)
			if (series_sum(a, b->entries[j].what) != series_sum(b, b->entries[j].what))
				fail_msg("split %d: instruction series differs for %x", split,
					 b->entries[j].what);
	}
	if (p->nevents != q->nevents)
		fail_msg("split %d: %zu events, whole %zu", split, p->nevents, q->nevents);
	for (i = 0; i < p->nevents; i++)
		if (p->events[i].kind != q->events[i].kind || p->events[i].time != q->events[i].time ||
		    p->events[i].has_time != q->events[i].has_time ||
		    p->events[i].insn_pos != q->events[i].insn_pos || p->events[i].id != q->events[i].id ||
		    p->events[i].region_kind != q->events[i].region_kind)
			fail_msg("split %d: event %zu differs", split, i);
}

static void assert_same(const struct jf_analysis_result *x, const struct jf_analysis_result *y,
			int split)
{
	size_t i;

	if (x->ntraces != y->ntraces || x->nguards != y->nguards)
		fail_msg("split %d: table sizes differ", split);
	for (i = 0; i < x->ntraces; i++) {
		const struct jf_trace_result *p = &x->traces[i], *q = &y->traces[i];

		if (p->trace_id != q->trace_id || p->entries != q->entries ||
		    p->iterations != q->iterations || p->insns != q->insns || p->time != q->time ||
		    p->exits != q->exits)
			fail_msg("split %d: trace %llu differs: entries %llu/%llu iterations %llu/%llu "
				 "insns %llu/%llu time %llu/%llu", split,
				 (unsigned long long)p->trace_id, (unsigned long long)p->entries,
				 (unsigned long long)q->entries, (unsigned long long)p->iterations,
				 (unsigned long long)q->iterations, (unsigned long long)p->insns,
				 (unsigned long long)q->insns, (unsigned long long)p->time,
				 (unsigned long long)q->time);
	}
	for (i = 0; i < x->nguards; i++) {
		const struct jf_guard_result *p = &x->guards[i], *q = &y->guards[i];

		if (p->exits != q->exits || p->passes != q->passes || p->unresolved != q->unresolved ||
		    p->exits_before_bridge != q->exits_before_bridge || p->bridge_id != q->bridge_id)
			fail_msg("split %d: guard %llu differs: exits %llu/%llu passes %llu/%llu", split,
				 (unsigned long long)p->guard_id, (unsigned long long)p->exits,
				 (unsigned long long)q->exits, (unsigned long long)p->passes,
				 (unsigned long long)q->passes);
	}
	if (memcmp(&x->total, &y->total, sizeof(x->total)))
		fail_msg("split %d: the interpreter/jitted/native split differs", split);
	if (x->nbytecodes != y->nbytecodes || x->niterations != y->niterations)
		fail_msg("split %d: bytecode or iteration tables differ in size", split);
	for (i = 0; i < x->niterations; i++) {
		struct jf_iteration_result p, q;

		assert_int_equal(jf_analysis_iteration(x, i, &p), 0);
		assert_int_equal(jf_analysis_iteration(y, i, &q), 0);
		if (p.insns != q.insns || p.time != q.time)
			fail_msg("split %d: iteration %zu differs", split, i);
	}
	for (i = 0; i < x->nregions; i++) {
		if (x->regions[i].insns != y->regions[i].insns ||
		    x->regions[i].entries != y->regions[i].entries)
			fail_msg("split %d: region %s differs", split, x->regions[i].name);
	}
	if (x->insns != y->insns || x->blocks != y->blocks)
		fail_msg("split %d: totals differ", split);
	/* trace -> trace by pair, a seam's transition included */
	if (x->ntrace_links != y->ntrace_links ||
	    memcmp(x->trace_links, y->trace_links, x->ntrace_links * sizeof(*x->trace_links)))
		fail_msg("split %d: trace links differ", split);
	assert_same_views(x, y, split);
}

static void test_two_parts_merge_to_the_whole(void **state)
{
	struct jf_codemap *map = code_map();
	struct jf_analysis *whole = new_analysis(map);
	struct jf_analysis_result expect;
	int split;

	build_script();
	run(whole, 0, nsteps);
	assert_int_equal(jf_analysis_result(whole, &expect), 0);
	for (split = 1; split < nsteps; split++) {
		struct jf_analysis *first = new_analysis(map), *second = new_analysis(map);
		struct jf_analysis_result got;

		run(first, 0, split);
		/* The second part knows the zone records that took effect before it. */
		run(second, split, nsteps);
		assert_int_equal(jf_analysis_merge(first, second), 0);
		assert_int_equal(jf_analysis_result(first, &got), 0);
		assert_same(&got, &expect, split);
		jf_analysis_result_free(&got);
		jf_analysis_free(first);
		jf_analysis_free(second);
	}
	jf_analysis_result_free(&expect);
	jf_analysis_free(whole);
	jf_codemap_free(map);
}

/* A long iteration series goes to a temporary file in $TMPDIR and reads back exactly: 10000
 * iterations (several of the series' in-memory chunks), the first 1000 of 50 instructions
 * and the rest of 10, each a block run after its mark. The warmup class (median of the
 * last third, found without sorting) is warmup, steady from row 1000; the file is unlinked
 * at once, so the folder stays empty. */
static void test_long_iteration_series_spills_and_reads_back(void **state)
{
	enum { N = 10000, WARM = 1000 };
	struct jf_analysis_config cfg = { .views = 0 };
	struct jf_analysis *a;
	struct jf_analysis_result r;
	struct jf_zone_record rec;
	struct jf_flow f;
	char dir[4096], cmd[4200];
	const char *old = getenv("TMPDIR");
	char *saved = old ? strdup(old) : NULL;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/iterations-tmp", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	setenv("TMPDIR", dir, 1);
	a = jf_analysis_new(&cfg);
	assert_non_null(a);
	memset(&rec, 0, sizeof(rec));
	rec.id = JF_ZONE_EVENT;
	rec.u.event.kind = JF_EVENT_ITERATION;
	memset(&f, 0, sizeof(f));
	f.kind = JF_FLOW_BLOCK;
	for (i = 0; i < N; i++) {
		rec.u.event.arg = 100 + i;
		assert_int_equal(jf_analysis_zone_record(a, NULL, &rec), 0);
		f.u.block.start = f.ip = 0x1000;
		f.u.block.ninsn = i < WARM ? 50 : 10;
		f.u.block.last = 0x1000 + f.u.block.ninsn - 1;
		assert_int_equal(jf_analysis_flow(a, &f), 0);
	}
	assert_int_equal(jf_analysis_result(a, &r), 0);
	assert_int_equal(r.niterations, N);
	for (i = 0; i < N; i++) {
		struct jf_iteration_result it;

		assert_int_equal(jf_analysis_iteration(&r, i, &it), 0);
		assert_int_equal(it.index, 100 + i);
		assert_int_equal(it.insns, i < WARM ? 50 : 10);
	}
	assert_int_equal(jf_analysis_iterations_error(&r), 0);
	assert_int_equal(r.warmup, JF_WARMUP_WARMUP);
	assert_int_equal(r.steady_from, WARM);
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", dir);
	assert_int_equal(system(cmd), 0);
	jf_analysis_result_free(&r);
	jf_analysis_free(a);
	if (saved) {
		setenv("TMPDIR", saved, 1);
		free(saved);
	} else {
		unsetenv("TMPDIR");
	}
}

/* Two threads on two trace sources run the same script, their flows interleaved block by
 * block as a time-ordered merge of two AUX queues delivers them: each source keeps its own
 * state, so every count is exactly twice one thread's. */
static void test_interleaved_sources_are_separate_threads(void **state)
{
	struct jf_codemap *map = code_map();
	struct jf_analysis *one = new_analysis(map), *two = new_analysis(map);
	struct jf_analysis_result r1, r2;
	struct jf_flow ctx;
	int i, s;

	build_script();
	run(one, 0, nsteps);
	memset(&ctx, 0, sizeof(ctx));
	ctx.kind = JF_FLOW_CONTEXT;
	for (s = 0; s < 2; s++) {
		ctx.source = (uint32_t)s;
		ctx.u.context.tid = 100 + s;
		assert_int_equal(jf_analysis_flow(two, &ctx), 0);
	}
	for (i = 0; i < nsteps; i++) {
		if (steps[i].record >= 0) {
			assert_int_equal(jf_analysis_zone_record(two, reader, &records[steps[i].record]), 0);
			continue;
		}
		for (s = 0; s < 2; s++) {
			struct jf_flow f = steps[i].flow;

			f.source = (uint32_t)s;
			assert_int_equal(jf_analysis_flow(two, &f), 0);
		}
	}
	assert_int_equal(jf_analysis_result(one, &r1), 0);
	assert_int_equal(jf_analysis_result(two, &r2), 0);
	assert_int_equal(r2.nthreads, 2);
	assert_int_equal(trace(&r2, 7)->entries, 2 * trace(&r1, 7)->entries);
	assert_int_equal(trace(&r2, 7)->iterations, 2 * trace(&r1, 7)->iterations);
	assert_int_equal(trace(&r2, 8)->entries, 2 * trace(&r1, 8)->entries);
	assert_int_equal(guard(&r2, 7, 3)->exits, 2 * guard(&r1, 7, 3)->exits);
	assert_int_equal(guard(&r2, 7, 3)->passes, 2 * guard(&r1, 7, 3)->passes);
	assert_int_equal(r2.total.time[JF_SPLIT_JITTED], 2 * r1.total.time[JF_SPLIT_JITTED]);
	jf_analysis_result_free(&r1);
	jf_analysis_result_free(&r2);
	jf_analysis_free(one);
	jf_analysis_free(two);
	jf_codemap_free(map);
}

/* native_class for the test below: what `native_answer` says, counting the questions. */
static enum jf_code_class native_answer = JF_CLASS_NATIVE;
static int native_asked;

static enum jf_code_class answer_native(void *ctx, uint64_t addr)
{
	(void)ctx;
	(void)addr;
	native_asked++;
	return native_answer;
}

/* The analysis remembers what it asks per block start (region, class, the guard at the
 * block's last instruction) for one state of the code: the same block, run before and
 * after zone records describe its code and after the code map changes, is counted by
 * what was true when it ran, and the caller's native_class is asked again only then. */
static void test_a_block_is_classified_by_the_code_of_its_time(void **state)
{
	struct jf_codemap *map = code_map();
	struct jf_analysis_config cfg = { .map = map, .native_class = answer_native };
	struct jf_analysis *a;
	struct jf_analysis_result r;
	struct jf_error err;
	const uint64_t loop = GUARD_BRANCH - TRACE + 1, back = TRACE_BACK - GUARD_BRANCH;
	const uint64_t other = INTERP + 0x300, other_insns = 10;
	int i, e;

	(void)state;
	build_script(); /* the zone records */
	a = jf_analysis_new(&cfg);
	assert_non_null(a);
	native_asked = 0;
	native_answer = JF_CLASS_NATIVE;
	nsteps = 0;
	now = 0;
	for (i = 0; i < 2; i++) {
		add_block(TRACE, GUARD_BRANCH, JF_END_COND);
		add_block(GUARD_BRANCH + 1, TRACE_BACK, JF_END_JUMP);
	}
	add_block(other, other + other_insns - 1, JF_END_JUMP);
	add_block(other, other + other_insns - 1, JF_END_JUMP);
	add_block(TRACE, TRACE + 4, JF_END_COND_NOT_TAKEN); /* a branch that is no guard */
	/* 1. Nothing describes the trace's code yet: native, once asked per start. */
	for (i = 0; i < 6; i++)
		assert_int_equal(jf_analysis_flow(a, &steps[i].flow), 0);
	assert_int_equal(native_asked, 3);
	/* 2. Its region and guard are loaded: the same blocks are the trace, the guard
	 * passes twice (the block after the branch is its fall-through). */
	for (e = R_TRACE_CODE; e <= R_GUARD; e++)
		assert_int_equal(jf_analysis_zone_record(a, reader, &records[e]), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(jf_analysis_flow(a, &steps[i].flow), 0);
	/* the same start, another last instruction: not the guard's branch */
	assert_int_equal(jf_analysis_flow(a, &steps[6].flow), 0);
	assert_int_equal(jf_analysis_flow(a, &steps[4].flow), 0);
	assert_int_equal(native_asked, 4); /* the records might have described `other` */
	/* 3. The code map changes and with it what native_class says. */
	native_answer = JF_CLASS_RUNTIME;
	assert_int_equal(jf_codemap_add_bytes(map, code, 0x100, 0x30000, "more", &err), 0);
	assert_int_equal(jf_analysis_flow(a, &steps[4].flow), 0);
	assert_int_equal(jf_analysis_flow(a, &steps[5].flow), 0);
	assert_int_equal(native_asked, 5);

	assert_int_equal(jf_analysis_result(a, &r), 0);
	assert_int_equal(r.total.by_class[JF_CLASS_NATIVE], 2 * (loop + back) + 3 * other_insns);
	assert_int_equal(r.total.by_class[JF_CLASS_TRACE], 2 * (loop + back) + 5);
	assert_int_equal(r.total.by_class[JF_CLASS_RUNTIME], 2 * other_insns);
	assert_int_equal(trace(&r, 7)->entries, 1);
	assert_int_equal(trace(&r, 7)->iterations, 3);
	assert_int_equal(guard(&r, 7, 3)->passes, 2);
	assert_int_equal(guard(&r, 7, 3)->exits, 0);
	jf_analysis_result_free(&r);
	jf_analysis_free(a);
	jf_codemap_free(map);
}

/* A guard whose branch is a call (HotSpot: a call into UncommonTrapBlob) exits each time
 * the call runs; a call elsewhere in the trace is no exit. */
static void test_a_call_guard_exits_each_time_it_runs(void **state)
{
	struct jf_analysis *a;
	struct jf_analysis_result r;
	int i, e;

	(void)state;
	build_script();
	a = jf_analysis_new(&(struct jf_analysis_config){ 0 });
	assert_non_null(a);
	for (e = R_TRACE_CODE; e <= R_STUB; e++)
		assert_int_equal(jf_analysis_zone_record(a, reader, &records[e]), 0);
	nsteps = 0;
	now = 0;
	add_block(TRACE, TRACE + 4, JF_END_CALL);            /* a call that is no guard */
	add_block(TRACE + 5, GUARD_BRANCH, JF_END_CALL);     /* the guard's call: exit 1 */
	add_block(STUB, STUB + 3, JF_END_JUMP_INDIRECT);
	add_block(TRACE + 5, GUARD_BRANCH, JF_END_CALL);     /* exit 2 */
	add_block(STUB, STUB + 3, JF_END_JUMP_INDIRECT);
	for (i = 0; i < nsteps; i++)
		assert_int_equal(jf_analysis_flow(a, &steps[i].flow), 0);
	assert_int_equal(jf_analysis_result(a, &r), 0);
	assert_int_equal(guard(&r, 7, 3)->exits, 2);
	assert_int_equal(guard(&r, 7, 3)->passes, 0);
	assert_int_equal(r.total.guard_exits, 2);
	jf_analysis_result_free(&r);
	jf_analysis_free(a);
}

/* A THREAD_NAME record names the thread in the result; an OS thread that takes another
 * name keeps both, in order, also when the second came in a later part of the trace. */
static void name_thread(struct jf_analysis *a, int32_t tid, const char *name)
{
	struct jf_zone_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.id = JF_ZONE_THREAD_NAME;
	rec.u.thread_name.tid = (uint32_t)tid;
	rec.u.thread_name.name = name;
	assert_int_equal(jf_analysis_zone_record(a, NULL, &rec), 0);
}

static void run_on_thread(struct jf_analysis *a, int32_t tid)
{
	struct jf_flow ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.kind = JF_FLOW_CONTEXT;
	ctx.u.context.tid = tid;
	assert_int_equal(jf_analysis_flow(a, &ctx), 0);
	nsteps = 0;
	add_block(INTERP, INTERP + 9, JF_END_JUMP_INDIRECT);
	assert_int_equal(jf_analysis_flow(a, &steps[0].flow), 0);
}

static const char *name_of(const struct jf_analysis_result *r, int32_t tid)
{
	size_t i;

	for (i = 0; i < r->nthreads; i++)
		if (r->threads[i].tid == tid)
			return r->threads[i].name;
	fail_msg("no thread %d in the result", tid);
	return NULL;
}

static void test_threads_are_named_by_their_records(void **state)
{
	struct jf_analysis *a = jf_analysis_new(&(struct jf_analysis_config){ 0 });
	struct jf_analysis *later = jf_analysis_new(&(struct jf_analysis_config){ 0 });
	struct jf_analysis_result r;

	(void)state;
	name_thread(a, 101, "main");
	name_thread(a, 102, "jf-cold");
	run_on_thread(a, 101);
	run_on_thread(a, 102);
	run_on_thread(a, 103);
	name_thread(a, 101, "main");              /* again: no change */
	name_thread(later, 101, "main");          /* the later part knows the earlier names */
	name_thread(later, 101, "DestroyJavaVM");
	run_on_thread(later, 101);
	assert_int_equal(jf_analysis_merge(a, later), 0);
	assert_int_equal(jf_analysis_result(a, &r), 0);
	assert_string_equal(name_of(&r, 101), "main / DestroyJavaVM");
	assert_string_equal(name_of(&r, 102), "jf-cold");
	assert_string_equal(name_of(&r, 103), "");
	assert_string_equal(r.total.name, "");
	jf_analysis_result_free(&r);
	jf_analysis_free(later);
	jf_analysis_free(a);
}

/* What a listener attached from outside heard. */
struct heard {
	uint64_t blocks, insns, at_loop_start, guard_exits, time, code_changes;
	uint64_t loop_entries, iterations, guard_passes;
};

static int heard_block(struct jf_analysis *a, void *self, const struct jf_block_event *e)
{
	struct heard *h = self;

	(void)a;
	h->blocks++;
	h->insns += e->b->ninsn;
	h->at_loop_start += e->r && e->b->start == TRACE;
	return 0;
}

static int heard_time(struct jf_analysis *a, void *self, int32_t tid, int has_from,
		      uint64_t from, uint64_t to)
{
	struct heard *h = self;

	(void)a, (void)tid;
	if (has_from && to > from)
		h->time += to - from;
	return 0;
}

static int heard_guard_exit(struct jf_analysis *a, void *self, int32_t tid, int has_time,
			    uint64_t time, uint32_t guard)
{
	(void)a, (void)tid, (void)has_time, (void)time, (void)guard;
	((struct heard *)self)->guard_exits++;
	return 0;
}

static void heard_code_change(struct jf_analysis *a, void *self, const struct jf_zone_record *rec)
{
	(void)a, (void)rec;
	((struct heard *)self)->code_changes++;
}

static void heard_region_entered(struct jf_analysis *a, void *self, int32_t tid,
				 const struct live_region *r)
{
	(void)a, (void)tid;
	((struct heard *)self)->loop_entries += r->start == TRACE;
}

static void heard_iteration(struct jf_analysis *a, void *self, int32_t tid, int32_t trace)
{
	(void)a, (void)tid, (void)trace;
	((struct heard *)self)->iterations++;
}

static void heard_guard_pass(struct jf_analysis *a, void *self, int32_t tid, uint32_t guard)
{
	(void)a, (void)tid, (void)guard;
	((struct heard *)self)->guard_passes++;
}

static int heard_seam_exit(struct jf_analysis *a, void *self, int32_t tid, int has_time,
			   uint64_t time, uint32_t guard)
{
	return heard_guard_exit(a, self, tid, has_time, time, guard);
}

static const struct jf_listener counting = {
	.block_counted = heard_block,
	.region_entered = heard_region_entered,
	.loop_iteration = heard_iteration,
	.time_attributed = heard_time,
	.guard_passed = heard_guard_pass,
	.guard_exited = heard_guard_exit,
	.code_changed = heard_code_change,
	.seam_guard_passed = heard_guard_pass,
	.seam_guard_exited = heard_seam_exit,
};

static void test_a_listener_hears_the_script(void **state)
{
	struct jf_analysis_config cfg = { 0 };
	struct heard h = { 0 };
	uint64_t blocks = 0, insns = 0, records = 0, first_time = 0;
	struct jf_codemap *map;
	struct jf_analysis *a;
	int i;

	(void)state;
	build_script();
	for (i = 0; i < nsteps; i++) {
		if (steps[i].record >= 0) {
			records++;
			continue;
		}
		if (!blocks++)
			first_time = steps[i].flow.time;
		insns += steps[i].flow.u.block.ninsn;
	}
	map = code_map();
	cfg.map = map;
	a = jf_analysis_new(&cfg);
	assert_non_null(a);
	assert_int_equal(jf_listeners_attach(&a->listeners, &counting, &h), 0);
	run(a, 0, nsteps);
	assert_int_equal(h.blocks, blocks);
	assert_int_equal(h.insns, insns);
	assert_int_equal(h.at_loop_start, ENTRIES * ITERS);
	assert_int_equal(h.guard_exits, ENTRIES);
	/* The guard holds on every iteration of an entry but its last. */
	assert_int_equal(h.guard_passes, ENTRIES * (ITERS - 1));
	assert_int_equal(h.loop_entries, ENTRIES);
	/* The loop's iterations, and one per entry of the bridge. */
	assert_int_equal(h.iterations, ENTRIES * ITERS + (ENTRIES - BRIDGE_AFTER));
	assert_int_equal(h.time, now - first_time);
	assert_int_equal(h.code_changes, records);
	jf_analysis_free(a);
	jf_codemap_free(map);
}

/* Cut anywhere, the two parts' listeners together hear every guard pass and exit once: a
 * guard branch that ends the first part is settled when the parts are joined, and its
 * listener hears it then. */
static void test_a_listener_hears_each_guard_once_across_a_seam(void **state)
{
	struct jf_analysis_config cfg = { 0 };
	struct jf_codemap *map;
	int split;

	(void)state;
	build_script();
	map = code_map();
	cfg.map = map;
	for (split = 1; split < nsteps; split++) {
		struct jf_analysis *first = jf_analysis_new(&cfg), *second = jf_analysis_new(&cfg);
		struct heard h1 = { 0 }, h2 = { 0 };

		assert_non_null(first);
		assert_non_null(second);
		assert_int_equal(jf_listeners_attach(&first->listeners, &counting, &h1), 0);
		assert_int_equal(jf_listeners_attach(&second->listeners, &counting, &h2), 0);
		run(first, 0, split);
		run(second, split, nsteps);
		assert_int_equal(jf_analysis_merge(first, second), 0);
		if (h1.guard_passes + h2.guard_passes != ENTRIES * (ITERS - 1) ||
		    h1.guard_exits + h2.guard_exits != ENTRIES)
			fail_msg("split %d: heard %llu passes and %llu exits, the script has %d and %d",
				 split, (unsigned long long)(h1.guard_passes + h2.guard_passes),
				 (unsigned long long)(h1.guard_exits + h2.guard_exits),
				 ENTRIES * (ITERS - 1), ENTRIES);
		jf_analysis_free(first);
		jf_analysis_free(second);
	}
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved_sources_are_separate_threads),
		cmocka_unit_test(test_counts_follow_the_script),
		cmocka_unit_test(test_long_iteration_series_spills_and_reads_back),
		cmocka_unit_test(test_two_parts_merge_to_the_whole),
		cmocka_unit_test(test_a_block_is_classified_by_the_code_of_its_time),
		cmocka_unit_test(test_a_call_guard_exits_each_time_it_runs),
		cmocka_unit_test(test_threads_are_named_by_their_records),
		cmocka_unit_test(test_a_listener_hears_the_script),
		cmocka_unit_test(test_a_listener_hears_each_guard_once_across_a_seam),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	if (reader)
		jf_zone_reader_close(reader);
	return jf_test_exit(rc);
}
