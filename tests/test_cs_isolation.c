/* Decoding in a child process (jitflow/isolate.h) against OpenCSD 1.3.3's crashes.
 *
 * tests/data/opencsd-1.3.3-crash-*.bin are inputs our fuzzer found (fuzz_cs_frames; the
 * first byte picks the protocol and framing, see decoder/fuzz/cs_frames_input.h) on which
 * OpenCSD 1.3.3 itself segfaults. Decoded in this process they kill it (checked in a
 * forked child, which also shows the input really triggers the bug); isolated, the test
 * process survives, the crash is an error that names OpenCSD at the frame that crashed,
 * followed by a "decoder-crash" loss of the bytes skipped, and decoding goes on. Whether
 * OpenCSD crashes on them depends on its heap (the bugs read memory they do not own), so
 * each check tries a few times and the test requires the crash at least once.
 *
 * Resuming: a crash input followed by a good trace (tests/cs_synthetic.c's ETMv4 trace, in
 * frames of another trace ID) in one buffer; after the crash the good trace must decode to
 * exactly what it decodes to alone, without OpenCSD crashing (the oracle: the same
 * OpenCSD decoding those frames by themselves in this process), in both isolation modes.
 * A valid trace decodes to the same records isolated or not. */
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

/* OpenCSD's bugs read past the bytes they are given: the input is followed by zeros (as in
 * the fuzzer's buffers), not by whatever the heap holds, so that they crash the same way
 * each time. */
static uint8_t *load(const char *name, size_t *size)
{
	char path[1024];
	uint8_t *file, *data;

	snprintf(path, sizeof(path), "%s/tests/data/%s", jf_test_source_dir(), name);
	file = jf_test_read_file(path, size);
	data = calloc(1, *size + 65536);
	assert_non_null(data);
	memcpy(data, file, *size);
	free(file);
	return data;
}

static void collect(struct jf_decoder *dec, struct jf_flow *out, size_t cap, size_t *n,
		    int free_it)
{
	struct jf_error err;
	struct jf_flow f;

	*n = 0;
	while (jf_decoder_next(dec, &f, &err) > 0) {
		assert_true(*n < cap);
		out[(*n)++] = f;
	}
	if (free_it)
		jf_decoder_free(dec);
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

/* The records of an isolated decode; 1 if OpenCSD crashed in it (checked located). */
static int isolated_crash_checked(struct jf_decoder *dec, struct jf_flow *out, size_t cap,
				  size_t *n, uint64_t size)
{
	struct jf_error err;
	struct jf_flow f;
	int rc, crashes = 0;
	size_t i;

	assert_non_null(dec);
	*n = 0;
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		assert_true(*n < cap);
		out[(*n)++] = f;
	}
	assert_int_equal(rc, 0);
	for (i = 0; i < *n; i++) {
		const struct jf_flow *e = &out[i];

		if (e->kind != JF_FLOW_ERROR || !strstr(e->u.error.text, "OpenCSD crashed"))
			continue;
		crashes++;
		assert_non_null(strstr(e->u.error.text, "resumed after it"));
		/* Located at a frame of the buffer, and the next record is the loss: the
		 * crashing frame (or more) skipped, from that frame on. */
		assert_int_equal(e->offset % 16, 0);
		assert_true(e->offset < size);
		assert_true(i + 1 < *n);
		assert_int_equal(out[i + 1].kind, JF_FLOW_LOST);
		assert_int_equal(out[i + 1].u.lost.reason, JF_LOST_DECODER_CRASH);
		assert_true(out[i + 1].offset >= e->offset);
		assert_true(out[i + 1].u.lost.bytes >= 16 && out[i + 1].u.lost.bytes % 16 == 0);
		printf("  OpenCSD crashed at offset %llu; %llu bytes skipped from %llu\n",
		       (unsigned long long)e->offset, (unsigned long long)out[i + 1].u.lost.bytes,
		       (unsigned long long)out[i + 1].offset);
	}
	assert_int_equal(jf_decoder_stats(dec)->errors >= (uint64_t)crashes, 1);
	jf_decoder_free(dec);
	return crashes > 0;
}

enum { TRIES = 8, MAX_FLOWS = 4096 };

static void check_crash_input(const char *name)
{
	static struct jf_flow flows[MAX_FLOWS];
	size_t size, n, t;
	uint8_t *data = load(name, &size);
	struct jf_error err;
	int seen = 0, unprotected = 0;

	for (t = 0; t < TRIES && !seen; t++) {
		unprotected |= crashes_unprotected(data, size);
		seen |= isolated_crash_checked(jf_isolated_decoder_new(
						       jf_cs_frames_decoder(data, size, &err),
						       "OpenCSD", &err),
					       flows, MAX_FLOWS, &n, size - 1);
	}
	printf("%s: %s\n", name, seen ? "crashed isolated, resumed" :
	       unprotected ? "crashed unprotected only" : "OpenCSD no longer crashes on it");
	assert_true(seen || !unprotected);
	free(data);
}

static void test_crashes_become_errors(void **state)
{
	check_crash_input("opencsd-1.3.3-crash-1.bin");
	check_crash_input("opencsd-1.3.3-crash-2.bin");
}

/* The good trace's trace ID, beside the crash input's 0x10. */
enum { GOOD_ID = 0x20 };

/* The crash input's source (tests/data's first byte 0xff: ETMv3, as cs_frames_input.c
 * sets it up) and the synthetic trace's ETMv4 under GOOD_ID. */
