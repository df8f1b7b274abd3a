/* The compact block stream (block_stream.h) over the fast Intel PT decoder: every entry,
 * turned back into its record, is the record the same decoder gives one by one
 * (jf_decoder_next) and the record libipt's block decoder gives (jf_pt_decoder_new, itself
 * checked against ptxed's reference output in test_pt_shared): blocks (start IP,
 * instructions, end, every field but the trace offset a block id does not keep), events,
 * errors and losses, in order, with the same statistics. Real bytes: the captures in
 * ../shared/traces/intel-pt (foo clean, cut short, three copies; Unzip with decode errors;
 * damaged copies where the fast path hands over to libipt's block decoder), and streams
 * written with libipt's packet encoder with an overflow and a corrupt packet, and with
 * timing packets between branches. The same stream decoded on several threads
 * (jf_pt_parallel_block_stream_new) gives the same entries, records and statistics as the
 * stream over one decoder, with seams that join and with seams decoded on by the calling
 * thread. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/block_stream.h"
#include "jitflow/codemap.h"
#include "jitflow/pt.h"
#include "jitflow/pt_fast.h"
#include "jitflow/pt_parallel.h"
#include "flow_check.h"
#include "pt_builder.h"

struct streamed {
	uint64_t entries, id_blocks, record_blocks, records, runs;
	size_t distinct;               /* ids made */
	struct jf_decode_stats stats;  /* libipt's block decoder's */
	struct jf_pt_fast_report report;
};

/* The next record of dec, which must have one. */
static void next_of(const char *what, struct jf_decoder *dec, struct jf_flow *f)
{
	struct jf_error err = { "" };
	int rc = jf_decoder_next(dec, f, &err);

	if (rc != 1)
		fail_msg("%s: the stream gives more records than jf_decoder_next (%d: %s)", what,
			 rc, err.msg);
}

static void same_record(const char *what, uint64_t at, const struct jf_flow *got,
			const struct jf_flow *want, const char *whose)
{
	if (!jf_flow_same(got, want))
		fail_msg("%s: entry %llu differs from %s: %s at 0x%llx (%u insns), theirs %s at "
			 "0x%llx (%u insns) offset 0x%llx", what, (unsigned long long)at, whose,
			 jf_flow_kind_name((enum jf_flow_kind)got->kind),
			 (unsigned long long)got->ip,
			 got->kind == JF_FLOW_BLOCK ? got->u.block.ninsn : 0,
			 jf_flow_kind_name((enum jf_flow_kind)want->kind),
			 (unsigned long long)want->ip,
			 want->kind == JF_FLOW_BLOCK ? want->u.block.ninsn : 0,
			 (unsigned long long)want->offset);
}

/* Traces from this size on are decoded on several threads too (check_parallel). */
enum { PARALLEL_FROM = 8192 };

/* A stream's entries, each as its record (an id turned back in the context of the entry
 * before it, with offset 0) and whether it was an id. */
struct entries {
	struct jf_flow *recs;
	uint8_t *is_id;
	size_t n, cap;
};

static int collect(void *ctx, const struct jf_block_stream *s, const struct jf_block_run *run,
		   struct jf_error *err)
{
	struct entries *e = ctx;
	size_t i, r = 0;

	(void)err;
	assert_true(run->n >= 1);
	if (e->n + run->n > e->cap) {
		e->cap = 2 * (e->n + run->n);
		e->recs = realloc(e->recs, e->cap * sizeof(*e->recs));
		e->is_id = realloc(e->is_id, e->cap);
		assert_non_null(e->recs);
		assert_non_null(e->is_id);
	}
	for (i = 0; i < run->n; i++, e->n++) {
		e->is_id[e->n] = run->ids[i] != JF_BLOCK_STREAM_RECORD;
		if (e->is_id[e->n]) {
			assert_true(run->ids[i] < jf_block_stream_blocks(s));
			assert_ptr_equal(jf_block_stream_block(s, run->ids[i]),
					 &jf_block_stream_table(s)[run->ids[i]]);
			jf_block_stream_record(s, run->ids[i], e->n ? &e->recs[e->n - 1] : NULL,
					       &e->recs[e->n]);
		} else {
			assert_true(r < run->nrecords);
			e->recs[e->n] = run->records[r++];
		}
	}
	assert_int_equal(r, run->nrecords);
	return 0;
}

