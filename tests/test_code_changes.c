/* Code a JIT rewrites in place without saying so, made exact by the recorder: the JIT test
 * program (tests/programs/jit.c --unannounced) describes version A of a function (2
 * instructions) at an address, runs it RUNS_A = 100 times, overwrites it with version B
 * (3 instructions) at the same address without a record, and runs that RUNS_B = 50 times.
 * The recorder sees the new bytes run and writes them as an observed patch at the exact
 * position where they first ran (record_code_changes.h); decoded with it, the region holds
 * exactly RUNS_A * 2 + RUNS_B * 3 instructions in RUNS_A + RUNS_B entries (the program's
 * semantics fix both), with no decode error, and the one change is counted. The same
 * recording without the recorder's observed patches decodes version B's runs over version
 * A's bytes: both end in a return, so the trace fits either, and the decode silently
 * counts 2 instructions a run where 3 ran, one less than the recorder counted for each of
 * those runs.
 *
 * The same for a JIT whose code is never writable and executable at once (--wx
 * --unannounced): the page is mapped read-write, made executable by mprotect, and made
 * writable and executable again around the rewrite; the recorder follows memory made
 * executable by mprotect as it follows executable mappings, so the counts are as exact.
 *
 * And a runtime whose record comes late (--no-markers --unannounced --late-record): after
 * version B ran, a record of version A at the address, dated by its write() as HotSpot's
 * agent's are, and RUNS_B more runs of version B. A decoder applies that record over the
 * thread's observed patch, so the recorder writes the bytes the thread runs there again
 * after it (record_zone_code.c); without that, the last runs decode as version A's 2
 * instructions (HotSpot: a resolved call site decoded as the resolving stub, the trace's
 * bits out of step, "bad compressed return" errors after every resync).
 *
 * And the reader's side on its own: an observed patch applies only where the image holds
 * other bytes or none, and only then is it a code change the analysis hears of. */
#include "test_support.h"

#include "jitflow/codemap.h"
#include "jitflow/zone_format.h"
#include "jitflow/zone_image.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RUNS_A = 100, RUNS_B = 50 };

static char rec[512], rec_log[512], rec_wx[512], rec_late[512];

/* The program recorded with the plugin backend (rec), QEMU's log (rec_log), with its
 * page made executable by mprotect (rec_wx), and with a late record (rec_late). */
static int record_once(void **state)
{
	const char *tmp = jf_test_tmpdir(), *prog = getenv("JITFLOW_JIT_PROGRAM");
	char cmd[4096];

	(void)state;
	if (!prog)
		return -1;
	snprintf(rec, sizeof(rec), "%s/rec", tmp);
	snprintf(rec_log, sizeof(rec_log), "%s/rec-log", tmp);
	snprintf(rec_wx, sizeof(rec_wx), "%s/rec-wx", tmp);
	snprintf(rec_late, sizeof(rec_late), "%s/rec-late", tmp);
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' record -o '%s' -- '%s' --unannounced > /dev/null"
		 " && '%s' record --backend=log -o '%s' -- '%s' --unannounced > /dev/null"
		 " && '%s' record -o '%s' -- '%s' --wx --unannounced > /dev/null"
		 " && '%s' record -o '%s' -- '%s' --no-markers --unannounced --late-record > /dev/null",
		 tmp, jf_test_cli(), rec, prog, jf_test_cli(), rec_log, prog, jf_test_cli(), rec_wx,
		 prog, jf_test_cli(), rec_late, prog);
	return jf_test_run(cmd, NULL) == 0 ? 0 : -1;
}

static cJSON *report_of(const char *dir)
{
	char cmd[4096], *out;
	cJSON *report;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	report = cJSON_Parse(out);
	free(out);
	assert_non_null(report);
	return report;
}

static double number(const cJSON *obj, const char *key)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(obj, key);

	assert_true(cJSON_IsNumber(n));
	return n->valuedouble;
}

