/* Hostile sizes: every size and offset field of a perf.data (the file header,
 * the attr, the feature table, record sizes, AUXTRACE sizes and offsets, AUX, MMAP2 and
 * AUXTRACE_INFO) and of a zone file (the jitdump header, record sizes, CODE_LOAD's
 * code_size, REGION_LOAD's size, PATCH's size, PC_MAP's count, and CODE_MOVE, DEBUG_INFO,
 * REGION_FREE and REGION_MOVE records added with absurd sizes) is set to 2^64 - 1, 2^63,
 * 2^32, just past the end of the file and 0, in a copy of a checked-in recording, and
 * `jitflow stat` (or `jitflow zone dump`) runs on each under an address-space limit
 * (RLIMIT_AS) 64 MB above the smallest one the whole recording decodes in (measured here
 * first). Each run must end with
 *   - exit 0: JSON on stdout, and any warning naming the file and an offset; or
 *   - exit 1: one line naming the file, an offset and, where the field belongs to a
 *     record whose own check finds the damage, that record's type and offset;
 * never a crash, never "out of memory" (jitflow never allocates by a size read from a
 * file). The fields are found by walking the files here, independently of jitflow's readers.
 * Sanitized builds cannot run under RLIMIT_AS (the shadow memory): there the limit is left
 * out and the rest is checked. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

enum { HEADROOM_MB = 64 };

/* The values every field is set to (PAST_END: the file's size + 1). */
#define PAST_END UINT64_C(0xfeedfacefeedface)
static const uint64_t hostile[] = { UINT64_MAX, UINT64_C(1) << 63, UINT64_C(1) << 32, PAST_END,
				    0 };

static char dir[4096];          /* the recording being damaged */
static unsigned limit_mb;       /* 0: no limit (sanitized build) */

static uint64_t get(const uint8_t *p, unsigned width)
{
	uint64_t v = 0;

	memcpy(&v, p, width);
	return v;
}

static void put(uint8_t *p, unsigned width, uint64_t v)
{
	memcpy(p, &v, width);
}

/* Run a jitflow command line under the limit; its exit status, stdout in *out, stderr in
 * *err_text. */
static int run_limited(const char *args, char **out, char **err_text)
{
	char cmd[16384], err_path[4200];
	int status;

	snprintf(err_path, sizeof(err_path), "%s/stderr.txt", dir);
	if (limit_mb)
		snprintf(cmd, sizeof(cmd), "ulimit -v %u && exec '%s' %s 2>'%s'", limit_mb * 1024,
			 jf_test_cli(), args, err_path);
	else
		snprintf(cmd, sizeof(cmd), "exec '%s' %s 2>'%s'", jf_test_cli(), args, err_path);
	status = jf_test_run(cmd, out);
	*err_text = jf_test_read_file(err_path, NULL);
	return status;
}

/* The smallest limit (in MB, to 4 MB) under which the undamaged recording decodes, plus
 * the headroom. */
static void measure_limit(const char *args)
{
	unsigned lo = 16, hi = 1024;
	char *out, *err_text;

	if (limit_mb)
		return; /* measured already, on the largest of the recordings */
	if (SANITIZED) {
		printf("sanitized build: no address-space limit (shadow memory)\n");
		return;
	}
	limit_mb = hi;
	if (run_limited(args, &out, &err_text) != 0)
		fail_msg("the undamaged recording fails under %u MB: %s", hi, err_text);
	free(out);
	free(err_text);
	while (hi - lo > 4) {
		unsigned mid = (lo + hi) / 2;
		int ok;

		limit_mb = mid;
		ok = run_limited(args, &out, &err_text) == 0;
		free(out);
		free(err_text);
		if (ok)
			hi = mid;
		else
			lo = mid;
	}
	limit_mb = hi + HEADROOM_MB;
	printf("the undamaged recording decodes in %u MB of address space; limit %u MB\n", hi,
	       limit_mb);
}

struct field {
	const char *what;       /* "AUXTRACE size" */
	unsigned width;         /* bytes */
	uint64_t at;            /* file offset of the field */
	const char *record;     /* when exit 1 must name this record type and its offset */
	uint64_t record_at;
};

