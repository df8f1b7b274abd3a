/* A JIT that rewrites code where it ran before, thousands of times, while one decoder runs:
 * every block decodes the bytes the code map holds when it is asked for, whatever the
 * change was (new bytes at the same address, a file's section over them, code split by
 * new code inside it, code removed), other sections of the same file stay, and code
 * removed decodes to a missing-code error. The fast path's block cache, over the same
 * changes, decodes X anew after each and keeps Y's block, which no change touched. The
 * instruction counts are the program's: each version of the code is n nops and a jmp
 * rax. */
#include "test_support.h"
#include "pt_builder.h"

#include <stdio.h>
#include <string.h>

#include "jitflow/codemap.h"
#include "jitflow/insn.h"
#include "jitflow/pt_fast.h"

#include "pt_fast_blocks.h"

enum {
	X = 0x7000,        /* the code rewritten */
	Y = 0x9000,        /* code of the same file, never changed */
	Z = 0xb000,        /* a loop of its own, never changed */
	STEPS = 5000,      /* past the point where the map starts a new libipt section cache */
	SLOT = 32,         /* bytes per version in the file */
	VERSIONS = 40,
	Y_VERSION = 5,
};

/* n nops, jmp rax, int3 padding. */
static void version(uint8_t *out, size_t size, unsigned nops)
{
	memset(out, 0xcc, size);
	memset(out, 0x90, nops);
	out[nops] = 0xff;
	out[nops + 1] = 0xe0;
}

static unsigned file_nops(unsigned v)
{
	return v % 13 + 1;
}

static unsigned bytes_nops(unsigned step)
{
	return step % 11 + 2;
}

static void write_versions(const char *path)
{
	uint8_t data[VERSIONS * SLOT];
	unsigned v;

	for (v = 0; v < VERSIONS; v++)
		version(data + v * SLOT, SLOT, file_nops(v));
	jf_test_write_file(path, data, sizeof(data));
}

/* Put the code of step `step` at X, one kind of change after another; returns its nops. */
static unsigned change(struct jf_codemap *map, const char *path, unsigned step)
{
	struct jf_error err;
	uint8_t code[SLOT], filler[64];
	unsigned nops = bytes_nops(step), v = step % VERSIONS;

	version(code, sizeof(code), nops);
	switch (step % 4) {
	case 0: /* new bytes at the same address */
		break;
	case 1: /* a section of the file that also holds Y's code */
		if (jf_codemap_add_file(map, path, (uint64_t)v * SLOT, SLOT, X, NULL, &err) < 0)
			fail_msg("step %u: %s", step, err.msg);
		return file_nops(v);
	case 2: /* code around X first: the new code splits it */
		memset(filler, 0xcc, sizeof(filler));
		if (jf_codemap_add_bytes(map, filler, sizeof(filler), X - 16, "around", &err) < 0)
			fail_msg("step %u: %s", step, err.msg);
		break;
	case 3: /* the old code freed first */
		assert_true(jf_codemap_remove(map, X - 16, 64) > 0);
		break;
	}
	if (jf_codemap_add_bytes(map, code, sizeof(code), X, "jit", &err) < 0)
		fail_msg("step %u: %s", step, err.msg);
	return nops;
}

/* Enabled at X, then Y and X in turn (jmp rax, jmp rax), steps times (16-bit TIPs: the
 * test builder holds 64 KiB). */
static struct jf_ptb *trace(unsigned steps)
{
	struct jf_ptb *b = jf_ptb_new();
	unsigned i;

	jf_ptb_start_64(b, X);
	for (i = 0; i < steps; i++) {
		jf_ptb_tip(b, pt_ipc_update_16, Y);
		jf_ptb_tip(b, pt_ipc_update_16, X);
	}
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	return b;
}

static struct jf_decoder *decoder(struct jf_ptb *b, struct jf_codemap *map)
{
	struct jf_pt_config pc;
	struct jf_error err;
	struct jf_decoder *dec;

	memset(&pc, 0, sizeof(pc));
	pc.trace = jf_ptb_bytes(b);
	pc.size = jf_ptb_size(b);
	dec = jf_pt_decoder_new(&pc, map, &err);
	if (!dec)
		fail_msg("%s", err.msg);
	return dec;
}

