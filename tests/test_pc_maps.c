/* A region with two pc maps, one of ops and one of code objects (JF_PC_MAP_CODE_OBJECTS),
 * as CPython's module writes for an executor that inlined a function: the ops come from
 * the op map, the bytecode ranges from the code-object map, each range under the
 * function it is in. Zone records are written by the real emitter and read back by the
 * real reader; the flow is one block over the region's 64 one-byte instructions, so every
 * entry covers 16 of them and the expected counts follow from the script.
 *
 * The script: code objects 1 "caller" (line 10) and 2 "callee" (line 3); entries at
 * offsets 0x00, 0x10, 0x20, 0x30: ops 1..4 at pcs 20, 0, 4, 24, in caller, callee,
 * callee, caller. Also: either map alone, the maps in either order, a later map replacing
 * only its own kind, an entry whose code object is not known (0), code objects without
 * a CODE_OBJECT record, a map for an address where no region is, and a code-object map
 * truncated or with a count that cannot fit (the reader rejects it, naming the offset). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jitflow/analysis.h"
#include "jitflow/emitter.h"
#include "jitflow/zone.h"
#include "jitflow/zone_format.h"

enum { TRACE = 0x10000, SIZE = 0x40, ENTRY = 0x10, NENTRIES = 4 };

static uint8_t code[SIZE];

/* What a script writes after the region (one trace, code objects, op names). */
enum map_order { OPS_ONLY, CODE_OBJECTS_ONLY, OPS_THEN_CODE_OBJECTS, CODE_OBJECTS_THEN_OPS,
		 REPLACED, UNKNOWN_CALLEE, UNNAMED, ELSEWHERE };

static void entries(struct jf_pc_map_entry *e, int code_objects, uint16_t callee)
{
	static const uint32_t pcs[NENTRIES] = { 20, 0, 4, 24 };
	uint16_t owner[NENTRIES] = { 1, callee, callee, 1 };
	int i;

	memset(e, 0, NENTRIES * sizeof(*e));
	for (i = 0; i < NENTRIES; i++) {
		e[i].code_offset = (uint32_t)(i * ENTRY);
		e[i].bytecode_pc = pcs[i];
		e[i].op_index = (uint32_t)i;
		e[i].inline_depth = owner[i] == 1 ? 0 : 1;
		e[i].op_kind = code_objects ? owner[i] : (uint16_t)(i + 1);
	}
}

