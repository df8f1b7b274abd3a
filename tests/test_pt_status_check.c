/* decoder/pt_status_check.c: the checks libipt 2.0 does not make, read ahead of the block
 * decoder. Which stretches of a trace hold an IP-suppressed TIP, as far as one call of
 * libipt's block decoder reads (to the next PSB), and inconsistencies found while reading
 * ahead, given only once the decoder passes them. Streams written with libipt's encoder;
 * the answers follow from where the packets were put. */
#include "test_support.h"
#include "pt_builder.h"

#include "pt_status_check.h"

/* PSB, PSBEND, then a TIP with the IP given. */
static void stretch(struct jf_ptb *b, enum pt_ip_compression ipc)
{
	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	jf_ptb_tnt(b, "TN");
	jf_ptb_tip(b, ipc, 0x400000);
	jf_ptb_tnt(b, "T");
}

/* A check over b's bytes, synchronised at its first PSB (offset 0). */
static struct jf_pt_check *check_from_start(const struct jf_ptb *b)
{
	struct jf_pt_check *s = jf_pt_check_new(jf_ptb_bytes(b), jf_ptb_size(b));

	assert_non_null(s);
	jf_pt_check_sync(s, 0);
	return s;
}

static void test_stretches(void **state)
{
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_check *s;
	uint64_t tnt1, tip1, psb2, psb3, psb4, end;

	stretch(b, pt_ipc_update_16);     /* stretch 1: a TIP with its IP */
	psb2 = jf_ptb_offset(b);
	jf_ptb_psb(b);                    /* stretch 2: suppressed TIP... */
	jf_ptb_psbend(b);
	tnt1 = jf_ptb_offset(b);
	jf_ptb_tnt(b, "TN");
	tip1 = jf_ptb_offset(b);
	jf_ptb_tip(b, pt_ipc_suppressed, 0);
	jf_ptb_tnt(b, "T");
	psb3 = jf_ptb_offset(b);
	stretch(b, pt_ipc_update_16);     /* stretch 3: none */
	jf_ptb_pad(b);
	psb4 = jf_ptb_offset(b);
	stretch(b, pt_ipc_suppressed);    /* stretch 4: suppressed TIP */
	end = jf_ptb_size(b);

	s = check_from_start(b);
	assert_false(jf_pt_check_suppressed_tip_ahead(s, 0)); /* stretch 1 */
	assert_true(jf_pt_check_suppressed_tip_ahead(s, psb2));      /* from stretch 2's PSB */
	assert_true(jf_pt_check_suppressed_tip_ahead(s, tnt1));
	assert_true(jf_pt_check_suppressed_tip_ahead(s, tip1));      /* at the TIP: not read yet */
	assert_false(jf_pt_check_suppressed_tip_ahead(s, tip1 + 1)); /* past it */
	assert_false(jf_pt_check_suppressed_tip_ahead(s, psb3));     /* stretch 3 */
	assert_true(jf_pt_check_suppressed_tip_ahead(s, psb4));      /* stretch 4, from its PSB */
	assert_false(jf_pt_check_suppressed_tip_ahead(s, end));

	/* Synchronised at a later PSB, and asked from before the TIP's PSB: the PSB between
	 * ends the decoder's call first. */
	jf_pt_check_sync(s, psb3);
	assert_false(jf_pt_check_suppressed_tip_ahead(s, psb3));
	assert_true(jf_pt_check_suppressed_tip_ahead(s, psb4));
	jf_pt_check_free(s);
	jf_ptb_free(b);
}

/* A bad packet: the packets after it are not followed until the decoder synchronises
 * again (it fails there), so any stretch after it may hold such a TIP; after the sync at
 * the next PSB, the TIP's stretch is found. */
static void test_after_a_bad_packet(void **state)
{
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_check *s;
	uint64_t bad, psb2;

	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	bad = jf_ptb_offset(b);
	jf_ptb_bad_packet(b);
	psb2 = jf_ptb_offset(b);
	stretch(b, pt_ipc_suppressed);
	s = check_from_start(b);
	assert_true(jf_pt_check_suppressed_tip_ahead(s, bad));
	jf_pt_check_sync(s, psb2);
	assert_true(jf_pt_check_suppressed_tip_ahead(s, psb2));
	jf_pt_check_free(s);
	jf_ptb_free(b);
}

/* A TIP.PGE while tracing is on, read ahead: given by jf_pt_check_advance only once the
 * decoder is past it, at its offset; until then the stretch after it may hold anything. */
static void test_inconsistency_found_ahead(void **state)
{
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_check *s;
	struct jf_pt_violation v;
	uint64_t tnt, pge;

	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, 0x400000);
	tnt = jf_ptb_offset(b);
	jf_ptb_tnt(b, "TT");
	pge = jf_ptb_offset(b);
	jf_ptb_tip_pge(b, pt_ipc_update_16, 0x400005);
	jf_ptb_tnt(b, "N");
	s = check_from_start(b);
	assert_false(jf_pt_check_advance(s, tnt, &v));
	assert_true(jf_pt_check_suppressed_tip_ahead(s, tnt)); /* stopped at the PGE */
	assert_false(jf_pt_check_advance(s, pge, &v));
	assert_true(jf_pt_check_advance(s, pge + 1, &v));
	assert_int_equal(v.offset, pge);
	assert_int_equal(v.code, -pte_bad_context);
	assert_false(jf_pt_check_advance(s, jf_ptb_size(b), &v)); /* given once */
	jf_pt_check_free(s);
	jf_ptb_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stretches),
		cmocka_unit_test(test_after_a_bad_packet),
		cmocka_unit_test(test_inconsistency_found_ahead),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