/* One damaged copy of file (size bytes, at path) per hostile value of f; args runs it. */
static void check_field(const char *path, const uint8_t *orig, size_t size,
			const struct field *f, const char *args)
{
	uint8_t *copy = malloc(size);
	size_t i;

	assert_non_null(copy);
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		uint64_t v = hostile[i] == PAST_END ? size + 1 : hostile[i];
		char *out = NULL, *err_text = NULL, want[128];
		int status;

		memcpy(copy, orig, size);
		put(copy + f->at, f->width, v);
		jf_test_write_file(path, copy, size);
		status = run_limited(args, &out, &err_text);
		if (status != 0 && status != 1)
			fail_msg("%s = %" PRIu64 ": exit status %d (a crash or out of memory?): %s",
				 f->what, v, status, err_text);
		if (strstr(err_text, "out of memory") || strstr(err_text, "Sanitizer"))
			fail_msg("%s = %" PRIu64 ": %s", f->what, v, err_text);
		if (err_text[0] && (!strstr(err_text, path) || !strstr(err_text, "offset ")))
			fail_msg("%s = %" PRIu64 ": the message does not name the file and an "
				 "offset: %s", f->what, v, err_text);
		if (status == 1) {
			if (strchr(err_text, '\n') != strrchr(err_text, '\n'))
				fail_msg("%s = %" PRIu64 ": more than one line: %s", f->what, v,
					 err_text);
			snprintf(want, sizeof(want), "offset %" PRIu64 ": %s", f->record_at,
				 f->record ? f->record : "");
			/* (A size of 0 makes the bytes after the record read as records.) */
			if (f->record && v != 0 && !strstr(err_text, want))
				fail_msg("%s = %" PRIu64 ": expected \"%s\" in: %s", f->what, v,
					 want, err_text);
		} else if (out[0] != '{') {
			fail_msg("%s = %" PRIu64 ": exit 0 without JSON: %s", f->what, v, out);
		}
		free(out);
		free(err_text);
	}
	jf_test_write_file(path, orig, size);
	free(copy);
}

static void copy_recording(const char *name)
{
	char cmd[16384];

	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s/traces/%s' '%s' && chmod -R u+w '%s'",
		 dir, jf_test_source_dir(), name, dir, dir);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
}

/* perf.data layout (perf's util/header.h): header {magic, size, attr_size, attrs {off,
 * size}, data {off, size}, event_types {off, size}, features bitmap}; records of {u32
 * type, u16 misc, u16 size}; an AUXTRACE record's payload follows it (its u64 size at +8). */
enum { AUXTRACE_INFO = 70, AUXTRACE = 71, AUX = 11, MMAP2 = 10 };

static uint64_t first_record(const uint8_t *d, uint32_t type)
{
	uint64_t at = get(d + 40, 8), end = at + get(d + 48, 8);

	while (at + 8 <= end) {
		uint32_t t = (uint32_t)get(d + at, 4);
		uint64_t size = get(d + at + 6, 2);

		if (t == type)
			return at;
		assert_true(size >= 8);
		at += size + (t == AUXTRACE ? get(d + at + 8, 8) : 0);
	}
	fail_msg("no record of type %u", type);
	return 0;
}

