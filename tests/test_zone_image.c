/* Decoding exactly through JIT code that changes: a synthetic runtime (direct calls to the
 * emitter's real marker function and into JIT code) writes a real zone file with the
 * emitter while this test writes, with libipt's encoder, the Intel PT packets that
 * runtime's execution produces. Code is loaded, run, freed, replaced at the same address
 * by different code, moved, and a guard's exit is patched to a bridge. The expected path
 * is fixed here, from the code bytes below; the decoded blocks must match it instruction
 * for instruction, and a stretch of trace that only fits the old version of patched code
 * must come out as an image mismatch naming the region and version, followed by an exact
 * resynchronisation. */
#include "test_support.h"
#include "pt_builder.h"
#include "perf_builder.h"

/* The packets this test's scenarios need, in terms of the shared builder. */
static void pt_psb(struct jf_ptb *b)
{
	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_psbend(b);
}

/* PSB+ carrying the time (TSC ticks) */
static void pt_psb_tsc(struct jf_ptb *b, uint64_t tsc)
{
	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tsc(b, tsc);
	jf_ptb_psbend(b);
}

static void pt_pge(struct jf_ptb *b, uint64_t ip)
{
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, ip);
}

static void pt_tip(struct jf_ptb *b, uint64_t ip)
{
	jf_ptb_tip(b, pt_ipc_sext_48, ip);
}

/* Outcomes as "1" taken, "0" not taken. */
static void pt_tnt(struct jf_ptb *b, const char *bits)
{
	char tn[64];
	size_t i;

	for (i = 0; bits[i] && i + 1 < sizeof(tn); i++)
		tn[i] = bits[i] == '1' ? 'T' : 'N';
	tn[i] = 0;
	jf_ptb_tnt(b, tn);
}

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitflow/emitter.h"
#include "jitflow/pt.h"
#include "jitflow/zone_image.h"

/* The runtime's own code: 1 MiB below the real marker function, so that rel32 calls
 * reach it. */
static uint64_t rt_base;
#define RT rt_base
/* JIT code near it (direct calls from the runtime) */
#define J (RT + 0x20000)          /* trace A, then trace B (same address) */
#define J2 (RT + 0x60000)         /* where B moves */
#define K (RT + 0x30000)          /* trace C with a guard */
#define L (RT + 0x40000)          /* bridge D */

/* Sentinels in the expected instruction list. */
#define MARKER_BODY 1       /* one block: jf_emitter_marker's body, ending in its ret */
#define MISMATCH 2          /* anything, then an image-mismatch error */

/* A: rax counts to 3: inc rax; cmp rax,3; jne A; ret */
static const uint8_t code_a[] = { 0x48, 0xff, 0xc0, 0x48, 0x83, 0xf8, 0x03, 0x75, 0xf7, 0xc3 };
/* B: xor rax,rax; test rax,rax; je +2; ud2; ret */
static const uint8_t code_b[] = { 0x48, 0x31, 0xc0, 0x48, 0x85, 0xc0, 0x74, 0x02, 0x0f, 0x0b,
				  0xc3 };
/* C: test rax,rax; jne +1 (guard, fails to the exit stub at +6); ret;
 *    +6: jmp +9 (exit stub, to +20); 9 x int3; +20: ret */
static const uint8_t code_c[] = { 0x48, 0x85, 0xc0, 0x75, 0x01, 0xc3, 0xe9, 0x09, 0x00, 0x00,
				  0x00, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
				  0xc3 };
/* D (bridge): test rax,rax; je +1; ret; ret */
static const uint8_t code_d[] = { 0x48, 0x85, 0xc0, 0x74, 0x01, 0xc3, 0xc3 };

struct scenario {
	uint8_t rt[4096];
	size_t rtlen;
	uint64_t exp[1024];
	size_t nexp;
	struct jf_ptb *pt;
	uint64_t marker;
	struct jf_emitter *em;
	int ptwrite;    /* records announced by PTWRITE(seq) instead of marker calls */
};

static void expect(struct scenario *s, uint64_t ip)
{
	assert_true(s->nexp < sizeof(s->exp) / sizeof(s->exp[0]));
	s->exp[s->nexp++] = ip;
}

