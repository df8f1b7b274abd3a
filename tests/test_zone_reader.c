/* Zone reader: emitter -> reader round trip for every record type; a file written in the
 * other byte order, built here by hand; truncation at every length; hostile sizes,
 * counts, overlapping regions and a damaged sequence number. */
#include "test_support.h"

#include <byteswap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitflow/emitter.h"
#include "jitflow/zone.h"

static const uint8_t trace_code[] = { 0x48, 0x31, 0xc0, 0x48, 0xff, 0xc0, 0xc3 };
static const uint8_t patch_bytes[] = { 0xe9, 0x10, 0x20, 0x30, 0x40 };
static const struct jf_pc_map_entry pcs[3] = {
	{ 0, 10, 0, 0, 3 }, { 3, 12, 1, 1, 4 }, { 6, 14, 2, 0, 5 },
};
/* The frame around pcs[1]'s (inline depth 1): code object 11, calling at pc 20. */
static const struct jf_pc_map_entry outer_frames[1] = { { 3, 20, 0, 0, 11 } };

/* Writes one of every record; returns the path. */
static const char *write_every_record(const char *sub)
{
	static char dir[512];
	struct jf_emitter *em;
	struct jf_region r = { .name = "trace 7 (loop at f.mvm:12)", .addr = 0x7f0000010000,
			       .code = trace_code, .size = sizeof(trace_code),
			       .kind = JF_REGION_BRIDGE, .generation = 2, .trace_id = 7,
			       .parent_trace = 3, .parent_guard = 5, .code_object = 11 };
	static char path[600];

	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), sub);
	mkdir(dir, 0755);
	em = jf_emitter_open(dir, JF_EMIT_CLOCK_MONOTONIC);
	assert_non_null(em);
	assert_int_equal(jf_emit_code_object(em, 11, "f", "f.mvm", 12), 4);
	assert_int_equal(jf_emit_op_name(em, 4, "ADD"), 5);
	assert_int_equal(jf_emit_interp_range(em, JF_INTERP_HANDLER, 0x401000, 0x401080,
					      "op_add"), 6);
	assert_int_equal(jf_emit_event(em, JF_EVENT_COMPILE_BEGIN, 7), 7);
	assert_int_equal(jf_emit_region_load(em, &r), 8);
	assert_int_equal(jf_emit_guard(em, 5, 7, 0x7f0000010003, 0x7f0000020000, 99), 9);
	assert_int_equal(jf_emit_pc_map(em, 0x7f0000010000, pcs, 3), 10);
	assert_int_equal(jf_emit_patch(em, 0x7f0000010001, patch_bytes, sizeof(patch_bytes),
				       "guard 5 -> bridge"), 11);
	assert_int_equal(jf_emit_region_move(em, 0x7f0000010000, 0x7f0000030000,
					     sizeof(trace_code)), 12);
	assert_int_equal(jf_emit_region_free(em, 0x7f0000030000, sizeof(trace_code)), 13);
	assert_int_equal(jf_emit_thread_name(em, 4321, "C2 CompilerThread0"), 14);
	assert_int_equal(jf_emit_inline_frames(em, 0x7f0000010000, outer_frames, 1), 15);
	snprintf(path, sizeof(path), "%s", jf_emitter_path(em));
	jf_emitter_close(em);
	return path;
}

static void next_ok(struct jf_zone_reader *r, struct jf_zone_record *rec, uint32_t id)
{
	struct jf_error err = { "" };
	int rc = jf_zone_next(r, rec, &err);

	if (rc != 1)
		fail_msg("expected %s, got rc %d: %s", jf_zone_record_name(id), rc, err.msg);
	assert_string_equal(jf_zone_record_name(rec->id), jf_zone_record_name(id));
}