static void two_sources(struct jf_cs_source src[2])
{
	memset(&src[0], 0, sizeof(src[0]));
	strcpy(src[0].name, "ETM3_crash");
	src[0].protocol = JF_CS_PROTO_ETMV3;
	src[0].arch = JF_CS_ARCH_V7;
	src[0].profile = JF_CS_PROFILE_A;
	src[0].etmcr = 0x10001860;
	src[0].etmidr = 0x410cf250;
	src[0].etmccer = 0x344008f2;
	src[0].etmtraceidr = 0x10;
	cs_syn_source(&src[1]);
	src[1].trctraceidr = GOOD_ID;
}

static struct jf_decoder *dstream_decoder(const uint8_t *data, size_t size, uint64_t base,
					  struct jf_codemap *map)
{
	static struct jf_cs_source src[2];
	struct jf_cs_buffer buf;
	struct jf_cs_config cfg;
	struct jf_error err;
	struct jf_decoder *dec;

	two_sources(src);
	memset(&buf, 0, sizeof(buf));
	buf.name = "crash+good";
	buf.data = data;
	buf.size = size;
	buf.formatted = 1;
	buf.frames = JF_CS_FRAMES_FSYNCS; /* the crash inputs crash only in DSTREAM framing */
	buf.base_offset = base;
	buf.sources = src;
	buf.nsources = 2;
	memset(&cfg, 0, sizeof(cfg));
	cfg.buffers = &buf;
	cfg.nbuffers = 1;
	cfg.lookahead = 1;
	dec = jf_cs_decoder_new(&cfg, map, &err);
	if (!dec)
		fail_msg("%s", err.msg);
	return dec;
}

static void dump(const char *what, const struct jf_flow *f, size_t n)
{
	size_t i;

	if (!getenv("DUMP"))
		return;
	for (i = 0; i < n; i++)
		printf("%s %s off=%llu src=%#x ip=%llx %s\n", what, jf_flow_kind_name(f[i].kind),
		       (unsigned long long)f[i].offset, f[i].source, (unsigned long long)f[i].ip,
		       f[i].kind == JF_FLOW_ERROR ? f[i].u.error.text :
		       f[i].kind == JF_FLOW_LOST ? jf_lost_reason_name(f[i].u.lost.reason) : "");
}

/* The records of GOOD_ID in flows[0..n) equal want[0..nwant) (EO_TRACE included). */
static void assert_good_part(const struct jf_flow *flows, size_t n, const struct jf_flow *want,
			     size_t nwant)
{
	size_t i, k = 0;

	dump("alone", want, nwant);
	dump("isolated", flows, n);
	for (i = 0; i < n; i++) {
		if (flows[i].source != GOOD_ID)
			continue;
		while (k < nwant && want[k].source != GOOD_ID)
			k++;
		assert_true(k < nwant);
		assert_memory_equal(&flows[i], &want[k], sizeof(want[k]));
		k++;
	}
	while (k < nwant && want[k].source != GOOD_ID)
		k++;
	assert_int_equal(k, nwant);
}

static size_t add_fsync(uint8_t *buf, size_t at)
{
	static const uint8_t fsync[4] = { 0xff, 0xff, 0xff, 0x7f };

	memcpy(buf + at, fsync, sizeof(fsync));
	return at + sizeof(fsync);
}

static void test_decoding_resumes_after_a_crash(void **state)
{
	static struct jf_flow alone[MAX_FLOWS], flows[MAX_FLOWS];
	struct jf_codemap *map = jf_codemap_new();
	size_t size, crash_size, good_size, nalone, n, t, mode;
	uint8_t *crash = load("opencsd-1.3.3-crash-2.bin", &size);
	uint8_t buf[1024];
	struct jf_error err;
	int seen[2] = { 0, 0 };

	assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "A", &err), 0);
	/* The crash input's frames (without its selector byte), padded to a frame with
	 * DSTREAM frame syncs; then the good part: a frame of frame syncs (where a DSTREAM
	 * capture starts) and the good trace's frames. */
	crash_size = size - 1;
	memcpy(buf, crash + 1, crash_size);
	while (crash_size % 16)
		crash_size = add_fsync(buf, crash_size);
	good_size = 0;
	while (good_size < 16)
		good_size = add_fsync(buf + crash_size, good_size);
	good_size += cs_syn_frames(cs_syn_trace, cs_syn_trace_size, GOOD_ID,
				   buf + crash_size + good_size, sizeof(buf) - crash_size - 16);
	/* The oracle: the good frames alone, at the offset they have after the crash input. */
	collect(dstream_decoder(buf + crash_size, good_size, crash_size, map), alone, MAX_FLOWS,
		&nalone, 1);
	assert_true(nalone > 3);
	for (mode = 0; mode < 2; mode++) {
		for (t = 0; t < TRIES && !seen[mode]; t++) {
			struct jf_decoder *inner = dstream_decoder(buf, crash_size + good_size, 0, map);

			seen[mode] = isolated_crash_checked(
				mode ? jf_isolated_decoder_lockstep(inner, map, "OpenCSD", &err)
				     : jf_isolated_decoder_new(inner, "OpenCSD", &err),
				flows, MAX_FLOWS, &n, crash_size + good_size);
			assert_good_part(flows, n, alone, nalone);
		}
		printf("%s: %s\n", mode ? "lockstep" : "streaming",
		       seen[mode] ? "crashed, resumed, good part exact" : "no crash seen");
	}
	/* The good part decodes whatever happens; the crash must have been seen too. */
	assert_true(seen[0] || seen[1] || !crashes_unprotected(crash, size));
	jf_codemap_free(map);
	free(crash);
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
	collect(a, direct, 4096, &na, 0);
	collect(b, isolated, 4096, &nb, 0);
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
		cmocka_unit_test(test_decoding_resumes_after_a_crash),
		cmocka_unit_test(test_valid_trace_is_unchanged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
