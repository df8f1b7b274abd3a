/* Damaged inputs decode as far as they are whole. Every file a recording in traces/ is
 * made of (its perf.data, its zone file), and the trace buffer of a real CoreSight
 * snapshot in ../shared, is cut at many offsets, as a recorder or runtime killed
 * mid-write or a full disk would leave it, and decoded with `jitflow stat`:
 *   - a cut inside the records never fails the decode: exit 0, and the cut is reported
 *     (a perf.data cut as a "file-cut" loss, a zone file's damage as an error);
 *   - the instructions decoded never exceed the whole recording's, and a longer piece of
 *     the same file never decodes fewer than a shorter one;
 *   - a cut before any record can be read (the header) is one clear line naming the file.
 * The whole recordings' counts are the oracles of test_fragments (the runtime's counters,
 * the recorder's instruction count). */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_support.h"

enum { CUTS = 24 };

struct stat_result {
	int status;
	uint64_t insns, errors;
	int file_cut;         /* a "file-cut" loss was reported */
	char *out;
};

/* What the cut file is: how the folder is given, and how its damage shows. */
enum cut_kind {
	CUT_PERF_DATA,   /* a recording's perf.data: a "file-cut" loss */
	CUT_ZONE_FILE,   /* a recording's zone file: an error and a warning naming it */
	CUT_SNAPSHOT,    /* a CoreSight snapshot's formatted buffer: a "file-cut" loss for a
	                  * partial last frame (a cut at a frame boundary is a shorter
	                  * capture, which nothing can tell apart) */
};

static void stat_recording(const char *dir, enum cut_kind kind, const char *extra,
			   struct stat_result *s)
{
	char cmd[12288];
	cJSON *doc, *losses, *loss;

	snprintf(cmd, sizeof(cmd), "%s stat %s %s %s --json 2>%s/stderr.txt", jf_test_cli(),
		 kind == CUT_SNAPSHOT ? "--cs-snapshot" : "--recording", dir, extra, dir);
	memset(s, 0, sizeof(*s));
	s->status = jf_test_run(cmd, &s->out);
	if (s->status != 0)
		return;
	doc = cJSON_Parse(s->out);
	if (!doc)
		fail_msg("%s: not JSON: %s", cmd, s->out);
	s->insns = (uint64_t)cJSON_GetObjectItem(doc, "instructions")->valuedouble;
	s->errors = (uint64_t)cJSON_GetObjectItem(doc, "errors")->valuedouble;
	losses = cJSON_GetObjectItem(doc, "losses_by_kind");
	cJSON_ArrayForEach(loss, losses) {
		if (!strcmp(cJSON_GetObjectItem(loss, "kind")->valuestring, "file-cut"))
			s->file_cut = 1;
	}
	cJSON_Delete(doc);
}

static void copy_recording(const char *from, const char *to)
{
	char cmd[4 * 4096 + 64];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -r '%s' '%s' && chmod -R u+w '%s'", to, from,
		 to, to);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
}

/* Cut one file of a recording (name inside it) at CUTS offsets spread over the file, and
 * check each decode against the whole one. perf_data: the file is the perf.data. */
static void cut_file_of(const char *recording, const char *name, const char *extra,
			enum cut_kind kind)
{
	char dir[4096], path[4200], whole_path[4200], err_path[4200];
	struct stat_result whole, part;
	uint64_t last = 0;
	size_t size, k, decoded = 0;
	char *records = NULL;        /* the zone file's records (zone dump --json) */
	uint8_t *bytes;

	snprintf(dir, sizeof(dir), "%s/cut", jf_test_tmpdir());
	copy_recording(recording, dir);
	snprintf(whole_path, sizeof(whole_path), "%s/%s", recording, name);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(err_path, sizeof(err_path), "%s/stderr.txt", dir);
	bytes = jf_test_read_file(whole_path, &size);
	stat_recording(dir, kind, extra, &whole);
	assert_int_equal(whole.status, 0);
	assert_int_equal(whole.file_cut, 0);
	assert_true(whole.insns > 0);
	free(whole.out);

	if (kind == CUT_ZONE_FILE) {
		char cmd[8400];

		snprintf(cmd, sizeof(cmd), "%s zone dump --json %s", jf_test_cli(), whole_path);
		assert_int_equal(jf_test_run(cmd, &records), 0);
	}
	for (k = 0; k < CUTS; k++) {
		/* From a few bytes to one byte short of the whole file. */
		size_t n = k == CUTS - 1 ? size - 1 : 1 + (size - 1) * k / (CUTS - 1);
		char *err, at[64];

		/* A zone file cut between two records is only shorter: nothing to report.
		 * Cut inside the record instead. */
		snprintf(at, sizeof(at), "\"offset\":%zu,", n);
		while (records && strstr(records, at))
			snprintf(at, sizeof(at), "\"offset\":%zu,", --n);

		jf_test_write_file(path, bytes, n);
		stat_recording(dir, kind, extra, &part);
		err = jf_test_read_file(err_path, NULL);
		if (part.status != 0) {
			/* Only a cut header may stop the decode, with a line naming the file. */
			if (!strstr(err, name))
				fail_msg("%s cut at %zu: exit %d, unclear message: %s", name, n,
					 part.status, err);
			if (n > 4096)
				fail_msg("%s cut at %zu (past any header): exit %d: %s", name, n,
					 part.status, err);
			free(err);
			free(part.out);
			continue;
		}
		if (part.insns > whole.insns)
			fail_msg("%s cut at %zu: %" PRIu64 " instructions, the whole recording %"
				 PRIu64, name, n, part.insns, whole.insns);
		if (part.insns < last)
			fail_msg("%s cut at %zu: %" PRIu64 " instructions, fewer than a shorter cut "
				 "(%" PRIu64 ")", name, n, part.insns, last);
		last = part.insns;
		/* The damage is said: a perf.data cut as a loss, a zone file's as an error
		 * (and a warning naming the file and the offset). */
		if (kind == CUT_PERF_DATA && !part.file_cut)
			fail_msg("%s cut at %zu: no file-cut loss reported", name, n);
		if (kind == CUT_ZONE_FILE &&
		    (!part.errors || !strstr(err, name) || !strstr(err, "offset")))
			fail_msg("%s cut at %zu: damage not reported: %s", name, n, err);
		if (kind == CUT_SNAPSHOT && part.file_cut != (n % 16 != 0))
			fail_msg("%s cut at %zu: a partial frame is %s", name, n,
				 part.file_cut ? "reported where there is none" : "not reported");
		decoded += part.insns > 0;
		free(err);
		free(part.out);
	}
	/* Most cuts decode part of the recording. */
	assert_true(decoded >= CUTS / 2);
	free(records);
	free(bytes);
}