/* POINT records (a runtime's counted instruction) come back as written. */
static void test_point_round_trip(void **state)
{
	static char dir[512];
	struct jf_emitter *em;
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	struct jf_error err;
	char path[600];

	(void)state;
	snprintf(dir, sizeof(dir), "%s/point", jf_test_tmpdir());
	mkdir(dir, 0755);
	assert_non_null(em = jf_emitter_open(dir, JF_EMIT_CLOCK_MONOTONIC));
	assert_int_equal(jf_emit_point(em, 9, 0x7f0000010020, (1ull << 63) | 42, JF_POINT_LABEL), 4);
	assert_int_equal(jf_emit_point(NULL, 9, 0x7f0000010020, 1, JF_POINT_LABEL), 0);
	snprintf(path, sizeof(path), "%s", jf_emitter_path(em));
	jf_emitter_close(em);
	assert_int_equal(jf_zone_reader_open(&r, path, &err), 0);
	next_ok(r, &rec, JF_ZONE_CLOCK);
	next_ok(r, &rec, JF_ZONE_MARKER);
	next_ok(r, &rec, JF_ZONE_INTERP_RANGE);
	next_ok(r, &rec, JF_ZONE_POINT);
	assert_int_equal(rec.seq, 4);
	assert_int_equal(rec.u.point.trace_id, 9);
	assert_int_equal(rec.u.point.addr, 0x7f0000010020);
	assert_int_equal(rec.u.point.point_id, (1ull << 63) | 42);
	assert_int_equal(rec.u.point.kind, JF_POINT_LABEL);
	jf_zone_reader_close(r);
}