/* The decoder's next block into *f: 1, or 0 at the end; an error fails the test. */
static int next_block(struct jf_decoder *dec, struct jf_flow *f, unsigned step)
{
	struct jf_error err;
	int rc;

	while ((rc = jf_decoder_next(dec, f, &err)) > 0) {
		if (f->kind == JF_FLOW_ERROR)
			fail_msg("step %u: error at 0x%llx: %s", step, (unsigned long long)f->ip,
				 f->u.error.text);
		if (f->kind == JF_FLOW_BLOCK)
			return 1;
	}
	if (rc < 0)
		fail_msg("step %u: %s", step, err.msg);
	return 0;
}

/* A block at X with the instructions of the code there (nops + 1). */
static void expect_x(const struct jf_flow *f, unsigned step, unsigned nops)
{
	assert_int_equal(f->u.block.start, X);
	if (f->u.block.ninsn != nops + 1)
		fail_msg("step %u: %u instructions at X, the code there has %u", step,
			 f->u.block.ninsn, nops + 1);
}

static void test_each_block_runs_the_code_of_its_time(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_ptb *b = trace(STEPS);
	struct jf_decoder *dec;
	struct jf_error err;
	struct jf_flow f;
	char path[512];
	unsigned step = 0, at_y = 0, nops;

	snprintf(path, sizeof(path), "%s/versions.bin", jf_test_tmpdir());
	write_versions(path);
	assert_int_equal(jf_codemap_add_file(map, path, Y_VERSION * SLOT, SLOT, Y, NULL, &err), 0);
	nops = change(map, path, step);
	dec = decoder(b, map);
	while (next_block(dec, &f, step)) {
		if (f.u.block.start == Y) {
			assert_int_equal(f.u.block.ninsn, file_nops(Y_VERSION) + 1);
			at_y++;
			continue;
		}
		expect_x(&f, step, nops);
		nops = change(map, path, ++step);
	}
	assert_int_equal(step, STEPS + 1);
	assert_int_equal(at_y, STEPS);
	jf_decoder_free(dec);

	/* Code removed is missing, for a decoder that already used the map and a new one. */
	assert_true(jf_codemap_remove(map, X, SLOT) > 0);
	{
		struct jf_ptb *once = trace(1);
		struct jf_ptb_decode d;

		jf_ptb_decode(jf_ptb_bytes(once), jf_ptb_size(once), map, NULL, 100, &d);
		assert_int_equal(d.stats.insns, 0);
		assert_true(d.stats.errors > 0);
		assert_int_equal(d.stats.errors_by_code[pte_nomap], d.stats.errors);
		jf_ptb_decode_free(&d);
		jf_ptb_free(once);
	}
	jf_codemap_free(map);
	jf_ptb_free(b);
}

/* The fast path's block at ip in the map's current version. */
static const struct jf_fast_block *block_now(struct jf_fast_blocks *c, struct jf_codemap *map,
					     uint64_t ip)
{
	return jf_fast_block_at(c, JF_ISA_X86_64, ip, jf_codemap_generation(map));
}

