/* The CoreSight backend on a hand-written ETMv4 trace of a tiny A64 program (see
 * cs_synthetic.c): code rewritten at the same address between two parts of the trace
 * decodes with the right bytes; missing code, truncated and corrupt traces are reported,
 * never fatal, never a crash. */
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

#include "cs_synthetic.h"
#include "jitflow/coresight.h"

struct expect_block {
	uint64_t start, next;
	uint32_t ninsn;
	uint8_t end;
	uint64_t offset;
};

static struct jf_decoder *raw_decoder(const uint8_t *trace, size_t size,
				      struct jf_codemap *map)
{
	return cs_syn_decoder(trace, size, 0, 0, map);
}

/* Decode everything; when rewrite is set, put version B over version A as soon as A's
 * ret has been seen (where a JIT's "code changed" marker would be). */
static size_t run(struct jf_codemap *map, int rewrite, struct jf_flow *blocks, size_t max,
		  size_t *lost_no_image)
{
	struct jf_decoder *dec = raw_decoder(cs_syn_trace, cs_syn_trace_size, map);
	struct jf_error err;
	struct jf_flow f;
	size_t n = 0;
	int returns = 0, rc;

	*lost_no_image = 0;
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		if (f.kind == JF_FLOW_BLOCK && n < max)
			blocks[n++] = f;
		if (f.kind == JF_FLOW_LOST && f.u.lost.reason == JF_LOST_NO_IMAGE)
			(*lost_no_image)++;
		if (f.kind == JF_FLOW_BLOCK && f.u.block.end == JF_END_RETURN && ++returns == 1 &&
		    rewrite)
			assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_b,
							      sizeof(cs_syn_code_b), CS_SYN_BASE,
							      "version B", &err), 0);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(returns, 1);
	assert_int_equal(jf_decoder_stats(dec)->errors, 0);
	jf_decoder_free(dec);
	return n;
}

static void check_blocks(const struct jf_flow *got, size_t n, const struct expect_block *want,
			 size_t nwant)
{
	size_t i;

	assert_int_equal(n, nwant);
	for (i = 0; i < n; i++) {
		const struct jf_block *b = &got[i].u.block;

		assert_int_equal(got[i].source, CS_SYN_TRACE_ID);
		assert_int_equal(got[i].offset, want[i].offset);
		assert_int_equal(b->start, want[i].start);
		assert_int_equal(b->next, want[i].next);
		assert_int_equal(b->last, want[i].next - 4);
		assert_int_equal(b->ninsn, want[i].ninsn);
		assert_int_equal(b->end, want[i].end);
		assert_int_equal(b->isa, JF_ISA_A64);
		assert_int_equal(b->last_size, 4);
		assert_int_equal(b->flags & JF_BLOCK_LAST_FAILED,
				 want[i].end == JF_END_COND_NOT_TAKEN ? JF_BLOCK_LAST_FAILED : 0);
	}
}

static void test_rewritten_code_decodes_with_new_bytes(void **state)
{
	/* Part 1 runs A: mov; (subs; b.ne) x3; ret. Part 2 runs B: mov; (nop; nop; subs;
	 * b.ne) x2. Offsets are those of the atom packets (26, 27 and 37). */
	static const struct expect_block want[] = {
		{ 0x10000, 0x1000c, 3, JF_END_COND_TAKEN, 26 },
		{ 0x10004, 0x1000c, 2, JF_END_COND_TAKEN, 26 },
		{ 0x10004, 0x1000c, 2, JF_END_COND_NOT_TAKEN, 26 },
		{ 0x1000c, 0x10010, 1, JF_END_RETURN, 27 },
		{ 0x10000, 0x10014, 5, JF_END_COND_TAKEN, 37 },
		{ 0x10004, 0x10014, 4, JF_END_COND_NOT_TAKEN, 37 },
	};
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	struct jf_flow blocks[16];
	size_t lost, n;

	assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "version A", &err), 0);
	n = run(map, 1, blocks, 16, &lost);
	check_blocks(blocks, n, want, sizeof(want) / sizeof(want[0]));
	assert_int_equal(lost, 0);
	jf_codemap_free(map);
}