static void test_round_trip_every_record(void **state)
{
	const char *path = write_every_record("roundtrip");
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	struct jf_zone_pc_entry e;
	struct jf_error err;
	uint64_t code_offset;
	uint32_t i;

	assert_int_equal(jf_zone_reader_open(&r, path, &err), 0);
	assert_int_equal(jf_zone_reader_header(r)->pid, (uint32_t)getpid());
	assert_false(jf_zone_reader_header(r)->swapped);
	assert_false(jf_zone_reader_header(r)->arch_timestamp);

	next_ok(r, &rec, JF_ZONE_CLOCK);
	assert_int_equal(rec.seq, 1);
	assert_int_equal(rec.u.clock.clock, JF_ZONE_CLOCK_MONOTONIC);
	assert_true(rec.u.clock.mono_ns > 0);
	next_ok(r, &rec, JF_ZONE_MARKER);
	assert_int_equal(rec.u.marker.addr, (uint64_t)(uintptr_t)&jf_emitter_marker);
	assert_int_equal(rec.u.marker.methods, JF_ZONE_MARKER_CALLS);
	next_ok(r, &rec, JF_ZONE_INTERP_RANGE); /* the emitter's own code */
	assert_int_equal(rec.u.interp_range.kind, JF_INTERP_INSTRUMENTATION);
	assert_true(rec.u.interp_range.start <= (uint64_t)(uintptr_t)&jf_emitter_marker &&
		    (uint64_t)(uintptr_t)&jf_emitter_marker < rec.u.interp_range.end);
	next_ok(r, &rec, JF_ZONE_CODE_OBJECT);
	assert_int_equal(rec.seq, 4);
	assert_int_equal(rec.tid, (uint32_t)gettid());
	assert_int_equal(rec.u.code_object.id, 11);
	assert_int_equal(rec.u.code_object.line, 12);
	assert_string_equal(rec.u.code_object.name, "f");
	assert_string_equal(rec.u.code_object.file, "f.mvm");
	next_ok(r, &rec, JF_ZONE_OP_NAME);
	assert_int_equal(rec.u.op_name.op_kind, 4);
	assert_string_equal(rec.u.op_name.name, "ADD");
	next_ok(r, &rec, JF_ZONE_INTERP_RANGE);
	assert_int_equal(rec.u.interp_range.kind, JF_INTERP_HANDLER);
	assert_int_equal(rec.u.interp_range.start, 0x401000);
	assert_int_equal(rec.u.interp_range.end, 0x401080);
	assert_string_equal(rec.u.interp_range.name, "op_add");
	next_ok(r, &rec, JF_ZONE_EVENT);
	assert_int_equal(rec.u.event.kind, JF_EVENT_COMPILE_BEGIN);
	assert_int_equal(rec.u.event.arg, 7);

	next_ok(r, &rec, JF_JITDUMP_CODE_LOAD);
	assert_int_equal(rec.seq, 0);
	assert_int_equal(rec.u.code_load.addr, 0x7f0000010000);
	assert_int_equal(rec.u.code_load.size, sizeof(trace_code));
	assert_int_equal(rec.u.code_load.index, 0);
	assert_string_equal(rec.u.code_load.name, "trace 7 (loop at f.mvm:12)");
	assert_memory_equal(rec.u.code_load.code, trace_code, sizeof(trace_code));
	code_offset = rec.u.code_load.code_offset;
	next_ok(r, &rec, JF_ZONE_REGION_LOAD);
	assert_int_equal(rec.seq, 8);
	assert_int_equal(rec.u.region_load.addr, 0x7f0000010000);
	assert_int_equal(rec.u.region_load.size, sizeof(trace_code));
	assert_int_equal(rec.u.region_load.kind, JF_REGION_BRIDGE);
	assert_int_equal(rec.u.region_load.generation, 2);
	assert_int_equal(rec.u.region_load.trace_id, 7);
	assert_int_equal(rec.u.region_load.parent_trace, 3);
	assert_int_equal(rec.u.region_load.parent_guard, 5);
	assert_int_equal(rec.u.region_load.code_object, 11);
	assert_int_equal(rec.u.region_load.code_offset, code_offset);
	assert_memory_equal(rec.u.region_load.code, trace_code, sizeof(trace_code));
	assert_string_equal(rec.u.region_load.name, "trace 7 (loop at f.mvm:12)");

	next_ok(r, &rec, JF_ZONE_GUARD);
	assert_int_equal(rec.u.guard.guard_id, 5);
	assert_int_equal(rec.u.guard.trace_id, 7);
	assert_int_equal(rec.u.guard.branch_addr, 0x7f0000010003);
	assert_int_equal(rec.u.guard.stub_addr, 0x7f0000020000);
	assert_int_equal(rec.u.guard.resume_pc, 99);
	next_ok(r, &rec, JF_ZONE_PC_MAP);
	assert_int_equal(rec.u.pc_map.region_addr, 0x7f0000010000);
	assert_int_equal(rec.u.pc_map.count, 3);
	for (i = 0; i < 3; i++) {
		jf_zone_pc_map_entry(r, &rec, i, &e);
		assert_int_equal(e.code_offset, pcs[i].code_offset);
		assert_int_equal(e.bytecode_pc, pcs[i].bytecode_pc);
		assert_int_equal(e.op_index, pcs[i].op_index);
		assert_int_equal(e.inline_depth, pcs[i].inline_depth);
		assert_int_equal(e.op_kind, pcs[i].op_kind);
	}
	next_ok(r, &rec, JF_ZONE_PATCH);
	assert_int_equal(rec.u.patch.addr, 0x7f0000010001);
	assert_int_equal(rec.u.patch.size, sizeof(patch_bytes));
	assert_memory_equal(rec.u.patch.bytes, patch_bytes, sizeof(patch_bytes));
	assert_string_equal(rec.u.patch.reason, "guard 5 -> bridge");
	next_ok(r, &rec, JF_JITDUMP_CODE_MOVE);
	assert_int_equal(rec.u.code_move.old_addr, 0x7f0000010000);
	assert_int_equal(rec.u.code_move.new_addr, 0x7f0000030000);
	assert_int_equal(rec.u.code_move.index, 0);
	next_ok(r, &rec, JF_ZONE_REGION_MOVE);
	assert_int_equal(rec.u.region_move.old_addr, 0x7f0000010000);
	assert_int_equal(rec.u.region_move.new_addr, 0x7f0000030000);
	assert_int_equal(rec.u.region_move.size, sizeof(trace_code));
	next_ok(r, &rec, JF_ZONE_REGION_FREE);
	assert_int_equal(rec.u.region_free.addr, 0x7f0000030000);
	next_ok(r, &rec, JF_ZONE_THREAD_NAME);
	assert_int_equal(rec.u.thread_name.tid, 4321);
	assert_string_equal(rec.u.thread_name.name, "C2 CompilerThread0");
	next_ok(r, &rec, JF_ZONE_INLINE_FRAMES);
	assert_int_equal(rec.u.pc_map.region_addr, 0x7f0000010000);
	assert_int_equal(rec.u.pc_map.count, 1);
	jf_zone_pc_map_entry(r, &rec, 0, &e);
	assert_int_equal(e.code_offset, 3);
	assert_int_equal(e.bytecode_pc, 20);
	assert_int_equal(e.inline_depth, 0);
	assert_int_equal(e.op_kind, 11);
	next_ok(r, &rec, JF_ZONE_CLOCK);
	next_ok(r, &rec, JF_JITDUMP_CODE_CLOSE);
	assert_int_equal(jf_zone_next(r, &rec, &err), 0);
	assert_int_equal(jf_zone_reader_stats(r)->unknown, 0);
	assert_int_equal(jf_zone_reader_stats(r)->free_unknown, 0);
	jf_zone_reader_close(r);
}

