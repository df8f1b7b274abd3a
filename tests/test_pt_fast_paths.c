/* The fast path's memoised paths on hand-assembled code, whose semantics fix the expected
 * values (written out below).
 * - The TNT payload cache of returned blocks (decoder/pt_fast_block_paths.h): the blocks,
 *   bits and return-stack operations of a path are those the code fixes, a path ends before
 *   what it cannot follow from its key alone, a second lookup is a hit, new code elsewhere
 *   (a new code map version) keeps the path, and new code on it is followed anew.
 * - The counting path's TIP paths (decoder/pt_fast_payloads.h, JF_PAYLOAD_TO_TIP): from an
 *   address, the blocks, instructions and return addresses up to the first branch that
 *   needs a TIP; a conditional branch ends the path before it (it needs a TNT bit, not a
 *   TIP); a second lookup is a hit and is not counted with the TNT payloads.
 * - The counting path's TNT payload cache keeps two paths whose slot is the same: both are
 *   hits when looked up in turn (as a loop running both looks them up).
 * Decoders using them are checked record by record against libipt's block decoder in
 * test_pt_fast (hand-encoded streams, and the real captures), test_decoder_batch and
 * fuzz_pt_decode. */
#include "test_support.h"

#include <string.h>

#include "jitflow/codemap.h"
#include "jitflow/insn.h"
#include "pt_fast_block_paths.h"
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

/* The code above in a map of its own, with the instruction cache and block table a path
 * cache is made over (end_on_jump as the decoder that would use it). */
struct fixture {
	struct jf_codemap *map;
	struct jf_insn_cache *insns;
	struct jf_fast_blocks *blocks;
	uint64_t gen;
};

static void fixture_new(struct fixture *fx, int end_on_jump)
{
	struct jf_error err = { "" };

	fx->map = jf_codemap_new();
	assert_int_equal(jf_codemap_add_bytes(fx->map, code, sizeof(code), 0x1000, "code", &err),
			 0);
	fx->insns = jf_insn_cache_new(fx->map);
	fx->blocks = jf_fast_blocks_new(fx->insns, fx->map, 6, end_on_jump);
	assert_non_null(fx->blocks);
	fx->gen = jf_codemap_generation(fx->map);
}

static void fixture_free(struct fixture *fx)
{
	jf_fast_blocks_free(fx->blocks);
	jf_insn_cache_free(fx->insns);
	jf_codemap_free(fx->map);
}

struct expected_block {
	uint64_t start, last;
	uint32_t ninsn;
	enum jf_fast_end end;
	int took_bit;
};

static void same_blocks(const struct jf_block_path *p, const struct expected_block *want,
			unsigned n)
{
	unsigned i;

	assert_int_equal(p->nblocks, n);
	for (i = 0; i < n; i++) {
		const struct jf_block b = jf_path_block_record(p, i);

		assert_int_equal(b.start, want[i].start);
		assert_int_equal(b.last, want[i].last);
		assert_int_equal(b.ninsn, want[i].ninsn);
		assert_int_equal(!!(p->blocks[i].path_flags & JF_PATH_GOES_ON),
				 want[i].end == JF_FAST_CONTINUE);
		/* ...and the rest of the block as its record has it */
		assert_int_equal(b.end, jf_fast_block_end(want[i].end));
		assert_int_equal(b.next, want[i].last + b.last_size);
		assert_int_equal(b.isa, JF_ISA_X86_64);
		assert_int_equal(b.flags, 0);
		assert_int_equal(!!(p->blocks[i].path_flags & JF_PATH_TOOK_BIT), want[i].took_bit);
	}
}