/* Every run of s into e (the stream is freed). */
static void read_all(const char *what, struct jf_block_stream *s, struct entries *e,
		     struct jf_decode_stats *stats)
{
	struct jf_error err = { "" };

	assert_non_null(s);
	memset(e, 0, sizeof(*e));
	if (jf_block_stream_run(s, collect, e, &err) < 0)
		fail_msg("%s: %s", what, err.msg);
	*stats = *jf_block_stream_stats(s);
	jf_block_stream_free(s);
}

/* The stream decoded on 2 and 4 threads in segments of about seg bytes, with and without
 * joining seams, against the stream over one fast decoder: entry by entry. */
static void check_parallel(const char *what, const struct jf_pt_config *cfg,
			   struct jf_codemap *map, uint64_t seg)
{
	struct jf_error err = { "" };
	struct jf_pt_parallel_options opt;
	struct jf_pt_parallel_report report;
	struct jf_decode_stats one_stats, par_stats;
	struct entries one, par;
	struct jf_decoder *dec = jf_pt_fast_decoder_new(cfg, map, &err);
	size_t i;
	int jobs, no_joins;

	assert_non_null(dec);
	read_all(what, jf_block_stream_new(dec, &err), &one, &one_stats);
	jf_decoder_free(dec);
	for (jobs = 2; jobs <= 4; jobs += 2) {
		for (no_joins = 0; no_joins <= 1; no_joins++) {
			memset(&opt, 0, sizeof(opt));
			memset(&report, 0, sizeof(report));
			opt.jobs = jobs;
			opt.fast = 1;
			opt.segment_size = seg;
			opt.no_joins = no_joins;
			read_all(what, jf_pt_parallel_block_stream_new(cfg, map, &opt, &report,
								       &err), &par, &par_stats);
			/* Workers' parts taken where seams join, the calling thread's else. */
			if (no_joins)
				assert_int_equal(report.joins, 0);
			else
				assert_true(report.joins > 0);
			if (par.n != one.n)
				fail_msg("%s, %d threads%s: %zu entries, one decoder's stream %zu",
					 what, jobs, no_joins ? ", no joins" : "", par.n, one.n);
			for (i = 0; i < one.n; i++) {
				if (par.is_id[i] != one.is_id[i])
					fail_msg("%s, %d threads%s: entry %zu is %s, in one "
						 "decoder's stream %s", what, jobs,
						 no_joins ? ", no joins" : "", i,
						 par.is_id[i] ? "an id" : "a record",
						 one.is_id[i] ? "an id" : "a record");
				same_record(what, i, &par.recs[i], &one.recs[i],
					    "one decoder's stream's");
			}
			jf_check_same_stats(&par_stats, &one_stats);
			free(par.recs);
			free(par.is_id);
		}
	}
	free(one.recs);
	free(one.is_id);
}

/* The stream over the fast decoder against the fast decoder read one by one and libipt's
 * block decoder, with the options `jitflow report` and `decode` use. */
static struct streamed check(const char *what, const uint8_t *trace, size_t size,
			     struct jf_codemap *map)
{
	struct jf_error err = { "" };
	struct jf_pt_config cfg;
	struct jf_decoder *fast, *one, *blk;
	struct jf_block_stream *s;
	struct jf_block_run run;
	struct jf_flow got, prev, want;
	struct streamed out;
	size_t i, r;
	int rc, have_prev = 0;

