/* The real Intel PT captures in ../shared/traces/intel-pt, put into perf.data files (built
 * byte by byte: COMM, an executable MMAP2 of the image file at its load address,
 * ITRACE_START, the trace as one AUXTRACE buffer) and decoded with `jitflow decode --perf`:
 * the instruction address lines must be exactly libipt's reference decoder's
 * (expected-ptxed.txt.gz), and errors must be reported at the same trace offsets and IPs
 * (flow offsets are file offsets in perf.data: the payload's offset is subtracted).
 * Skipped when ../shared is absent. */
#include "test_support.h"
#include "perf_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/mapped_file.h"

struct lines {
	char **v;
	size_t n;
};

/* The address lines, or the error lines with their offset made relative to base. */
static void select_lines(char *text, int errors, uint64_t base, struct lines *out)
{
	char *save = NULL, *line;

	out->v = NULL;
	out->n = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int is_error = line[0] == '[' && strstr(line, " error: ");

		if (errors ? !is_error : line[0] == '[')
			continue;
		if (!(out->n & 1023))
			out->v = realloc(out->v, (out->n + 1024) * sizeof(*out->v));
		if (errors && base) {
			char *rest, *copy;
			unsigned long long off = strtoull(line + 1, &rest, 16);

			copy = malloc(strlen(line) + 32);
			sprintf(copy, "[%llx%s", off - base, rest);
			line = copy; /* leaked with the test's text: small */
		}
		out->v[out->n++] = line;
	}
}

static void compare(const char *what, const struct lines *got, const struct lines *want)
{
	size_t i;

	for (i = 0; i < got->n && i < want->n; i++) {
		if (strcmp(got->v[i], want->v[i]))
			fail_msg("%s line %zu: jitflow printed '%s', the reference '%s'", what, i + 1,
				 got->v[i], want->v[i]);
	}
	if (got->n != want->n)
		fail_msg("%s: jitflow printed %zu lines, the reference %zu", what, got->n, want->n);
}

static void check_capture(const char *name, uint64_t base)
{
	const char *dir = jf_test_shared_traces();
	char cmd[2048], image[1024], trace_path[1024], path[1024];
	char *got, *want, *got2, *want2;
	struct lines ga, wa, ge, we;
	struct jf_mapped_file trace, data;
	struct jf_error err;
	struct pb_sid sid = { 4242, 4242, 1, 0 };
	uint64_t priv[17], at;
	struct pb b;

	if (!dir)
		skip();
	snprintf(image, sizeof(image), "%s/intel-pt/%s/data", dir, name);
	snprintf(trace_path, sizeof(trace_path), "%s/intel-pt/%s/trace", dir, name);
	snprintf(path, sizeof(path), "%s/%s.perf.data", jf_test_tmpdir(), name);
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
	at = pb_auxtrace(&b, trace.data, trace.size, 0, 0, 4242, (uint32_t)-1);
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
	compare("instructions", &ga, &wa);
	select_lines(got2, 1, at + 48, &ge);
	select_lines(want2, 1, 0, &we);
	compare("errors", &ge, &we);
	print_message("%s in perf.data: %zu instructions and %zu errors as the reference\n", name,
		      ga.n, ge.n);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foo),
		cmocka_unit_test(test_unzip),
	};

	if (!jf_test_shared_traces())
		return JF_TEST_SKIP;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