static char *write_script(enum map_order order)
{
	struct jf_emitter *em;
	struct jf_region r;
	struct jf_pc_map_entry ops[NENTRIES], cos[NENTRIES], wrong[NENTRIES];
	char dir[512], *path;
	int i;

	snprintf(dir, sizeof(dir), "%s/order%d", jf_test_tmpdir(), (int)order);
	mkdir(dir, 0755);
	em = jf_emitter_open(dir, JF_EMIT_CLOCK_MONOTONIC | JF_EMIT_NO_MARKER_CALLS);
	assert_non_null(em);
	memset(code, 0x90, sizeof(code));
	memset(&r, 0, sizeof(r));
	r.name = "executor 7";
	r.addr = TRACE;
	r.code = code;
	r.size = SIZE;
	r.kind = JF_REGION_TRACE;
	r.trace_id = 7;
	r.code_object = 1;
	if (order != UNNAMED) {
		assert_true(jf_emit_code_object(em, 1, "caller", "p.py", 10));
		assert_true(jf_emit_code_object(em, 2, "callee", "p.py", 3));
	}
	assert_true(jf_emit_region_load(em, &r));
	for (i = 0; i < NENTRIES; i++) {
		char name[16];

		snprintf(name, sizeof(name), "_OP%d", i + 1);
		assert_true(jf_emit_op_name(em, (uint16_t)(i + 1), name));
	}
	entries(ops, 0, 2);
	entries(cos, 1, order == UNKNOWN_CALLEE ? 0 : 2);
	/* a map of each kind that the later one replaces: other pcs, other owners */
	entries(wrong, 1, 1);
	for (i = 0; i < NENTRIES; i++)
		wrong[i].bytecode_pc += 100;
	switch (order) {
	case OPS_ONLY:
		assert_true(jf_emit_pc_map(em, TRACE, ops, NENTRIES));
		break;
	case CODE_OBJECTS_ONLY:
		assert_true(jf_emit_pc_map_flags(em, TRACE, cos, NENTRIES, JF_PC_MAP_CODE_OBJECTS));
		break;
	case CODE_OBJECTS_THEN_OPS:
		assert_true(jf_emit_pc_map_flags(em, TRACE, cos, NENTRIES, JF_PC_MAP_CODE_OBJECTS));
		assert_true(jf_emit_pc_map(em, TRACE, ops, NENTRIES));
		break;
	case REPLACED:
		assert_true(jf_emit_pc_map_flags(em, TRACE, wrong, NENTRIES, JF_PC_MAP_CODE_OBJECTS));
		assert_true(jf_emit_pc_map(em, TRACE, wrong, NENTRIES));
		assert_true(jf_emit_pc_map(em, TRACE, ops, NENTRIES));
		assert_true(jf_emit_pc_map_flags(em, TRACE, cos, NENTRIES, JF_PC_MAP_CODE_OBJECTS));
		break;
	case ELSEWHERE:
		assert_true(jf_emit_pc_map(em, TRACE, ops, NENTRIES));
		assert_true(jf_emit_pc_map_flags(em, TRACE + 0x1000, cos, NENTRIES,
						 JF_PC_MAP_CODE_OBJECTS));
		break;
	default:
		assert_true(jf_emit_pc_map(em, TRACE, ops, NENTRIES));
		assert_true(jf_emit_pc_map_flags(em, TRACE, cos, NENTRIES, JF_PC_MAP_CODE_OBJECTS));
		break;
	}
	path = strdup(jf_emitter_path(em));
	jf_emitter_close(em);
	return path;
}

/* The script's records, then one block over the whole region. */
static void analyse(const char *zone_path, struct jf_analysis_result *res)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_analysis_config cfg = { .map = map };
	struct jf_analysis *a;
	struct jf_zone_reader *reader;
	struct jf_zone_record rec;
	struct jf_error err;
	struct jf_flow f;

	assert_non_null(map);
	assert_int_equal(jf_codemap_add_bytes(map, code, SIZE, TRACE, "jit", &err), 0);
	a = jf_analysis_new(&cfg);
	assert_non_null(a);
	assert_int_equal(jf_zone_reader_open(&reader, zone_path, &err), 0);
	while (jf_zone_next(reader, &rec, &err) > 0)
		assert_int_equal(jf_analysis_zone_record(a, reader, &rec), 0);
	memset(&f, 0, sizeof(f));
	f.kind = JF_FLOW_BLOCK;
	f.ip = TRACE;
	f.u.block.start = TRACE;
	f.u.block.last = TRACE + SIZE - 1;
	f.u.block.ninsn = SIZE;
	f.u.block.next = TRACE + SIZE;
	f.u.block.last_size = 1;
	f.u.block.isa = JF_ISA_X86_64;
	f.u.block.end = JF_END_JUMP;
	assert_int_equal(jf_analysis_flow(a, &f), 0);
	assert_int_equal(jf_analysis_result(a, res), 0);
	jf_analysis_free(a);
	jf_zone_reader_close(reader);
	jf_codemap_free(map);
}

static void analyse_script(enum map_order order, struct jf_analysis_result *res)
{
	char *path = write_script(order);

	analyse(path, res);
	free(path);
}