	memset(&out, 0, sizeof(out));
	memset(&cfg, 0, sizeof(cfg));
	cfg.trace = trace;
	cfg.size = size;
	cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	fast = jf_pt_fast_decoder_new(&cfg, map, &err);
	one = jf_pt_fast_decoder_new(&cfg, map, &err);
	blk = jf_pt_decoder_new(&cfg, map, &err);
	assert_non_null(fast);
	assert_non_null(one);
	assert_non_null(blk);
	s = jf_block_stream_new(fast, &err);
	assert_non_null(s);
	while ((rc = jf_block_stream_next(s, &run, &err)) > 0) {
		assert_true(run.n >= 1);
		out.runs++;
		for (i = 0, r = 0; i < run.n; i++, out.entries++) {
			next_of(what, one, &want);
			if (run.ids[i] == JF_BLOCK_STREAM_RECORD) {
				assert_true(r < run.nrecords);
				got = run.records[r++];
				out.records++;
				if (got.kind == JF_FLOW_BLOCK)
					out.record_blocks++;
			} else {
				assert_true(run.ids[i] < jf_block_stream_blocks(s));
				assert_ptr_equal(jf_block_stream_block(s, run.ids[i]),
						 &jf_block_stream_table(s)[run.ids[i]]);
				jf_block_stream_record(s, run.ids[i], have_prev ? &prev : NULL, &got);
				/* The one field an id does not keep. */
				got.offset = want.offset;
				out.id_blocks++;
			}
			same_record(what, out.entries, &got, &want, "jf_decoder_next's");
			next_of(what, blk, &want);
			if (run.ids[i] != JF_BLOCK_STREAM_RECORD)
				got.offset = want.offset;
			same_record(what, out.entries, &got, &want, "libipt's block decoder's");
			prev = got;
			have_prev = 1;
		}
		assert_int_equal(r, run.nrecords);
	}
	if (rc < 0)
		fail_msg("%s: %s", what, err.msg);
	assert_int_equal(jf_decoder_next(one, &want, &err), 0);
	assert_int_equal(jf_decoder_next(blk, &want, &err), 0);
	jf_check_same_stats(jf_decoder_stats(fast), jf_decoder_stats(blk));
	jf_check_same_stats(jf_decoder_stats(fast), jf_decoder_stats(one));
	assert_int_equal(jf_decoder_stats(fast)->blocks, jf_decoder_stats(blk)->blocks);
	assert_int_equal(out.id_blocks + out.record_blocks, jf_decoder_stats(blk)->blocks);
	out.distinct = jf_block_stream_blocks(s);
	assert_null(jf_block_stream_block(s, (uint32_t)out.distinct));
	out.stats = *jf_decoder_stats(blk);
	jf_pt_fast_counter_report(fast, &out.report);
	printf("%s: %llu entries in %llu runs: %llu blocks as ids (%zu distinct), %llu as "
	       "records, %llu records in all\n", what, (unsigned long long)out.entries,
	       (unsigned long long)out.runs, (unsigned long long)out.id_blocks, out.distinct,
	       (unsigned long long)out.record_blocks, (unsigned long long)out.records);
	jf_block_stream_free(s);
	jf_decoder_free(fast);
	jf_decoder_free(one);
	jf_decoder_free(blk);
	/* Segments of a sixteenth of the trace, where that is a few PSB periods. */
	if (size >= PARALLEL_FROM)
		check_parallel(what, &cfg, map, size / 16);
	return out;
}

static struct streamed check_capture(const char *what, const char *name, uint64_t base,
				     int times, int damage, int cut)
{
	struct jf_codemap *map = jf_test_capture_code(name, base);
	struct streamed out;
	uint8_t *trace;
	size_t size;

	trace = jf_test_concatenated_capture(name, times, damage, &size);
	/* cut: a third and a byte, inside a packet */
	out = check(what, trace, cut ? size / 3 + 1 : size, map);
	free(trace);
	jf_codemap_free(map);
	return out;
}

/* A clean capture: its blocks are ids, nearly all, and far fewer ids than blocks (a
 * program runs the same blocks again and again). */
