/* Decoding in a child process (jitflow/isolate.h) against OpenCSD 1.3.3's crashes.
 *
 * tests/data/opencsd-1.3.3-crash-*.bin are inputs our fuzzer found (fuzz_cs_frames; the
 * first byte picks the protocol and framing, see decoder/fuzz/cs_frames_input.h) on which
 * OpenCSD 1.3.3 itself segfaults. Decoded in this process they kill it (checked in a
 * forked child, which also shows the input really triggers the bug); isolated, the test
 * process survives and the flow ends with an error that names OpenCSD. A valid trace
 * decodes to the same records isolated or not. */
#include "test_support.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cs_frames_input.h"
#include "cs_synthetic.h"
#include "jitflow/isolate.h"

static uint8_t *load(const char *name, size_t *size)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/tests/data/%s", jf_test_source_dir(), name);
	return jf_test_read_file(path, size);
}

/* Whether decoding data in this process kills it (run in a child). */
static int crashes_unprotected(const uint8_t *data, size_t size)
{
	pid_t child = fork();
	int status;

	if (child == 0) {
		struct jf_error err;
		struct jf_decoder *dec;
		struct jf_flow f;

		/* cmocka catches SIGSEGV to report a failed test: let the crash be one. */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		alarm(20);
		dec = jf_cs_frames_decoder(data, size, &err);
		while (dec && jf_decoder_next(dec, &f, &err) > 0)
			;
		_exit(0);
	}
	assert_true(child > 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	return WIFSIGNALED(status);
}

static void check_crash_input(const char *name)
{
	size_t size, n = 0;
	uint8_t *data = load(name, &size);
	struct jf_error err;
	struct jf_decoder *dec;
	struct jf_flow f, last;
	int rc;

	if (!crashes_unprotected(data, size)) {
		/* A fixed OpenCSD: nothing to protect against any more. */
		printf("%s: OpenCSD no longer crashes on this input\n", name);
		free(data);
		return;
	}
	dec = jf_isolated_decoder_new(jf_cs_frames_decoder(data, size, &err), "OpenCSD", &err);
	assert_non_null(dec);
	memset(&last, 0, sizeof(last));
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		last = f;
		assert_true(++n < 100000);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(last.kind, JF_FLOW_ERROR);
	assert_non_null(strstr(last.u.error.text, "OpenCSD crashed"));
	printf("%s: %zu records, then '%s' (decode offset %llu)\n", name, n, last.u.error.text,
	       (unsigned long long)last.offset);
	jf_decoder_free(dec);
	free(data);
}

static void test_crashes_become_errors(void **state)
{
	check_crash_input("opencsd-1.3.3-crash-1.bin");
	check_crash_input("opencsd-1.3.3-crash-2.bin");
}

static void collect(struct jf_decoder *dec, struct jf_flow *out, size_t cap, size_t *n)
{
	struct jf_error err;
	struct jf_flow f;

	*n = 0;
	while (jf_decoder_next(dec, &f, &err) > 0) {
		assert_true(*n < cap);
		out[(*n)++] = f;
	}
}

static void test_valid_trace_is_unchanged(void **state)
{
	static struct jf_flow direct[4096], isolated[4096];
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	struct jf_decoder *a, *b;
	size_t na, nb;

	assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "A", &err), 0);
	/* The hand-written ETMv4 trace of tests/cs_synthetic.c, over version A of its code. */
	a = cs_syn_decoder(cs_syn_trace, cs_syn_trace_size, 0, 0, map);
	b = jf_isolated_decoder_new(cs_syn_decoder(cs_syn_trace, cs_syn_trace_size, 0, 0, map),
				    "OpenCSD", &err);
	assert_non_null(b);
	collect(a, direct, 4096, &na);
	collect(b, isolated, 4096, &nb);
	assert_true(na > 0);
	assert_int_equal(na, nb);
	assert_memory_equal(direct, isolated, na * sizeof(direct[0]));
	assert_int_equal(jf_decoder_stats(a)->trace_bytes, jf_decoder_stats(b)->trace_bytes);
	jf_decoder_free(a);
	jf_decoder_free(b);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crashes_become_errors),
		cmocka_unit_test(test_valid_trace_is_unchanged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
