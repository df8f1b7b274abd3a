/* The fast path decoding ahead over code that may still change (pt_fast_optimism.c),
 * against libipt's block decoder, the consumer changing the code between two records of
 * one stretch.
 *
 * A function at X runs in a loop (jmp rax back to X+1, a TIP each time), a PSB period
 * after another; the code map says that its bytes may change until the consumer patches
 * them, which it does after record PATCH_AT, in the middle of a stretch the fast path has
 * decoded whole with the bytes before the patch. libipt's block decoder decodes each block
 * when it is asked for it: from the patch on, its blocks are the patched code's. So must
 * the fast path's be: it checks the block of each record decoded ahead when it returns it,
 * and where it changed decodes the stretch again from there (a rollback). Records are
 * taken one by one (jf_decoder_next) or in batches (jf_decoder_next_batch, as the
 * session's count gate takes them). After a hand-over, the fast decoder that takes over
 * again where its records join the block decoder's decodes such code ahead too. */
#include "pt_builder.h"
#include "test_support.h"

#include <string.h>

#include "jitflow/pt_fast.h"

enum { X = 0x7f0000001000ull, LOOPS = 300, STRETCHES = 4, PATCH_AT = LOOPS + LOOPS / 2 };

/* X+1: nop x4; jmp rax (back to X+1), a byte of the function on each side. */
static const uint8_t code[] = { 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xe0, 0x90 };
/* The patch: the 2nd nop and the 3rd a jmp to the 4th (two blocks, not one). */
static const uint8_t patched[] = { 0x90, 0x90, 0xeb, 0x00, 0x90, 0xff, 0xe0, 0x90 };
/* A patch the fast path does not model: the 2nd nop a byte that is no instruction in
 * 64-bit mode for capstone (libipt's block decoder takes it for a one-byte one: its
 * blocks keep their shape). */
static const uint8_t broken[] = { 0x90, 0x90, 0x06, 0x90, 0x90, 0xff, 0xe0, 0x90 };

struct change {
	struct jf_codemap *map;
	const uint8_t *patch;
	int applied;
};

/* X's bytes may change until the patch is applied; nothing else will. */
static int pending(void *ctx, uint64_t vaddr, uint64_t size)
{
	const struct change *c = ctx;

	return !c->applied && vaddr < X + sizeof(code) && vaddr + size > X;
}

static void apply(struct change *c)
{
	struct jf_error err = { "" };

	assert_int_equal(jf_codemap_add_bytes(c->map, c->patch, sizeof(code), X, "f", &err), 0);
	c->applied = 1;
}

enum { MAX_FLOWS = 3 * STRETCHES * LOOPS + 64 };

/* The next record, one by one or from a batch (*batch, *left: what is left of it). */
static int next(struct jf_decoder *dec, int batched, const struct jf_flow **batch, size_t *left,
		struct jf_flow *out)
{
	struct jf_error err = { "" };
	int rc;

	if (!batched) {
		rc = jf_decoder_next(dec, out, &err);
		assert_true(rc >= 0);
		return rc;
	}
	if (!*left) {
		rc = jf_decoder_next_batch(dec, batch, left, &err);
		assert_true(rc >= 0);
		if (rc == 0)
			return 0;
		assert_true(*left > 0);
	}
	*out = **batch;
	++*batch;
	--*left;
	return 1;
}

/* Every record of b, patch (if any) applied after record PATCH_AT; the fast path's
 * report. */
static size_t decode_trace(struct jf_ptb *b, int fast, int batched, const uint8_t *patch,
			   struct jf_flow *out, struct jf_pt_fast_report *rep)
{
	struct change c = { jf_codemap_new(), patch, 0 };
	struct jf_error err = { "" };
	const struct jf_flow *batch = NULL;
	struct jf_decoder *dec;
	struct jf_pt_config pc;
	size_t n = 0, left = 0;

	assert_int_equal(jf_codemap_add_bytes(c.map, code, sizeof(code), X, "f", &err), 0);
	jf_codemap_set_pending(c.map, pending, &c);
	memset(&pc, 0, sizeof(pc));
	pc.trace = jf_ptb_bytes(b);
	pc.size = jf_ptb_size(b);
	pc.end_on_call = pc.end_on_jump = pc.join_cache_splits = 1;
	pc.decode_ahead_changing = 1;
	dec = fast ? jf_pt_fast_decoder_new(&pc, c.map, &err) : jf_pt_decoder_new(&pc, c.map, &err);
	if (!dec)
		fail_msg("%s", err.msg);
	while (next(dec, batched, &batch, &left, &out[n]) > 0) {
		if (out[n].kind == JF_FLOW_ERROR && patch == patched)
			fail_msg("%s: error at %llu: %s", fast ? "fast" : "block decoder",
				 (unsigned long long)out[n].offset, out[n].u.error.text);
		if (n++ == PATCH_AT && patch)
			apply(&c);
		assert_true(n < MAX_FLOWS);
	}
	jf_pt_fast_counter_report(dec, rep);
	jf_decoder_free(dec);
	jf_codemap_free(c.map);
	return n;
}

