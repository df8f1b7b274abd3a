/* decoder/pt_tip_scan.c: which stretches of a trace hold an IP-suppressed TIP, as far as one
 * call of libipt's block decoder reads (to the next PSB). Streams written with libipt's
 * encoder; the answers follow from where the packets were put. */
#include "test_support.h"
#include "pt_builder.h"

#include "pt_tip_scan.h"

/* PSB, PSBEND, then a TIP with the IP given. */
static void stretch(struct jf_ptb *b, enum pt_ip_compression ipc)
{
	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	jf_ptb_tnt(b, "TN");
	jf_ptb_tip(b, ipc, 0x400000);
	jf_ptb_tnt(b, "T");
}

static void test_stretches(void **state)
{
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_tip_scan *s;
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

	s = jf_pt_tip_scan_new(jf_ptb_bytes(b), jf_ptb_size(b), 0);
	assert_non_null(s);
	assert_false(jf_pt_tip_scan_ahead(s, 0));        /* stretch 1 */
	assert_true(jf_pt_tip_scan_ahead(s, psb2));      /* from stretch 2's PSB */
	assert_true(jf_pt_tip_scan_ahead(s, tnt1));
	assert_true(jf_pt_tip_scan_ahead(s, tip1));      /* at the TIP: not read yet */
	assert_false(jf_pt_tip_scan_ahead(s, tip1 + 1)); /* past it */
	assert_false(jf_pt_tip_scan_ahead(s, psb3));     /* stretch 3 */
	assert_true(jf_pt_tip_scan_ahead(s, psb4));      /* stretch 4, from its PSB */
	assert_false(jf_pt_tip_scan_ahead(s, end));
	jf_pt_tip_scan_free(s);

	/* Started at a later PSB, and asked from before the TIP's PSB: the PSB between ends
	 * the decoder's call first. */
	s = jf_pt_tip_scan_new(jf_ptb_bytes(b), jf_ptb_size(b), psb3);
	assert_non_null(s);
	assert_false(jf_pt_tip_scan_ahead(s, psb3));
	assert_true(jf_pt_tip_scan_ahead(s, psb4));
	jf_pt_tip_scan_free(s);
	jf_ptb_free(b);
}

/* A bad packet before the TIP: the scan goes on from the next PSB, which is the TIP's. */
static void test_after_a_bad_packet(void **state)
{
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_tip_scan *s;
	uint64_t bad, psb2;

	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	bad = jf_ptb_offset(b);
	jf_ptb_pad(b);
	jf_ptb_pad(b);
	jf_ptb_bytes_mut(b)[bad] = 0x02; /* an extended opcode... */
	jf_ptb_bytes_mut(b)[bad + 1] = 0xff; /* ...that libipt does not know */
	psb2 = jf_ptb_offset(b);
	stretch(b, pt_ipc_suppressed);
	s = jf_pt_tip_scan_new(jf_ptb_bytes(b), jf_ptb_size(b), 0);
	assert_non_null(s);
	assert_false(jf_pt_tip_scan_ahead(s, bad));
	assert_true(jf_pt_tip_scan_ahead(s, psb2));
	jf_pt_tip_scan_free(s);
	jf_ptb_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stretches),
		cmocka_unit_test(test_after_a_bad_packet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