/* call target (e8 rel32) in the runtime's code; returns its address */
static uint64_t rt_call(struct scenario *s, uint64_t target)
{
	uint64_t at = RT + s->rtlen;
	int32_t rel = (int32_t)(target - (at + 5));

	s->rt[s->rtlen++] = 0xe8;
	memcpy(s->rt + s->rtlen, &rel, 4);
	s->rtlen += 4;
	expect(s, at);
	return at;
}

/* The emitter just wrote a record and called the marker: the trace shows the call and
 * the marker's return. */
static void marked(struct scenario *s, uint64_t seq)
{
	uint64_t at;

	assert_true(seq > 0);
	if (s->ptwrite) {
		/* ptwrite rax (rax = seq): ends the block; the PTW packet carries seq */
		static const uint8_t ptwrite_rax[] = { 0xf3, 0x48, 0x0f, 0xae, 0xe0 };

		expect(s, RT + s->rtlen);
		memcpy(s->rt + s->rtlen, ptwrite_rax, sizeof(ptwrite_rax));
		s->rtlen += sizeof(ptwrite_rax);
		jf_ptb_ptw(s->pt, seq, 0);
		return;
	}
	at = rt_call(s, s->marker);
	expect(s, MARKER_BODY);
	pt_tip(s->pt, at + 5);
}

/* The runtime calls JIT code at entry, which executes insns (conditional branches per
 * tnt) and returns. */
static void run(struct scenario *s, uint64_t entry, const uint64_t *insns, size_t n,
		const char *tnt)
{
	uint64_t at = rt_call(s, entry);
	size_t i;

	for (i = 0; i < n; i++)
		expect(s, insns[i]);
	if (tnt)
		pt_tnt(s->pt, tnt);
	pt_tip(s->pt, at + 5);
}

static void segment_start(struct scenario *s)
{
	pt_psb(s->pt);
	pt_pge(s->pt, RT + s->rtlen);
}

static void segment_end(struct scenario *s)
{
	expect(s, RT + s->rtlen);
	s->rt[s->rtlen++] = 0xc3;  /* ret, where tracing stops */
	jf_ptb_tip_pgd(s->pt, pt_ipc_suppressed, 0);
}

static struct jf_region region(const char *name, uint64_t addr, const uint8_t *code,
			       size_t size, uint32_t kind, uint64_t trace)
{
	struct jf_region r = { .name = name, .addr = addr, .code = code, .size = size,
			       .kind = kind, .trace_id = trace };
	return r;
}


