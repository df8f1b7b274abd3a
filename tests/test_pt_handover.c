/* Where the fast path (jf_pt_fast_decoder_new) hands over to libipt's block decoder
 * (decoder/pt_fast_handover.c): from the PSB before the stretch it could not decode when
 * that decoder's records agree with the ones returned, else from the trace's start. The
 * oracle is libipt's block decoder over the whole trace: every record must be its. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jitflow/pt.h"
#include "jitflow/pt_fast.h"
#include "flow_check.h"
#include "pt_builder.h"
#include "test_support.h"

/* 1000: call 1010; 1005: jne 1000; 1007: jmp 100b; 100b: jmp rax; 1010: je 1013;
 * 1012: nop; 1013: ret */
static const uint8_t call_loop[] = {
	0xe8, 0x0b, 0x00, 0x00, 0x00, 0x75, 0xf9, 0xeb, 0x02, 0x90, 0x90,
	0xff, 0xe0, 0x90, 0x90, 0x90, 0x74, 0x01, 0x90, 0xc3,
};

/* More code beside the loop, and what the test does after each pair of equal records. */
struct scene {
	const uint8_t *code;
	size_t size;
	uint64_t at;
	void (*after)(const struct jf_flow *record, void *ctx);
	void *ctx;
};

/* The fast decoder's records against the block decoder's, each over its own map of the
 * code (libipt's block cache lives in the image), with the scene's code and changes if
 * given (maps[0] the fast one's, maps[1] the block decoder's, for its `after`); returns
 * how the fast one handed over. */