static void test_perf_data(void **state)
{
	char path[4200], args[8400];
	uint8_t *d;
	size_t size;
	uint64_t attrs, attr_size, table, info, aux, auxtrace, mmap2;

	(void)state;
	copy_recording("recorded-fib");
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	snprintf(args, sizeof(args), "stat --recording '%s' --image-dir '%s' --json", dir, dir);
	measure_limit(args);
	d = jf_test_read_file(path, &size);
	attrs = get(d + 24, 8);
	attr_size = get(d + 16, 8);
	table = get(d + 40, 8) + get(d + 48, 8);
	info = first_record(d, AUXTRACE_INFO);
	aux = first_record(d, AUX);
	auxtrace = first_record(d, AUXTRACE);
	mmap2 = first_record(d, MMAP2);
	{
		const struct field fields[] = {
			{ "header size", 8, 8, NULL, 0 },
			{ "attr entry size", 8, 16, NULL, 0 },
			{ "attrs offset", 8, 24, NULL, 0 },
			{ "attrs size", 8, 32, NULL, 0 },
			{ "data offset", 8, 40, NULL, 0 },
			{ "data size", 8, 48, NULL, 0 },
			{ "perf_event_attr.size", 4, attrs + 4, NULL, 0 },
			{ "event ids size", 8, attrs + attr_size - 8, NULL, 0 },
			{ "first feature size", 8, table + 8, NULL, 0 },
			{ "AUXTRACE_INFO record size", 2, info + 6, NULL, 0 },
			{ "AUXTRACE_INFO filter length", 8, info + 16 + 8 * 16, NULL, 0 },
			{ "MMAP2 record size", 2, mmap2 + 6, NULL, 0 },
			{ "MMAP2 len", 8, mmap2 + 24, NULL, 0 },
			{ "AUX size", 8, aux + 16, NULL, 0 },
			{ "AUXTRACE record size", 2, auxtrace + 6, NULL, 0 },
			{ "AUXTRACE size", 8, auxtrace + 8, "AUXTRACE", auxtrace },
			{ "AUXTRACE offset", 8, auxtrace + 16, NULL, 0 },
		};
		size_t i;

		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			check_field(path, d, size, &fields[i], args);
	}
	free(d);
}

/* jitdump (perf's jitdump.h): a header whose u32 at 8 is its size; records of {u32 id,
 * u32 total_size, u64 timestamp}; jitflow's extension records (id 0x4A460000 + n) go on
 * with {u64 seq, u32 tid, u16 version, u16 reserved} (docs/zone-format.md). */
enum {
	CODE_LOAD = 0, CODE_MOVE = 1, DEBUG_INFO = 2,
	EXT = 0x4A460000, CLOCK = EXT + 1, REGION_LOAD = EXT + 2, REGION_FREE = EXT + 3,
	REGION_MOVE = EXT + 4, PATCH = EXT + 5, PC_MAP = EXT + 7,
};

struct zone_walk {
	uint64_t first[16], first_ext[16]; /* the first record of each perf / extension id */
	uint64_t last, max_seq, max_time, code_addr;
};

static void walk_zone(const uint8_t *d, size_t size, struct zone_walk *w)
{
	uint64_t at = get(d + 8, 4);

	memset(w, 0, sizeof(*w));
	while (at + 16 <= size) {
		uint32_t id = (uint32_t)get(d + at, 4), len = (uint32_t)get(d + at + 4, 4);

		assert_true(len >= 16 && len <= size - at);
		if (id < 16 && !w->first[id])
			w->first[id] = at;
		if (id > EXT && id < EXT + 16) {
			if (!w->first_ext[id - EXT])
				w->first_ext[id - EXT] = at;
			if (get(d + at + 16, 8) > w->max_seq)
				w->max_seq = get(d + at + 16, 8);
		}
		if (id == CODE_LOAD && !w->code_addr)
			w->code_addr = get(d + at + 32, 8);
		if (get(d + at + 8, 8) > w->max_time)
			w->max_time = get(d + at + 8, 8);
		w->last = at;
		at += len;
	}
}

/* A fresh copy of the minivm recording; its zone file's bytes, path and walk. */
static uint8_t *minivm_zone_file(char path[4200], size_t *size, struct zone_walk *w)
{
	uint8_t *d;

	copy_recording("minivm-bridge");
	snprintf(path, 4200, "%s/jit-12201.dump", dir);
	d = jf_test_read_file(path, size);
	walk_zone(d, *size, w);
	return d;
}

