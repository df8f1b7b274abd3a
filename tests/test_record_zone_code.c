/* The recorder's read of a runtime's zone file as the runtime writes it
 * (tools/recorder/record_zone_code.c): which code ranges it reports, whole records only,
 * and nothing read from a truncated, damaged or foreign file. The file is written by the
 * project's emitter (the runtime side); what the reader reports is caught here in place
 * of the recorder's page marking (jf_rec_code_described), which this test links without. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jitflow/emitter.h"
#include "jitflow/zone_format.h"
#include "record_internal.h"
#include "record_zone_code.h"
#include "test_support.h"

enum { MAX_RANGES = 16 };

struct range {
	uint64_t addr, size;
};

static struct range got[MAX_RANGES];
static size_t ngot;

void jf_rec_code_described(struct jf_record_state *st, uint64_t addr, uint64_t size)
{
	(void)st;
	assert_true(ngot < MAX_RANGES);
	got[ngot].addr = addr;
	got[ngot].size = size;
	ngot++;
}

static const uint64_t LOAD_AT = 0x7f0000001000, LOAD_SIZE = 0x40;
static const uint64_t PATCH_AT = 0x7f0000001010;
static const uint64_t MOVED_TO = 0x7f0000009000;

/* A zone file as a runtime writes it: a load, a guard (no code), a patch of 4 bytes, a
 * move, a free (no code put anywhere). Its path; *size its length. */
static char *write_zone_file(size_t *size)
{
	static const uint8_t code[0x40] = { 0x90 };
	static const uint8_t patch[4] = { 0xcc, 0xcc, 0xcc, 0xcc };
	struct jf_region region = { .name = "r", .addr = LOAD_AT, .code = code,
				    .size = LOAD_SIZE };
	struct jf_emitter *em = jf_emitter_open(jf_test_tmpdir(), 0);
	char *path;

	assert_non_null(em);
	assert_true(jf_emit_region_load(em, &region) != 0);
	assert_true(jf_emit_guard(em, 1, 1, LOAD_AT + 8, 0, 0) != 0);
	assert_true(jf_emit_patch(em, PATCH_AT, patch, sizeof(patch), "test") != 0);
	assert_true(jf_emit_region_move(em, LOAD_AT, MOVED_TO, LOAD_SIZE) != 0);
	assert_true(jf_emit_region_free(em, MOVED_TO, LOAD_SIZE) != 0);
	assert_int_equal(jf_emitter_flush(em), 0);
	path = strdup(jf_emitter_path(em));
	jf_emitter_close(em);
	free(jf_test_read_file(path, size));
	return path;
}

/* A state whose code changes are recorded (the reader reads nothing otherwise). */
static struct jf_record_state *recording_state(void)
{
	struct jf_record_state *st = calloc(1, sizeof(*st));

	assert_non_null(st);
	st->code_changes = (struct jf_rec_code_changes *)st; /* only tested for NULL there */
	return st;
}

static int reported(uint64_t addr, uint64_t size)
{
	for (size_t i = 0; i < ngot; i++)
		if (got[i].addr == addr && got[i].size == size)
			return 1;
	return 0;
}

/* Read path as a runtime whose writes end at each of ends[n] (growing) would be read. */
static void read_as_written(const char *path, const size_t *ends, size_t n)
{
	struct jf_record_state *st = recording_state();
	struct jf_zone_writes zw = { .path = (char *)path };

	ngot = 0;
	for (size_t i = 0; i < n; i++) {
		zw.size = ends[i];
		jf_rec_zone_code_written(st, &zw);
	}
	free(st);
}

static void test_whole_file_reports_code_ranges(void **state)
{
	size_t size;
	char *path = write_zone_file(&size);

	(void)state;
	read_as_written(path, &size, 1);
	/* The load, the patch and the move put code somewhere; the guard and the free do not
	 * (a move is also written as a jitdump CODE_MOVE: the same range, reported twice). */
	assert_true(reported(LOAD_AT, LOAD_SIZE));
	assert_true(reported(PATCH_AT, 4));
	assert_true(reported(MOVED_TO, LOAD_SIZE));
	for (size_t i = 0; i < ngot; i++)
		assert_true(got[i].addr == LOAD_AT || got[i].addr == PATCH_AT ||
			    got[i].addr == MOVED_TO);
	free(path);
}

/* Writes that end anywhere, mid-header and mid-record included: the same ranges, in the
 * same order, each once, as from the whole file. */
