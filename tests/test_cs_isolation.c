/* Decoding in a child process (jitflow/isolate.h) against OpenCSD 1.3.3's crashes.
 *
 * tests/data/opencsd-1.3.3-crash-*.bin are inputs our fuzzer found (fuzz_cs_frames; the
 * first byte picks the protocol and framing, see decoder/fuzz/cs_frames_input.h) on which
 * OpenCSD 1.3.3 itself segfaults. Decoded in this process they kill it (checked in a
 * forked child, which also shows the input really triggers the bug); isolated, the test
 * process survives, the crash is an error that names OpenCSD at the frame that crashed,
 * followed by a "decoder-crash" loss of the bytes skipped, and decoding goes on. Whether
 * OpenCSD crashes on them depends on what follows them in memory (the bug reads past the
 * bytes it is given): the inputs are placed before an inaccessible page (see guard).
 *
 * Resuming: a good trace (tests/cs_synthetic.c's ETMv4 trace, in frames of another trace
 * ID) then a crash input in one buffer, and the good trace again in a second buffer: the
 * crash is located in the crash input's frames, and the good trace before and after it
 * decodes to exactly what it decodes to alone (the oracle: the same OpenCSD decoding those
 * frames by themselves in this process, where they do not crash it), in both isolation
 * modes. (The crash input's bug only crashes at the end of the mapped memory, so no good
 * frame can follow it in the same buffer; the frames after the crashing one in the crash
 * input itself are decoded after the skip, see test_crashes_become_errors.)
 * A valid trace decodes to the same records isolated or not, and in lockstep a code map
 * changed by the consumer mid-trace (tests/cs_synthetic.c's version B over A) decodes as
 * without isolation: as B, which is what the program ran. */