static void test_unchanged_code_decodes_with_old_bytes(void **state)
{
	/* Without the rewrite, part 2's atoms E N run A's loop: mov; subs; b.ne (taken);
	 * subs; b.ne (not taken). */
	static const struct expect_block want[] = {
		{ 0x10000, 0x1000c, 3, JF_END_COND_TAKEN, 26 },
		{ 0x10004, 0x1000c, 2, JF_END_COND_TAKEN, 26 },
		{ 0x10004, 0x1000c, 2, JF_END_COND_NOT_TAKEN, 26 },
		{ 0x1000c, 0x10010, 1, JF_END_RETURN, 27 },
		{ 0x10000, 0x1000c, 3, JF_END_COND_TAKEN, 37 },
		{ 0x10004, 0x1000c, 2, JF_END_COND_NOT_TAKEN, 37 },
	};
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	struct jf_flow blocks[16];
	size_t lost, n;

	assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "version A", &err), 0);
	n = run(map, 0, blocks, 16, &lost);
	check_blocks(blocks, n, want, sizeof(want) / sizeof(want[0]));
	jf_codemap_free(map);
}

static void test_missing_code_is_a_located_gap(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_decoder *dec = raw_decoder(cs_syn_trace, cs_syn_trace_size, map);
	struct jf_error err;
	struct jf_flow f;
	int gaps = 0, blocks = 0;

	while (jf_decoder_next(dec, &f, &err) > 0) {
		if (f.kind == JF_FLOW_BLOCK)
			blocks++;
		if (f.kind == JF_FLOW_LOST && f.u.lost.reason == JF_LOST_NO_IMAGE) {
			assert_int_equal(f.ip, CS_SYN_BASE);
			assert_int_equal(f.source, CS_SYN_TRACE_ID);
			gaps++;
		}
	}
	assert_int_equal(blocks, 0);
	/* At each address packet: after a gap the decoder waits for the next address. */
	assert_int_equal(gaps, 2);
	jf_decoder_free(dec);
	jf_codemap_free(map);
}

/* Decode to the end; a decode that does not end within a generous bound is a hang. */
static size_t drain(struct jf_decoder *dec, size_t limit)
{
	struct jf_error err;
	struct jf_flow f;
	size_t n = 0;
	int rc;

	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		n++;
		if (n > limit)
			fail_msg("decoder does not end: more than %zu records", limit);
	}
	assert_int_equal(rc, 0);
	return n;
}

static void test_truncated_traces_end_cleanly(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	size_t cut;

	assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "version A", &err), 0);
	for (cut = 0; cut <= cs_syn_trace_size; cut++) {
		struct jf_decoder *dec = raw_decoder(cs_syn_trace, cut, map);

		drain(dec, 1000);
		/* Nothing beyond what the whole trace holds. */
		assert_true(jf_decoder_stats(dec)->blocks <= 6);
		jf_decoder_free(dec);
	}
	jf_codemap_free(map);
}

static void test_corrupt_traces_are_reported_not_fatal(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	uint8_t copy[256];
	static const uint8_t values[] = { 0x00, 0xff, 0x80, 0x70, 0x06, 0x0a, 0x9d };
	size_t i, v;
	uint64_t errors = 0;

	assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "version A", &err), 0);
	assert_true(cs_syn_trace_size <= sizeof(copy));
	for (i = 0; i < cs_syn_trace_size; i++) {
		for (v = 0; v < sizeof(values); v++) {
			struct jf_decoder *dec;

			memcpy(copy, cs_syn_trace, cs_syn_trace_size);
			copy[i] = values[v];
			dec = raw_decoder(copy, cs_syn_trace_size, map);
			drain(dec, 1000);
			errors += jf_decoder_stats(dec)->errors;
			jf_decoder_free(dec);
		}
	}
	/* Some of these are invalid packets, and they are reported as errors. */
	assert_true(errors > 0);
	jf_codemap_free(map);
}