/* Build the scenario: emitter calls and trace packets in program order. */
static void build(struct scenario *s, const char *dir)
{
	struct jf_region r;
	uint8_t jmp[5];
	int32_t rel;
	int ptwrite = s->ptwrite;

	memset(s, 0, sizeof(*s));
	s->ptwrite = ptwrite;
	s->marker = (uint64_t)(uintptr_t)&jf_emitter_marker;
	rt_base = (s->marker & ~0xfffull) - 0x100000;

	/* the paths through each piece of code, from the bytes above */
	const uint64_t run_a[] = { J, J + 3, J + 7, J, J + 3, J + 7, J, J + 3, J + 7, J + 9 };
	const uint64_t run_b[] = { J, J + 3, J + 6, J + 10 };
	const uint64_t run_b2[] = { J2, J2 + 3, J2 + 6, J2 + 10 };
	const uint64_t run_c_exit[] = { K, K + 3, K + 6, K + 20 };
	const uint64_t run_c_bridge[] = { K, K + 3, K + 6, L, L + 3, L + 6 };
	s->pt = jf_ptb_new();
	segment_start(s);

	/* With PTWRITE the emitter must not call the marker; this CPU may lack PTWRITE, so the
	 * file's MARKER record is set to "PTWRITE" afterwards (set_ptwrite_methods). */
	s->em = jf_emitter_open(dir, s->ptwrite ? JF_EMIT_NO_MARKER_CALLS : JF_EMIT_CLOCK_MONOTONIC);
	assert_non_null(s->em);
	marked(s, 1); /* CLOCK */
	marked(s, 2); /* MARKER */
	marked(s, 3); /* INTERP_RANGE: the emitter's own code */

	/* A is loaded, runs, and is freed */
	r = region("trace A", J, code_a, sizeof(code_a), JF_REGION_TRACE, 1);
	marked(s, jf_emit_region_load(s->em, &r));
	run(s, J, run_a, 10, "110");
	marked(s, jf_emit_region_free(s->em, J, sizeof(code_a)));

	/* B reuses the address with different code */
	r = region("trace B", J, code_b, sizeof(code_b), JF_REGION_TRACE, 2);
	marked(s, jf_emit_region_load(s->em, &r));
	run(s, J, run_b, 4, "1");

	/* B moves */
	marked(s, jf_emit_region_move(s->em, J, J2, sizeof(code_b)));
	run(s, J2, run_b2, 4, "1");

	/* C with a guard whose failures go to the exit stub */
	r = region("trace C", K, code_c, sizeof(code_c), JF_REGION_TRACE, 3);
	marked(s, jf_emit_region_load(s->em, &r));
	marked(s, jf_emit_guard(s->em, 1, 3, K + 3, K + 6, 0));
	run(s, K, run_c_exit, 4, "1");

	/* a bridge, and the guard's exit re-pointed to it */
	r = region("bridge D", L, code_d, sizeof(code_d), JF_REGION_BRIDGE, 4);
	r.parent_trace = 3;
	r.parent_guard = 1;
	marked(s, jf_emit_region_load(s->em, &r));
	jmp[0] = 0xe9;
	rel = (int32_t)(L - (K + 11));
	memcpy(jmp + 1, &rel, 4);
	marked(s, jf_emit_patch(s->em, K + 6, jmp, 5, "guard 1 -> bridge D"));
	run(s, K, run_c_bridge, 6, "11");
	segment_end(s);

	/* A stretch of trace that only fits C's old version (the exit stub path): the image
	 * has the patch, so this must be a mismatch, not a decode. */
	segment_start(s);
	rt_call(s, K);
	pt_tnt(s->pt, "1");
	pt_tip(s->pt, RT + s->rtlen);
	expect(s, MISMATCH);
	s->rtlen++; /* placeholder byte (never decoded: the trace resynchronises) */
	s->rt[s->rtlen - 1] = 0xc3;

	/* Decoding resynchronises at the next PSB and is exact again. */
	segment_start(s);
	run(s, J2, run_b2, 4, "1");
	segment_end(s);
	jf_emitter_close(s->em);
}

/* Match one decoded block against the expected instructions from #*k on. The marker's
 * body (compiled code, not written here) is a block of its own with end_on_call, or the
 * tail of the block holding the call into it without. */
static void check_block(const struct scenario *s, size_t *k, const struct jf_block *b)
{
	uint32_t i;

	if (*k >= s->nexp)
		fail_msg("more blocks than expected: %lx", (unsigned long)b->start);
	if (s->exp[*k] == MARKER_BODY) {
		assert_int_equal(b->start, s->marker);
		assert_int_equal(b->end, JF_END_RETURN);
		(*k)++;
		return;
	}
	if (b->start != s->exp[*k])
		fail_msg("block %lx..%lx (%u insns) where instruction #%zu should be %lx",
			 (unsigned long)b->start, (unsigned long)b->last, b->ninsn, *k,
			 (unsigned long)s->exp[*k]);
	for (i = 0; i < b->ninsn; i++) {
		if (*k < s->nexp && s->exp[*k] == MARKER_BODY) {
			/* the rest of the block is the marker, up to its return */
			assert_int_equal(b->end, JF_END_RETURN);
			(*k)++;
			return;
		}
		if (*k >= s->nexp || s->exp[*k] <= MISMATCH)
			fail_msg("block %lx..%lx runs past expected #%zu", (unsigned long)b->start,
				 (unsigned long)b->last, *k);
		if (i + 1 == b->ninsn && b->last != s->exp[*k])
			fail_msg("block %lx..%lx (%u insns) ends where #%zu is %lx",
				 (unsigned long)b->start, (unsigned long)b->last, b->ninsn, *k,
				 (unsigned long)s->exp[*k]);
		(*k)++;
	}
}

/* Rewrite the MARKER record's methods to "PTWRITE follows each record". */
static void set_ptwrite_methods(const char *zone)
{
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	struct jf_error err;
	uint64_t at = 0;
	uint32_t methods = JF_ZONE_MARKER_PTWRITE;
	FILE *f;

	assert_int_equal(jf_zone_reader_open(&r, zone, &err), 0);
	while (jf_zone_next(r, &rec, &err) == 1)
		if (rec.id == JF_ZONE_MARKER)
			at = rec.offset + 32 + 8; /* after the prefixes and marker_addr */
	jf_zone_reader_close(r);
	assert_true(at > 0);
	f = fopen(zone, "r+b");
	assert_non_null(f);
	fseek(f, (long)at, SEEK_SET);
	assert_int_equal(fwrite(&methods, 4, 1, f), 1);
	fclose(f);
}