static void test_byte_by_byte_writes_report_the_same(void **state)
{
	struct range whole[MAX_RANGES];
	size_t size, nwhole, *ends;
	char *path = write_zone_file(&size);

	(void)state;
	read_as_written(path, &size, 1);
	nwhole = ngot;
	memcpy(whole, got, sizeof(whole));
	ends = malloc(size * sizeof(*ends));
	assert_non_null(ends);
	for (size_t i = 0; i < size; i++)
		ends[i] = i + 1;
	read_as_written(path, ends, size);
	assert_int_equal(ngot, nwhole);
	assert_memory_equal(got, whole, nwhole * sizeof(*got));
	/* Cut short of the last record, the file reports what its whole records hold. */
	read_as_written(path, (size_t[]){ size - 1 }, 1);
	assert_int_equal(ngot, nwhole);
	free(ends);
	free(path);
}

/* The byte offset of the record after the header whose type is `type`. */
static size_t record_offset(const uint8_t *file, size_t size, uint32_t type)
{
	uint32_t header, total, t;
	size_t at;

	memcpy(&header, file + 8, 4);
	for (at = header; at + JF_JITDUMP_PREFIX_SIZE <= size; at += total) {
		memcpy(&t, file + at, 4);
		memcpy(&total, file + at + 4, 4);
		if (t == type)
			return at;
		assert_true(total >= JF_JITDUMP_PREFIX_SIZE);
	}
	fail_msg("no record of type %u", type);
	return 0;
}

static char *damaged_copy(const char *path, void (*damage)(uint8_t *file, size_t size),
			  size_t *size)
{
	uint8_t *file = jf_test_read_file(path, size);
	char *copy = malloc(strlen(path) + 8);

	assert_non_null(copy);
	sprintf(copy, "%s.bad", path);
	damage(file, *size);
	jf_test_write_file(copy, file, *size);
	free(file);
	return copy;
}

/* The patch record's size field below a record's prefix. */
static void shrink_patch(uint8_t *file, size_t size)
{
	uint32_t tiny = 3;

	memcpy(file + record_offset(file, size, JF_ZONE_PATCH) + 4, &tiny, 4);
}

/* The patch record's size field past the end of the file. */
static void stretch_patch(uint8_t *file, size_t size)
{
	uint32_t huge = 0x7fffffff;

	memcpy(file + record_offset(file, size, JF_ZONE_PATCH) + 4, &huge, 4);
}

static void bad_magic(uint8_t *file, size_t size)
{
	(void)size;
	file[0] ^= 0xff;
}

/* A record size that cannot be is the end of what can be read: what came before it is
 * reported, nothing after, however far the file grows. */
static void test_damaged_sizes_stop_the_read(void **state)
{
	size_t size, bad_size;
	char *path = write_zone_file(&size), *bad;

	(void)state;
	bad = damaged_copy(path, shrink_patch, &bad_size);
	read_as_written(bad, (size_t[]){ bad_size / 2, bad_size, bad_size }, 3);
	assert_true(reported(LOAD_AT, LOAD_SIZE));
	assert_false(reported(PATCH_AT, 4));
	assert_false(reported(MOVED_TO, LOAD_SIZE));
	free(bad);

	/* A size past the end: a record not written to its end yet, never read. */
	bad = damaged_copy(path, stretch_patch, &bad_size);
	read_as_written(bad, &bad_size, 1);
	assert_true(reported(LOAD_AT, LOAD_SIZE));
	assert_false(reported(PATCH_AT, 4));
	assert_false(reported(MOVED_TO, LOAD_SIZE));
	free(bad);
	free(path);
}

/* A file that is no jitdump, one too short for its header, one that cannot be opened:
 * nothing reported. */
static void test_foreign_and_missing_files_report_nothing(void **state)
{
	size_t size, bad_size;
	char *path = write_zone_file(&size), *bad, *missing;

	(void)state;
	bad = damaged_copy(path, bad_magic, &bad_size);
	read_as_written(bad, &bad_size, 1);
	assert_int_equal(ngot, 0);
	free(bad);

	read_as_written(path, (size_t[]){ 5, 11 }, 2);
	assert_int_equal(ngot, 0);

	missing = malloc(strlen(path) + 16);
	assert_non_null(missing);
	sprintf(missing, "%s.missing", path);
	read_as_written(missing, &size, 1);
	assert_int_equal(ngot, 0);
	free(missing);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whole_file_reports_code_ranges),
		cmocka_unit_test(test_byte_by_byte_writes_report_the_same),
		cmocka_unit_test(test_damaged_sizes_stop_the_read),
		cmocka_unit_test(test_foreign_and_missing_files_report_nothing),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