/* The instructions and entries of the region the runtime named "version A". */
static void function_counts(const cJSON *report, uint64_t *insns, uint64_t *entries)
{
	const cJSON *r;

	*insns = *entries = 0;
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(report, "regions")) {
		if (strcmp(cJSON_GetObjectItemCaseSensitive(r, "name")->valuestring, "version A"))
			continue;
		*insns += (uint64_t)number(r, "instructions");
		*entries += (uint64_t)number(r, "entries");
	}
}

/* The instructions the recorder counted as QEMU ran them (manifest.json of dir). */
static double recorded_instructions(const char *dir)
{
	char path[600], *text;
	cJSON *manifest;
	double n;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	text = jf_test_read_file(path, NULL);
	manifest = cJSON_Parse(text);
	free(text);
	assert_non_null(manifest);
	n = number(manifest, "instructions");
	cJSON_Delete(manifest);
	return n;
}

static void rewrite_in_place_is_exact(const char *dir)
{
	cJSON *report = report_of(dir);
	const cJSON *observed = cJSON_GetObjectItemCaseSensitive(report, "observed_code");
	uint64_t insns, entries;

	function_counts(report, &insns, &entries);
	assert_int_equal(insns, RUNS_A * 2 + RUNS_B * 3);
	assert_int_equal(entries, RUNS_A + RUNS_B);
	assert_int_equal(number(cJSON_GetObjectItemCaseSensitive(report, "summary"),
				"decode_errors"), 0);
	assert_non_null(observed);
	assert_int_equal(number(observed, "changed"), 1);
	assert_int_equal(number(observed, "before_record"), 0);
	assert_int_equal(number(cJSON_GetObjectItemCaseSensitive(report, "summary"),
				"instructions"), recorded_instructions(dir));
	cJSON_Delete(report);
}

static void test_rewrite_in_place_is_exact(void **state)
{
	(void)state;
	rewrite_in_place_is_exact(rec);
}

/* The log backend names no translations (each execution gets the newest bytes at its
 * address): the same here, where no execution of the old code is pending at the rewrite. */
static void test_rewrite_in_place_is_exact_from_the_log(void **state)
{
	(void)state;
	rewrite_in_place_is_exact(rec_log);
}

static void test_rewrite_of_memory_made_executable_by_mprotect_is_exact(void **state)
{
	(void)state;
	rewrite_in_place_is_exact(rec_wx);
}

static void test_without_observed_patches_the_rewrite_mismatches(void **state)
{
	char only[600], cmd[4096];
	cJSON *report;
	struct dirent *e;
	DIR *d;
	uint64_t insns, entries;

	(void)state;
	snprintf(only, sizeof(only), "%s-runtime-only", rec);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s/perf.data' '%s/manifest.json' '%s/'",
		 only, rec, rec, only);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	d = opendir(rec);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "jit-", 4) || !strstr(e->d_name, ".dump"))
			continue; /* the runtime's zone files, not the recorder's observed code */
		snprintf(cmd, sizeof(cmd), "cp '%s/%s' '%s/'", rec, e->d_name, only);
		assert_int_equal(jf_test_run(cmd, NULL), 0);
	}
	closedir(d);
	report = report_of(only);
	function_counts(report, &insns, &entries);
	assert_int_equal(insns, RUNS_A * 2 + RUNS_B * 2);
	assert_int_equal(number(cJSON_GetObjectItemCaseSensitive(report, "summary"),
				"instructions"), recorded_instructions(rec) - RUNS_B);
	assert_null(cJSON_GetObjectItemCaseSensitive(report, "observed_code"));
	cJSON_Delete(report);
}

static void test_rewrite_before_a_late_record_is_exact(void **state)
{
	cJSON *report = report_of(rec_late);
	uint64_t insns, entries;

	(void)state;
	function_counts(report, &insns, &entries);
	assert_int_equal(insns, RUNS_A * 2 + 2 * RUNS_B * 3);
	assert_int_equal(entries, RUNS_A + 2 * RUNS_B);
	assert_int_equal(number(cJSON_GetObjectItemCaseSensitive(report, "summary"),
				"decode_errors"), 0);
	assert_int_equal(number(cJSON_GetObjectItemCaseSensitive(report, "summary"),
				"instructions"), recorded_instructions(rec_late));
	cJSON_Delete(report);
}