static void exact_through_changes(int end_on_call, int ptwrite)
{
	char dir[512], zone[600];
	struct scenario *s = calloc(1, sizeof(*s));
	struct jf_codemap *map = jf_codemap_new();
	struct jf_zone_image *zi;
	struct jf_pt_config cfg;
	struct jf_decoder *dec;
	struct jf_error err = { "" };
	struct jf_flow f;
	size_t k = 0, mismatches = 0;
	int rc;

	snprintf(dir, sizeof(dir), "%s/scenario%d%d", jf_test_tmpdir(), end_on_call, ptwrite);
	mkdir(dir, 0755);
	s->ptwrite = ptwrite;
	build(s, dir);
	snprintf(zone, sizeof(zone), "%s/jit-%d.dump", dir, (int)getpid());
	if (ptwrite)
		set_ptwrite_methods(zone);

	assert_int_equal(jf_codemap_add_bytes(map, s->rt, s->rtlen, RT, "runtime", &err), 0);
	assert_int_equal(jf_codemap_add_bytes(map, (const void *)(uintptr_t)s->marker, 64,
					      s->marker, "jf_emitter_marker", &err), 0);
	zi = jf_zone_image_new(map, NULL, &err);
	assert_non_null(zi);
	if (jf_zone_image_add_file(zi, zone, &err))
		fail_msg("%s", err.msg);
	memset(&cfg, 0, sizeof(cfg));
	cfg.trace = jf_ptb_bytes(s->pt);
	cfg.size = jf_ptb_size(s->pt);
	cfg.end_on_call = end_on_call; /* with: a marker call starts a block of its own */
	dec = jf_zone_filter_new(jf_pt_decoder_new(&cfg, map, &err), zi, &err);
	assert_non_null(dec);

	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		if (f.kind == JF_FLOW_ERROR) {
			if (k >= s->nexp || s->exp[k] != MISMATCH)
				fail_msg("unexpected error at expected #%zu: [%lx, %lx: %s]", k,
					 (unsigned long)f.offset, (unsigned long)f.ip,
					 f.u.error.text);
			assert_int_equal(f.u.error.phase, JF_PHASE_IMAGE);
			/* C's patched exit (v2) leads into the bridge, whose conditional
			 * branch the trace (made for C v1: a return) does not have */
			assert_string_equal(f.u.error.text,
					    "bridge D v1+0x3: trace stream does not match query");
			mismatches++;
			k++;
			continue;
		}
		if (f.kind != JF_FLOW_BLOCK)
			continue;
		if (k < s->nexp && s->exp[k] == MISMATCH)
			continue; /* what is decoded before the mismatch is found */
		check_block(s, &k, &f.u.block);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(k, s->nexp);
	assert_int_equal(mismatches, 1);
	assert_int_equal(jf_zone_image_stats(zi)->mismatches, 1);
	/* every record but the CLOCK and CODE_CLOSE at close was applied at a marker: 11
	 * extension records and perf's 4 CODE_LOADs and 1 CODE_MOVE that came with them */
	assert_int_equal(ptwrite ? jf_zone_image_stats(zi)->by_ptwrite
				 : jf_zone_image_stats(zi)->by_marker_call, 16);
	assert_int_equal(jf_zone_image_stats(zi)->loads, 4);
	assert_int_equal(jf_zone_image_stats(zi)->frees, 1);
	assert_int_equal(jf_zone_image_stats(zi)->moves, 1);
	assert_int_equal(jf_zone_image_stats(zi)->patches, 1);
	assert_int_equal(jf_zone_image_stats(zi)->by_time, 0);
	assert_int_equal(jf_zone_image_stats(zi)->unmatched_markers, 0);
	{
		uint64_t start;
		uint32_t version;

		assert_string_equal(jf_zone_image_lookup(zi, K + 7, &start, &version), "trace C");
		assert_int_equal(start, K);
		assert_int_equal(version, 2);
		assert_string_equal(jf_zone_image_lookup(zi, J2 + 1, &start, &version), "trace B");
		assert_null(jf_zone_image_lookup(zi, J, NULL, NULL));
	}
	jf_decoder_free(dec);
	jf_zone_image_free(zi);
	jf_codemap_free(map);
	jf_ptb_free(s->pt);
	free(s);
}

