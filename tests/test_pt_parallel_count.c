/* `stat -j N` (pt_parallel_count.c) on hand-written traces with damage where it is chosen:
 * a bad status update (an error the fast path reports and resynchronises after itself), an
 * overflow, a packet libipt cannot decode (an error the fast path also models), and what
 * the fast path does not model (a PSB+ with a status update followed by a timing packet
 * and another PSB: it hands over to libipt's block decoder there), each in the first PSB
 * period, in the middle, in the last, and several together. Every segment size from one
 * PSB period to the whole trace is tried on 2 and 4 threads, so that each falls inside a
 * segment, on a seam and in the overlap past one, in turn; and segments cut guided
 * (`stat`'s default: large while much of the trace is left, down to a smallest size at its
 * end). The parallel count must be the one-thread count exactly (every record,
 * instructions, blocks, events, errors, losses, time); the one-thread count is checked
 * against libipt's block decoder, the independent oracle (instructions, errors, lost bytes,
 * overflows). Where the only damage is errors the fast path resynchronises after, the
 * count must stay on several threads: the segments' decoders resynchronise there as one
 * thread does, and their seams join past them. Where it hands over, the one-thread
 * decoder must have handed over (its report says so), and a segment that the calling
 * thread decodes again, because its seam did not join, must decode as its worker did,
 * hand-overs made ahead included. */
#include "pt_builder.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/pt_fast.h"
#include "jitflow/pt_parallel.h"

enum { PERIODS = 14 };

/* What is done in a PSB period besides running the loop. */
enum damage { NONE, BAD_STATUS, OVERFLOW, BAD_PACKET, UNMODELLED };

/* 1000: je 1003; 1002: nop; 1003: jmp rax (back to 1000). */
static const uint8_t code[] = { 0x74, 0x01, 0x90, 0xff, 0xe0 };

/* PERIODS PSB periods of the loop, each with damage[i]. A bad status update: tracing
 * stops asynchronously (FUP, TIP.PGD) at 0x1000 and the next PSB+'s FUP says it is on at
 * that IP; the block decoder reports it there and resynchronises at the PSB after. */
static struct jf_ptb *build(const enum damage *damage)
{
	struct jf_ptb *b = jf_ptb_new();
	int i, k;

	for (i = 0; i < PERIODS; i++) {
		jf_ptb_psb(b);
		jf_ptb_mode_exec(b, ptem_64bit);
		jf_ptb_fup(b, pt_ipc_sext_48, 0x1000);
		jf_ptb_psbend(b);
		for (k = 0; k < 3 + i % 3; k++) {
			jf_ptb_tnt(b, k & 1 ? "T" : "N");
			jf_ptb_tip(b, pt_ipc_sext_48, 0x1000);
		}
		switch (damage[i]) {
		case NONE:
			break;
		case BAD_STATUS:
			jf_ptb_fup(b, pt_ipc_sext_48, 0x1000);
			jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
			continue;
		case OVERFLOW:
			jf_ptb_ovf(b);
			jf_ptb_fup(b, pt_ipc_sext_48, 0x1000);
			break;
		case BAD_PACKET:
			jf_ptb_bad_packet(b);
			break;
		case UNMODELLED:
			jf_ptb_psb(b);
			jf_ptb_mode_exec(b, ptem_64bit);
			jf_ptb_fup(b, pt_ipc_sext_48, 0x1000);
			jf_ptb_psbend(b);
			jf_ptb_mtc(b, 1);
			continue;
		}
		jf_ptb_tnt(b, "N");
		jf_ptb_tip(b, pt_ipc_sext_48, 0x1000);
	}
	return b;
}

/* Every record but blocks (hashed: kind, offset, ip, time, error code, bytes lost) and the
 * statistics. */
struct count {
	struct jf_decode_stats stats;
	uint64_t records, hash;
};

static void count(struct jf_decoder *dec, struct count *c)
{
	struct jf_error err = { "" };
	struct jf_flow f;
	int rc;

	assert_non_null(dec);
	memset(c, 0, sizeof(*c));
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		uint64_t h = f.kind ^ f.offset << 8 ^ f.ip << 20 ^ f.time;

		if (f.kind == JF_FLOW_ERROR)
			h ^= (uint64_t)(uint32_t)f.u.error.code << 40;
		if (f.kind == JF_FLOW_LOST)
			h ^= f.u.lost.bytes << 32;
		c->hash = (c->hash ^ h) * 0x100000001b3ull;
		c->records++;
	}
	if (rc < 0)
		fail_msg("decode failed: %s", err.msg);
	c->stats = *jf_decoder_stats(dec);
}