static size_t decode(int fast, int batched, const uint8_t *patch, struct jf_flow *out,
		     struct jf_pt_fast_report *rep)
{
	struct jf_ptb *b = jf_ptb_tip_loop(X + 1, STRETCHES, LOOPS);
	size_t n = decode_trace(b, fast, batched, patch, out, rep);

	jf_ptb_free(b);
	return n;
}

/* The fast path's records, patch applied, against the block decoder's; its report. */
static void compare(int batched, const uint8_t *patch, struct jf_pt_fast_report *rep)
{
	static struct jf_flow fast[MAX_FLOWS], blk[MAX_FLOWS];
	struct jf_pt_fast_report none;
	size_t n, m, i, after_patch = 0;

	n = decode(1, batched, patch, fast, rep);
	m = decode(0, batched, patch, blk, &none);
	for (i = 0; i < n && i < m; i++) {
		if (!jf_flow_same(&fast[i], &blk[i]))
			fail_msg("record %zu differs: kind %u at 0x%llx (%u insns), block decoder's "
				 "kind %u at 0x%llx (%u insns)", i, fast[i].kind,
				 (unsigned long long)fast[i].ip, fast[i].u.block.ninsn, blk[i].kind,
				 (unsigned long long)blk[i].ip, blk[i].u.block.ninsn);
		after_patch += i > PATCH_AT && blk[i].kind == JF_FLOW_BLOCK &&
			       blk[i].u.block.start == X + 1 && blk[i].u.block.ninsn != 5;
	}
	assert_int_equal(n, m);
	/* The patch came in the middle of the second stretch: the block decoder's blocks
	 * are the patch's from there. */
	assert_true(after_patch > 0 || patch == broken);
	assert_int_equal(rep->is_fast, 1);
	assert_true(rep->changing_stretches >= 2);
	assert_int_equal(rep->rollbacks, 1);
}

static void expect_rollback(int batched)
{
	struct jf_pt_fast_report rep;

	compare(batched, patched, &rep);
	assert_int_equal(rep.hand_overs, 0);
	assert_int_equal(rep.rollback_fallbacks, 0);
}

static void test_one_by_one(void **state)
{
	(void)state;
	expect_rollback(0);
}

static void test_in_batches(void **state)
{
	(void)state;
	expect_rollback(1);
}

/* Decoded again, the stretch meets code the fast path does not model (the error): the
 * block decoder from the start takes over, past the records returned. */
static void test_fall_back(void **state)
{
	struct jf_pt_fast_report rep;

	(void)state;
	compare(0, broken, &rep);
	assert_int_equal(rep.rollback_fallbacks, 1);
}

/* A hand-over (the PTWRITE: libipt's block decoder's) while X may still change, the
 * change never applied: the fast decoder started at the PSB after that stretch decodes X
 * ahead as the fast path does, its records compared with the block decoder's as those
 * are returned, and takes over there, the records those of the block decoder alone (a
 * join attempt that took no code that may change stopped at X, every PSB after: the block
 * decoder kept the rest of the trace). */
static void test_join_over_code_that_may_change(void **state)
{
	static struct jf_flow fast[MAX_FLOWS], blk[MAX_FLOWS];
	struct jf_ptb *b = jf_ptb_tip_loop_ptw(X + 1, STRETCHES, LOOPS, 1);
	struct jf_pt_fast_report rep, none;
	size_t n, i;

	(void)state;
	n = decode_trace(b, 1, 0, NULL, fast, &rep);
	assert_int_equal(decode_trace(b, 0, 0, NULL, blk, &none), n);
	for (i = 0; i < n; i++)
		if (!jf_flow_same(&fast[i], &blk[i]))
			fail_msg("record %zu (offset 0x%llx) differs from the block decoder's", i,
				 (unsigned long long)blk[i].offset);
	assert_int_equal(rep.is_fast, 1);
	assert_int_equal(rep.hand_overs, 1);
	assert_int_equal(rep.resumes, 1);
	/* The stretches after the one joined in are the fast path's (3 bytes a TIP). */
	assert_true(rep.fast_bytes >= (uint64_t)(STRETCHES - 3) * LOOPS * 3);
	jf_ptb_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_by_one),
		cmocka_unit_test(test_in_batches),
		cmocka_unit_test(test_fall_back),
		cmocka_unit_test(test_join_over_code_that_may_change),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