static void test_paths(void **state)
{
	static const struct expected_block taken3[] = {
		{ 0x1000, 0x1000, 1, JF_FAST_CALL, 0 },
		{ 0x1010, 0x1010, 1, JF_FAST_COND, 1 },   /* je taken */
		{ 0x1014, 0x1014, 1, JF_FAST_RETURN, 1 }, /* ret to the call on the path */
		{ 0x1005, 0x1005, 1, JF_FAST_COND, 1 },   /* jne taken */
	};
	static const struct expected_block taken_not[] = {
		{ 0x1005, 0x1005, 1, JF_FAST_COND, 1 },
		{ 0x1000, 0x1000, 1, JF_FAST_CALL, 0 },
		{ 0x1010, 0x1010, 1, JF_FAST_COND, 1 },   /* je not taken: on at 1012 */
	};
	static const struct expected_block jump[] = {
		{ 0x1007, 0x1007, 1, JF_FAST_JUMP, 0 },
	};
	static const struct expected_block after_change[] = {
		{ 0x1000, 0x1000, 1, JF_FAST_CALL, 0 },
		{ 0x1010, 0x1010, 1, JF_FAST_RETURN, 1 }, /* now a ret */
		{ 0x1005, 0x1005, 1, JF_FAST_COND, 1 },
		{ 0x1000, 0x1000, 1, JF_FAST_CALL, 0 },
		{ 0x1010, 0x1010, 1, JF_FAST_RETURN, 1 },
	};
	static const uint8_t ret[] = { 0xc3 };
	struct jf_error err = { "" };
	struct fixture fx;
	struct jf_block_paths *c;
	const struct jf_block_path *p;
	uint64_t gen, lookups, hits;

	(void)state;
	fixture_new(&fx, 1);
	c = jf_block_paths_new(fx.blocks, 6);
	assert_non_null(c);
	gen = fx.gen;

	/* T T T from 1000: call, je, the ret to that call, jne back to 1000. */
	p = jf_block_path_at(c, JF_ISA_X86_64, 0x1000, gen, 0x7, 3);
	same_blocks(p, taken3, 4);
	assert_int_equal(p->used, 3);
	assert_int_equal(p->end, 0x1000);
	assert_int_equal(p->nops, 2);
	assert_int_equal(jf_block_path_push(p, 0), 0x1005);
	assert_int_equal(p->pops, 0x2);
	/* Bits above nbits are not part of the key. */
	assert_ptr_equal(jf_block_path_at(c, JF_ISA_X86_64, 0x1000, gen, 0xff, 3), p);

	/* T N from 1005: the call's return address stays pushed. */
	p = jf_block_path_at(c, JF_ISA_X86_64, 0x1005, gen, 0x2, 2);
	same_blocks(p, taken_not, 3);
	assert_int_equal(p->used, 2);
	assert_int_equal(p->end, 0x1012);
	assert_int_equal(p->nops, 1);
	assert_int_equal(p->pops, 0);
	assert_int_equal(jf_block_path_push(p, 0), 0x1005);

	/* From 1012 (nop, nop, ret) the ret returns to a call made before the path: the caller's (no block). */
	p = jf_block_path_at(c, JF_ISA_X86_64, 0x1012, gen, 0x1, 1);
	assert_int_equal(p->nblocks, 0);
	assert_int_equal(p->used, 0);
	assert_int_equal(p->end, 0x1012);

	/* A jump, then an indirect jump that needs a TIP: the path ends there, no bit used. */
	p = jf_block_path_at(c, JF_ISA_X86_64, 0x1007, gen, 0x1, 1);
	same_blocks(p, jump, 1);
	assert_int_equal(p->used, 0);
	assert_int_equal(p->end, 0x100c);

	jf_block_paths_counts(c, &lookups, &hits);
	assert_int_equal(lookups, 5);
	assert_int_equal(hits, 1);

	/* New code elsewhere: a new code map version, but no byte of the path's blocks (nor
	 * next to them) changed, so the entry is kept, not followed again. */
	assert_int_equal(jf_codemap_add_bytes(fx.map, ret, sizeof(ret), 0x1030, "away", &err), 0);
	gen = jf_codemap_generation(fx.map);
	p = jf_block_path_at(c, JF_ISA_X86_64, 0x1000, gen, 0x7, 3);
	same_blocks(p, taken3, 4);
	assert_int_equal(p->gen, gen);
	assert_int_equal(jf_block_paths_kept(c), 1);

	/* A ret where the je was: a new code map version, followed anew. */
	assert_int_equal(jf_codemap_add_bytes(fx.map, ret, sizeof(ret), 0x1010, "new", &err), 0);
	assert_true(jf_codemap_generation(fx.map) != gen);
	gen = jf_codemap_generation(fx.map);
	p = jf_block_path_at(c, JF_ISA_X86_64, 0x1000, gen, 0x7, 3);
	same_blocks(p, after_change, 5);
	assert_int_equal(p->used, 3);
	assert_int_equal(p->end, 0x1005);
	assert_int_equal(p->nops, 4);
	assert_int_equal(p->pops, 0xa);
	assert_int_equal(jf_block_path_push(p, 0), 0x1005);
	assert_int_equal(jf_block_path_push(p, 2), 0x1005);
	jf_block_paths_counts(c, &lookups, &hits);
	assert_int_equal(hits, 1);
	assert_int_equal(jf_block_paths_kept(c), 1);

	jf_block_paths_free(c);
	fixture_free(&fx);
}

static void test_tip_paths(void **state)
{
	struct fixture fx;
	struct jf_payloads *c;
	const struct jf_payload_path *p;
	uint64_t gen, lookups, hits;

	(void)state;
	fixture_new(&fx, 0);
	c = jf_payloads_new(fx.blocks, 6);
	assert_non_null(c);
	gen = fx.gen;

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
	fixture_free(&fx);
}