static void same_count(const char *what, const struct count *got, const struct count *want)
{
	const struct jf_decode_stats *a = &got->stats, *b = &want->stats;

	if (got->records != want->records || got->hash != want->hash || a->insns != b->insns ||
	    a->blocks != b->blocks || a->events != b->events || a->errors != b->errors ||
	    a->overflows != b->overflows || a->lost_bytes != b->lost_bytes ||
	    a->has_time != b->has_time || a->first_time != b->first_time ||
	    a->last_time != b->last_time)
		fail_msg("%s: records %llu %s, insns %llu, blocks %llu, events %llu, errors %llu, "
			 "lost %llu; one thread: records %llu, insns %llu, blocks %llu, events "
			 "%llu, errors %llu, lost %llu", what, (unsigned long long)got->records,
			 got->hash == want->hash ? "(same)" : "(differ)",
			 (unsigned long long)a->insns, (unsigned long long)a->blocks,
			 (unsigned long long)a->events, (unsigned long long)a->errors,
			 (unsigned long long)a->lost_bytes, (unsigned long long)want->records,
			 (unsigned long long)b->insns, (unsigned long long)b->blocks,
			 (unsigned long long)b->events, (unsigned long long)b->errors,
			 (unsigned long long)b->lost_bytes);
}

/* The parallel count with opt must be one's. Returns 1 if it stayed parallel to the end
 * (no one-thread rest) with at least one seam joined. */
static int parallel_same(const char *what, const struct jf_pt_config *cfg,
			 struct jf_codemap *map, const struct jf_pt_parallel_options *opt,
			 const struct count *one)
{
	struct jf_pt_parallel_report rep = { 0 };
	struct jf_error err = { "" };
	struct jf_decoder *dec = jf_pt_parallel_counter_new(cfg, map, opt, &rep, &err);
	struct count got;
	char where[200];

	count(dec, &got);
	jf_decoder_free(dec);
	snprintf(where, sizeof(where), "%s, -j %d, segments of %llu bytes%s (%llu, %llu joined)",
		 what, opt->jobs, (unsigned long long)opt->segment_size,
		 opt->segment_max ? " and up, guided" : "", (unsigned long long)rep.segments,
		 (unsigned long long)rep.joins);
	same_count(where, &got, one);
	return !rep.rest_one_thread && rep.joins > 0;
}

/* How many times the last check's one-thread count handed over to libipt's block
 * decoder. */
static uint64_t hand_overs;

/* The trace with damage: one thread against libipt's block decoder, then 2 and 4 threads
 * at every segment size against one thread. Returns how many of those parallel counts
 * stayed parallel to the end (no one-thread rest) with at least one seam joined. */
static int check(const char *what, const enum damage *damage, uint64_t want_errors)
{
	struct jf_ptb *b = build(damage);
	struct jf_codemap *map = jf_ptb_codemap(code, sizeof(code), 0x1000);
	struct jf_codemap *ref_map = jf_ptb_codemap(code, sizeof(code), 0x1000);
	struct jf_pt_config cfg;
	struct jf_error err = { "" };
	struct count one, ref;
	uint64_t size = jf_ptb_size(b), seg;
	int jobs, parallel = 0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.trace = jf_ptb_bytes(b);
	cfg.size = size;
	cfg.count_plain_events = 1; /* as `jitflow stat` counts */
	{
		struct jf_decoder *blk = jf_pt_decoder_new(&cfg, ref_map, &err);
		struct jf_decoder *dec = jf_pt_fast_counter_new(&cfg, map, &err);

		count(blk, &ref);
		struct jf_pt_fast_report r;

		count(dec, &one);
		jf_pt_fast_counter_report(dec, &r);
		hand_overs = r.hand_overs;
		jf_decoder_free(blk);
		jf_decoder_free(dec);
	}
	if (one.stats.insns != ref.stats.insns || one.stats.errors != ref.stats.errors ||
	    one.stats.lost_bytes != ref.stats.lost_bytes ||
	    one.stats.overflows != ref.stats.overflows || ref.stats.errors != want_errors)
		fail_msg("%s: one thread %llu insns %llu errors %llu lost, libipt's block decoder "
			 "%llu %llu %llu (%llu errors made)", what,
			 (unsigned long long)one.stats.insns, (unsigned long long)one.stats.errors,
			 (unsigned long long)one.stats.lost_bytes,
			 (unsigned long long)ref.stats.insns, (unsigned long long)ref.stats.errors,
			 (unsigned long long)ref.stats.lost_bytes, (unsigned long long)want_errors);
	for (jobs = 2; jobs <= 4; jobs += 2) {
		for (seg = 16; seg < size; seg += 8) {
			struct jf_pt_parallel_options opt = { .jobs = jobs, .segment_size = seg,
							      .overlap = 1 };

			parallel += parallel_same(what, &cfg, map, &opt, &one);
		}
		/* Guided: from the whole trace's share of a thread down to seg at the end. */
		for (seg = 16; seg < size / 2; seg += 24) {
			struct jf_pt_parallel_options opt = { .jobs = jobs, .segment_size = seg,
							      .segment_max = size, .overlap = 1 };

			parallel += parallel_same(what, &cfg, map, &opt, &one);
		}
	}
	printf("%s: %llu instructions, %llu errors, %llu bytes lost, as libipt's block decoder; "
	       "one thread handed over %llu times; -j 2 and -j 4 the same at every segment "
	       "size, fixed and guided, %d of them parallel to the end\n",
	       what, (unsigned long long)one.stats.insns, (unsigned long long)one.stats.errors,
	       (unsigned long long)one.stats.lost_bytes, (unsigned long long)hand_overs,
	       parallel);
	jf_codemap_free(map);
	jf_codemap_free(ref_map);
	jf_ptb_free(b);
	return parallel;
}