/* A hand-built file in the other byte order: header, CODE_LOAD, DEBUG_INFO (with the
 * "same file" 0xff marker), UNWINDING_INFO, an unknown id, an EVENT. */
struct builder { uint8_t b[1024]; size_t n; };

static void put(struct builder *b, const void *p, size_t n) { memcpy(b->b + b->n, p, n); b->n += n; }
static void put32(struct builder *b, uint32_t v) { v = bswap_32(v); put(b, &v, 4); }
static void put64(struct builder *b, uint64_t v) { v = bswap_64(v); put(b, &v, 8); }
static void prefix(struct builder *b, uint32_t id, uint32_t size, uint64_t ts)
{
	put32(b, id); put32(b, size); put64(b, ts);
}

static size_t build_swapped(struct builder *b)
{
	static const uint8_t code[] = { 0x90, 0xc3 };

	b->n = 0;
	put32(b, JF_JITDUMP_MAGIC); put32(b, 1); put32(b, 40); put32(b, 62);
	put32(b, 0); put32(b, 4242); put64(b, 1000); put64(b, 1 /* ARCH_TIMESTAMP */);
	/* DEBUG_INFO: 32 + 2 entries (16 + "a.js\0" = 21, 16 + "\xff\0" = 18) */
	prefix(b, 2, 32 + 21 + 18, 1001);
	put64(b, 0x5000); put64(b, 2);
	put64(b, 0x5000); put32(b, 3); put32(b, 0); put(b, "a.js", 5);
	put64(b, 0x5001); put32(b, 4); put32(b, 0); put(b, "\xff", 2);
	prefix(b, 0, 56 + 2 + sizeof(code), 1002);
	put32(b, 4242); put32(b, 4243); put64(b, 0x5000); put64(b, 0x5000);
	put64(b, sizeof(code)); put64(b, 9); put(b, "f", 2); put(b, code, sizeof(code));
	prefix(b, 4, 16 + 24 + 8, 1003);
	put64(b, 8); put64(b, 0); put64(b, 8); put64(b, 0);
	prefix(b, 77, 16 + 4, 1004); put32(b, 0);
	prefix(b, JF_ZONE_EVENT, 32 + 16, 1005);
	put64(b, 1); put32(b, 4243); put32(b, (uint32_t)1 << 16 /* u16 version 1, u16 0 */);
	put32(b, JF_EVENT_ITERATION); put32(b, 0); put64(b, 123);
	return b->n;
}

