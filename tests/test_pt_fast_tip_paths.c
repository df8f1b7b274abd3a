/* The counting path's TIP paths (decoder/pt_fast_payloads.h, JF_PAYLOAD_TO_TIP) on
 * hand-assembled code: from an address, the blocks, instructions and return addresses up
 * to the first branch that needs a TIP are those the code's semantics fix (written out
 * below); a conditional branch ends the path before it (it needs a TNT bit, not a TIP); a
 * second lookup is a hit and is not counted with the TNT payloads. The counting decoder
 * using them is checked against libipt's block decoder in test_pt_fast (hand-encoded
 * streams and the real captures) and by fuzz_pt_decode. */
#include "test_support.h"

#include "jitflow/codemap.h"
#include "jitflow/insn.h"
#include "pt_fast_payloads.h"

static const uint8_t code[] = {
	0xe8, 0x0b, 0x00, 0x00, 0x00, /* 1000: call 1010 */
	0x75, 0xf9,                   /* 1005: jne 1000 */
	0xeb, 0x03,                   /* 1007: jmp 100c */
	0x90, 0x90, 0x90,             /* 1009-100b: nop */
	0xff, 0xe0,                   /* 100c: jmp rax */
	0x90, 0x90,                   /* 100e-100f: nop */
	0x74, 0x02,                   /* 1010: je 1014 */
	0x90, 0x90,                   /* 1012-1013: nop */
	0xc3,                         /* 1014: ret */
	0x90, 0x90, 0x90,             /* 1015-1017: nop */
	0xe8, 0x02, 0x00, 0x00, 0x00, /* 1018: call 101f */
	0x90, 0x90,                   /* 101d-101e: nop */
	0xff, 0xd0,                   /* 101f: call rax */
};

static void test_tip_paths(void **state)
{
	struct jf_error err = { "" };
	struct jf_codemap *map = jf_codemap_new();
	struct jf_insn_cache *insns;
	struct jf_fast_blocks *blocks;
	struct jf_payloads *c;
	const struct jf_payload_path *p;
	uint64_t gen, lookups, hits;

	(void)state;
	assert_int_equal(jf_codemap_add_bytes(map, code, sizeof(code), 0x1000, "code", &err), 0);
	insns = jf_insn_cache_new(map);
	blocks = jf_fast_blocks_new(insns, map, 6, 0);
	c = jf_payloads_new(blocks, 6);
	assert_non_null(c);
	gen = jf_codemap_generation(map);

	/* A direct jump is followed inside the block; jmp rax needs the TIP: reached. */
	p = jf_payload_tip_path_at(c, JF_ISA_X86_64, 0x1007, gen);
	assert_int_equal(p->used, 1);
	assert_int_equal(p->blocks, 1);
	assert_int_equal(p->insns, 2);
	assert_int_equal(p->nops, 0);
	assert_ptr_equal(jf_payload_tip_path_at(c, JF_ISA_X86_64, 0x1007, gen), p);

	/* The call pushes 1005; je needs a TNT bit: the path stops before it. */
	p = jf_payload_tip_path_at(c, JF_ISA_X86_64, 0x1000, gen);
	assert_int_equal(p->used, 0);
	assert_int_equal(p->blocks, 1);
	assert_int_equal(p->insns, 1);
	assert_int_equal(p->end, 0x1010);
	assert_int_equal(p->nops, 1);
	assert_int_equal(p->pops, 0);
	assert_int_equal(p->push[0], 0x1005);

	/* nop, nop, ret: a return without a TNT bit takes the TIP (nothing popped). */
	p = jf_payload_tip_path_at(c, JF_ISA_X86_64, 0x1012, gen);
	assert_int_equal(p->used, 1);
	assert_int_equal(p->blocks, 1);
	assert_int_equal(p->insns, 3);
	assert_int_equal(p->nops, 0);

	/* nops, a call (pushes 101d), then call rax (pushes 1021) needs the TIP. */
	p = jf_payload_tip_path_at(c, JF_ISA_X86_64, 0x1015, gen);
	assert_int_equal(p->used, 1);
	assert_int_equal(p->blocks, 2);
	assert_int_equal(p->insns, 5);
	assert_int_equal(p->nops, 2);
	assert_int_equal(p->pops, 0);
	assert_int_equal(p->push[0], 0x101d);
	assert_int_equal(p->push[1], 0x1021);

	/* No TNT payload was looked up. */
	jf_payloads_counts(c, &lookups, &hits);
	assert_int_equal(lookups, 0);
	assert_int_equal(hits, 0);

	/* A TNT payload from the same address is another entry. */
	p = jf_payload_path_at(c, JF_ISA_X86_64, 0x1000, gen, 0x1, 1);
	assert_int_equal(p->nbits, 1);
	assert_int_equal(p->used, 1);
	p = jf_payload_tip_path_at(c, JF_ISA_X86_64, 0x1000, gen);
	assert_int_equal(p->nbits, JF_PAYLOAD_TO_TIP);
	assert_int_equal(p->end, 0x1010);

	jf_payloads_free(c);
	jf_fast_blocks_free(blocks);
	jf_insn_cache_free(insns);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tip_paths),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