static struct jf_pt_fast_report compare_in(const char *what, struct jf_ptb *b,
					   const struct scene *sc, struct jf_codemap **maps)
{
	struct jf_codemap *map = jf_ptb_codemap(call_loop, sizeof(call_loop), 0x1000);
	struct jf_codemap *ref_map = jf_ptb_codemap(call_loop, sizeof(call_loop), 0x1000);
	struct jf_pt_config cfg;
	struct jf_error err = { "" };
	struct jf_decoder *fast, *ref;
	struct jf_pt_fast_report rep;
	const struct jf_decode_stats *st;

	if (sc) {
		assert_int_equal(jf_codemap_add_bytes(map, sc->code, sc->size, sc->at, "r", &err), 0);
		assert_int_equal(jf_codemap_add_bytes(ref_map, sc->code, sc->size, sc->at, "r", &err),
				 0);
		maps[0] = map;
		maps[1] = ref_map;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.trace = jf_ptb_bytes(b);
	cfg.size = jf_ptb_size(b);
	cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	fast = jf_pt_fast_decoder_new(&cfg, map, &err);
	ref = jf_pt_decoder_new(&cfg, ref_map, &err);
	jf_check_same_flows_with(what, fast, ref, sc ? sc->after : NULL, sc ? sc->ctx : NULL);
	jf_pt_fast_counter_report(fast, &rep);
	st = jf_decoder_stats(ref);
	printf("%s: the same %llu blocks and %llu events (%llu errors); handed over at %lld, "
	       "the block decoder from %lld\n", what, (unsigned long long)st->blocks,
	       (unsigned long long)st->events, (unsigned long long)st->errors,
	       (long long)rep.fallback_at, (long long)rep.block_decoder_from);
	jf_decoder_free(fast);
	jf_decoder_free(ref);
	jf_codemap_free(map);
	jf_codemap_free(ref_map);
	return rep;
}

static struct jf_pt_fast_report compare(const char *what, struct jf_ptb *b)
{
	return compare_in(what, b, NULL, NULL);
}

/* k turns of the loop from 1000 back to 1000: call, je, the ret (compressed), jne taken.
 * Four blocks each, with end_on_call. */
static void turns(struct jf_ptb *b, int k)
{
	int i;

	for (i = 0; i < k; i++)
		jf_ptb_tnt(b, i % 2 ? "TTT" : "NTT");
}

/* A PSB+ at 1000 (tracing on), returning its offset. */
static uint64_t psb_at_loop(struct jf_ptb *b)
{
	uint64_t at = jf_ptb_offset(b);

	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_fup(b, pt_ipc_sext_48, 0x1000);
	jf_ptb_psbend(b);
	return at;
}

/* A bad packet in the fifth stretch: the block decoder takes over at its PSB, started at
 * the fourth's, whose records it gives again; the error and what follows are its. */
static void test_from_psb_before(void **state)
{
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_fast_report rep;
	uint64_t psb[6];
	int s;

	(void)state;
	for (s = 0; s < 6; s++) {
		psb[s] = psb_at_loop(b);
		turns(b, 8);
		if (s == 4)
			jf_ptb_bad_packet(b);
	}
	rep = compare("bad packet in the fifth stretch", b);
	assert_int_equal(rep.fallback_at, (int64_t)psb[4]);
	assert_int_equal(rep.block_decoder_from, (int64_t)psb[3]);
	jf_ptb_free(b);
}

/* A stretch before the one handed over too short to show the state by joining its
 * records (fewer than 16): the block decoder decodes from the PSB before all the same,
 * and finds its place by the records returned last, not from the trace's start. */
static void test_short_stretch_before(void **state)
{
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_fast_report rep;
	uint64_t psb[3];
	int s;

	(void)state;
	for (s = 0; s < 3; s++) {
		psb[s] = psb_at_loop(b);
		turns(b, s == 1 ? 2 : 8);
		if (s == 2)
			jf_ptb_bad_packet(b);
	}
	rep = compare("short stretch before", b);
	assert_int_equal(rep.fallback_at, (int64_t)psb[2]);
	assert_int_equal(rep.block_decoder_from, (int64_t)psb[1]);
	jf_ptb_free(b);
}

/* Code the trace ran early on, rewritten after its records were returned (as a JIT
 * rewrites its code while a session decodes): 2000: eight NOPs and jmp rax (one block),
 * then jmp 2004 over two bytes (two blocks with end_on_jump). */
static const uint8_t straight_code[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
					 0xff, 0xe0 };
static const uint8_t rewritten_code[] = { 0xeb, 0x02, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
					  0xff, 0xe0 };

struct rewrite {
	struct jf_codemap *maps[2];
	uint64_t at; /* once the records reach this trace offset */
	int done;
};

static void rewrite_after(const struct jf_flow *record, void *ctx)
{
	struct rewrite *r = ctx;
	struct jf_error err = { "" };

	if (r->done || record->offset < r->at)
		return;
	for (int i = 0; i < 2; i++)
		assert_int_equal(jf_codemap_add_bytes(r->maps[i], rewritten_code,
						      sizeof(rewritten_code), 0x2000, "r", &err),
				 0);
	r->done = 1;
}

/* The code of the first stretch rewritten once its records were returned, with no pending
 * ranges to tell where (jf_codemap_set_pending): the fast path hands over at the next
 * stretch, the block decoder started at the PSB before does not decode the first stretch
 * as it was, so one from the trace's start takes over. Decoded again now, the first
 * stretch makes one block more: skipping the records returned by their number would
 * return one again and shift every record after it. The decoder from the start finds its
 * place by the records returned last (pt_fast_realign.c). */
static void test_from_start_over_changed_code(void **state)
{
	struct jf_ptb *b = jf_ptb_new();
	struct rewrite r = { { NULL, NULL }, 0, 0 };
	struct scene sc = { straight_code, sizeof(straight_code), 0x2000, rewrite_after, &r };
	struct jf_pt_fast_report rep;
	uint64_t psb[4];
	int s;

	(void)state;
	psb[0] = jf_ptb_offset(b);
	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_fup(b, pt_ipc_sext_48, 0x2000);
	jf_ptb_psbend(b);
	jf_ptb_tip(b, pt_ipc_sext_48, 0x1000); /* the jmp rax */
	turns(b, 8);
	for (s = 1; s < 4; s++) {
		psb[s] = psb_at_loop(b);
		turns(b, s == 1 ? 2 : 8);
		if (s == 2)
			jf_ptb_bad_packet(b);
	}
	r.at = psb[1];
	rep = compare_in("from the start over changed code", b, &sc, r.maps);
	assert_true(r.done);
	assert_int_equal(rep.fallback_at, (int64_t)psb[1]);
	assert_int_equal(rep.block_decoder_from, (int64_t)psb[0]);
	jf_ptb_free(b);
}

/* A compressed return, after the hand-over, to a call made before the PSB the block
 * decoder started at (a damaged trace: hardware compresses only returns to calls since
 * the last PSB). That decoder lacks the call and reports an error the one-thread decode
 * does not; the decode then goes on from a decoder from the start, which has it. Tracing
 * is off across that PSB so that the call stays on the stack. The hand-over itself: a
 * power entry (PWRE), which the packet path does not model. */
static void test_return_to_call_before(void **state)
{
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_fast_report rep;
	struct pt_packet pwre;
	uint64_t psb[5];
	int s;

	(void)state;
	for (s = 0; s < 3; s++) {
		psb[s] = psb_at_loop(b);
		turns(b, 8);
	}
	/* call 1010 runs, then tracing stops at the je: 1005 stays on the return stack */
	jf_ptb_fup(b, pt_ipc_sext_48, 0x1010);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	psb[3] = jf_ptb_offset(b);
	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, 0x1000);
	turns(b, 8);
	psb[4] = psb_at_loop(b);
	memset(&pwre, 0, sizeof(pwre));
	pwre.type = ppt_pwre;
	pwre.payload.pwre.state = 1;
	jf_ptb_packet(b, &pwre);
	turns(b, 4);
	jf_ptb_fup(b, pt_ipc_sext_48, 0x1000);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	/* on at the ret: it returns to 1005, the call before psb[3] */
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, 0x1013);
	jf_ptb_tnt(b, "TN"); /* ret, jne not taken: on to jmp rax */
	jf_ptb_tip(b, pt_ipc_sext_48, 0x1000);
	turns(b, 2);
	rep = compare("return to a call before the PSB before", b);
	assert_int_equal(rep.fallback_at, (int64_t)psb[4]);
	assert_int_equal(rep.block_decoder_from, 0);
	jf_ptb_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_psb_before),
		cmocka_unit_test(test_short_stretch_before),
		cmocka_unit_test(test_from_start_over_changed_code),
		cmocka_unit_test(test_return_to_call_before),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
