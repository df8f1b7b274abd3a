/* The multi-queue merge of a perf.data and a zone record that one thread makes due for
 * code another thread runs next (a due record must not wait for a look-ahead window to fill).
 *
 * Two per-thread buffers, built with libipt's encoder over code written here. Thread A
 * (queue 0) runs the zone emitter's real marker function after each record the emitter
 * wrote (as test_zone_image.c); its last record patches the code at X from v1 (ret) to
 * v2 (nop; nop; ret), and its marker call starts at time 100 and returns at time 300.
 * Thread B (queue 1) starts at time 200, after A's marker call began, so after the patch
 * was written, and calls X, which returns at time 400. B must therefore run v2: three
 * instructions at X, X + 1, X + 2. Both versions fit B's packets (the return's TIP), so
 * a stale decode is no error, only a wrong path: X alone.
 *
 * A merge that decodes one flow of each queue ahead and orders queues by that flow's time
 * decodes B's call into X (time 400) while A's marker return (time 300) still waits to be
 * returned, i.e. before the patch applies. The merge orders queues by the time their
 * decoder has reached and decodes only the chosen queue's next flow, so A's marker flow
 * (reached time 100) is returned, and the patch applied, before B's flow into X (reached
 * time 200) is decoded. */
#include "test_support.h"
#include "perf_builder.h"
#include "pt_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitflow/emitter.h"
#include "jitflow/perf_session.h"
#include "jitflow/zone_image.h"

enum { TID_A = 1001, TID_B = 1002, RT_B_OFF = 0x800, X_OFF = 0x20000 };

struct world {
	uint64_t marker, rt, x;       /* the marker, the runtime's code, the patched code */
	uint8_t code[0x1000];         /* the runtime's code: A's at 0, B's at RT_B_OFF */
	size_t len_a, len_b;
	struct jf_ptb *a, *b;
};

/* call target (e8 rel32) at rt + *len; returns the call's address */
static uint64_t put_call(struct world *w, size_t base, size_t *len, uint64_t target)
{
	uint64_t at = w->rt + base + *len;
	int32_t rel = (int32_t)(target - (at + 5));

	w->code[base + (*len)++] = 0xe8;
	memcpy(w->code + base + *len, &rel, 4);
	*len += 4;
	return at;
}

static void psb_at(struct jf_ptb *p, uint64_t tsc, uint64_t ip)
{
	jf_ptb_psb(p);
	jf_ptb_mode_exec(p, ptem_64bit);
	jf_ptb_tsc(p, tsc);
	jf_ptb_psbend(p);
	jf_ptb_mode_exec(p, ptem_64bit);
	jf_ptb_tip_pge(p, pt_ipc_sext_48, ip);
}

/* A calls the marker after a record; the marker's return is dated tsc (0: no TSC). */
static void marker_call(struct world *w, uint64_t tsc)
{
	uint64_t at = put_call(w, 0, &w->len_a, w->marker);

	if (tsc)
		jf_ptb_tsc(w->a, tsc);
	jf_ptb_tip(w->a, pt_ipc_sext_48, at + 5);
}

/* ret, where tracing stops */
static void stop(struct world *w, struct jf_ptb *p, size_t base, size_t *len)
{
	w->code[base + (*len)++] = 0xc3;
	jf_ptb_tip_pgd(p, pt_ipc_suppressed, 0);
}

static void build(struct world *w, const char *dir)
{
	static const uint8_t v1[] = { 0xc3, 0xcc, 0xcc };    /* ret */
	static const uint8_t v2[] = { 0x90, 0x90, 0xc3 };    /* nop; nop; ret */
	struct jf_region r = { .name = "code X", .code = v1, .size = sizeof(v1),
			       .kind = JF_REGION_TRACE, .trace_id = 1 };
	struct jf_emitter *em;
	uint64_t at;
	int i;

	memset(w, 0, sizeof(*w));
	w->marker = (uint64_t)(uintptr_t)&jf_emitter_marker;
	w->rt = (w->marker & ~0xfffull) - 0x100000; /* rel32 calls reach the marker */
	w->x = w->rt + X_OFF;
	r.addr = w->x;
	w->a = jf_ptb_new();
	w->b = jf_ptb_new();

	/* A: the emitter's opening records (CLOCK, MARKER, INTERP_RANGE) and X's load, each
	 * followed by a marker call; the last of them returns at time 100, so A's call for
	 * the patch starts at 100. */
	psb_at(w->a, 10, w->rt);
	em = jf_emitter_open(dir, JF_EMIT_CLOCK_MONOTONIC);
	assert_non_null(em);
	for (i = 0; i < 3; i++)
		marker_call(w, 0);
	assert_true(jf_emit_region_load(em, &r) > 0);
	marker_call(w, 100);
	assert_true(jf_emit_patch(em, w->x, v2, sizeof(v2), "X v1 -> v2") > 0);
	marker_call(w, 300);
	stop(w, w->a, 0, &w->len_a);
	jf_emitter_close(em);

	/* B: from time 200, calls X, which returns at 400. */
	psb_at(w->b, 200, w->rt + RT_B_OFF);
	at = put_call(w, RT_B_OFF, &w->len_b, w->x);
	jf_ptb_tsc(w->b, 400);
	jf_ptb_tip(w->b, pt_ipc_sext_48, at + 5);
	stop(w, w->b, RT_B_OFF, &w->len_b);
}