static void test_foo(void **state)
{
	struct streamed out;

	(void)state;
	out = check_capture("foo", "foo", 0x7ffff7819000, 1, 0, 0);
	assert_true(out.id_blocks > 0);
	assert_true(out.id_blocks >= 9 * (out.id_blocks + out.record_blocks) / 10);
	assert_true(out.distinct * 4 < out.id_blocks);
	assert_true(out.runs * 10 < out.entries);
	check_capture("foo x3", "foo", 0x7ffff7819000, 3, 0, 0);
	/* Cut inside a packet: the trace ends there as libipt's block decoder ends it. */
	check_capture("foo cut short", "foo", 0x7ffff7819000, 1, 0, 1);
}

/* Decode errors the fast path reports and resynchronises after itself. */
static void test_unzip(void **state)
{
	struct streamed out;

	(void)state;
	out = check_capture("Unzip", "Unzip", 0x400000, 1, 0, 0);
	assert_true(out.stats.errors > 0);
	assert_true(out.stats.lost_bytes > 0);
}

/* Damaged copies: the fast path hands over to libipt's block decoder and takes over again
 * after its resynchronisation; the block decoder's blocks get ids too. */
static void test_damaged(void **state)
{
	struct streamed out;

	(void)state;
	out = check_capture("foo x4 damaged", "foo", 0x7ffff7819000, 4, 1, 0);
	assert_true(out.report.hand_overs > 0);
	assert_true(out.stats.errors > 0);
}

enum { BASE = 0x400000 };

/* A loop, a direct call, an indirect call and jump, two syscalls (test_pt_encoded.c's). */
static const uint8_t prog[] = {
	/* 0x400000 */ 0xb9, 0x03, 0x00, 0x00, 0x00, /* mov ecx, 3 */
	/* 0x400005 */ 0xff, 0xc9,                   /* loop: dec ecx */
	/* 0x400007 */ 0x75, 0xfc,                   /* jnz loop (0x400005) */
	/* 0x400009 */ 0xe8, 0x12, 0x00, 0x00, 0x00, /* call f (0x400020) */
	/* 0x40000e */ 0xff, 0xd0,                   /* call rax (rax = g, 0x400030) */
	/* 0x400010 */ 0xff, 0xe3,                   /* jmp rbx (rbx = 0x400040) */
	/* 0x400012 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, /* int3 padding */
	/* 0x400019 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x400020 */ 0x90,                         /* f: nop */
	/* 0x400021 */ 0xc3,                         /* ret */
	/* 0x400022 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x400029 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x400030 */ 0x48, 0x89, 0xc8,             /* g: mov rax, rcx */
	/* 0x400033 */ 0xc3,                         /* ret */
	/* 0x400034 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x40003a */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x400040 */ 0x0f, 0x05,                   /* syscall (returns to 0x400042) */
	/* 0x400042 */ 0x90,                         /* nop */
	/* 0x400043 */ 0x0f, 0x05,                   /* syscall (exit) */
};

/* One run of prog after the loop: f, g, the jump to the syscall, tracing off there. */
static void after_loop(struct jf_ptb *b)
{
	jf_ptb_tnt(b, "T");                         /* f's ret */
	jf_ptb_tip(b, pt_ipc_update_16, 0x400030); /* call rax */
	jf_ptb_tnt(b, "T");                         /* g's ret */
	jf_ptb_tip(b, pt_ipc_update_16, 0x400040); /* jmp rbx */
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
}

static void start(struct jf_ptb *b)
{
	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, BASE);
}

/* Runs of prog, one whole; one where the hardware lost packets in the loop (OVF) and
 * resumed at the call to f (FUP); one whose first TNT is overwritten by an opcode that does
 * not exist; one whole again: one overflow, one decode error with the bytes up to the next
 * PSB lost, and the blocks of every run but the damaged one. */