static void test_other_byte_order(void **state)
{
	struct builder b;
	size_t size = build_swapped(&b);
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	struct jf_zone_debug_iter it = { 0, 0 };
	struct jf_zone_debug_entry e;
	struct jf_error err;

	assert_int_equal(jf_zone_reader_open_memory(&r, b.b, size, "swapped.dump", &err), 0);
	assert_true(jf_zone_reader_header(r)->swapped);
	assert_true(jf_zone_reader_header(r)->arch_timestamp);
	assert_int_equal(jf_zone_reader_header(r)->pid, 4242);
	next_ok(r, &rec, JF_JITDUMP_CODE_DEBUG_INFO);
	assert_int_equal(rec.timestamp, 1001);
	assert_int_equal(rec.u.debug_info.addr, 0x5000);
	assert_int_equal(jf_zone_debug_entries(r, &rec, &it, &e), 1);
	assert_int_equal(e.addr, 0x5000);
	assert_int_equal(e.line, 3);
	assert_string_equal(e.file, "a.js");
	assert_int_equal(jf_zone_debug_entries(r, &rec, &it, &e), 1);
	assert_int_equal(e.line, 4);
	assert_string_equal(e.file, "\xff");
	assert_int_equal(jf_zone_debug_entries(r, &rec, &it, &e), 0);
	next_ok(r, &rec, JF_JITDUMP_CODE_LOAD);
	assert_int_equal(rec.u.code_load.pid, 4242);
	assert_int_equal(rec.u.code_load.tid, 4243);
	assert_int_equal(rec.u.code_load.index, 9);
	assert_int_equal(rec.u.code_load.code[0], 0x90);
	next_ok(r, &rec, JF_JITDUMP_CODE_UNWINDING_INFO);
	assert_int_equal(jf_zone_next(r, &rec, &err), 1);
	assert_int_equal(rec.id, 77);
	next_ok(r, &rec, JF_ZONE_EVENT);
	assert_int_equal(rec.seq, 1);
	assert_int_equal(rec.tid, 4243);
	assert_int_equal(rec.u.event.arg, 123);
	assert_int_equal(jf_zone_next(r, &rec, &err), 0);
	assert_int_equal(jf_zone_reader_stats(r)->unknown, 1);
	assert_int_equal(jf_zone_reader_stats(r)->unwinding_skipped, 1);
	jf_zone_reader_close(r);
}

/* Read a whole buffer; returns 0 at a clean end, -1 on error (message in err). */
static int read_all(const uint8_t *data, size_t size, struct jf_error *err, size_t *records)
{
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	int rc;

	*records = 0;
	if (jf_zone_reader_open_memory(&r, data, size, "cut.dump", err))
		return -1;
	while ((rc = jf_zone_next(r, &rec, err)) == 1)
		(*records)++;
	jf_zone_reader_close(r);
	return rc;
}

static void test_truncated_at_every_length(void **state)
{
	const char *path = write_every_record("truncate");
	size_t size, len, records, full_records, boundaries = 0;
	uint8_t *data = jf_test_read_file(path, &size);
	struct jf_error err;

	assert_int_equal(read_all(data, size, &err, &full_records), 0);
	for (len = 0; len < size; len++) {
		uint8_t *copy = malloc(len ? len : 1);

		memcpy(copy, data, len); /* a heap block of exactly len bytes: ASan sees overreads */
		err.msg[0] = 0;
		if (read_all(copy, len, &err, &records) == 0) {
			boundaries++; /* cut exactly between records: a shorter valid file */
			assert_true(records < full_records);
		} else {
			assert_non_null(strstr(err.msg, "cut.dump: offset "));
		}
		free(copy);
	}
	/* the header end and every record boundary but the last are clean cuts */
	assert_int_equal(boundaries, full_records);
	free(data);
}

static void expect_error(const uint8_t *data, size_t size, const char *what)
{
	struct jf_error err = { "" };
	size_t records;

	assert_int_equal(read_all(data, size, &err, &records), -1);
	if (!strstr(err.msg, what))
		fail_msg("expected an error containing '%s', got '%s'", what, err.msg);
}

static void set32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void set64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* Offset of the n-th record (0-based) with this id. */
static size_t find_record(const uint8_t *d, size_t size, uint32_t id, int n)
{
	size_t off = 40;

	while (off + 16 <= size) {
		uint32_t rid, total;

		memcpy(&rid, d + off, 4);
		memcpy(&total, d + off + 4, 4);
		if (rid == id && n-- == 0)
			return off;
		off += total;
	}
	fail_msg("record %u not found", id);
	return 0;
}

