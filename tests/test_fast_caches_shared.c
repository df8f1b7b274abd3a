/* Decoders that return blocks, given the same caches (jf_pt_fast_decoder_cached: one set
 * per code map for all of a perf session's buffers), share the TNT paths they followed:
 * a second decoder finds the first's, and after a change of the code map keeps those
 * whose code the change left alone and follows anew those over changed code. Its records
 * are libipt's block decoder's either way (real libipt, trace bytes from the builder). */
#include "test_support.h"
#include "flow_check.h"
#include "pt_builder.h"

#include <string.h>

#include "jitflow/codemap.h"
#include "jitflow/pt_fast.h"

#include "pt_fast_watch.h"

enum { Z = 0xb000, W = 0xd000, ROUNDS = 50 };

/* A loop: nop, jne back to the nop, jmp rax. At Z, and at W until W changes... */
static const uint8_t loop[] = { 0x90, 0x75, 0xfd, 0xff, 0xe0 };
/* ...to the same loop with a nop more: each block of W's path has other instructions. */
static const uint8_t loop_changed[] = { 0x90, 0x90, 0x75, 0xfc, 0xff, 0xe0 };

#define LOOP_BITS "TTN" /* round the loop twice, then on to the jmp rax */

/* Z's loop and W's in turn, ROUNDS times: one TNT packet each, from the loop's start. */
static struct jf_ptb *trace(void)
{
	struct jf_ptb *b = jf_ptb_new();
	unsigned i;

	jf_ptb_start_64(b, Z);
	for (i = 0; i < ROUNDS; i++) {
		jf_ptb_tnt(b, LOOP_BITS);
		jf_ptb_tip(b, pt_ipc_update_16, W);
		jf_ptb_tnt(b, LOOP_BITS);
		jf_ptb_tip(b, pt_ipc_update_16, Z);
	}
	jf_ptb_tnt(b, LOOP_BITS);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	return b;
}

/* b decoded by a fast decoder with caches and by libipt's block decoder: the same
 * records. The fast decoder's report in *rep. */
static void same_as_block_decoder(const char *what, struct jf_ptb *b, struct jf_codemap *map,
				  const struct jf_pt_fast_caches *caches,
				  struct jf_pt_fast_report *rep)
{
	struct jf_pt_config pc;
	struct jf_error err = { "" };
	struct jf_decoder *fast, *ref;

	memset(&pc, 0, sizeof(pc));
	pc.trace = jf_ptb_bytes(b);
	pc.size = jf_ptb_size(b);
	pc.end_on_call = pc.end_on_jump = pc.join_cache_splits = 1;
	fast = jf_pt_fast_decoder_cached(&pc, map, caches, &err);
	ref = jf_pt_decoder_new(&pc, map, &err);
	if (!fast || !ref)
		fail_msg("%s: %s", what, err.msg);
	jf_check_same_flows(what, fast, ref);
	jf_pt_fast_counter_report(fast, rep);
	assert_int_equal(rep->is_fast, 1);
	assert_int_equal(rep->hand_overs, 0);
	jf_decoder_free(fast);
	jf_decoder_free(ref);
}

static void test_paths_shared_and_kept_across_a_change(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_ptb *b = trace();
	struct jf_pt_fast_caches caches;
	struct jf_pt_fast_report first, again, changed;
	struct jf_error err = { "" };

	(void)state;
	assert_int_equal(jf_codemap_add_bytes(map, loop, sizeof(loop), Z, "z", &err), 0);
	assert_int_equal(jf_codemap_add_bytes(map, loop, sizeof(loop), W, "w", &err), 0);
	assert_int_equal(jf_pt_fast_block_caches_init(&caches, map), 0);

	/* One lookup per TNT packet; two paths (Z's and W's), each followed once. */
	same_as_block_decoder("first", b, map, &caches, &first);
	assert_int_equal(first.tnt_paths, 2 * ROUNDS + 1);
	assert_int_equal(first.tnt_paths - first.tnt_path_hits, 2);

	/* A second decoder over the same caches finds both (the counts are the caches'). */
	same_as_block_decoder("again", b, map, &caches, &again);
	assert_int_equal(again.tnt_paths, 2 * (2 * ROUNDS + 1));
	assert_int_equal(again.tnt_paths - again.tnt_path_hits, 2);
	assert_int_equal(again.tnt_paths_kept, 0);

	/* W's code changes: Z's path, whose blocks no change touched, is kept; W's is
	 * followed anew (kept, its blocks would be the old code's: not libipt's records). */
	assert_int_equal(jf_codemap_add_bytes(map, loop_changed, sizeof(loop_changed), W, "w2",
					      &err), 0);
	same_as_block_decoder("changed", b, map, &caches, &changed);
	assert_int_equal(changed.tnt_paths_kept, 1);
	assert_int_equal(changed.tnt_paths - changed.tnt_path_hits, 2 + 2);

	jf_pt_fast_caches_fini(&caches);
	jf_codemap_free(map);
	jf_ptb_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paths_shared_and_kept_across_a_change),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