/* Instructions of the range [from, to) keyed by key; -1 when there is no such row. */
static long long range_insns(const struct jf_analysis_result *r, uint64_t key, uint32_t from,
			     uint32_t to, const char *name)
{
	size_t i;

	for (i = 0; i < r->nbytecodes; i++) {
		const struct jf_bytecode_result *b = &r->bytecodes[i];

		if (b->region_key != key || b->pc_from != from || b->pc_to != to)
			continue;
		if (name && strcmp(b->code_name, name))
			fail_msg("range %u->%u of %llx is named \"%s\", not \"%s\"", from, to,
				 (unsigned long long)key, b->code_name, name);
		return (long long)b->insns;
	}
	return -1;
}

static uint64_t op_insns(const struct jf_analysis_result *r, uint16_t kind)
{
	size_t i;

	for (i = 0; i < r->nops; i++)
		if (r->ops[i].op_kind == kind)
			return r->ops[i].insns;
	return 0;
}

static void expect_ops(const struct jf_analysis_result *r)
{
	uint16_t k;

	for (k = 1; k <= NENTRIES; k++)
		assert_int_equal(op_insns(r, k), ENTRY);
}

#define CALLER (JF_BYTECODE_CODE_OBJECT | 1)
#define CALLEE (JF_BYTECODE_CODE_OBJECT | 2)

/* The script's ranges: caller 20 and 24, callee 0->4 and 4; nothing else. */
static void expect_code_object_ranges(const struct jf_analysis_result *r, int named)
{
	assert_int_equal(range_insns(r, CALLER, 20, 20, named ? "caller" : ""), ENTRY);
	assert_int_equal(range_insns(r, CALLER, 24, 24, named ? "caller" : ""), ENTRY);
	assert_int_equal(range_insns(r, CALLEE, 0, 4, named ? "callee" : ""), ENTRY);
	assert_int_equal(range_insns(r, CALLEE, 4, 4, named ? "callee" : ""), ENTRY);
	assert_int_equal(r->nbytecodes, 4);
}

static void test_both_maps(void **state)
{
	enum map_order orders[] = { OPS_THEN_CODE_OBJECTS, CODE_OBJECTS_THEN_OPS, REPLACED };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(orders) / sizeof(orders[0]); i++) {
		struct jf_analysis_result r;

		analyse_script(orders[i], &r);
		expect_code_object_ranges(&r, 1);
		expect_ops(&r);
		assert_true(r.has_pc_maps);
		jf_analysis_result_free(&r);
	}
}

/* One map of either kind alone: as before there were two. */
static void test_one_map(void **state)
{
	struct jf_analysis_result r;

	(void)state;
	analyse_script(OPS_ONLY, &r);
	/* per region (trace 7): each range runs to the next entry's pc when it is further */
	assert_int_equal(range_insns(&r, 7, 20, 20, ""), ENTRY);
	assert_int_equal(range_insns(&r, 7, 0, 4, ""), ENTRY);
	assert_int_equal(range_insns(&r, 7, 4, 24, ""), ENTRY);
	assert_int_equal(range_insns(&r, 7, 24, 24, ""), ENTRY);
	assert_int_equal(r.nbytecodes, 4);
	expect_ops(&r);
	jf_analysis_result_free(&r);

	analyse_script(CODE_OBJECTS_ONLY, &r);
	expect_code_object_ranges(&r, 1);
	assert_int_equal(r.nops, 0); /* the kinds are code objects, not ops */
	jf_analysis_result_free(&r);
}

/* Entries whose code object is 0 (the runtime could not say which function runs there)
 * count in no range, and their ops still count; code objects without a CODE_OBJECT
 * record give unnamed ranges; a map for an address where no region is changes nothing. */
