/* Where code will still change, as the zone image tells the code map
 * (imagemap/zone_pending.c), seen by the fast path decoding ahead.
 *
 * A runtime announces a function at X that has run already (HotSpot writes some code's
 * record long after it first ran) and patches it: every record is dated after the trace
 * here, so both stay pending while the trace runs the function, whose bytes come from
 * the load (the early fill). A patch that writes the bytes X holds now changes nothing
 * there (a runtime patching a call to where it goes already): the fast path takes the
 * function and hands nothing over. A patch with other bytes may change it: the fast
 * path leaves it to libipt's block decoder. Either way the records equal the block
 * decoder's. */
#include "pt_builder.h"
#include "test_support.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "jitflow/emitter.h"
#include "jitflow/pt_fast.h"
#include "jitflow/zone_image.h"

enum { X = 0x7f0000001000ull, LOOPS = 400, STRETCHES = 4 };

/* X+1: nop; nop; nop; jmp rax (back to X+1), with a byte of the function on each side:
 * a load's edge next to an instruction ends libipt's block, so the bytes the trace runs
 * lie inside the load. */
static const uint8_t code[] = { 0x90, 0x90, 0x90, 0x90, 0xff, 0xe0, 0x90 };
/* The same length with another instruction where the trace runs (cld for the 2nd nop). */
static const uint8_t other[] = { 0x90, 0x90, 0xfc, 0x90, 0xff, 0xe0, 0x90 };

static uint64_t long_after(void *ctx, uint64_t timestamp)
{
	(void)ctx;
	(void)timestamp;
	return UINT64_MAX; /* every record was written after the trace ended */
}

/* A zone file loading code at X, then patching all of it with patch. */
static void write_zone(const char *name, const uint8_t *patch, char *path, size_t size)
{
	struct jf_region r = { .name = "f", .addr = X, .code = code, .size = sizeof(code),
			       .kind = JF_REGION_FUNCTION };
	char dir[512];
	struct jf_emitter *em;

	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), name);
	mkdir(dir, 0755);
	em = jf_emitter_open(dir, JF_EMIT_NO_MARKER_CALLS);
	assert_non_null(em);
	assert_true(jf_emit_region_load(em, &r) > 0);
	assert_true(jf_emit_patch(em, X, patch, sizeof(code), "call site") > 0);
	snprintf(path, size, "%s", jf_emitter_path(em));
	jf_emitter_close(em);
}

/* Every record of the trace through the zone filter, with the fast path or libipt's block
 * decoder; the fast path's report. */
static size_t decode(const char *zone, int fast, struct jf_flow *out, size_t max,
		     struct jf_pt_fast_report *rep)
{
	struct jf_zone_image_config zc = { .apply = JF_ZONE_APPLY_TIME, .time_fn = long_after };
	/* Enabled at X+1, then jmp rax back to X+1, a PSB period after another. */
	struct jf_ptb *b = jf_ptb_tip_loop(X + 1, STRETCHES, LOOPS);
	struct jf_codemap *map = jf_codemap_new();
	struct jf_zone_image *zi;
	struct jf_decoder *inner, *dec;
	struct jf_pt_config pc;
	struct jf_error err = { "" };
	size_t n = 0;
	int rc;

	zi = jf_zone_image_new(map, &zc, &err);
	assert_non_null(zi);
	assert_int_equal(jf_zone_image_add_file(zi, zone, &err), 0);
	memset(&pc, 0, sizeof(pc));
	pc.trace = jf_ptb_bytes(b);
	pc.size = jf_ptb_size(b);
	pc.end_on_call = pc.end_on_jump = pc.join_cache_splits = 1;
	inner = fast ? jf_pt_fast_decoder_new(&pc, map, &err) : jf_pt_decoder_new(&pc, map, &err);
	if (!inner)
		fail_msg("%s", err.msg);
	dec = jf_zone_filter_new(inner, zi, &err);
	assert_non_null(dec);
	while ((rc = jf_decoder_next(dec, &out[n], &err)) > 0) {
		if (out[n].kind == JF_FLOW_ERROR)
			fail_msg("%s: error at %llu: %s", fast ? "fast" : "block decoder",
				 (unsigned long long)out[n].offset, out[n].u.error.text);
		assert_true(++n < max);
	}
	assert_int_equal(rc, 0);
	jf_pt_fast_counter_report(inner, rep);
	jf_decoder_free(dec);
	jf_zone_image_free(zi);
	jf_codemap_free(map);
	jf_ptb_free(b);
	return n;
}

enum { MAX_FLOWS = 2 * STRETCHES * LOOPS + 64 };