static void test_overflow_and_error(void **state)
{
	static const uint8_t bad_opcode[] = { 0x02, 0x02 };
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct streamed out;
	uint64_t bad;

	(void)state;
	start(b);
	jf_ptb_tnt(b, "TTN");
	after_loop(b);
	start(b);
	jf_ptb_tnt(b, "T");
	jf_ptb_ovf(b);
	jf_ptb_fup(b, pt_ipc_sext_48, 0x400009);
	after_loop(b);
	start(b);
	bad = jf_ptb_offset(b);
	jf_ptb_tnt(b, "TTN");
	after_loop(b);
	start(b);
	jf_ptb_tnt(b, "TTN");
	after_loop(b);
	memcpy(jf_ptb_bytes_mut(b) + bad, bad_opcode, sizeof(bad_opcode));
	out = check("overflow and error", jf_ptb_bytes(b), jf_ptb_size(b), map);
	assert_int_equal(out.stats.overflows, 1);
	assert_int_equal(out.stats.errors, 1);
	assert_true(out.stats.lost_bytes > 0);
	/* The whole runs' blocks: the loop's three, f, the call rax, g, the jmp, the syscall;
	 * the overflowed run's first and its five after the FUP. */
	assert_true(out.id_blocks + out.record_blocks >= 8 + 8 + 6);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* Timing packets between branches: a block whose time is not the record's before it is a
 * record of its own, in full. */
static void test_timed(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct streamed out;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		jf_ptb_psb(b);
		jf_ptb_tsc(b, 0x10000 + 0x1000 * (uint64_t)i);
		jf_ptb_psbend(b);
		jf_ptb_mode_exec(b, ptem_64bit);
		jf_ptb_tip_pge(b, pt_ipc_sext_48, BASE);
		jf_ptb_tnt(b, "T");
		jf_ptb_tsc(b, 0x10100 + 0x1000 * (uint64_t)i);
		jf_ptb_tnt(b, "TN");
		jf_ptb_tsc(b, 0x10200 + 0x1000 * (uint64_t)i);
		after_loop(b);
	}
	out = check("timed", jf_ptb_bytes(b), jf_ptb_size(b), map);
	assert_true(out.stats.has_time);
	assert_true(out.record_blocks > 0);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* Timing on several threads: tracing stays on across PSB+s, and a TSC follows each PSB+,
 * so the first block after it is a record in the stream (its time is not that of the
 * PSB+'s events before it), while the worker decoding that segment, whose part starts at
 * that block and does not know the records before it, first made it an id. */
static void test_timed_parallel(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct streamed out;
	int i, k;

	(void)state;
	jf_ptb_psb(b);
	jf_ptb_tsc(b, 0x1000);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, BASE);
	for (i = 0; i < 256; i++) {
		jf_ptb_psb(b);
		jf_ptb_tsc(b, 0x10000 + 0x100 * (uint64_t)i);
		jf_ptb_mode_exec(b, ptem_64bit);
		jf_ptb_fup(b, pt_ipc_sext_48, 0x400005);
		jf_ptb_psbend(b);
		jf_ptb_tsc(b, 0x10080 + 0x100 * (uint64_t)i);
		for (k = 0; k < 8; k++)
			jf_ptb_tnt(b, "TTTTTT"); /* the loop, again and again */
	}
	jf_ptb_tnt(b, "N");
	after_loop(b);
	assert_true(jf_ptb_size(b) >= PARALLEL_FROM);
	out = check("timed, across PSBs", jf_ptb_bytes(b), jf_ptb_size(b), map);
	assert_true(out.stats.has_time);
	assert_true(out.record_blocks >= 256);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_overflow_and_error),
		cmocka_unit_test(test_timed),
		cmocka_unit_test(test_timed_parallel),
		cmocka_unit_test(test_foo),
		cmocka_unit_test(test_unzip),
		cmocka_unit_test(test_damaged),
	};

	if (!jf_test_shared_traces())
		return jf_test_exit(0);
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