#include "test_support.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* OpenCSD's frame reader runs past the end of the bytes it is given: it crashes when that
 * is where the memory ends (as in the fuzzer's buffers), whatever the heap holds. So the
 * inputs are placed at the end of a mapping, before an inaccessible page. */
struct guarded {
	uint8_t *region, *data;
	size_t len;
};

static struct guarded guard(const uint8_t *bytes, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct guarded g;

	assert_true(size <= page);
	g.len = 2 * page;
	g.region = mmap(NULL, g.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(g.region != MAP_FAILED);
	assert_int_equal(mprotect(g.region + page, page, PROT_NONE), 0);
	g.data = g.region + page - size;
	memcpy(g.data, bytes, size);
	return g;
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

enum { MAX_FLOWS = 4096 };

static void check_crash_input(const char *name)
{
	static struct jf_flow flows[MAX_FLOWS];
	size_t size, n;
	uint8_t *file = load(name, &size);
	struct guarded g = guard(file, size);
	uint8_t *data = g.data;
	struct jf_error err;
	int seen, unprotected = crashes_unprotected(data, size);


	seen = isolated_crash_checked(jf_isolated_decoder_new(jf_cs_frames_decoder(data, size,
									 &err),
							     "OpenCSD", &err),
				      flows, MAX_FLOWS, &n, size - 1);
	printf("%s: %s\n", name, seen ? "crashed isolated, resumed" :
	       unprotected ? "crashed unprotected only" : "OpenCSD no longer crashes on it");
	/* Where it crashes this process, it crashes the child the same way (the same bytes
	 * before the same inaccessible page): and there it is located and decoding goes on. */
	assert_int_equal(seen, unprotected);
	munmap(g.region, g.len);
	free(file);
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

/* A decoder of DSTREAM-framed buffers (the crash inputs crash only in that framing), each
 * holding frames of both sources. */
static struct jf_decoder *dstream_decoder(const struct jf_cs_buffer *bufs, size_t n,
					  struct jf_codemap *map)
{
	static struct jf_cs_source src[2];
	struct jf_cs_buffer b[2];
	struct jf_cs_config cfg;
	struct jf_error err;
	struct jf_decoder *dec;
	size_t i;

	two_sources(src);
	for (i = 0; i < n; i++) {
		b[i] = bufs[i];
		b[i].name = "crash+good";
		b[i].formatted = 1;
		b[i].frames = JF_CS_FRAMES_FSYNCS;
		b[i].sources = src;
		b[i].nsources = 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.buffers = b;
	cfg.nbuffers = n;
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

/* The records of GOOD_ID in flows[0..n) but where a buffer ends (EO_TRACE, located at the
 * buffer's last byte, which differs) equal those of want[0..nwant). */
static void assert_good_part(const struct jf_flow *flows, size_t n, const struct jf_flow *want,
			     size_t nwant)
{
	size_t i, k = 0;

	dump("alone", want, nwant);
	dump("isolated", flows, n);
	for (i = 0; i < n; i++) {
		if (flows[i].source != GOOD_ID || flows[i].kind == JF_FLOW_DISABLED)
			continue;
		while (k < nwant && (want[k].source != GOOD_ID || want[k].kind == JF_FLOW_DISABLED))
			k++;
		assert_true(k < nwant);
		assert_memory_equal(&flows[i], &want[k], sizeof(want[k]));
		k++;
	}
	while (k < nwant && (want[k].source != GOOD_ID || want[k].kind == JF_FLOW_DISABLED))
		k++;
	assert_int_equal(k, nwant);
}

/* A frame of DSTREAM frame syncs (where a capture starts), then the good trace's frames. */
static size_t good_frames(uint8_t *out, size_t cap)
{
	static const uint8_t fsync[4] = { 0xff, 0xff, 0xff, 0x7f };
	size_t i;

	for (i = 0; i < 16; i += 4)
		memcpy(out + i, fsync, sizeof(fsync));
	return 16 + cs_syn_frames(cs_syn_trace, cs_syn_trace_size, GOOD_ID, out + 16, cap - 16);
}

/* Base offset of the second buffer. */
enum { SECOND = 0x10000 };

static void test_decoding_resumes_after_a_crash(void **state)
{
	static struct jf_flow alone[MAX_FLOWS], flows[MAX_FLOWS];
	static uint8_t good[512], both[1024];
	struct jf_codemap *map = jf_codemap_new();
	size_t size, good_size, nalone, n1, n, mode;
	uint8_t *crash = load("opencsd-1.3.3-crash-2.bin", &size);
	struct guarded g;
	struct jf_cs_buffer bufs[2];
	struct jf_error err;

	assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "A", &err), 0);
	/* Buffer 1: the good trace, then the crash input's frames (without its selector
	 * byte), ending where the memory does (OpenCSD's frame reader runs past the end of
	 * the bytes it is given: a fault there is its crash, with any heap). Buffer 2: the
	 * good trace again. */
	good_size = good_frames(good, sizeof(good));
	memcpy(both, good, good_size);
	memcpy(both + good_size, crash + 1, size - 1);
	g = guard(both, good_size + size - 1);
	memset(bufs, 0, sizeof(bufs));
	bufs[0].data = g.data;
	bufs[0].size = good_size + size - 1;
	bufs[1].data = good;
	bufs[1].size = good_size;
	bufs[1].base_offset = SECOND;
	/* The oracle: the good parts alone, at the offsets they have in the buffers. */
	bufs[0].size = good_size;
	collect(dstream_decoder(&bufs[0], 1, map), alone, MAX_FLOWS, &n1, 1);
	collect(dstream_decoder(&bufs[1], 1, map), alone + n1, MAX_FLOWS - n1, &nalone, 1);
	nalone += n1;
	bufs[0].size = good_size + size - 1;
	assert_true(n1 > 3);
	for (mode = 0; mode < 2; mode++) {
		struct jf_decoder *inner = dstream_decoder(bufs, 2, map);
		size_t i, crash_at = 0;

		assert_true(isolated_crash_checked(
			mode ? jf_isolated_decoder_lockstep(inner, map, "OpenCSD", &err)
			     : jf_isolated_decoder_new(inner, "OpenCSD", &err),
			flows, MAX_FLOWS, &n, bufs[0].size));
		for (i = 0; i < n; i++)
			if (flows[i].kind == JF_FLOW_ERROR && strstr(flows[i].u.error.text, "crashed"))
				crash_at = flows[i].offset;
		/* In the crash input's frames, after the good part of the buffer. */
		assert_true(crash_at >= good_size && crash_at < bufs[0].size);
		assert_good_part(flows, n, alone, nalone);
		printf("%s: crashed at %zu, resumed; the good parts decode as alone\n",
		       mode ? "lockstep" : "streaming", crash_at);
	}
	munmap(g.region, g.len);
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
	/* The trace's size is there before the first record, as without the child (a zone
	 * filter around the decoder copies it with the first record). */
	assert_true(jf_decoder_stats(a)->trace_bytes > 0);
	assert_int_equal(jf_decoder_stats(b)->trace_bytes, jf_decoder_stats(a)->trace_bytes);
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

/* Decode the synthetic raw trace (isolated as isolate_how says: 0 not, 1 streaming,
 * 2 lockstep), putting version B over version A at the first return, as a JIT's marker
 * would: the records, and whether the 5-instruction block that only B has (mov; nop;
 * nop; subs; b.ne, 0x10000-0x10014) was decoded. */
static int run_rewrite(int isolate_how, struct jf_flow *out, size_t cap, size_t *n)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_decoder *dec;
	struct jf_error err;
	struct jf_flow f;
	int returns = 0, saw_b = 0;

	assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "A", &err), 0);
	dec = cs_syn_decoder(cs_syn_trace, cs_syn_trace_size, 0, 0, map);
	if (isolate_how == 1)
		dec = jf_isolated_decoder_new(dec, "OpenCSD", &err);
	else if (isolate_how == 2)
		dec = jf_isolated_decoder_lockstep(dec, map, "OpenCSD", &err);
	assert_non_null(dec);
	*n = 0;
	while (jf_decoder_next(dec, &f, &err) > 0) {
		assert_true(*n < cap);
		out[(*n)++] = f;
		if (f.kind != JF_FLOW_BLOCK)
			continue;
		if (f.u.block.start == CS_SYN_BASE && f.u.block.next == CS_SYN_BASE + 0x14 &&
		    f.u.block.ninsn == 5)
			saw_b = 1;
		if (f.u.block.end == JF_END_RETURN && ++returns == 1)
			assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_b,
							      sizeof(cs_syn_code_b), CS_SYN_BASE,
							      "B", &err), 0);
	}
	jf_decoder_free(dec);
	jf_codemap_free(map);
	return saw_b;
}

/* In lockstep the child reads the code map as the consumer leaves it: the rewritten code
 * decodes as B (what the program ran), exactly as without isolation; a child decoding
 * ahead on its own copy of the map decodes A's bytes there instead. */
static void test_lockstep_sees_the_code_map_change(void **state)
{
	static struct jf_flow serial[256], lockstep[256], ahead[256];
	size_t ns, nl, na;

	assert_true(run_rewrite(0, serial, 256, &ns));
	assert_true(run_rewrite(2, lockstep, 256, &nl));
	assert_int_equal(ns, nl);
	assert_memory_equal(serial, lockstep, ns * sizeof(serial[0]));
	assert_false(run_rewrite(1, ahead, 256, &na));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crashes_become_errors),
		cmocka_unit_test(test_decoding_resumes_after_a_crash),
		cmocka_unit_test(test_valid_trace_is_unchanged),
		cmocka_unit_test(test_lockstep_sees_the_code_map_change),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