static void test_block_cache_keeps_what_no_change_touched(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_insn_cache *insns;
	struct jf_fast_blocks *c;
	const struct jf_fast_block *b;
	struct jf_error err;
	uint8_t code[SLOT];
	char path[512];
	unsigned step, nops;
	uint64_t filled;

	snprintf(path, sizeof(path), "%s/versions-fast.bin", jf_test_tmpdir());
	write_versions(path);
	assert_int_equal(jf_codemap_add_file(map, path, Y_VERSION * SLOT, SLOT, Y, NULL, &err), 0);
	insns = jf_insn_cache_new(map);
	c = jf_fast_blocks_new(insns, map, 10, 0);
	assert_non_null(insns);
	assert_non_null(c);
	b = block_now(c, map, Y);
	assert_int_equal(b->ninsn, file_nops(Y_VERSION) + 1);
	for (step = 0; step < STEPS; step++) {
		nops = change(map, path, step);
		filled = jf_fast_blocks_filled(c);
		b = block_now(c, map, X);
		if (b->ninsn != nops + 1)
			fail_msg("step %u: %u instructions at X, the code there has %u", step,
				 b->ninsn, nops + 1);
		assert_int_equal(jf_fast_blocks_filled(c), filled + 1); /* X's code is new */
		b = block_now(c, map, Y);
		assert_int_equal(b->ninsn, file_nops(Y_VERSION) + 1);
		assert_int_equal(jf_fast_blocks_filled(c), filled + 1); /* Y's block kept */
	}

	/* Code put right after Y's section leaves Y's block, which ends before it... */
	version(code, sizeof(code), 3);
	assert_int_equal(jf_codemap_add_bytes(map, code, sizeof(code), Y + SLOT, "next", &err), 0);
	filled = jf_fast_blocks_filled(c);
	assert_int_equal(block_now(c, map, Y)->ninsn, file_nops(Y_VERSION) + 1);
	assert_int_equal(jf_fast_blocks_filled(c), filled);
	/* ...code written over its tail (the jmp) is decoded anew... */
	version(code, sizeof(code), 9);
	assert_int_equal(jf_codemap_add_bytes(map, code, 4, Y + file_nops(Y_VERSION), "tail", &err), 0);
	assert_int_equal(block_now(c, map, Y)->ninsn, file_nops(Y_VERSION) + 4 + 1);
	assert_int_equal(jf_fast_blocks_filled(c), filled + 1);
	/* ...and so is every block after more changes than the map remembers, even where
	 * none touched it. */
	for (step = 0; step < 300; step++)
		change(map, path, step);
	filled = jf_fast_blocks_filled(c);
	assert_int_equal(block_now(c, map, Y)->ninsn, file_nops(Y_VERSION) + 4 + 1);
	assert_int_equal(jf_fast_blocks_filled(c), filled + 1);
	/* Code removed is missing, though the change was elsewhere before. */
	assert_true(jf_codemap_remove(map, Y, SLOT) > 0);
	assert_int_equal(block_now(c, map, Y)->end, JF_FAST_BAD);

	jf_fast_blocks_free(c);
	jf_insn_cache_free(insns);
	jf_codemap_free(map);
}

/* What the map says about ranges across its changes. */
static void test_unchanged_since(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	uint8_t code[SLOT];
	uint64_t g0, g;

	version(code, sizeof(code), 4);
	assert_int_equal(jf_codemap_add_bytes(map, code, sizeof(code), Y, "y", &err), 0);
	g0 = jf_codemap_generation(map);
	assert_int_equal(jf_codemap_unchanged_since(map, g0, Y, 6), 1);
	assert_int_equal(jf_codemap_add_bytes(map, code, sizeof(code), X, "x", &err), 0);
	assert_int_equal(jf_codemap_unchanged_since(map, g0, Y, 6), 1);
	/* A range partly outside its section, or in none, is not vouched for. */
	assert_int_equal(jf_codemap_unchanged_since(map, g0, Y + SLOT - 2, 4), 0);
	assert_int_equal(jf_codemap_unchanged_since(map, g0, Y + SLOT + 8, 4), 0);
	/* A change that touches the range (ends where it starts) counts. */
	g = jf_codemap_generation(map);
	assert_int_equal(jf_codemap_add_bytes(map, code, 8, Y - 8, "before", &err), 0);
	assert_int_equal(jf_codemap_unchanged_since(map, g, Y, 6), 0);
	assert_int_equal(jf_codemap_unchanged_since(map, g, Y + 8, 6), 1);
	/* A generation the map has not reached is not vouched for. */
	assert_int_equal(jf_codemap_unchanged_since(map, jf_codemap_generation(map) + 1, Y, 6), 0);
	jf_codemap_free(map);
}

/* The fill callback's bytes for addresses no section holds: *(uint8_t *)ctx, repeated. */
static size_t fill_with(void *ctx, uint64_t vaddr, void *buf, size_t size)
{
	(void)vaddr;
	memset(buf, *(const uint8_t *)ctx, size);
	return size;
}

static uint8_t insn_class(struct jf_insn_cache *insns, uint64_t ip, unsigned *size)
{
	struct jf_insn_info info;

	if (jf_insn_at(insns, JF_ISA_X86_64, ip, &info) < 0)
		return JF_INSN_ERROR;
	*size = info.size;
	return info.cls;
}

/* The instruction cache across changes: what a change wrote is decoded anew, what the fill
 * callback gave is asked again after any change, and everything after more changes than
 * the map remembers. */