/* A zone file by hand: little-endian fields, as the reader takes them on this machine. */
struct zone_out {
	FILE *f;
	uint64_t seq;
};

static void put(struct zone_out *z, const void *p, size_t n)
{
	assert_int_equal(fwrite(p, 1, n, z->f), n);
}

static void put32(struct zone_out *z, uint32_t v)
{
	put(z, &v, 4);
}

static void put64(struct zone_out *z, uint64_t v)
{
	put(z, &v, 8);
}

static void code_load(struct zone_out *z, uint64_t addr, const uint8_t *code, uint32_t n)
{
	put32(z, JF_JITDUMP_CODE_LOAD);
	put32(z, JF_JITDUMP_PREFIX_SIZE + JF_JITDUMP_CODE_LOAD_FIXED + 2 + n);
	put64(z, 1);
	put32(z, 1);
	put32(z, 1);
	put64(z, addr);
	put64(z, addr);
	put64(z, n);
	put64(z, 0);
	put(z, "f", 2);
	put(z, code, n);
}

static void patch(struct zone_out *z, uint64_t addr, const uint8_t *bytes, uint32_t n,
		  uint32_t flags)
{
	uint16_t version = JF_ZONE_EXT_VERSION, reserved = 0;

	put32(z, JF_ZONE_PATCH);
	put32(z, JF_JITDUMP_PREFIX_SIZE + JF_ZONE_EXT_PREFIX_SIZE + JF_ZONE_PATCH_FIXED + n + 4);
	put64(z, 2 + z->seq);
	put64(z, ++z->seq);
	put32(z, 1);
	put(z, &version, 2);
	put(z, &reserved, 2);
	put64(z, addr);
	put32(z, n);
	put32(z, flags);
	put(z, bytes, n);
	put(z, "ran", 4);
}

/* Open path for writing a zone file: its header written. */
static void zone_begin(struct zone_out *z, const char *path)
{
	memset(z, 0, sizeof(*z));
	z->f = fopen(path, "wb");
	assert_non_null(z->f);
	put32(z, JF_JITDUMP_MAGIC);
	put32(z, JF_JITDUMP_VERSION);
	put32(z, JF_JITDUMP_HEADER_SIZE);
	put32(z, 62);
	put32(z, 0);
	put32(z, 1);
	put64(z, 0);
	put64(z, 0);
}

static int count_apply(void *ctx, const struct jf_zone_reader *reader,
		       const struct jf_zone_record *rec)
{
	(void)reader;
	(void)rec;
	++*(int *)ctx;
	return 0;
}

static void test_observed_patch_applies_only_where_bytes_differ(void **state)
{
	static const uint8_t code[] = { 0x90, 0x90, 0x90, 0xc3 }, same[] = { 0x90, 0x90 },
			     int3[] = { 0xcc }, ret[] = { 0xc3 };
	char path[600];
	struct zone_out z = { 0 };
	struct jf_codemap *map = jf_codemap_new();
	struct jf_zone_image *zi;
	const struct jf_zone_image_stats *st;
	struct jf_error err = { 0 };
	int applied = 0;
	uint8_t b = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/observed.dump", jf_test_tmpdir());
	zone_begin(&z, path);
	code_load(&z, 0x1000, code, sizeof(code));
	patch(&z, 0x1000, same, sizeof(same), JF_PATCH_OBSERVED);  /* held already */
	patch(&z, 0x1001, int3, sizeof(int3), JF_PATCH_OBSERVED);  /* other bytes */
	patch(&z, 0x2000, ret, sizeof(ret), JF_PATCH_OBSERVED);    /* nothing mapped */
	patch(&z, 0x1003, ret, sizeof(ret), 0);                    /* a runtime's word */
	assert_int_equal(fclose(z.f), 0);

	zi = jf_zone_image_new(map, NULL, &err);
	assert_non_null(zi);
	jf_zone_image_on_apply(zi, count_apply, &applied);
	assert_int_equal(jf_zone_image_add_file(zi, path, &err), 0);
	assert_int_equal(jf_zone_image_apply_all(zi, &err), 0);
	st = jf_zone_image_stats(zi);
	assert_int_equal(st->observed_same, 1);
	assert_int_equal(st->observed_changed, 1);
	assert_int_equal(st->observed_unmapped, 1);
	assert_int_equal(st->patches, 3);
	assert_int_equal(applied, 4); /* the load and three patches, not the one that held */
	assert_int_equal(jf_codemap_read(map, 0x1001, &b, 1), 1);
	assert_int_equal(b, 0xcc);
	assert_int_equal(jf_codemap_read(map, 0x2000, &b, 1), 1);
	assert_int_equal(b, 0xc3);
	jf_zone_image_free(zi);
	jf_codemap_free(map);
}