/* Both threads' buffers in one per-thread perf.data (ns = TSC). */
static void write_perf_data(struct world *w, const char *path)
{
	struct pb_sid sid = { 1000, TID_A, 1, 0 };
	uint64_t priv[17];
	struct pb b;

	pb_init(&b);
	b.cpuid = "GenuineIntel,6,142,10";
	pb_add_attr(&b, PB_INTEL_PT_PMU, PB_CFG_TSC | PB_CFG_NORETCOMP, PB_SAMPLE_STD | 1u,
		    PB_ATTR_SAMPLE_ID_ALL | (1u << 8) | (1u << 9) | (1u << 23), 1);
	pb_intel_pt_priv(priv, 0, 1, 0, 0);
	pb_auxtrace_info_intel_pt(&b, priv, 17);
	pb_comm(&b, 1000, TID_A, "vm", 1, &sid);
	sid.time = 2;
	pb_itrace_start(&b, 1000, TID_A, &sid);
	sid.tid = TID_B;
	sid.time = 3;
	pb_itrace_start(&b, 1000, TID_B, &sid);
	pb_finished_round(&b);
	pb_auxtrace(&b, jf_ptb_bytes(w->a), jf_ptb_size(w->a), 0, 0, TID_A, (uint32_t)-1);
	pb_auxtrace(&b, jf_ptb_bytes(w->b), jf_ptb_size(w->b), 0, 1, TID_B, (uint32_t)-1);
	sid.time = 500;
	sid.tid = TID_A;
	pb_aux(&b, 0, jf_ptb_size(w->a), 0, &sid);
	sid.tid = TID_B;
	pb_aux(&b, 0, jf_ptb_size(w->b), 0, &sid);
	pb_finished_round(&b);
	pb_write(&b, path);
	pb_free(&b);
}

static struct jf_codemap *map_for_pid(void *ctx, int32_t pid)
{
	(void)pid;
	return ctx;
}

static void test_record_applies_before_the_other_thread_runs(void **state)
{
	char dir[512], zone[600], path[600];
	struct world *w = calloc(1, sizeof(*w));
	struct jf_codemap *map = jf_codemap_new();
	struct jf_perf_session_hooks hooks = { map, map_for_pid, NULL, NULL };
	struct jf_perf_session_options opts = { 0 };
	struct jf_error err = { "" };
	struct jf_zone_image *zi;
	struct jf_decoder *dec;
	struct jf_flow f;
	uint64_t b_insns = 0, x_insns = 0, x_last = 0, a_blocks = 0, marker_flow_at = 0;
	uint64_t x_flow_at = 0, n = 0;
	int rc;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/merge", jf_test_tmpdir());
	mkdir(dir, 0755);
	build(w, dir);
	snprintf(zone, sizeof(zone), "%s/jit-%d.dump", dir, (int)getpid());
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	write_perf_data(w, path);

	assert_int_equal(jf_codemap_add_bytes(map, w->code, sizeof(w->code), w->rt, "runtime",
					      &err), 0);
	assert_int_equal(jf_codemap_add_bytes(map, (const void *)(uintptr_t)w->marker, 64,
					      w->marker, "jf_emitter_marker", &err), 0);
	zi = jf_zone_image_new(map, NULL, &err);
	assert_non_null(zi);
	if (jf_zone_image_add_file(zi, zone, &err))
		fail_msg("%s", err.msg);
	opts.end_on_call = 1; /* as `jitflow decode` with a zone file */
	dec = jf_zone_filter_new(jf_perf_pt_decoder_new_opts(path, &hooks, &opts, &err), zi,
				 &err);
	if (!dec)
		fail_msg("%s", err.msg);
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		n++;
		if (f.kind == JF_FLOW_ERROR || f.kind == JF_FLOW_LOST)
			fail_msg("flow %llu: kind %d at offset %llu ip %llx: %s",
				 (unsigned long long)n, f.kind, (unsigned long long)f.offset,
				 (unsigned long long)f.ip, f.u.error.text);
		if (f.kind != JF_FLOW_BLOCK)
			continue;
		if (f.source == 0) {
			a_blocks++;
			if (f.u.block.start == w->marker)
				marker_flow_at = n; /* the last: the patch's */
			continue;
		}
		b_insns += f.u.block.ninsn;
		if (f.u.block.start == w->x) {
			x_insns = f.u.block.ninsn;
			x_last = f.u.block.last;
			x_flow_at = n;
		}
	}
	if (rc < 0)
		fail_msg("%s", err.msg);
	/* A: 5 calls of the marker, each a block with end_on_call, its body, and the final
	 * ret: 11 blocks. B: the call, X (v2: three instructions), the ret after the call. */
	assert_int_equal(a_blocks, 11);
	assert_true(marker_flow_at > 0 && x_flow_at > marker_flow_at);
	assert_int_equal(x_insns, 3);
	assert_int_equal(x_last, w->x + 2);
	assert_int_equal(b_insns, 1 + 3 + 1);
	assert_int_equal(jf_zone_image_stats(zi)->patches, 1);
	assert_int_equal(jf_zone_image_stats(zi)->unmatched_markers, 0);
	jf_decoder_free(dec);
	jf_zone_image_free(zi);
	jf_codemap_free(map);
	jf_ptb_free(w->a);
	jf_ptb_free(w->b);
	free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_applies_before_the_other_thread_runs),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