/* The fast path's records against the block decoder's; its hand-overs. */
static uint64_t hand_overs_with(const char *name, const uint8_t *patch)
{
	static struct jf_flow fast[MAX_FLOWS], blk[MAX_FLOWS];
	struct jf_pt_fast_report rep, none;
	char zone[600];
	size_t n, m, i, blocks = 0;

	write_zone(name, patch, zone, sizeof(zone));
	n = decode(zone, 1, fast, MAX_FLOWS, &rep);
	m = decode(zone, 0, blk, MAX_FLOWS, &none);
	assert_int_equal(n, m);
	for (i = 0; i < n; i++) {
		if (!jf_flow_same(&fast[i], &blk[i]))
			fail_msg("record %zu differs: kind %u at 0x%llx, block decoder's kind %u "
				 "at 0x%llx", i, fast[i].kind, (unsigned long long)fast[i].ip,
				 blk[i].kind, (unsigned long long)blk[i].ip);
		blocks += fast[i].kind == JF_FLOW_BLOCK;
	}
	assert_true(blocks > STRETCHES * LOOPS);
	assert_int_equal(rep.is_fast, 1);
	return rep.hand_overs;
}

static void test_patch_of_the_same_bytes_is_no_change(void **state)
{
	(void)state;
	assert_int_equal(hand_overs_with("same-bytes", code), 0);
}

static void test_patch_of_other_bytes_is_left_to_the_block_decoder(void **state)
{
	(void)state;
	assert_true(hand_overs_with("other-bytes", other) > 0);
}

/* The answer itself: a range inside the load and the patch, read as both write it, does
 * not change; one with the byte that the patch writes otherwise does, and so does one
 * reaching past their end or before their start. */
static void test_where_a_write_changes_bytes(void **state)
{
	struct jf_zone_image_config zc = { .apply = JF_ZONE_APPLY_TIME, .time_fn = long_after };
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { "" };
	struct jf_zone_image *zi = jf_zone_image_new(map, &zc, &err);
	char zone[600];

	(void)state;
	assert_non_null(zi);
	write_zone("answers", other, zone, sizeof(zone));
	assert_int_equal(jf_zone_image_add_file(zi, zone, &err), 0);
	assert_false(jf_codemap_may_change(map, X, 2));
	assert_true(jf_codemap_may_change(map, X + 1, 2));   /* byte 2: nop, patched cld */
	assert_false(jf_codemap_may_change(map, X + 3, 4));
	assert_true(jf_codemap_may_change(map, X + 3, 5));   /* past the end */
	assert_true(jf_codemap_may_change(map, X - 1, 2));   /* before the start */
	jf_zone_image_free(zi);
	jf_codemap_free(map);
}

/* Ranges of very different lengths (a freed region of 1 MiB, a patch of 2 bytes, a load
 * of 8 KiB): an address is found to change by the range that holds it, however far before
 * it that range starts and however many short ranges lie in between. */
static void test_ranges_of_every_length(void **state)
{
	enum { BIG = 0x7f1000000000ull, FAR = 0x7f2000000000ull };
	static const uint8_t load[8192];
	struct jf_region r = { .name = "g", .addr = BIG + 0x80000, .code = load,
			       .size = sizeof(load), .kind = JF_REGION_FUNCTION };
	struct jf_zone_image_config zc = { .apply = JF_ZONE_APPLY_TIME, .time_fn = long_after };
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { "" };
	struct jf_zone_image *zi = jf_zone_image_new(map, &zc, &err);
	char dir[512], zone[600];
	struct jf_emitter *em;
	uint64_t i;

	(void)state;
	assert_non_null(zi);
	snprintf(dir, sizeof(dir), "%s/lengths", jf_test_tmpdir());
	mkdir(dir, 0755);
	em = jf_emitter_open(dir, JF_EMIT_NO_MARKER_CALLS);
	assert_non_null(em);
	assert_true(jf_emit_region_free(em, BIG, 1 << 20) > 0);
	for (i = 0; i < 64; i++) /* short patches all over the freed region and past it */
		assert_true(jf_emit_patch(em, BIG + i * 0x8000, "\x90\x90", 2, "site") > 0);
	assert_true(jf_emit_region_load(em, &r) > 0);
	assert_true(jf_emit_patch(em, FAR, "\xcc\xcc", 2, "far") > 0);
	snprintf(zone, sizeof(zone), "%s", jf_emitter_path(em));
	jf_emitter_close(em);
	assert_int_equal(jf_zone_image_add_file(zi, zone, &err), 0);

	assert_true(jf_codemap_may_change(map, BIG + (1 << 20) - 4, 2)); /* the free's end */
	assert_true(jf_codemap_may_change(map, BIG + 0x80000 + 4000, 4)); /* free and load */
	assert_false(jf_codemap_may_change(map, BIG + (1 << 20) + 0x100, 4)); /* past both */
	assert_true(jf_codemap_may_change(map, BIG + 0x20 * 0x8000 + 1, 1)); /* a patch */
	assert_true(jf_codemap_may_change(map, FAR + 1, 1));
	assert_false(jf_codemap_may_change(map, FAR + 2, 1));
	assert_false(jf_codemap_may_change(map, FAR - 1, 1));
	assert_false(jf_codemap_may_change(map, BIG - 1, 1));
	jf_zone_image_free(zi);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patch_of_the_same_bytes_is_no_change),
		cmocka_unit_test(test_patch_of_other_bytes_is_left_to_the_block_decoder),
		cmocka_unit_test(test_where_a_write_changes_bytes),
		cmocka_unit_test(test_ranges_of_every_length),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