static void test_hostile_files(void **state)
{
	const char *path = write_every_record("hostile");
	size_t size, off;
	uint8_t *orig = jf_test_read_file(path, &size), *d = malloc(size);

#define FRESH() memcpy(d, orig, size)
	FRESH(); set32(d, 0x12345678);
	expect_error(d, size, "offset 0: expected jitdump magic");
	FRESH(); set32(d + 4, 2);
	expect_error(d, size, "offset 4: expected jitdump version 1");
	FRESH(); set32(d + 8, 0x7fffffff);
	expect_error(d, size, "offset 8: header size");
	FRESH(); set64(d + 32, 6);
	expect_error(d, size, "unknown header flags");

	/* a record size beyond the file, and one smaller than a prefix */
	FRESH(); set32(d + 44, 0xfffffff0);
	expect_error(d, size, "offset 40: record size 4294967280 is outside 16..");
	FRESH(); set32(d + 44, 8);
	expect_error(d, size, "offset 40: record size 8");

	/* CODE_LOAD whose code_size disagrees with the record */
	off = find_record(orig, size, JF_JITDUMP_CODE_LOAD, 0);
	FRESH(); set64(d + off + 40, 0xffffffffffffull);
	expect_error(d, size, "code_size 281474976710655 does not match");

	/* absurd PC_MAP count: rejected before anything is allocated for it */
	off = find_record(orig, size, JF_ZONE_PC_MAP, 0);
	FRESH(); set32(d + off + 40, 0xffffffff);
	expect_error(d, size, "PC_MAP count 4294967295 cannot fit");
	off = find_record(orig, size, JF_ZONE_INLINE_FRAMES, 0);
	FRESH(); set32(d + off + 40, 0xffffffff);
	expect_error(d, size, "INLINE_FRAMES count 4294967295 cannot fit");

	/* a damaged sequence number: the GUARD's 9 becomes 2. Records are read in seq order
	 * (test_zone_order.c), so 2 comes twice and 9 never: both counted and located */
	off = find_record(orig, size, JF_ZONE_GUARD, 0);
	FRESH(); set64(d + off + 16, 2);
	{
		struct jf_zone_reader *r;
		struct jf_zone_record rec;
		struct jf_error err = { "" };
		const struct jf_zone_stats *st;
		size_t records = 0;

		assert_int_equal(jf_zone_reader_open_memory(&r, d, size, "seq.dump", &err), 0);
		while (jf_zone_next(r, &rec, &err) == 1)
			records++;
		st = jf_zone_reader_stats(r);
		assert_int_equal(st->seq_duplicates, 1);
		assert_int_equal(st->first_duplicate_offset, off);
		assert_int_equal(st->seq_gaps, 1);
		assert_int_equal(st->seq_missing, 1);
		assert_int_equal(st->first_gap_after, 8);
		assert_int_equal(st->runs, 2);
		assert_true(records > 0);
		jf_zone_reader_close(r);
	}

	/* REGION_LOAD not matching its CODE_LOAD */
	off = find_record(orig, size, JF_ZONE_REGION_LOAD, 0);
	FRESH(); set64(d + off + 48, 99);
	expect_error(d, size, "does not directly follow its CODE_LOAD");

	/* PATCH larger than its record; name without its NUL */
	off = find_record(orig, size, JF_ZONE_PATCH, 0);
	FRESH(); set32(d + off + 40, 5000);
	expect_error(d, size, "PATCH of 5000 bytes does not fit");
	off = find_record(orig, size, JF_ZONE_OP_NAME, 0);
	FRESH(); memset(d + off + 40, 'x', 4);
	expect_error(d, size, "OP_NAME record of 44 bytes is shorter than its fields or has a "
			      "string not NUL-terminated");
	off = find_record(orig, size, JF_ZONE_THREAD_NAME, 0);
	FRESH(); memset(d + off + 40, 'x', sizeof("C2 CompilerThread0"));
	expect_error(d, size, "THREAD_NAME record of 59 bytes is shorter than its fields or "
			      "has a string not NUL-terminated");
	free(d);
	free(orig);
}