static void test_zone_records(void **state)
{
	char path[4200], args[8400];
	uint8_t *d;
	size_t size;
	struct zone_walk w;

	(void)state;
	d = minivm_zone_file(path, &size, &w);
	snprintf(args, sizeof(args), "zone dump '%s' --json", path);
	measure_limit(args);
	{
		const struct field fields[] = {
			{ "jitdump header size", 4, 8, NULL, 0 },
			{ "CODE_LOAD total_size", 4, w.first[CODE_LOAD] + 4, NULL, 0 },
			{ "CODE_LOAD code_size", 8, w.first[CODE_LOAD] + 40, "CODE_LOAD",
			  w.first[CODE_LOAD] },
			{ "REGION_LOAD size", 8, w.first_ext[2] + 40, "REGION_LOAD", w.first_ext[2] },
			{ "PATCH size", 4, w.first_ext[5] + 40, NULL, 0 },
			{ "PC_MAP count", 4, w.first_ext[7] + 40, NULL, 0 },
			{ "last record's total_size", 4, w.last + 4, NULL, 0 },
		};
		size_t i;

		assert_true(w.first[CODE_LOAD] && w.first_ext[1] && w.first_ext[2] &&
			    w.first_ext[5] && w.first_ext[7]);
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			check_field(path, d, size, &fields[i], args);
	}
	free(d);
}

/* A record appended to the zone file: prefix, then body (len bytes). */
static size_t append(uint8_t *d, size_t size, uint32_t id, uint64_t time, uint64_t seq,
		     const uint64_t *body, size_t words)
{
	size_t ext = id > EXT ? 16 : 0, len = 16 + ext + 8 * words;

	put(d + size, 4, id);
	put(d + size + 4, 4, len);
	put(d + size + 8, 8, time);
	if (ext) {
		put(d + size + 16, 8, seq);
		put(d + size + 24, 4, 0);
		put(d + size + 28, 2, 1);  /* version */
		put(d + size + 30, 2, 0);
	}
	memcpy(d + size + 16 + ext, body, 8 * words);
	return len;
}

/* Records with absurd sizes that the zone image applies while the trace decodes
 * (CODE_MOVE, REGION_FREE, REGION_MOVE of a region that exists; DEBUG_INFO's count). */
static void test_zone_image(void **state)
{
	char path[4200], args[8400];
	uint8_t *d, *grown;
	size_t size;
	struct zone_walk w;

	(void)state;
	d = minivm_zone_file(path, &size, &w);
	snprintf(args, sizeof(args), "stat --recording '%s' --json", dir);
	measure_limit(args);
	grown = calloc(1, size + 512);
	assert_non_null(grown);
	memcpy(grown, d, size);
	{
		const uint64_t move[] = { 0, 0, w.code_addr, UINT64_C(0x5000000000), 1, 0 };
		const uint64_t debug[] = { w.code_addr, 1 };
		const uint64_t region_free[] = { w.code_addr, 1 };
		const uint64_t region_move[] = { w.code_addr, UINT64_C(0x6000000000), 1 };
		size_t at_move = size, at_debug, at_free, at_rmove, end;

		at_debug = at_move + append(grown, at_move, CODE_MOVE, w.max_time, 0, move, 6);
		at_free = at_debug + append(grown, at_debug, DEBUG_INFO, w.max_time, 0, debug, 2);
		at_rmove = at_free + append(grown, at_free, REGION_FREE, w.max_time, w.max_seq + 1,
					    region_free, 2);
		end = at_rmove + append(grown, at_rmove, REGION_MOVE, w.max_time, w.max_seq + 2,
					region_move, 3);
		{
			const struct field fields[] = {
				{ "CODE_MOVE size", 8, at_move + 16 + 32, NULL, 0 },
				{ "DEBUG_INFO nr_entry", 8, at_debug + 24, NULL, 0 },
				{ "REGION_FREE size", 8, at_free + 40, NULL, 0 },
				{ "REGION_MOVE size", 8, at_rmove + 48, NULL, 0 },
			};
			size_t i;

			for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
				check_field(path, grown, end, &fields[i], args);
		}
		jf_test_write_file(path, d, size);
	}
	free(grown);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zone_image),    /* first: its decode sets the limit */
		cmocka_unit_test(test_perf_data),
		cmocka_unit_test(test_zone_records),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