/* The code is settled (a perf session may decode ahead with the fast path) while the
 * observed patches still to apply hold the bytes the image has, and only then: a runtime's
 * code applied (one file), then a recorder's observed patches not applied yet (another):
 * all holding the image's bytes; one of other bytes; one where nothing is mapped; and a
 * runtime's patch of the same bytes (a change the runtime announced: it counts). */
static void test_settled_with_observed_patches_left(void **state)
{
	static const uint8_t code[] = { 0x90, 0x90, 0x90, 0xc3 }, same[] = { 0x90, 0x90 },
			     ret[] = { 0xc3 }, int3[] = { 0xcc };
	int kind;

	(void)state;
	for (kind = 0; kind < 4; kind++) {
		char runtime[600], observed[600];
		struct zone_out z;
		struct jf_codemap *map = jf_codemap_new();
		struct jf_error err = { 0 };
		struct jf_zone_image *zi;

		snprintf(runtime, sizeof(runtime), "%s/runtime-%d.dump", jf_test_tmpdir(), kind);
		snprintf(observed, sizeof(observed), "%s/observed-%d.dump", jf_test_tmpdir(),
			 kind);
		zone_begin(&z, runtime);
		code_load(&z, 0x1000, code, sizeof(code));
		assert_int_equal(fclose(z.f), 0);
		zone_begin(&z, observed);
		patch(&z, 0x1000, same, sizeof(same), JF_PATCH_OBSERVED);
		patch(&z, 0x1003, ret, sizeof(ret), JF_PATCH_OBSERVED);
		if (kind == 1)
			patch(&z, 0x1001, int3, sizeof(int3), JF_PATCH_OBSERVED);
		if (kind == 2)
			patch(&z, 0x2000, ret, sizeof(ret), JF_PATCH_OBSERVED);
		if (kind == 3)
			patch(&z, 0x1003, ret, sizeof(ret), 0);
		assert_int_equal(fclose(z.f), 0);

		zi = jf_zone_image_new(map, NULL, &err);
		assert_non_null(zi);
		assert_int_equal(jf_zone_image_add_file(zi, runtime, &err), 0);
		assert_false(jf_zone_image_code_settled(zi));
		assert_int_equal(jf_zone_image_apply_all(zi, &err), 0);
		assert_true(jf_zone_image_code_settled(zi));
		assert_int_equal(jf_zone_image_add_file(zi, observed, &err), 0);
		assert_int_equal(jf_zone_image_code_settled(zi), kind == 0);
		assert_int_equal(jf_zone_image_apply_all(zi, &err), 0);
		assert_true(jf_zone_image_code_settled(zi));
		jf_zone_image_free(zi);
		jf_codemap_free(map);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_observed_patch_applies_only_where_bytes_differ),
		cmocka_unit_test(test_settled_with_observed_patches_left),
		cmocka_unit_test(test_rewrite_in_place_is_exact),
		cmocka_unit_test(test_rewrite_in_place_is_exact_from_the_log),
		cmocka_unit_test(test_rewrite_of_memory_made_executable_by_mprotect_is_exact),
		cmocka_unit_test(test_without_observed_patches_the_rewrite_mismatches),
		cmocka_unit_test(test_rewrite_before_a_late_record_is_exact),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, record_once, NULL));
}
