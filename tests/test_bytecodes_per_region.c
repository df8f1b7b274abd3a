/* Bytecode ranges of code objects counted per region (JF_PC_MAP_PER_REGION) or summed
 * across regions, and HotSpot's grouping of them per nmethod (analysis/hotspot_methods.c).
 *
 * Two function regions, compile ids 11 and 12, whose maps name a method "outer" (the
 * region's own code object, id 1) and a method "inner" compiled inline (id 2), each range
 * of 4 one-byte instructions; two more regions, 13 and 14, with the same code objects but
 * without the flag. Zone records come from the real emitter through the real reader, the
 * flow is what a decoder reports for the blocks below; the expected counts follow from
 * the blocks' lengths. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hotspot_methods.h"
#include "jitflow/analysis.h"
#include "jitflow/emitter.h"
#include "jitflow/zone.h"
#include "jitflow/zone_format.h"

enum { CODE = 0x10000, REGION_SIZE = 0x100, OUTER = 1, INNER = 2 };

static uint8_t code[4 * REGION_SIZE];

static uint64_t region_addr(int i)
{
	return CODE + (uint64_t)i * REGION_SIZE;
}

/* Regions 0-3 (compile ids 11-14): outer bci 0 at +0, inner bci 5 at +4, inner bci 9 at
 * +8, no method's from +12. */
static void write_zone(char *path, size_t size)
{
	struct jf_pc_map_entry pcs[4] = {
		{ .code_offset = 0, .bytecode_pc = 0, .op_kind = OUTER },
		{ .code_offset = 4, .bytecode_pc = 5, .op_kind = INNER },
		{ .code_offset = 8, .bytecode_pc = 9, .op_kind = INNER },
		{ .code_offset = 12, .bytecode_pc = 0, .op_kind = 0 },
	};
	struct jf_emitter *em = jf_emitter_open(jf_test_tmpdir(),
						JF_EMIT_CLOCK_MONOTONIC | JF_EMIT_NO_MARKER_CALLS);
	struct jf_region r;
	int i;

	assert_non_null(em);
	memset(code, 0x90, sizeof(code));
	assert_true(jf_emit_code_object(em, OUTER, "Outer.run(I)I", "Outer.java", 3));
	assert_true(jf_emit_code_object(em, INNER, "Outer.inner(I)I", "Outer.java", 9));
	for (i = 0; i < 4; i++) {
		char name[64];

		snprintf(name, sizeof(name), "nmethod %d L1 Outer.run(I)I", 11 + i);
		memset(&r, 0, sizeof(r));
		r.name = name;
		r.addr = region_addr(i);
		r.code = code;
		r.size = REGION_SIZE;
		r.kind = JF_REGION_FUNCTION;
		r.trace_id = 11 + (uint64_t)i;
		r.code_object = OUTER;
		assert_true(jf_emit_region_load(em, &r));
		assert_true(jf_emit_pc_map_flags(em, r.addr, pcs, 4,
						 JF_PC_MAP_CODE_OBJECTS |
						 (i < 2 ? JF_PC_MAP_PER_REGION : 0)));
	}
	snprintf(path, size, "%s", jf_emitter_path(em));
	jf_emitter_close(em);
}

static void run_block(struct jf_analysis *a, uint64_t start, uint32_t ninsn)
{
	struct jf_flow f;

	memset(&f, 0, sizeof(f));
	f.kind = JF_FLOW_BLOCK;
	f.ip = start;
	f.u.block.start = start;
	f.u.block.last = start + ninsn - 1;
	f.u.block.ninsn = ninsn;
	f.u.block.next = start + ninsn;
	f.u.block.last_size = 1;
	f.u.block.end = JF_END_RETURN;
	f.u.block.isa = JF_ISA_X86_64;
	assert_int_equal(jf_analysis_flow(a, &f), 0);
}

static uint64_t row(const struct jf_analysis_result *r, uint64_t key, uint32_t from, uint32_t to)
{
	size_t i;

	for (i = 0; i < r->nbytecodes; i++)
		if (r->bytecodes[i].region_key == key && r->bytecodes[i].pc_from == from &&
		    r->bytecodes[i].pc_to == to)
			return r->bytecodes[i].insns;
	return 0;
}

static void test_ranges_are_counted_per_region_when_the_map_says_so(void **state)
{
	char path[512];
	struct jf_zone_reader *reader;
	struct jf_zone_record rec;
	struct jf_error err;
	struct jf_codemap *map = jf_codemap_new();
	struct jf_analysis *a;
	struct jf_analysis_result r;
	struct jf_hotspot_method *m;
	size_t n;
	int i;

	(void)state;
	write_zone(path, sizeof(path));
	assert_int_equal(jf_codemap_add_bytes(map, code, sizeof(code), CODE, "jit", &err), 0);
	a = jf_analysis_new(&(struct jf_analysis_config){ .map = map });
	assert_non_null(a);
	assert_int_equal(jf_zone_reader_open(&reader, path, &err), 0);
	while (jf_zone_next(reader, &rec, &err) > 0)
		assert_int_equal(jf_analysis_zone_record(a, reader, &rec), 0);
	/* Each region: outer's 4, inner's 4 + 4, then 2 of no method's; regions 0 and 2
	 * twice. */
	for (i = 0; i < 4; i++) {
		run_block(a, region_addr(i), 14);
		if (i % 2 == 0)
			run_block(a, region_addr(i), 14);
	}
	assert_int_equal(jf_analysis_result(a, &r), 0);
	/* per region: compile id 11's inner 5->9 ran twice, 12's once */
	assert_int_equal(row(&r, JF_BYTECODE_CODE_OBJECT | 11ull << 16 | INNER, 5, 9), 8);
	assert_int_equal(row(&r, JF_BYTECODE_CODE_OBJECT | 12ull << 16 | INNER, 5, 9), 4);
	assert_int_equal(row(&r, JF_BYTECODE_CODE_OBJECT | 11ull << 16 | OUTER, 0, 0), 8);
	/* summed: regions 13 (twice) and 14 (once) in one row */
	assert_int_equal(row(&r, JF_BYTECODE_CODE_OBJECT | INNER, 5, 9), 12);
	assert_int_equal(row(&r, JF_BYTECODE_CODE_OBJECT | INNER, 9, 9), 12);
	assert_int_equal(JF_BYTECODE_REGION_OF(JF_BYTECODE_CODE_OBJECT | 12ull << 16 | INNER), 12);
	assert_int_equal(JF_BYTECODE_CODE_OBJECT_ID(JF_BYTECODE_CODE_OBJECT | 12ull << 16 | INNER),
			 INNER);

	/* HotSpot's grouping: the two per-region nmethods, each with outer (its own) and
	 * inner (inlined); the 2 instructions after the last entry are no method's. */
	assert_int_equal(jf_hotspot_methods(&r, &m, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(m[0].trace->trace_id, 11);
	assert_int_equal(m[0].nframes, 2);
	assert_false(m[0].frames[0].inlined);
	assert_int_equal(m[0].frames[0].insns, 8);
	assert_true(m[0].frames[1].inlined);
	assert_int_equal(m[0].frames[1].insns, 16);
	assert_int_equal(m[0].trace->insns - m[0].mapped, 4);
	assert_string_equal(r.bytecodes[m[0].frames[1].first].code_name, "Outer.inner(I)I");
	assert_int_equal(m[1].trace->trace_id, 12);
	assert_int_equal(m[1].frames[1].insns, 8);
	free(m);
	jf_analysis_result_free(&r);
	jf_analysis_free(a);
	jf_zone_reader_close(reader);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges_are_counted_per_region_when_the_map_says_so),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