static void test_insn_cache_follows_changes(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_insn_cache *insns = jf_insn_cache_new(map);
	struct jf_error err;
	uint8_t nops[SLOT], ret = 0xc3, mov[5] = { 0xb8, 1, 0, 0, 0 }, gap_byte = 0x90;
	unsigned size = 0, step;

	assert_non_null(insns);
	memset(nops, 0x90, sizeof(nops));
	jf_codemap_set_fill(map, fill_with, &gap_byte);
	assert_int_equal(jf_codemap_add_bytes(map, nops, sizeof(nops), X, "x", &err), 0);
	assert_int_equal(jf_codemap_add_bytes(map, nops, sizeof(nops), Y, "y", &err), 0);
	assert_int_equal(insn_class(insns, X + 4, &size), JF_INSN_OTHER);
	assert_int_equal(size, 1);
	assert_int_equal(insn_class(insns, Y, &size), JF_INSN_OTHER);
	assert_int_equal(insn_class(insns, Y + SLOT, &size), JF_INSN_OTHER); /* fill's nop */
	assert_int_equal(size, 1);

	/* New code at X + 4; Y's instructions are untouched. */
	assert_int_equal(jf_codemap_add_bytes(map, mov, sizeof(mov), X + 4, "mov", &err), 0);
	assert_int_equal(insn_class(insns, X + 4, &size), JF_INSN_OTHER);
	assert_int_equal(size, 5);
	assert_int_equal(insn_class(insns, Y, &size), JF_INSN_OTHER);
	assert_int_equal(size, 1);
	/* A return written where a nop ran, and the fill now saying ret: a change elsewhere
	 * (at X) is enough for the fill to be asked again. */
	gap_byte = 0xc3;
	assert_int_equal(jf_codemap_add_bytes(map, &ret, 1, X + 4, "ret", &err), 0);
	assert_int_equal(insn_class(insns, X + 4, &size), JF_INSN_RETURN);
	assert_int_equal(insn_class(insns, Y + SLOT, &size), JF_INSN_RETURN);
	/* A change at Y, then more changes elsewhere than the map remembers. */
	assert_int_equal(insn_class(insns, Y + 8, &size), JF_INSN_OTHER);
	assert_int_equal(jf_codemap_add_bytes(map, &ret, 1, Y + 8, "ret", &err), 0);
	for (step = 0; step < 300; step++)
		assert_int_equal(jf_codemap_add_bytes(map, &ret, 1, X, "ret", &err), 0);
	assert_int_equal(insn_class(insns, Y + 8, &size), JF_INSN_RETURN);
	/* Code removed is missing. */
	assert_true(jf_codemap_remove(map, Y, SLOT) > 0);
	jf_codemap_set_fill(map, NULL, NULL);
	assert_int_equal(insn_class(insns, Y + 8, &size), JF_INSN_ERROR);

	jf_insn_cache_free(insns);
	jf_codemap_free(map);
}

/* The code map's answer to where it will change: X's code (and the bytes its changes cut
 * around it) while changes are left to make (*ctx). */
static int x_may_change(void *ctx, uint64_t vaddr, uint64_t size)
{
	const unsigned *left = ctx;

	return *left && vaddr < X + 48 && X - 16 < vaddr + size;
}

/* The PSB+ of a trace that has just gone to ip. */
static void psb_at(struct jf_ptb *b, uint64_t ip)
{
	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_fup(b, pt_ipc_sext_48, ip);
	jf_ptb_psbend(b);
}

enum { Y_ONLY = 200, FAST_STEPS = 300 };

/* Z: nop, jne Z, jmp rax: the loop runs while its jne is taken (TNT bits), then the TIP. */
static const uint8_t z_loop[] = { 0x90, 0x75, 0xfd, 0xff, 0xe0 };
#define Z_BITS "TTN"

/* From home (Y's code, or Z's loop, whose bits tnt are: NULL for Y) to ip. */
static void leave(struct jf_ptb *b, const char *tnt, uint64_t ip)
{
	if (tnt)
		jf_ptb_tnt(b, tnt);
	jf_ptb_tip(b, pt_ipc_update_16, ip);
}

/* A trace's start: enabled at home, then home alone for a stretch. */
static void start_at(struct jf_ptb *b, uint64_t home, const char *tnt)
{
	unsigned i;

	jf_ptb_start_64(b, home);
	for (i = 0; i < Y_ONLY; i++)
		leave(b, tnt, home);
}

static void start_at_y(struct jf_ptb *b)
{
	start_at(b, Y, NULL);
}

