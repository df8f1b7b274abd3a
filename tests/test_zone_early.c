/* Code that runs before its record is due (imagemap/zone_early.c).
 *
 * A runtime that buffers its jitdump writes records a function after it has run. Here the
 * zone file loads a function at X whose record is dated after the whole trace (the time
 * hook says so), so applied by time it would not be in the image while the trace runs it.
 * The trace executes the function twice: jitflow must decode it exactly from the pending
 * record, and say it did so; with no zone file the same trace is an error. */
#include "pt_builder.h"
#include "test_support.h"

#include <stdio.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/zone_image.h"

enum { X = 0x7f0000001000ull };

/* nop; nop; nop; jmp rax */
static const uint8_t code[] = { 0x90, 0x90, 0x90, 0xff, 0xe0 };

static uint64_t long_after(void *ctx, uint64_t timestamp)
{
	return UINT64_MAX; /* every record was written after the trace ended */
}

/* Enabled at X; jmp rax goes back to X; the second jmp rax leaves the traced code. */
static struct jf_ptb *trace(void)
{
	struct jf_ptb *b = jf_ptb_new();

	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, X);
	jf_ptb_tip(b, pt_ipc_sext_48, X);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	return b;
}

static void blocks_and_errors(struct jf_decoder *dec, uint64_t *insns, uint64_t *errors)
{
	struct jf_error err;
	struct jf_flow f;

	*insns = *errors = 0;
	while (jf_decoder_next(dec, &f, &err) > 0) {
		if (f.kind == JF_FLOW_BLOCK) {
			assert_int_equal(f.u.block.start, X);
			assert_int_equal(f.u.block.last, X + 3);
			*insns += f.u.block.ninsn;
		} else if (f.kind == JF_FLOW_ERROR) {
			(*errors)++;
		}
	}
}

static void test_code_served_from_its_pending_record(void **state)
{
	struct jf_zone_image_config cfg = { .apply = JF_ZONE_APPLY_TIME, .time_fn = long_after };
	struct jf_ptb *b = trace();
	struct jf_pt_config pc;
	struct jf_codemap *map = jf_codemap_new();
	struct jf_zone_image *zi;
	struct jf_emitter *em;
	struct jf_region r = { .name = "late", .addr = X, .code = code, .size = sizeof(code),
			       .kind = JF_REGION_FUNCTION };
	struct jf_error err;
	char path[512];
	uint64_t insns, errors;

	em = jf_emitter_open(jf_test_tmpdir(), JF_EMIT_NO_MARKER_CALLS);
	assert_non_null(em);
	assert_true(jf_emit_region_load(em, &r));
	snprintf(path, sizeof(path), "%s", jf_emitter_path(em));
	jf_emitter_close(em);

	memset(&pc, 0, sizeof(pc));
	pc.trace = jf_ptb_bytes(b);
	pc.size = jf_ptb_size(b);

	/* Without the zone file: no code at X. */
	{
		struct jf_decoder *plain = jf_pt_decoder_new(&pc, map, &err);

		blocks_and_errors(plain, &insns, &errors);
		jf_decoder_free(plain);
	}
	assert_int_equal(insns, 0);
	assert_true(errors > 0);

	zi = jf_zone_image_new(map, &cfg, &err);
	assert_non_null(zi);
	assert_int_equal(jf_zone_image_add_file(zi, path, &err), 0);
	{
		struct jf_decoder *dec = jf_zone_filter_new(jf_pt_decoder_new(&pc, map, &err), zi,
							    &err);

		blocks_and_errors(dec, &insns, &errors);
		jf_decoder_free(dec);
	}
	assert_int_equal(errors, 0);
	assert_int_equal(insns, 8); /* twice nop, nop, nop, jmp rax */
	assert_true(jf_zone_image_stats(zi)->early_code > 0);
	jf_zone_image_free(zi);
	jf_codemap_free(map);
	jf_ptb_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_code_served_from_its_pending_record),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