static void test_unknown_code_objects(void **state)
{
	struct jf_analysis_result r;

	(void)state;
	analyse_script(UNKNOWN_CALLEE, &r);
	assert_int_equal(range_insns(&r, CALLER, 20, 20, "caller"), ENTRY);
	assert_int_equal(range_insns(&r, CALLER, 24, 24, "caller"), ENTRY);
	assert_int_equal(r.nbytecodes, 2);
	expect_ops(&r);
	jf_analysis_result_free(&r);

	analyse_script(UNNAMED, &r);
	expect_code_object_ranges(&r, 0);
	expect_ops(&r);
	jf_analysis_result_free(&r);

	analyse_script(ELSEWHERE, &r);
	assert_int_equal(range_insns(&r, 7, 0, 4, ""), ENTRY);
	assert_int_equal(r.nbytecodes, 4);
	expect_ops(&r);
	jf_analysis_result_free(&r);
}

static size_t code_object_map_at(const uint8_t *d, size_t size)
{
	size_t off = JF_JITDUMP_HEADER_SIZE;

	while (off + JF_JITDUMP_PREFIX_SIZE + JF_ZONE_EXT_PREFIX_SIZE + JF_ZONE_PC_MAP_FIXED <= size) {
		uint32_t id, total, flags;

		memcpy(&id, d + off, 4);
		memcpy(&total, d + off + 4, 4);
		memcpy(&flags, d + off + JF_JITDUMP_PREFIX_SIZE + JF_ZONE_EXT_PREFIX_SIZE + 12, 4);
		if (id == JF_ZONE_PC_MAP && (flags & JF_PC_MAP_CODE_OBJECTS))
			return off;
		off += total;
	}
	fail_msg("no code-object PC_MAP in the file");
	return 0;
}

/* Reads every record of a damaged copy; expects an error that says what. */
static void expect_rejected(const uint8_t *d, size_t size, const char *what)
{
	char path[512];
	struct jf_zone_reader *reader;
	struct jf_zone_record rec;
	struct jf_error err = { "" };
	int rc = 0;

	snprintf(path, sizeof(path), "%s/damaged.dump", jf_test_tmpdir());
	jf_test_write_file(path, d, size);
	if (jf_zone_reader_open(&reader, path, &err) == 0) {
		while ((rc = jf_zone_next(reader, &rec, &err)) > 0)
			;
		jf_zone_reader_close(reader);
	}
	if (rc >= 0 && !err.msg[0])
		fail_msg("the damaged code-object map was read without an error");
	if (!strstr(err.msg, what))
		fail_msg("expected an error containing '%s', got '%s'", what, err.msg);
}

/* A code-object map cut short, or counting more entries than its record holds. */
static void test_damaged_code_object_map(void **state)
{
	char *path = write_script(OPS_THEN_CODE_OBJECTS), want[96];
	size_t size, off;
	uint8_t *orig = jf_test_read_file(path, &size), *d = malloc(size);
	uint32_t total, count = 0xffffffffu;

	(void)state;
	assert_non_null(d);
	off = code_object_map_at(orig, size);
	memcpy(&total, orig + off + 4, 4);
	/* the file ends inside the map */
	snprintf(want, sizeof(want), "offset %zu", off);
	expect_rejected(orig, off + total - 1, want);
	/* one entry fewer than its count says */
	memcpy(d, orig, size);
	total -= JF_ZONE_PC_MAP_ENTRY_SIZE;
	memcpy(d + off + 4, &total, 4);
	memmove(d + off + total, orig + off + total + JF_ZONE_PC_MAP_ENTRY_SIZE,
		size - (off + total + JF_ZONE_PC_MAP_ENTRY_SIZE));
	expect_rejected(d, size - JF_ZONE_PC_MAP_ENTRY_SIZE, "PC_MAP count 4 cannot fit");
	/* an absurd count */
	memcpy(d, orig, size);
	memcpy(d + off + JF_JITDUMP_PREFIX_SIZE + JF_ZONE_EXT_PREFIX_SIZE + 8, &count, 4);
	expect_rejected(d, size, "PC_MAP count 4294967295 cannot fit");
	free(d);
	free(orig);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_maps),
		cmocka_unit_test(test_one_map),
		cmocka_unit_test(test_unknown_code_objects),
		cmocka_unit_test(test_damaged_code_object_map),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