/* The fast path decodes a PSB period ahead of what it returns while the code at X
 * changes: after each block at X, and once while it returns the stretch before X first
 * runs (Y alone). It takes Y's stretch and leaves the code that will change to libipt's
 * block decoder, so that every block has the instructions of the code of its time. */
static void test_fast_path_while_code_changes(void **state)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_fast_report rep;
	struct jf_pt_config pc;
	struct jf_decoder *dec;
	struct jf_error err;
	struct jf_flow f;
	char path[512];
	unsigned step = 0, left = FAST_STEPS, at_y = 0, at_x = 0, i, nops;

	snprintf(path, sizeof(path), "%s/versions-window.bin", jf_test_tmpdir());
	write_versions(path);
	assert_int_equal(jf_codemap_add_file(map, path, Y_VERSION * SLOT, SLOT, Y, NULL, &err), 0);
	nops = change(map, path, step);
	jf_codemap_set_pending(map, x_may_change, &left);
	/* Y alone for a stretch, then X and Y in turn, then Y alone again. */
	start_at_y(b);
	psb_at(b, Y);
	for (i = 0; i < FAST_STEPS; i++) {
		jf_ptb_tip(b, pt_ipc_update_16, X);
		jf_ptb_tip(b, pt_ipc_update_16, Y);
	}
	psb_at(b, Y);
	for (i = 0; i < Y_ONLY; i++)
		jf_ptb_tip(b, pt_ipc_update_16, Y);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);

	memset(&pc, 0, sizeof(pc));
	pc.trace = jf_ptb_bytes(b);
	pc.size = jf_ptb_size(b);
	pc.end_on_call = pc.end_on_jump = pc.join_cache_splits = 1;
	dec = jf_pt_fast_decoder_new(&pc, map, &err);
	if (!dec)
		fail_msg("%s", err.msg);
	while (next_block(dec, &f, step)) {
		if (f.u.block.start == Y) {
			assert_int_equal(f.u.block.ninsn, file_nops(Y_VERSION) + 1);
			/* X changes while the first stretch is returned. */
			if (++at_y == Y_ONLY / 2)
				nops = change(map, path, ++step);
			continue;
		}
		expect_x(&f, step, nops);
		at_x++;
		left--;
		nops = change(map, path, ++step);
	}
	assert_int_equal(at_x, FAST_STEPS);
	assert_int_equal(at_y, 2 * Y_ONLY + FAST_STEPS + 1);
	jf_pt_fast_counter_report(dec, &rep);
	assert_int_equal(rep.is_fast, 1);
	assert_true(rep.fast_bytes > 0);   /* the first stretch */
	assert_true(rep.hand_overs > 0);   /* at X */
	jf_decoder_free(dec);
	jf_codemap_free(map);
	jf_ptb_free(b);
}

enum { JOIN_X_STEPS = 100, JOIN_Y_STRETCHES = 3, JOIN_ROUNDS = 2, JOIN_MAX_FLOWS = 16384 };

/* Home (Y, or Z with tnt) alone for a stretch; then, twice, a stretch of X and home in
 * turn (the code at X changes after each block there) and a few stretches of home alone. */
static struct jf_ptb *trace_changing_twice(uint64_t home, const char *tnt)
{
	struct jf_ptb *b = jf_ptb_new();
	unsigned round, s, i;

	start_at(b, home, tnt);
	for (round = 0; round < JOIN_ROUNDS; round++) {
		psb_at(b, home);
		for (i = 0; i < JOIN_X_STEPS; i++) {
			leave(b, tnt, X);
			jf_ptb_tip(b, pt_ipc_update_16, home);
		}
		for (s = 0; s < JOIN_Y_STRETCHES; s++) {
			psb_at(b, home);
			for (i = 0; i < Y_ONLY; i++)
				leave(b, tnt, home);
		}
	}
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	return b;
}

/* Every record of b decoded with the fast path (fast) or libipt's block decoder alone
 * into out, the code at X changing after each block there as a session would change it;
 * returns how many. The fast path's report in *rep. */