/* Two REGION_LOADs over the same bytes without a free between them. */
static void test_overlapping_regions(void **state)
{
	char dir[512];
	struct jf_emitter *em;
	struct jf_region r = { .name = "a", .addr = 0x10000, .code = trace_code,
			       .size = sizeof(trace_code) };
	uint8_t *d;
	size_t size;

	snprintf(dir, sizeof(dir), "%s/overlap", jf_test_tmpdir());
	mkdir(dir, 0755);
	em = jf_emitter_open(dir, 0);
	jf_emit_region_load(em, &r);
	jf_emit_region_free(em, 0x10000, sizeof(trace_code));
	jf_emit_region_load(em, &r); /* fine: freed before */
	r.addr = 0x10004;
	jf_emit_region_load(em, &r); /* overlaps the live one at 0x10000 */
	jf_emitter_flush(em);
	d = jf_test_read_file(jf_emitter_path(em), &size);
	jf_emitter_close(em);
	expect_error(d, size, "REGION_LOAD [0x10004, 0x1000b) overlaps live region "
			      "[0x10000, 0x10007) that was never freed");
	free(d);
}

static uint64_t shift_time(void *ctx, uint64_t ts)
{
	return ts + *(const uint64_t *)ctx;
}

/* The time hook converts every record's timestamp to the trace's clock. */
static void test_time_hook(void **state)
{
	struct builder b;
	size_t size = build_swapped(&b);
	uint64_t shift = 1000000;
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	struct jf_error err;

	assert_int_equal(jf_zone_reader_open_memory(&r, b.b, size, "swapped.dump", &err), 0);
	jf_zone_reader_set_time_fn(r, shift_time, &shift);
	next_ok(r, &rec, JF_JITDUMP_CODE_DEBUG_INFO);
	assert_int_equal(rec.timestamp, 1001);
	assert_int_equal(rec.time, 1001001);
	jf_zone_reader_close(r);
}

static int cpu_has_flag(const char *flag)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = line;

		if (strncmp(line, "flags", 5))
			continue;
		while ((p = strstr(p, flag))) {
			if ((p == line || p[-1] == ' ') && (p[strlen(flag)] == ' ' ||
							    p[strlen(flag)] == '\n'))
				found = 1;
			p++;
		}
	}
	fclose(f);
	return found;
}

/* JF_EMIT_PTWRITE executes PTWRITE only where the CPU has it: the MARKER record says
 * which markers the trace will hold, and the kernel's cpuinfo is the oracle. */
static void test_ptwrite_only_where_the_cpu_has_it(void **state)
{
	char dir[512];
	struct jf_emitter *em;
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	struct jf_error err;
	int has = cpu_has_flag("ptwrite");

	if (has < 0)
		jf_test_skip(JF_NEED_HARDWARE, "/proc/cpuinfo is unreadable: no CPU flags to "
			     "check the MARKER record against");
	snprintf(dir, sizeof(dir), "%s/ptwrite", jf_test_tmpdir());
	mkdir(dir, 0755);
	em = jf_emitter_open(dir, JF_EMIT_PTWRITE);
	assert_non_null(em);
	assert_int_equal(jf_emit_event(em, JF_EVENT_ITERATION, 1), 4); /* would SIGILL if wrong */
	jf_emitter_flush(em);
	assert_int_equal(jf_zone_reader_open(&r, jf_emitter_path(em), &err), 0);
	next_ok(r, &rec, JF_ZONE_CLOCK);
	next_ok(r, &rec, JF_ZONE_MARKER);
	assert_int_equal(rec.u.marker.methods,
			 JF_ZONE_MARKER_CALLS | (has ? JF_ZONE_MARKER_PTWRITE : 0));
	jf_zone_reader_close(r);
	jf_emitter_close(em);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_every_record),
		cmocka_unit_test(test_point_round_trip),
		cmocka_unit_test(test_other_byte_order),
		cmocka_unit_test(test_truncated_at_every_length),
		cmocka_unit_test(test_hostile_files),
		cmocka_unit_test(test_overlapping_regions),
		cmocka_unit_test(test_time_hook),
		cmocka_unit_test(test_ptwrite_only_where_the_cpu_has_it),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