static void recording(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/traces/%s", jf_test_source_dir(), name);
}

static void test_minivm_perf_data_cut(void **state)
{
	char rec[4096];

	recording(rec, sizeof(rec), "minivm-bridge");
	cut_file_of(rec, "perf.data", "", CUT_PERF_DATA);
}

static void test_minivm_zone_file_cut(void **state)
{
	char rec[4096];

	recording(rec, sizeof(rec), "minivm-bridge");
	cut_file_of(rec, "jit-12201.dump", "", CUT_ZONE_FILE);
}

static void test_fib_perf_data_cut(void **state)
{
	char rec[4096], extra[4200];

	recording(rec, sizeof(rec), "recorded-fib");
	snprintf(extra, sizeof(extra), "--image-dir %s", rec);
	cut_file_of(rec, "perf.data", extra, CUT_PERF_DATA);
}

/* Records `jitflow zone dump --json` lists that end at or before offset n (all: n = 0). */
static size_t dumped_records(const char *out, size_t n)
{
	const char *p = out;
	size_t count = 0;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		cJSON *o = cJSON_ParseWithLength(p, nl ? (size_t)(nl - p) : strlen(p));
		cJSON *off = cJSON_GetObjectItem(o, "offset"), *size = cJSON_GetObjectItem(o, "size");

		if (cJSON_IsNumber(off) && cJSON_IsNumber(size) &&
		    (!n || off->valuedouble + size->valuedouble <= (double)n))
			count++;
		cJSON_Delete(o);
		p = nl ? nl + 1 : NULL;
	}
	return count;
}

/* A jitdump file (V8's, checked in) cut anywhere: `jitflow zone dump` lists exactly the
 * records that are whole before the cut, then fails with the file and the offset. */
static void test_jitdump_cut(void **state)
{
	char whole_path[4096], path[4200], cmd[12288], *whole_out = NULL, *out = NULL;
	size_t size, k, all;
	uint8_t *bytes;

	snprintf(whole_path, sizeof(whole_path), "%s/traces/node-jitdump/jit-node.dump",
		 jf_test_source_dir());
	snprintf(path, sizeof(path), "%s/jit-cut.dump", jf_test_tmpdir());
	bytes = jf_test_read_file(whole_path, &size);
	snprintf(cmd, sizeof(cmd), "%s zone dump --json %s", jf_test_cli(), whole_path);
	assert_int_equal(jf_test_run(cmd, &whole_out), 0);
	all = dumped_records(whole_out, 0);
	assert_true(all > 10);
	for (k = 0; k < CUTS; k++) {
		size_t n = 41 + (size - 42) * k / (CUTS - 1); /* past the 40-byte header */
		int status;

		jf_test_write_file(path, bytes, n);
		snprintf(cmd, sizeof(cmd), "%s zone dump --json %s 2>&1", jf_test_cli(), path);
		status = jf_test_run(cmd, &out);
		if (dumped_records(out, 0) != dumped_records(whole_out, n))
			fail_msg("cut at %zu: %zu records listed, %zu are whole", n,
				 dumped_records(out, 0), dumped_records(whole_out, n));
		if (status == 0 || !strstr(out, "jit-cut.dump: offset "))
			fail_msg("cut at %zu: exit %d without a located error: %s", n, status, out);
		free(out);
	}
	free(whole_out);
	free(bytes);
}

/* A real CoreSight capture (../shared) with its formatted ETB buffer cut. */
static void test_snapshot_buffer_cut(void **state)
{
	const char *shared = jf_test_shared_traces();
	char rec[4096];

	if (!shared)
		skip();
	snprintf(rec, sizeof(rec), "%s/coresight/juno_r1_1", shared);
	cut_file_of(rec, "cstrace.bin", "", CUT_SNAPSHOT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_minivm_perf_data_cut),
		cmocka_unit_test(test_minivm_zone_file_cut),
		cmocka_unit_test(test_fib_perf_data_cut),
		cmocka_unit_test(test_snapshot_buffer_cut),
		cmocka_unit_test(test_jitdump_cut),
	};
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