static size_t decode_changing(struct jf_ptb *b, int fast, struct jf_flow *out,
			      struct jf_pt_fast_report *rep)
{
	struct jf_codemap *map = jf_codemap_new();
	unsigned step = 0, left = JOIN_ROUNDS * JOIN_X_STEPS;
	struct jf_pt_config pc;
	struct jf_decoder *dec;
	struct jf_error err;
	char path[512];
	size_t n = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/versions-join.bin", jf_test_tmpdir());
	write_versions(path);
	assert_int_equal(jf_codemap_add_file(map, path, Y_VERSION * SLOT, SLOT, Y, NULL, &err), 0);
	assert_int_equal(jf_codemap_add_bytes(map, z_loop, sizeof(z_loop), Z, "loop", &err), 0);
	change(map, path, step);
	jf_codemap_set_pending(map, x_may_change, &left);
	memset(&pc, 0, sizeof(pc));
	pc.trace = jf_ptb_bytes(b);
	pc.size = jf_ptb_size(b);
	pc.end_on_call = pc.end_on_jump = pc.join_cache_splits = 1;
	dec = fast ? jf_pt_fast_decoder_new(&pc, map, &err) : jf_pt_decoder_new(&pc, map, &err);
	if (!dec)
		fail_msg("%s", err.msg);
	while ((rc = jf_decoder_next(dec, &out[n], &err)) > 0) {
		const struct jf_flow *f = &out[n++];

		assert_true(n < JOIN_MAX_FLOWS);
		if (f->kind == JF_FLOW_BLOCK && f->u.block.start == X) {
			left--;
			change(map, path, ++step);
		}
	}
	if (rc < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(left, 0);
	jf_pt_fast_counter_report(dec, rep);
	jf_decoder_free(dec);
	jf_codemap_free(map);
	return n;
}

/* b decoded with the fast path and with libipt's block decoder alone, the code changing
 * as decode_changing changes it: the same records. The fast path's report in *rep. */
static void same_records_while_changing(struct jf_ptb *b, struct jf_pt_fast_report *rep)
{
	static struct jf_flow fast[JOIN_MAX_FLOWS], block[JOIN_MAX_FLOWS];
	struct jf_pt_fast_report none;
	size_t n = decode_changing(b, 1, fast, rep), i;

	assert_int_equal(decode_changing(b, 0, block, &none), n);
	for (i = 0; i < n; i++)
		if (!jf_flow_same(&fast[i], &block[i]))
			fail_msg("record %zu (offset 0x%llx) differs from the block decoder's", i,
				 (unsigned long long)block[i].offset);
}

/* After each hand-over at code still to change, the fast path takes over again at a
 * later PSB, where libipt's block decoder's records join a fast decoder's started there
 * (no error to resynchronise at): the records are the block decoder's alone, and the
 * stretches of Y after each change are the fast path's. */
static void test_fast_path_takes_over_again_after_changing_code(void **state)
{
	struct jf_ptb *b = trace_changing_twice(Y, NULL);
	struct jf_pt_fast_report rep;

	same_records_while_changing(b, &rep);
	assert_int_equal(rep.is_fast, 1);
	assert_int_equal(rep.hand_overs, JOIN_ROUNDS);
	assert_int_equal(rep.resumes, JOIN_ROUNDS);
	/* Each round, the Y stretches after the one the records joined in (3 bytes a TIP):
	 * without taking over again, the fast path had only the first stretch. */
	assert_true(rep.fast_bytes >= (uint64_t)JOIN_ROUNDS * (JOIN_Y_STRETCHES - 1) * Y_ONLY * 3);
	jf_ptb_free(b);
}

/* The loop at Z runs before and after the code at X changes, a hundred times each round:
 * the fast path's TNT path through the loop, followed before the changes, stands after
 * them (no change touched Z), and is kept instead of being followed again after each,
 * with the same records as libipt's block decoder. */
static void test_tnt_paths_kept_across_code_changes(void **state)
{
	struct jf_ptb *b = trace_changing_twice(Z, Z_BITS);
	struct jf_pt_fast_report rep;

	(void)state;
	same_records_while_changing(b, &rep);
	assert_int_equal(rep.is_fast, 1);
	assert_true(rep.resumes > 0);
	assert_true(rep.tnt_paths_kept > 0);
	jf_ptb_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_block_runs_the_code_of_its_time),
		cmocka_unit_test(test_block_cache_keeps_what_no_change_touched),
		cmocka_unit_test(test_unchanged_since),
		cmocka_unit_test(test_insn_cache_follows_changes),
		cmocka_unit_test(test_fast_path_while_code_changes),
		cmocka_unit_test(test_fast_path_takes_over_again_after_changing_code),
		cmocka_unit_test(test_tnt_paths_kept_across_code_changes),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