static void test_exact_through_load_free_reuse_move_patch(void **state)
{
	exact_through_changes(1, 0);
}

/* The same with PTWRITE(seq) after each record (as the emitter does with JF_EMIT_PTWRITE
 * on CPUs that have it) and no marker calls. */
static void test_exact_with_ptwrite_markers(void **state)
{
	exact_through_changes(1, 1);
}

/* libipt follows direct calls inside a block unless told not to (perf.data sessions):
 * the marker is then found as the return that ends the block. */
static void test_exact_without_end_on_call(void **state)
{
	exact_through_changes(0, 0);
}

/* A zone file without markers (JF_EMIT_NO_MARKER_CALLS, TSC clock) in which trace A is
 * loaded at J, freed, and trace B loaded at J; the times of the three records. */
struct a_then_b {
	char zone[600];
	uint64_t t_load_a, t_free, t_load_b;
};

static void write_a_then_b(struct scenario *s, const char *name, struct a_then_b *z)
{
	char dir[512];
	struct jf_zone_reader *zr;
	struct jf_zone_record rec;
	struct jf_error err = { "" };
	struct jf_region r;

	memset(z, 0, sizeof(*z));
	s->marker = (uint64_t)(uintptr_t)&jf_emitter_marker;
	rt_base = (s->marker & ~0xfffull) - 0x100000;
	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), name);
	mkdir(dir, 0755);
	s->em = jf_emitter_open(dir, JF_EMIT_CLOCK_TSC | JF_EMIT_NO_MARKER_CALLS);
	r = region("trace A", J, code_a, sizeof(code_a), JF_REGION_TRACE, 1);
	assert_true(jf_emit_region_load(s->em, &r) > 0);
	assert_true(jf_emit_region_free(s->em, J, sizeof(code_a)) > 0);
	r = region("trace B", J, code_b, sizeof(code_b), JF_REGION_TRACE, 2);
	assert_true(jf_emit_region_load(s->em, &r) > 0);
	jf_emitter_close(s->em);
	snprintf(z->zone, sizeof(z->zone), "%s/jit-%d.dump", dir, (int)getpid());

	/* the records' own times, to place the trace's TSC between them */
	assert_int_equal(jf_zone_reader_open(&zr, z->zone, &err), 0);
	while (jf_zone_next(zr, &rec, &err) == 1) {
		if (rec.id == JF_ZONE_REGION_LOAD && !z->t_load_a)
			z->t_load_a = rec.timestamp;
		else if (rec.id == JF_ZONE_REGION_LOAD)
			z->t_load_b = rec.timestamp;
		else if (rec.id == JF_ZONE_REGION_FREE)
			z->t_free = rec.timestamp;
	}
	jf_zone_reader_close(zr);
	assert_true(z->t_load_a && z->t_free > z->t_load_a && z->t_load_b > z->t_free);
}

/* Without markers (a plain jitdump, or JF_EMIT_NO_MARKER_CALLS) records apply by time:
 * the trace's TSC against the records' TSC timestamps. The same address runs A, then B,
 * with tracing off in between (as when a runtime compiles): exact on both sides. B's
 * run starts at the time B was loaded, or (at_free) at exactly the time A was freed:
 * a record applies at the first flow whose time reaches its own, so A is gone then and
 * J holds B's bytes (known early from its coming CODE_LOAD); one flow later would decode
 * B's run over A's code. (The zone filter skips the streams while flows come before the
 * earliest record due; equal is due.) */