static void test_formatted_frames_decode_like_raw(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	uint8_t frames[256];
	size_t size = cs_syn_frames(cs_syn_trace, cs_syn_trace_size, CS_SYN_TRACE_ID, frames,
				    sizeof(frames));
	struct jf_decoder *dec;
	struct jf_flow f;
	uint64_t starts[8], n = 0;

	assert_int_equal(jf_codemap_add_bytes(map, cs_syn_code_a, sizeof(cs_syn_code_a),
					      CS_SYN_BASE, "version A", &err), 0);
	dec = cs_syn_decoder(frames, size, 1, JF_CS_FRAMES_ALIGNED, map);
	while (jf_decoder_next(dec, &f, &err) > 0) {
		if (f.kind == JF_FLOW_BLOCK && n < 8)
			starts[n++] = f.u.block.start;
		if (f.kind == JF_FLOW_ERROR)
			fail_msg("error at %llu: %s", (unsigned long long)f.offset, f.u.error.text);
	}
	/* The same six ranges as the raw stream (see test_unchanged_code_...). */
	assert_int_equal(n, 6);
	assert_int_equal(starts[0], 0x10000);
	assert_int_equal(starts[3], 0x1000c);
	assert_int_equal(starts[4], 0x10000);
	assert_int_equal(jf_decoder_stats(dec)->insns, 13);
	jf_decoder_free(dec);
	jf_codemap_free(map);
}

static void test_truncated_dstream_frames_are_an_error(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	uint8_t frames[256];
	size_t size = cs_syn_frames(cs_syn_trace, cs_syn_trace_size, CS_SYN_TRACE_ID, frames,
				    sizeof(frames));
	struct jf_decoder *dec;
	struct jf_flow f;
	int errors = 0;

	/* DSTREAM captures come in 4-byte units: 3 bytes short is a decode failure, which
	 * is reported with its offset, and the decode still ends normally. */
	dec = cs_syn_decoder(frames, size - 3, 1, JF_CS_FRAMES_FSYNCS, map);
	while (jf_decoder_next(dec, &f, &err) > 0) {
		if (f.kind == JF_FLOW_ERROR) {
			errors++;
			assert_int_equal(f.u.error.phase, JF_PHASE_DECODE);
			assert_true(f.offset <= size);
			assert_non_null(strstr(f.u.error.text, "OCSD_ERR_"));
		}
	}
	assert_true(errors >= 1);
	jf_decoder_free(dec);
	jf_codemap_free(map);
}

static void test_garbage_formatted_buffer(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_cs_source src;
	struct jf_cs_buffer buf;
	struct jf_cs_config cfg;
	struct jf_error err;
	static uint8_t junk[64 * 1024];
	uint32_t x = 12345;
	size_t i;
	int round;

	cs_syn_source(&src);
	for (round = 0; round < 4; round++) {
		struct jf_decoder *dec;

		for (i = 0; i < sizeof(junk); i++) {
			x = x * 1103515245u + 12345u;
			junk[i] = (uint8_t)(x >> 16);
		}
		memset(&buf, 0, sizeof(buf));
		buf.name = "junk";
		buf.data = junk;
		buf.size = sizeof(junk) - (size_t)round * 7; /* also not a whole frame */
		buf.formatted = round != 0;
		buf.frames = round == 3 ? JF_CS_FRAMES_FSYNCS : JF_CS_FRAMES_ALIGNED;
		buf.sources = &src;
		buf.nsources = 1;
		memset(&cfg, 0, sizeof(cfg));
		cfg.buffers = &buf;
		cfg.nbuffers = 1;
		cfg.lookahead = round == 3 ? 1 : 64;
		dec = jf_cs_decoder_new(&cfg, map, &err);
		assert_non_null(dec);
		drain(dec, 10 * sizeof(junk));
		jf_decoder_free(dec);
	}
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rewritten_code_decodes_with_new_bytes),
		cmocka_unit_test(test_unchanged_code_decodes_with_old_bytes),
		cmocka_unit_test(test_missing_code_is_a_located_gap),
		cmocka_unit_test(test_truncated_traces_end_cleanly),
		cmocka_unit_test(test_corrupt_traces_are_reported_not_fatal),
		cmocka_unit_test(test_formatted_frames_decode_like_raw),
		cmocka_unit_test(test_truncated_dstream_frames_are_an_error),
		cmocka_unit_test(test_garbage_formatted_buffer),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