static void at(enum damage *damage, enum damage kind, int first, int middle, int last)
{
	memset(damage, 0, PERIODS * sizeof(*damage));
	if (first)
		damage[0] = kind;
	if (middle)
		damage[PERIODS / 2] = kind;
	/* A bad status update shows at the next PSB+, and what the fast path does not model
	 * needs the next PSB: the last period that has one. */
	if (last)
		damage[kind == BAD_STATUS || kind == UNMODELLED ? PERIODS - 2 : PERIODS - 1] = kind;
}

/* Errors the fast path resynchronises after: the same counts, and parallel to the end. */
static void test_bad_status(void **state)
{
	enum damage damage[PERIODS];

	(void)state;
	at(damage, BAD_STATUS, 1, 0, 0);
	assert_true(check("bad status update in the first period", damage, 1) > 0);
	at(damage, BAD_STATUS, 0, 1, 0);
	assert_true(check("bad status update in the middle", damage, 1) > 0);
	at(damage, BAD_STATUS, 0, 0, 1);
	assert_true(check("bad status update in the last period", damage, 1) > 0);
	at(damage, BAD_STATUS, 1, 1, 1);
	assert_true(check("three bad status updates", damage, 3) > 0);
}

static void test_overflow(void **state)
{
	enum damage damage[PERIODS];

	(void)state;
	at(damage, OVERFLOW, 1, 1, 1);
	assert_true(check("overflows in the first, middle and last periods", damage, 0) > 0);
}

/* libipt's own errors: the fast path hands over; the count stays exact, and parallel
 * past the hand-over. */
static void test_bad_packet(void **state)
{
	enum damage damage[PERIODS];

	(void)state;
	at(damage, BAD_PACKET, 1, 0, 0);
	assert_true(check("a bad packet in the first period", damage, 1) > 0);
	at(damage, BAD_PACKET, 0, 1, 0);
	assert_true(check("a bad packet in the middle", damage, 1) > 0);
	at(damage, BAD_PACKET, 0, 0, 1);
	assert_true(check("a bad packet in the last period", damage, 1) > 0);
	at(damage, BAD_PACKET, 1, 1, 1);
	assert_true(check("three bad packets", damage, 3) > 0);
}

/* Hand-overs in consecutive periods: the fast path takes over again after the first and
 * commits nothing before the next, so the one-thread decoder lets the next
 * resynchronisations pass (its policy, which the parallel count must follow). */
static void test_bad_packets_in_a_row(void **state)
{
	enum damage damage[PERIODS] = { 0 };
	int i;

	(void)state;
	for (i = 3; i < 9; i++)
		damage[i] = BAD_PACKET;
	check("bad packets in six periods in a row", damage, 6);
}

/* What the fast path hands over to libipt's block decoder: the count stays exact on any
 * number of threads, the calling thread decoding from the hand-over on as one thread
 * does (the one-thread decoder does not take over again without an error to
 * resynchronise at). */
static void test_hand_over(void **state)
{
	enum damage damage[PERIODS];

	(void)state;
	at(damage, UNMODELLED, 1, 0, 0);
	check("a hand-over in the first period", damage, 0);
	assert_int_equal(hand_overs, 1);
	at(damage, UNMODELLED, 0, 1, 0);
	assert_true(check("a hand-over in the middle", damage, 0) > 0);
	assert_int_equal(hand_overs, 1);
	at(damage, UNMODELLED, 0, 0, 1);
	assert_true(check("a hand-over in the last period", damage, 0) > 0);
	assert_int_equal(hand_overs, 1);
}

/* All kinds in one trace. */
static void test_mixed(void **state)
{
	enum damage damage[PERIODS] = { 0 };

	(void)state;
	damage[1] = BAD_STATUS;
	damage[4] = OVERFLOW;
	damage[6] = BAD_STATUS;
	damage[9] = BAD_PACKET;
	damage[11] = BAD_STATUS;
	damage[13] = BAD_PACKET;
	assert_true(check("bad status updates, an overflow and bad packets", damage, 5) > 0);
	damage[7] = UNMODELLED;
	assert_true(check("all kinds and a hand-over", damage, 5) > 0);
	assert_int_equal(hand_overs, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_status),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_bad_packet),
		cmocka_unit_test(test_bad_packets_in_a_row),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_hand_over),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