static void by_time_without_markers(int at_free)
{
	struct scenario *s = calloc(1, sizeof(*s));
	struct jf_codemap *map = jf_codemap_new();
	struct a_then_b z;
	struct jf_zone_image *zi;
	struct jf_pt_config cfg;
	struct jf_decoder *dec;
	struct jf_error err = { "" };
	struct jf_flow f;
	size_t k = 0;
	int rc;

	write_a_then_b(s, at_free ? "bytime-free" : "bytime", &z);
	const uint64_t run_a[] = { J, J + 3, J + 7, J, J + 3, J + 7, J, J + 3, J + 7, J + 9 };
	const uint64_t run_b[] = { J, J + 3, J + 6, J + 10 };

	s->pt = jf_ptb_new();
	pt_psb_tsc(s->pt, z.t_load_a); /* A is loaded, B not yet */
	pt_pge(s->pt, RT);
	run(s, J, run_a, 10, "110");
	segment_end(s);
	pt_psb_tsc(s->pt, at_free ? z.t_free : z.t_load_b); /* A freed (and B loaded) */
	pt_pge(s->pt, RT + s->rtlen);
	run(s, J, run_b, 4, "1");
	segment_end(s);

	assert_int_equal(jf_codemap_add_bytes(map, s->rt, s->rtlen, RT, "runtime", &err), 0);
	zi = jf_zone_image_new(map, NULL, &err);
	assert_int_equal(jf_zone_image_add_file(zi, z.zone, &err), 0);
	memset(&cfg, 0, sizeof(cfg));
	cfg.trace = jf_ptb_bytes(s->pt);
	cfg.size = jf_ptb_size(s->pt);
	cfg.end_on_call = 1;
	dec = jf_zone_filter_new(jf_pt_decoder_new(&cfg, map, &err), zi, &err);
	assert_non_null(dec);
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		if (f.kind == JF_FLOW_ERROR)
			fail_msg("error: [%lx, %lx: %s]", (unsigned long)f.offset,
				 (unsigned long)f.ip, f.u.error.text);
		if (f.kind != JF_FLOW_BLOCK)
			continue;
		if (k + f.u.block.ninsn > s->nexp || f.u.block.start != s->exp[k] ||
		    f.u.block.last != s->exp[k + f.u.block.ninsn - 1])
			fail_msg("block %lx..%lx where instruction #%zu should be %lx",
				 (unsigned long)f.u.block.start, (unsigned long)f.u.block.last, k,
				 (unsigned long)s->exp[k]);
		k += f.u.block.ninsn;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(k, s->nexp);
	assert_int_equal(jf_zone_image_stats(zi)->by_marker_call, 0);
	if (!at_free) {
		assert_true(jf_zone_image_stats(zi)->by_time >= 5); /* CLOCK, MARKER, 2 loads, free */
		assert_int_equal(jf_zone_image_stats(zi)->loads, 2);
	}
	jf_decoder_free(dec);
	jf_zone_image_free(zi);
	jf_codemap_free(map);
	jf_ptb_free(s->pt);
	free(s);
}

static void test_by_time_without_markers(void **state)
{
	by_time_without_markers(0);
}

static void test_by_time_applies_at_equal_time(void **state)
{
	by_time_without_markers(1);
}

/* Where code will still change, as the zone image tells the code map: where records not
 * applied yet load, free or patch code (J: A's load, its free, B's load), nowhere else,
 * and nowhere once all are applied. */
static void test_where_code_will_change(void **state)
{
	struct scenario *s = calloc(1, sizeof(*s));
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { "" };
	struct jf_zone_image *zi = jf_zone_image_new(map, NULL, &err);
	struct a_then_b z;

	(void)state;
	assert_non_null(zi);
	assert_true(jf_codemap_tells_changes(map));
	write_a_then_b(s, "pending", &z);
	assert_false(jf_codemap_may_change(map, J, 1)); /* no files */
	assert_int_equal(jf_zone_image_add_file(zi, z.zone, &err), 0);
	assert_true(jf_codemap_may_change(map, J, 1));
	assert_true(jf_codemap_may_change(map, J + sizeof(code_b) - 1, 16));
	assert_true(jf_codemap_may_change(map, J - 4, 5));
	assert_false(jf_codemap_may_change(map, J - 4, 4)); /* ends where A starts */
	assert_false(jf_codemap_may_change(map, J + 0x1000, 16));
	assert_int_equal(jf_zone_image_apply_all(zi, &err), 0);
	assert_false(jf_codemap_may_change(map, J, sizeof(code_b)));
	jf_zone_image_free(zi);
	assert_false(jf_codemap_tells_changes(map));
	jf_codemap_free(map);
	free(s);
}

/* Settled once every code change of every file is applied: minivm-bridge's zone file has
 * 11 CODE_LOADs and a PATCH among its 3,000 iteration marks and descriptions. */