/* Walks kept by pt_fast.c's walk_to: found again by their start, end, kind and code
 * version alone. */
static void test_walks(void **state)
{
	struct fixture fx;
	struct jf_payloads *c;
	const struct jf_payload_path *p;
	const uint64_t push[1] = { 0x1005 };

	(void)state;
	fixture_new(&fx, 0);
	c = jf_payloads_new(fx.blocks, 6);
	assert_non_null(c);

	/* Not kept yet. */
	assert_null(jf_payload_walk_at(c, JF_ISA_X86_64, 0x1000, fx.gen, 0x1010, 2));
	/* The call at 1000 pushes 1005 and goes to 1010: one instruction. */
	jf_payload_walk_keep(c, JF_ISA_X86_64, 0x1000, fx.gen, 0x1010, 2, 0x1010, 1, push, 1);
	p = jf_payload_walk_at(c, JF_ISA_X86_64, 0x1000, fx.gen, 0x1010, 2);
	assert_non_null(p);
	assert_int_equal(p->end, 0x1010);
	assert_int_equal(p->insns, 1);
	assert_int_equal(p->nops, 1);
	assert_int_equal(p->pops, 0);
	assert_int_equal(p->push[0], 0x1005);
	/* Another end, kind, mode or code version is another walk. */
	assert_null(jf_payload_walk_at(c, JF_ISA_X86_64, 0x1000, fx.gen, 0x1012, 2));
	assert_null(jf_payload_walk_at(c, JF_ISA_X86_64, 0x1000, fx.gen, 0x1010, 3));
	assert_null(jf_payload_walk_at(c, JF_ISA_X86_32, 0x1000, fx.gen, 0x1010, 2));
	assert_null(jf_payload_walk_at(c, JF_ISA_X86_64, 0x1000, fx.gen + 1, 0x1010, 2));

	jf_payloads_free(c);
	fixture_free(&fx);
}

/* Two keys of payload paths from the code's addresses whose slot in c's table is the same
 * (the table is small: among a few dozen keys two share one). */
struct path_key {
	uint64_t ip, bits;
	unsigned nbits;
};

static void colliding_keys(const struct jf_payloads *c, struct path_key *a, struct path_key *b)
{
	static const uint64_t ips[] = { 0x1000, 0x1005, 0x1010, 0x1012 };
	struct path_key keys[64];
	unsigned n = 0, i, j, nbits;
	uint64_t bits;

	for (i = 0; i < sizeof(ips) / sizeof(ips[0]); i++) {
		for (nbits = 1; nbits <= 3; nbits++) {
			for (bits = 0; bits < (1u << nbits) && n < 64; bits++)
				keys[n++] = (struct path_key){ ips[i], bits, nbits };
		}
	}
	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			if (jf_fast_table_payload_slot(&c->c.table, keys[i].ip, keys[i].bits,
						       keys[i].nbits) ==
			    jf_fast_table_payload_slot(&c->c.table, keys[j].ip, keys[j].bits,
						       keys[j].nbits)) {
				*a = keys[i];
				*b = keys[j];
				return;
			}
		}
	}
	fail_msg("no two keys share a slot");
}

static void test_colliding_paths(void **state)
{
	struct fixture fx;
	struct jf_payloads *c;
	const struct jf_payload_path *pa, *pb;
	struct path_key a, b;
	uint64_t lookups, hits;

	(void)state;
	fixture_new(&fx, 0);
	c = jf_payloads_new(fx.blocks, 6);
	assert_non_null(c);
	colliding_keys(c, &a, &b);

	pa = jf_payload_path_at(c, JF_ISA_X86_64, a.ip, fx.gen, a.bits, a.nbits);
	pb = jf_payload_path_at(c, JF_ISA_X86_64, b.ip, fx.gen, b.bits, b.nbits);
	assert_int_equal(pb->start, b.ip);
	/* Looked up in turn, both are found: neither followed the other out. */
	pa = jf_payload_path_at(c, JF_ISA_X86_64, a.ip, fx.gen, a.bits, a.nbits);
	assert_int_equal(pa->start, a.ip);
	assert_int_equal(pa->bits, a.bits);
	assert_int_equal(pa->nbits, a.nbits);
	pb = jf_payload_path_at(c, JF_ISA_X86_64, b.ip, fx.gen, b.bits, b.nbits);
	assert_int_equal(pb->start, b.ip);
	assert_int_equal(pb->bits, b.bits);
	assert_int_equal(pb->nbits, b.nbits);
	jf_payloads_counts(c, &lookups, &hits);
	assert_int_equal(lookups, 4);
	assert_int_equal(hits, 2);

	jf_payloads_free(c);
	fixture_free(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_tip_paths),
		cmocka_unit_test(test_walks),
		cmocka_unit_test(test_colliding_paths),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