static void test_code_settled(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { "" };
	struct jf_zone_image *zi = jf_zone_image_new(map, NULL, &err);
	char zone[4096];

	(void)state;
	snprintf(zone, sizeof(zone), "%s/traces/minivm-bridge/jit-12201.dump",
		 jf_test_source_dir());
	assert_non_null(zi);
	assert_true(jf_zone_image_code_settled(zi)); /* no files */
	assert_int_equal(jf_zone_image_add_file(zi, zone, &err), 0);
	assert_false(jf_zone_image_code_settled(zi));
	assert_int_equal(jf_zone_image_apply_all(zi, &err), 0);
	assert_int_equal(jf_zone_image_stats(zi)->loads, 11);
	assert_int_equal(jf_zone_image_stats(zi)->patches, 1);
	assert_true(jf_zone_image_code_settled(zi));
	/* The same file again: its changes are not applied yet. */
	assert_int_equal(jf_zone_image_add_file(zi, zone, &err), 0);
	assert_false(jf_zone_image_code_settled(zi));
	jf_zone_image_free(zi);
	jf_codemap_free(map);
}

static int count_lines_with(const char *text, const char *a, const char *b)
{
	const char *line = text;
	int n = 0;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[512];

		snprintf(buf, sizeof(buf), "%.*s", (int)(len < 511 ? len : 511), line);
		if (strstr(buf, a) && (!b || strstr(buf, b)))
			n++;
		line = end ? end + 1 : NULL;
	}
	return n;
}

/* The same scenario through `jitflow decode --zone`: block listings name JIT code by
 * region, version and offset as it was at that point, and the mismatch is printed as an
 * image error. */
static void test_cli_decode_with_zone(void **state)
{
	char dir[512], path[700], cmd[4096], addr[64];
	struct scenario *s = calloc(1, sizeof(*s));
	char *out = NULL;

	snprintf(dir, sizeof(dir), "%s/cli", jf_test_tmpdir());
	mkdir(dir, 0755);
	build(s, dir);
	snprintf(path, sizeof(path), "%s/trace.pt", dir);
	jf_test_write_file(path, jf_ptb_bytes(s->pt), jf_ptb_size(s->pt));
	snprintf(path, sizeof(path), "%s/runtime.bin", dir);
	jf_test_write_file(path, s->rt, s->rtlen);
	snprintf(path, sizeof(path), "%s/marker.bin", dir);
	jf_test_write_file(path, (const void *)(uintptr_t)s->marker, 64);
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' decode --pt trace.pt --raw runtime.bin:0x%llx "
		 "--raw marker.bin:0x%llx --zone jit-%d.dump --blocks", dir, jf_test_cli(),
		 (unsigned long long)RT, (unsigned long long)s->marker, (int)getpid());
	assert_int_equal(jf_test_run(cmd, &out), 0);

	/* the same address J names trace A, then (after the free and a new load) trace B */
	snprintf(addr, sizeof(addr), "%016llx ", (unsigned long long)J);
	assert_int_equal(count_lines_with(out, addr, "  trace A v1+0x0"), 3);
	assert_int_equal(count_lines_with(out, addr, "  trace B v1+0x0"), 1);
	/* B after its move (segment 1 and again after the resynchronisation) */
	snprintf(addr, sizeof(addr), "%016llx ", (unsigned long long)J2);
	assert_int_equal(count_lines_with(out, addr, "  trace B v1+0x0"), 2);
	/* C before its patch is v1, after it v2 */
	snprintf(addr, sizeof(addr), "%016llx ", (unsigned long long)K);
	assert_int_equal(count_lines_with(out, addr, "  trace C v1+0x0"), 1);
	assert_true(count_lines_with(out, addr, "  trace C v2+0x0") >= 1);
	assert_int_equal(count_lines_with(out, ": image mismatch: bridge D v1+0x3: trace stream does not "
					  "match query]", NULL), 1);
	free(out);
	jf_ptb_free(s->pt);
	free(s);
}

/* The same scenario recorded as a perf.data (built byte by byte with the test builder):
 * the runtime's executable mapping of its jit-PID.dump is in the sideband, and `jitflow
 * decode --perf` finds the dump next to the perf.data by itself (its recorded directory
 * does not exist here). Whether or not the session ends blocks at calls, JIT code is named
 * at the blocks that start inside it after taken branches and returns, checked here. */
static void test_cli_perf_data_finds_zone_file(void **state)
{
	char dir[512], path[700], cmd[4096], addr[64], dump[128];
	struct scenario *s = calloc(1, sizeof(*s));
	struct pb_sid sid = { 100, 100, 1000, 0 };
	uint64_t priv[17];
	struct pb b;
	char *out = NULL;

	snprintf(dir, sizeof(dir), "%s/perf", jf_test_tmpdir());
	mkdir(dir, 0755);
	build(s, dir);
	snprintf(path, sizeof(path), "%s/runtime.bin", dir);
	jf_test_write_file(path, s->rt, s->rtlen);
	snprintf(path, sizeof(path), "%s/marker.bin", dir);
	jf_test_write_file(path, (const void *)(uintptr_t)s->marker, 64);

	pb_init(&b);
	b.cpuid = "GenuineIntel,6,142,10";
	pb_add_attr(&b, PB_INTEL_PT_PMU, PB_CFG_NORETCOMP, PB_SAMPLE_STD | 1u,
		    PB_ATTR_SAMPLE_ID_ALL | (1u << 8) | (1u << 9) | (1u << 23), 1);
	pb_intel_pt_priv(priv, 0, 0, 0, 0);
	pb_auxtrace_info_intel_pt(&b, priv, 17);
	pb_comm(&b, 100, 100, "vm", 1, &sid);
	sid.time++;
	snprintf(path, sizeof(path), "%s/runtime.bin", dir);
	pb_mmap2(&b, 100, 100, RT, s->rtlen, 0, 5, path, &sid);
	sid.time++;
	snprintf(path, sizeof(path), "%s/marker.bin", dir);
	pb_mmap2(&b, 100, 100, s->marker, 64, 0, 5, path, &sid);
	sid.time++;
	snprintf(dump, sizeof(dump), "/nonexistent/jit-%d.dump", (int)getpid());
	pb_mmap2(&b, 100, 100, 0x7f00000000ull, 4096, 0, 5, dump, &sid);
	sid.time++;
	pb_itrace_start(&b, 100, 100, &sid);
	sid.time++;
	pb_aux(&b, 0, jf_ptb_size(s->pt), 0, &sid);
	pb_auxtrace(&b, jf_ptb_bytes(s->pt), jf_ptb_size(s->pt), 0, 0, 100, (uint32_t)-1);
	pb_finished_round(&b);
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	pb_write(&b, path);
	pb_free(&b);

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' decode --perf perf.data --blocks 2>&1", dir,
		 jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	/* J held A (its return at +9), then B (its return at +0xa) */
	snprintf(addr, sizeof(addr), "%016llx ", (unsigned long long)J);
	assert_true(count_lines_with(out, addr, "  trace A v1+0x0") >= 2);
	snprintf(addr, sizeof(addr), "%016llx ", (unsigned long long)(J + 9));
	assert_int_equal(count_lines_with(out, addr, "  trace A v1+0x9"), 1);
	snprintf(addr, sizeof(addr), "%016llx ", (unsigned long long)(J + 10));
	assert_int_equal(count_lines_with(out, addr, "  trace B v1+0xa"), 1);
	snprintf(addr, sizeof(addr), "%016llx ", (unsigned long long)(J2 + 10));
	assert_int_equal(count_lines_with(out, addr, "  trace B v1+0xa"), 2);
	/* the guard's exit stub before the patch (v1), the jump to the bridge after (v2) */
	snprintf(addr, sizeof(addr), "%016llx ", (unsigned long long)(K + 6));
	assert_int_equal(count_lines_with(out, addr, "  trace C v1+0x6"), 1);
	assert_true(count_lines_with(out, addr, "  trace C v2+0x6") >= 1);
	assert_int_equal(count_lines_with(out, ": image mismatch: bridge D v1+0x3: trace stream "
					  "does not match query]", NULL), 1);
	free(out);
	jf_ptb_free(s->pt);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_perf_data_finds_zone_file),
		cmocka_unit_test(test_exact_through_load_free_reuse_move_patch),
		cmocka_unit_test(test_exact_without_end_on_call),
		cmocka_unit_test(test_exact_with_ptwrite_markers),
		cmocka_unit_test(test_cli_decode_with_zone),
		cmocka_unit_test(test_by_time_without_markers),
		cmocka_unit_test(test_by_time_applies_at_equal_time),
		cmocka_unit_test(test_code_settled),
		cmocka_unit_test(test_where_code_will_change),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
