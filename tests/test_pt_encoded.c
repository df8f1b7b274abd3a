/* The Intel PT backend on streams written with libipt's encoder over hand-written x86 code.
 *
 * Each test gives a small program (bytes with their instructions), the packets a CPU emits
 * for one run of it, and the flow that run must decode to. The expectations come from what
 * the program does and from Intel PT's packet semantics (Intel SDM vol. 3, ch. 32), never
 * from the decoder's output. Blocks follow libipt's definition: a block ends at the first
 * instruction whose successor needs trace (conditional, indirect and far branches, returns)
 * or where an event binds; direct jumps and calls are followed inside a block. */
#include "test_support.h"
#include "pt_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/insn.h"
#include "jitflow/pt.h"

/* ---- checking a decode ----------------------------------------------------------------- */

struct cursor {
	const struct jf_ptb_decode *d;
	size_t i;
};

#define CHECK(c, cond, ...) do { if (!(cond)) { \
		printf("flow #%zu: ", (c)->i); printf(__VA_ARGS__); printf("\ndecoded:\n"); \
		jf_ptb_dump((c)->d); fail_msg("%s", #cond); } } while (0)

static const struct jf_flow *take(struct cursor *c, enum jf_flow_kind kind)
{
	const struct jf_flow *f;

	CHECK(c, c->i < c->d->count, "expected %s, got the end of the flow",
	      jf_flow_kind_name(kind));
	f = &c->d->flows[c->i];
	CHECK(c, f->kind == kind, "expected %s, got %s", jf_flow_kind_name(kind),
	      jf_flow_kind_name(f->kind));
	c->i++;
	return f;
}

static const struct jf_flow *expect_block(struct cursor *c, uint64_t start, uint64_t last,
					  uint32_t ninsn, enum jf_block_end end, enum jf_isa isa)
{
	const struct jf_flow *f = take(c, JF_FLOW_BLOCK);
	const struct jf_block *b = &f->u.block;

	c->i--;
	CHECK(c, b->start == start && b->last == last && b->ninsn == ninsn && b->end == end &&
		 b->isa == isa && f->ip == start,
	      "expected block 0x%llx..0x%llx n=%u %s %s", (unsigned long long)start,
	      (unsigned long long)last, ninsn, jf_block_end_name(end), jf_isa_name(isa));
	CHECK(c, b->last_size && b->next == b->last + b->last_size, "block next/last_size");
	c->i++;
	return f;
}

static const struct jf_flow *block64(struct cursor *c, uint64_t start, uint64_t last,
				     uint32_t ninsn, enum jf_block_end end)
{
	return expect_block(c, start, last, ninsn, end, JF_ISA_X86_64);
}

static const struct jf_flow *expect_event(struct cursor *c, enum jf_flow_kind kind, uint64_t ip)
{
	const struct jf_flow *f = take(c, kind);

	c->i--;
	CHECK(c, !(f->flags & JF_FLOW_IP_SUPPRESSED) && f->ip == ip, "expected ip 0x%llx",
	      (unsigned long long)ip);
	c->i++;
	return f;
}

/* An event without an IP (TIP.PGD with the IP suppressed, as user-only tracing emits on a
 * syscall). */
static const struct jf_flow *expect_event_noip(struct cursor *c, enum jf_flow_kind kind)
{
	const struct jf_flow *f = take(c, kind);

	c->i--;
	CHECK(c, f->flags & JF_FLOW_IP_SUPPRESSED, "expected the IP to be suppressed");
	c->i++;
	return f;
}

/* Tracing switched on at ip (resumed: at the very IP where it was switched off, as after a
 * syscall), with a MODE.EXEC bound to it when mode_event is not JF_ISA_UNKNOWN. */
static void expect_enabled_at(struct cursor *c, uint64_t ip, int resumed,
			      enum jf_isa mode_event)
{
	const struct jf_flow *f = expect_event(c, JF_FLOW_ENABLED, ip);

	c->i--;
	CHECK(c, f->u.enabled.resumed == resumed, "expected resumed=%d", resumed);
	c->i++;
	if (mode_event) {
		f = expect_event(c, JF_FLOW_EXEC_MODE, ip);
		c->i--;
		CHECK(c, f->u.exec_mode.isa == mode_event, "exec mode %s",
		      jf_isa_name(mode_event));
		c->i++;
	}
}

static const struct jf_flow *expect_error(struct cursor *c, uint64_t offset, int code,
					  const char *text)
{
	const struct jf_flow *f = take(c, JF_FLOW_ERROR);

	c->i--;
	CHECK(c, f->offset == offset && f->u.error.code == code &&
		 !strcmp(f->u.error.text, text),
	      "expected error %d '%s' at offset 0x%llx", code, text, (unsigned long long)offset);
	c->i++;
	return f;
}

static void expect_lost(struct cursor *c, uint64_t offset, uint64_t bytes,
			enum jf_lost_reason why)
{
	const struct jf_flow *f = take(c, JF_FLOW_LOST);

	c->i--;
	CHECK(c, f->offset == offset && f->u.lost.bytes == bytes && f->u.lost.reason == why,
	      "expected %llu bytes lost (%s) at offset 0x%llx", (unsigned long long)bytes,
	      jf_lost_reason_name(why), (unsigned long long)offset);
	c->i++;
}

static void expect_end(struct cursor *c)
{
	CHECK(c, c->i == c->d->count, "expected the end of the flow, got %zu more records",
	      c->d->count - c->i);
	CHECK(c, c->d->rc == 0, "clean end");
}

static void expect_enabled(struct cursor *c, uint64_t ip, enum jf_isa mode_event)
{
	expect_enabled_at(c, ip, 0, mode_event);
}

/* Offsets stay inside the trace, and errors and losses come in trace order. (Blocks and
 * events carry the position libipt had read up to, which runs ahead of the packets they
 * come from, so an error located at a packet may follow a block with a larger offset.) */
static void check_offsets(const struct jf_ptb_decode *d, size_t size)
{
	struct cursor c = { d, 0 };
	uint64_t last = 0;

	for (c.i = 0; c.i < d->count; c.i++) {
		const struct jf_flow *f = &d->flows[c.i];

		CHECK(&c, f->offset <= size, "offset 0x%llx beyond the trace (%zu bytes)",
		      (unsigned long long)f->offset, size);
		if (f->kind != JF_FLOW_ERROR && f->kind != JF_FLOW_LOST)
			continue;
		CHECK(&c, f->offset >= last, "offset 0x%llx after 0x%llx",
		      (unsigned long long)f->offset, (unsigned long long)last);
		last = f->offset;
	}
}

static void decode(struct jf_ptb *b, struct jf_codemap *map, const struct jf_pt_config *cfg,
		   struct jf_ptb_decode *d)
{
	jf_ptb_decode(jf_ptb_bytes(b), jf_ptb_size(b), map, cfg, 10000, d);
	check_offsets(d, jf_ptb_size(b));
}

/* ---- the main test program ------------------------------------------------------------- */

enum { BASE = 0x400000 };

/* A loop, a direct call, an indirect call, an indirect jump and two syscalls. */
static const uint8_t prog[] = {
	/* 0x400000 */ 0xb9, 0x03, 0x00, 0x00, 0x00, /* mov ecx, 3 */
	/* 0x400005 */ 0xff, 0xc9,                   /* loop: dec ecx */
	/* 0x400007 */ 0x75, 0xfc,                   /* jnz loop (0x400005) */
	/* 0x400009 */ 0xe8, 0x12, 0x00, 0x00, 0x00, /* call f (0x400020) */
	/* 0x40000e */ 0xff, 0xd0,                   /* call rax (rax = g, 0x400030) */
	/* 0x400010 */ 0xff, 0xe3,                   /* jmp rbx (rbx = 0x400040) */
	/* 0x400012 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, /* int3 padding */
	/* 0x400019 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x400020 */ 0x90,                         /* f: nop */
	/* 0x400021 */ 0xc3,                         /* ret */
	/* 0x400022 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x400029 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x400030 */ 0x48, 0x89, 0xc8,             /* g: mov rax, rcx */
	/* 0x400033 */ 0xc3,                         /* ret */
	/* 0x400034 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x40003a */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x400040 */ 0x0f, 0x05,                   /* syscall (returns to 0x400042) */
	/* 0x400042 */ 0x90,                         /* nop */
	/* 0x400043 */ 0x0f, 0x05,                   /* syscall (exit) */
};

/* Start of a trace: PSB+ with tracing off, then tracing switches on at ip (64-bit code). */
static void start(struct jf_ptb *b, uint64_t ip)
{
	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, ip);
}

/* The packets of one run of prog, user-only tracing (syscalls disable tracing, and the
 * return to user space enables it again). */
static void run_prog(struct jf_ptb *b, int ret_compression)
{
	start(b, BASE);
	if (ret_compression) {
		/* jnz taken (ecx 2), taken (ecx 1), not taken (ecx 0); f's ret compressed */
		jf_ptb_tnt(b, "TTNT");
		jf_ptb_tip(b, pt_ipc_update_16, 0x400030);     /* call rax */
		jf_ptb_tnt(b, "T");                             /* g's ret compressed */
	} else {
		jf_ptb_tnt(b, "TTN");
		jf_ptb_tip(b, pt_ipc_update_16, 0x40000e);     /* f's ret */
		jf_ptb_tip(b, pt_ipc_update_16, 0x400030);     /* call rax */
		jf_ptb_tip(b, pt_ipc_update_16, 0x400010);     /* g's ret */
	}
	jf_ptb_tip(b, pt_ipc_update_16, 0x400040);             /* jmp rbx */
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);               /* syscall: into the kernel */
	jf_ptb_tip_pge(b, pt_ipc_update_16, 0x400042);         /* sysret: back after it */
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);               /* exit syscall */
}

/* The loop: three blocks ending at jnz (taken twice, so the next block starts at the loop
 * head 0x400005; not taken once, so execution goes on at 0x400009). */
static void expect_loop(struct cursor *c)
{
	block64(c, 0x400000, 0x400007, 3, JF_END_COND);
	block64(c, 0x400005, 0x400007, 2, JF_END_COND);
	block64(c, 0x400005, 0x400007, 2, JF_END_COND);
}

/* call f (direct), then f: nop, ret. libipt follows a direct call inside a block once
 * its block cache knows the code; the first time through (while filling the cache) it ends
 * the block at the call instead (pt_blk_proceed_no_event_fill_cache). end_on_call always
 * ends it there. */
enum call_block { CALL_FOLLOWED, CALL_ENDS_BLOCK };

static void expect_call_f(struct cursor *c, enum call_block how)
{
	if (how == CALL_ENDS_BLOCK) {
		block64(c, 0x400009, 0x400009, 1, JF_END_CALL);
		block64(c, 0x400020, 0x400021, 2, JF_END_RETURN);
	} else {
		block64(c, 0x400009, 0x400021, 3, JF_END_RETURN);
	}
}

static void expect_prog(struct cursor *c, enum call_block how)
{
	expect_enabled(c, BASE, JF_ISA_X86_64);
	expect_loop(c);
	expect_call_f(c, how);
	block64(c, 0x40000e, 0x40000e, 1, JF_END_CALL_INDIRECT);
	block64(c, 0x400030, 0x400033, 2, JF_END_RETURN);
	block64(c, 0x400010, 0x400010, 1, JF_END_JUMP_INDIRECT);
	block64(c, 0x400040, 0x400040, 1, JF_END_FAR);
	expect_event_noip(c, JF_FLOW_DISABLED);
	/* sysret comes back right after the syscall, where tracing stopped: "resumed" */
	expect_enabled_at(c, 0x400042, 1, JF_ISA_UNKNOWN);
	block64(c, 0x400042, 0x400043, 2, JF_END_FAR);
	expect_event_noip(c, JF_FLOW_DISABLED);
}

/* Every instruction the run executed, in order: what the blocks must expand to. */
static const uint64_t prog_insns[] = {
	0x400000, 0x400005, 0x400007, 0x400005, 0x400007, 0x400005, 0x400007, /* loop */
	0x400009, 0x400020, 0x400021,     /* call f; nop; ret */
	0x40000e, 0x400030, 0x400033,     /* call rax; g: mov; ret */
	0x400010, 0x400040,               /* jmp rbx; syscall */
	0x400042, 0x400043,               /* nop; syscall */
};

struct insn_list {
	uint64_t ip[256];
	size_t n;
};

static void add_insn(void *ctx, uint64_t ip)
{
	struct insn_list *l = ctx;

	if (l->n < 256)
		l->ip[l->n] = ip;
	l->n++;
}

/* Expand every block into its instruction addresses and compare with the program's. */
static void expect_insns(const struct jf_ptb_decode *d, struct jf_codemap *map,
			 const uint64_t *want, size_t nwant)
{
	struct jf_insn_cache *cache = jf_insn_cache_new(map);
	struct insn_list got = { { 0 }, 0 };
	size_t i;

	for (i = 0; i < d->count; i++) {
		uint64_t stop = 0;

		if (d->flows[i].kind != JF_FLOW_BLOCK)
			continue;
		assert_int_equal(jf_block_walk(cache, &d->flows[i].u.block, add_insn, &got,
					       &stop), 0);
	}
	jf_insn_cache_free(cache);
	assert_int_equal(got.n, nwant);
	for (i = 0; i < nwant; i++) {
		if (got.ip[i] != want[i])
			fail_msg("instruction %zu: 0x%llx, expected 0x%llx", i,
				 (unsigned long long)got.ip[i], (unsigned long long)want[i]);
	}
}

static void check_no_time(const struct jf_ptb_decode *d)
{
	size_t i;

	for (i = 0; i < d->count; i++)
		assert_false(d->flows[i].flags & JF_FLOW_HAS_TIME);
	assert_false(d->stats.has_time);
}

static void test_branches_calls_returns_compressed(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;

	run_prog(b, 1);
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_prog(&c, CALL_ENDS_BLOCK);
	expect_end(&c);
	check_no_time(&d);
	expect_insns(&d, map, prog_insns, 17);
	/* 3 + 2 + 2 + 3 + 1 + 2 + 1 + 1 + 2 instructions in 9 blocks */
	assert_int_equal(d.stats.insns, 17);
	assert_int_equal(d.stats.blocks, 10);
	assert_int_equal(d.stats.errors, 0);
	assert_int_equal(d.stats.lost_bytes, 0);
	assert_int_equal(d.stats.trace_bytes, jf_ptb_size(b));
	jf_ptb_decode_free(&d);

	/* Again over the same code map: libipt's block cache now knows the code and the
	 * direct call is followed inside the block. */
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_prog(&c, CALL_FOLLOWED);
	expect_end(&c);
	expect_insns(&d, map, prog_insns, 17);
	assert_int_equal(d.stats.blocks, 9);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

static void test_returns_uncompressed(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;

	run_prog(b, 0);
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_prog(&c, CALL_ENDS_BLOCK);
	expect_end(&c);
	expect_insns(&d, map, prog_insns, 17);
	assert_int_equal(d.stats.insns, 17);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

static void test_end_on_call(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_config cfg;
	struct jf_ptb_decode d;
	struct cursor c;

	memset(&cfg, 0, sizeof(cfg));
	cfg.end_on_call = 1;
	run_prog(b, 1);
	decode(b, map, &cfg, &d);
	c = (struct cursor){ &d, 0 };
	expect_prog(&c, CALL_ENDS_BLOCK);
	expect_end(&c);
	expect_insns(&d, map, prog_insns, 17);
	assert_int_equal(d.stats.insns, 17);
	assert_int_equal(d.stats.blocks, 10);
	jf_ptb_decode_free(&d);
	/* Even with a warm block cache. */
	decode(b, map, &cfg, &d);
	c = (struct cursor){ &d, 0 };
	expect_prog(&c, CALL_ENDS_BLOCK);
	expect_end(&c);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* The hardware lost packets in the second loop iteration (OVF) and resumed at the call to
 * f (FUP): the flow says so and goes on from there. */
static void test_overflow(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;

	start(b, BASE);
	jf_ptb_tnt(b, "T");
	jf_ptb_ovf(b);
	/* OVF resets the last-IP compression state: the FUP carries the whole IP. */
	jf_ptb_fup(b, pt_ipc_sext_48, 0x400009);
	jf_ptb_tnt(b, "T");                             /* f's ret */
	jf_ptb_tip(b, pt_ipc_update_16, 0x400030);     /* call rax */
	jf_ptb_tnt(b, "T");                             /* g's ret */
	jf_ptb_tip(b, pt_ipc_update_16, 0x400040);     /* jmp rbx */
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, BASE, JF_ISA_X86_64);
	block64(&c, 0x400000, 0x400007, 3, JF_END_COND);
	expect_event(&c, JF_FLOW_OVERFLOW, 0x400009);
	expect_call_f(&c, CALL_ENDS_BLOCK);
	block64(&c, 0x40000e, 0x40000e, 1, JF_END_CALL_INDIRECT);
	block64(&c, 0x400030, 0x400033, 2, JF_END_RETURN);
	block64(&c, 0x400010, 0x400010, 1, JF_END_JUMP_INDIRECT);
	block64(&c, 0x400040, 0x400040, 1, JF_END_FAR);
	expect_event_noip(&c, JF_FLOW_DISABLED);
	expect_end(&c);
	assert_int_equal(d.stats.overflows, 1);
	assert_int_equal(d.stats.errors, 0);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* Is the byte sequence at p an invalid packet, by libipt's own packet decoder? */
static int is_bad_packet(const uint8_t *p, size_t n)
{
	struct pt_config config;
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	int rc;

	pt_config_init(&config);
	config.begin = (uint8_t *)p;
	config.end = (uint8_t *)p + n;
	dec = pt_pkt_alloc_decoder(&config);
	assert_non_null(dec);
	assert_int_equal(pt_pkt_sync_set(dec, 0), 0);
	rc = pt_pkt_next(dec, &pkt, sizeof(pkt));
	pt_pkt_free_decoder(dec);
	return rc == -pte_bad_opc;
}

/* Bytes overwritten in the middle of the stream: the error is reported where the bad packet
 * is, the bytes up to the next PSB are reported lost, and decoding resumes there.
 *
 * libipt's query decoder reads the packet after the one it consumes (to know whether an
 * event is pending), so the bad packet is met as soon as the TNT before it is first used:
 * the next branch that asks for trace (jnz at 0x400007) is where decoding fails, with
 * nothing decoded in that block, exactly as libipt's reference decoder (ptxed) reports it. */
static void test_resync_after_corrupt_packet(void **state)
{
	static const uint8_t garbage[] = { 0x02, 0x02 }; /* an extended opcode that does not exist */
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;
	uint64_t bad, psb2;

	assert_true(is_bad_packet(garbage, sizeof(garbage)));
	start(b, BASE);
	jf_ptb_tnt(b, "TTN");
	bad = jf_ptb_offset(b);
	jf_ptb_tnt(b, "T");                             /* f's ret: will be overwritten */
	jf_ptb_tip(b, pt_ipc_update_16, 0x400030);
	jf_ptb_tnt(b, "T");
	jf_ptb_tip(b, pt_ipc_update_16, 0x400040);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	psb2 = jf_ptb_offset(b);
	start(b, 0x400042);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	memcpy(jf_ptb_bytes_mut(b) + bad, garbage, sizeof(garbage));

	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, BASE, JF_ISA_X86_64);
	block64(&c, 0x400000, 0x400007, 3, JF_END_COND);
	expect_error(&c, bad, -pte_bad_opc, "unknown opcode");
	assert_int_equal(d.flows[c.i - 1].ip, 0x400007);
	assert_int_equal(d.flows[c.i - 1].u.error.phase, JF_PHASE_DECODE);
	expect_lost(&c, bad, psb2 - bad, JF_LOST_SKIPPED);
	expect_enabled(&c, 0x400042, JF_ISA_X86_64);
	block64(&c, 0x400042, 0x400043, 2, JF_END_FAR);
	expect_event_noip(&c, JF_FLOW_DISABLED);
	expect_end(&c);
	assert_int_equal(d.stats.errors, 1);
	assert_int_equal(d.stats.errors_by_code[pte_bad_opc], 1);
	assert_int_equal(d.stats.lost_bytes, psb2 - bad);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}


/* ---- tracing-state checks (pt_status_check.h) ------------------------------------------ */

/* Tracing is off after the syscall (TIP.PGD), yet the next PSB+ carries a FUP, which says
 * it is on: libipt's reference decoder reports "bad status update" at the PSBEND, with the
 * FUP's IP, and resynchronises at the next PSB. */
static void test_bad_status_update(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;
	uint64_t psbend, psb3;

	start(b, 0x400040);                        /* syscall */
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_fup(b, pt_ipc_sext_48, 0x400042);
	psbend = jf_ptb_offset(b);
	jf_ptb_psbend(b);
	jf_ptb_pad(b);
	psb3 = jf_ptb_offset(b);
	start(b, 0x400042);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);

	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, 0x400040, JF_ISA_X86_64);
	block64(&c, 0x400040, 0x400040, 1, JF_END_FAR);
	expect_event_noip(&c, JF_FLOW_DISABLED);
	expect_error(&c, psbend, -pte_bad_status_update, "bad status update");
	assert_int_equal(d.flows[c.i - 1].ip, 0x400042);
	expect_lost(&c, psbend, psb3 - psbend, JF_LOST_SKIPPED);
	expect_enabled(&c, 0x400042, JF_ISA_X86_64);
	block64(&c, 0x400042, 0x400043, 2, JF_END_FAR);
	expect_event_noip(&c, JF_FLOW_DISABLED);
	expect_end(&c);
	assert_int_equal(d.stats.errors_by_code[pte_bad_status_update], 1);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* The same, in the last PSB+ of the trace: with no PSB to resume at, the bytes from the
 * error to the end are reported lost. */
static void test_bad_status_update_at_end(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;
	uint64_t psbend;

	start(b, 0x400040);                        /* syscall */
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	jf_ptb_psb(b);
	jf_ptb_fup(b, pt_ipc_sext_48, 0x400042);
	psbend = jf_ptb_offset(b);
	jf_ptb_psbend(b);
	jf_ptb_tnt(b, "TT");
	jf_ptb_pad(b);

	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, 0x400040, JF_ISA_X86_64);
	block64(&c, 0x400040, 0x400040, 1, JF_END_FAR);
	expect_event_noip(&c, JF_FLOW_DISABLED);
	expect_error(&c, psbend, -pte_bad_status_update, "bad status update");
	expect_lost(&c, psbend, jf_ptb_size(b) - psbend, JF_LOST_SKIPPED);
	expect_end(&c);
	assert_int_equal(d.stats.lost_bytes, jf_ptb_size(b) - psbend);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* A TIP.PGE while tracing is already on: "unexpected packet context" at that packet, and
 * decoding resumes at the next PSB. */
static void test_pge_while_enabled(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;
	uint64_t pge, psb2;

	start(b, 0x40000e);                         /* call rax */
	jf_ptb_tip(b, pt_ipc_update_16, 0x400030);
	pge = jf_ptb_offset(b);
	jf_ptb_tip_pge(b, pt_ipc_update_16, 0x400033);  /* tracing is on already */
	psb2 = jf_ptb_offset(b);
	start(b, 0x400042);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);

	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, 0x40000e, JF_ISA_X86_64);
	block64(&c, 0x40000e, 0x40000e, 1, JF_END_CALL_INDIRECT);
	expect_error(&c, pge, -pte_bad_context, "unexpected packet context");
	expect_lost(&c, pge, psb2 - pge, JF_LOST_SKIPPED);
	expect_enabled(&c, 0x400042, JF_ISA_X86_64);
	block64(&c, 0x400042, 0x400043, 2, JF_END_FAR);
	expect_event_noip(&c, JF_FLOW_DISABLED);
	expect_end(&c);
	assert_int_equal(d.stats.errors, 1);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* ---- an image that does not fit the trace ---------------------------------------------- */

static const uint8_t straight[] = {
	/* 0x400000 */ 0x90,       /* nop */
	/* 0x400001 */ 0x90,       /* nop */
	/* 0x400002 */ 0xff, 0xe0, /* jmp rax */
};

/* The trace has only conditional-branch bits (TNT) where the code has an indirect jump,
 * which needs a TIP: the mismatch is an error located at the jump; the rest of the trace,
 * with no PSB to resume at, is reported lost. */
static void test_tnt_without_conditional_branch(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(straight, sizeof(straight), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;
	const struct jf_flow *f;

	start(b, BASE);
	jf_ptb_tnt(b, "TT");
	jf_ptb_tnt(b, "NTN");
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, BASE, JF_ISA_X86_64);
	/* nop, nop, jmp rax: the jump wants a TIP and finds a TNT */
	block64(&c, 0x400000, 0x400002, 3, JF_END_JUMP_INDIRECT);
	f = take(&c, JF_FLOW_ERROR);
	assert_int_equal(f->u.error.code, -pte_bad_query);
	assert_int_equal(f->ip, 0x400002);
	if (c.i < d.count) {
		f = take(&c, JF_FLOW_LOST);
		assert_int_equal(f->offset + f->u.lost.bytes, jf_ptb_size(b));
	}
	expect_end(&c);
	assert_int_equal(d.stats.errors, 1);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* The indirect jump goes where no code is mapped. */
static void test_tip_to_unmapped_code(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(straight, sizeof(straight), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;
	const struct jf_flow *f;

	start(b, BASE);
	jf_ptb_tip(b, pt_ipc_update_32, 0x500000);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, BASE, JF_ISA_X86_64);
	block64(&c, 0x400000, 0x400002, 3, JF_END_JUMP_INDIRECT);
	f = take(&c, JF_FLOW_ERROR);
	assert_int_equal(f->u.error.code, -pte_nomap);
	assert_int_equal(f->ip, 0x500000);
	assert_string_equal(f->u.error.text, "no memory mapped at this address");
	while (c.i < d.count)
		assert_int_equal(d.flows[c.i++].kind, JF_FLOW_LOST);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* An indirect branch or far transfer whose TIP has the IP suppressed has no target: "no
 * ip", located where libipt's query decoder stops reading after the TIP (at the TIP.PGD
 * after it), and decoding resumes at the next PSB (here: none, the rest is lost). libipt
 * 2.0 says so only while it decodes the branch; taking it from its block cache (filled by
 * the first run, which passes the same branches with their targets), it went on at the
 * branch itself, and for the syscall read the TIP.PGD too. */
enum suppressed_at { AT_CALL, AT_RET, AT_JMP, AT_FAR };

static void test_suppressed_tip_at_indirect_branch(void **state)
{
	static const struct {
		enum suppressed_at at;
		uint64_t error_ip;
	} cases[] = { { AT_CALL, 0x40000e }, { AT_RET, 0x400033 }, { AT_JMP, 0x400010 },
		      { AT_FAR, 0x400040 } };
	size_t k;
	int pass;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		enum suppressed_at at = cases[k].at;
		struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
		struct jf_ptb *b = jf_ptb_new();
		uint64_t suppressed_end;
		struct jf_ptb_decode d;
		struct cursor c;

		/* Run A: to the first syscall, every target given. */
		start(b, BASE);
		jf_ptb_tnt(b, "TTNT");
		jf_ptb_tip(b, pt_ipc_update_16, 0x400030); /* call rax */
		jf_ptb_tnt(b, "T");                         /* g's ret, compressed */
		jf_ptb_tip(b, pt_ipc_update_16, 0x400040); /* jmp rbx */
		jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
		/* Run B: the same, but one branch's TIP suppresses its IP. */
		start(b, BASE);
		jf_ptb_tnt(b, "TTNT");
		if (at != AT_CALL)
			jf_ptb_tip(b, pt_ipc_update_16, 0x400030);
		if (at == AT_JMP || at == AT_FAR)
			jf_ptb_tnt(b, "T");
		if (at == AT_FAR)
			jf_ptb_tip(b, pt_ipc_update_16, 0x400040);
		jf_ptb_tip(b, pt_ipc_suppressed, 0);
		suppressed_end = jf_ptb_size(b);
		jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0); /* after the error: skipped */

		/* Pass 0 fills the block cache in run A; pass 1 starts with it full. */
		for (pass = 0; pass < 2; pass++) {
			decode(b, map, NULL, &d);
			c = (struct cursor){ &d, 0 };
			expect_enabled(&c, BASE, JF_ISA_X86_64);
			expect_loop(&c);
			expect_call_f(&c, pass ? CALL_FOLLOWED : CALL_ENDS_BLOCK);
			block64(&c, 0x40000e, 0x40000e, 1, JF_END_CALL_INDIRECT);
			block64(&c, 0x400030, 0x400033, 2, JF_END_RETURN);
			block64(&c, 0x400010, 0x400010, 1, JF_END_JUMP_INDIRECT);
			block64(&c, 0x400040, 0x400040, 1, JF_END_FAR);
			expect_event_noip(&c, JF_FLOW_DISABLED);
			expect_enabled(&c, BASE, JF_ISA_X86_64);
			expect_loop(&c);
			expect_call_f(&c, CALL_FOLLOWED);
			block64(&c, 0x40000e, 0x40000e, 1, JF_END_CALL_INDIRECT);
			if (at != AT_CALL)
				block64(&c, 0x400030, 0x400033, 2, JF_END_RETURN);
			if (at == AT_JMP || at == AT_FAR)
				block64(&c, 0x400010, 0x400010, 1, JF_END_JUMP_INDIRECT);
			if (at == AT_FAR)
				block64(&c, 0x400040, 0x400040, 1, JF_END_FAR);
			CHECK(&c, expect_error(&c, suppressed_end, -pte_noip, "no ip")->ip ==
				  cases[k].error_ip, "the error's ip");
			expect_lost(&c, suppressed_end, 1, JF_LOST_SKIPPED);
			expect_end(&c);
			jf_ptb_decode_free(&d);
		}
		jf_ptb_free(b);
		jf_codemap_free(map);
	}
}

/* Synchronised at a PSB+ without MODE.exec, enabled by a TIP.PGE without one: the exec
 * mode is not known, and libipt 2.0 cannot decode the code there (its uncached path:
 * "unknown instruction" at the first instruction). From its block cache it decoded it
 * anyway, in the mode of the entry it found, so the same bytes decoded to blocks after
 * another run had filled the cache (fuzz_pt_decode, 2026-11-25). Cold or warm, the run
 * without a mode gives the error. */
static void test_unknown_mode_not_from_cache(void **state)
{
	struct jf_ptb_decode d;
	int warm;

	for (warm = 0; warm < 2; warm++) {
		struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
		struct jf_ptb *b = jf_ptb_new();
		size_t i, enabled = SIZE_MAX;

		if (warm) {
			/* Run A, in 64-bit mode: the loop six times (its blocks cached), the
			 * direct call and f's ret with a not-taken bit: a bad compressed
			 * return, so that the decoder synchronises again at run B's PSB, which
			 * resets the mode it knew. */
			start(b, BASE);
			jf_ptb_tnt(b, "TTTTTTN");
			jf_ptb_tnt(b, "N");
		}
		/* Run B, twice: the same packets, no mode (libipt reads on from the error
		 * through the first copy's PSB+; it synchronises at the second). */
		for (i = 0; i < 2; i++) {
			jf_ptb_psb(b);
			jf_ptb_psbend(b);
			jf_ptb_tip_pge(b, pt_ipc_sext_48, BASE);
			jf_ptb_tnt(b, "TTN");
			jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
		}
		if (warm) {
			/* A first decode leaves the cache full for the second. */
			decode(b, map, NULL, &d);
			jf_ptb_decode_free(&d);
		}
		decode(b, map, NULL, &d);
		for (i = 0; i < d.count; i++)
			if (d.flows[i].kind == JF_FLOW_ENABLED)
				enabled = i;
		assert_true(enabled + 1 < d.count);
		if (warm)
			assert_true(d.stats.insns > 0); /* run A decoded */
		for (i = enabled + 1; i < d.count; i++)
			if (d.flows[i].kind == JF_FLOW_BLOCK)
				fail_msg("%s cache: a block at 0x%llx decoded in an unknown mode",
					 warm ? "warm" : "cold",
					 (unsigned long long)d.flows[i].u.block.start);
		assert_int_equal(d.flows[enabled + 1].kind, JF_FLOW_ERROR);
		assert_int_equal(d.flows[enabled + 1].u.error.code, -pte_bad_insn);
		assert_int_equal(d.flows[enabled + 1].ip, BASE);
		jf_ptb_decode_free(&d);
		jf_ptb_free(b);
		jf_codemap_free(map);
	}
}

/* The same bytes run in 64-bit mode, then in 32-bit mode: 48 ff e0 is `jmp rax` (one
 * instruction) in one and `dec eax; jmp eax` (two) in the other. libipt 2.0's block cache
 * keeps the mode an entry was made in and its cached path does not compare it with the
 * decoder's, so the 32-bit runs decoded as the 64-bit one had been cached (one instruction
 * each time). The map notes the modes its sections' cache served; another mode decodes
 * uncached, as a decode of the 32-bit runs alone does. */
static void test_mode_switch_same_code(void **state)
{
	static const uint8_t code[] = { 0x48, 0xff, 0xe0 };
	static const enum pt_exec_mode both[] = { ptem_64bit, ptem_32bit };
	size_t first;

	for (first = 0; first < 2; first++) {
		struct jf_codemap *map = jf_ptb_codemap(code, sizeof(code), 0x1000);
		struct jf_ptb *b = jf_ptb_new();
		struct jf_ptb_decode d;
		uint64_t insns32 = 0, insns64 = 0;
		size_t i, m;

		jf_ptb_psb(b);
		jf_ptb_psbend(b);
		/* first = 0: the 64-bit runs, then the 32-bit ones; first = 1: 32-bit only */
		for (m = first; m < 2; m++) {
			jf_ptb_mode_exec(b, both[m]);
			jf_ptb_tip_pge(b, pt_ipc_sext_48, 0x1000);
			for (i = 0; i < 3; i++)
				jf_ptb_tip(b, pt_ipc_update_16, 0x1000);
			jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
		}
		decode(b, map, NULL, &d);
		for (i = 0; i < d.count; i++) {
			const struct jf_flow *f = &d.flows[i];

			if (f->kind != JF_FLOW_BLOCK)
				continue;
			if (f->u.block.isa == JF_ISA_X86_32)
				insns32 += f->u.block.ninsn;
			else
				insns64 += f->u.block.ninsn;
		}
		/* four times through the code in each mode */
		assert_int_equal(insns64, first ? 0 : 4);
		assert_int_equal(insns32, 8);
		assert_int_equal(d.stats.errors, 0);
		jf_ptb_decode_free(&d);
		jf_ptb_free(b);
		jf_codemap_free(map);
	}
}

/* ---- empty and unsynchronisable input -------------------------------------------------- */

static void test_empty_trace(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb_decode d;

	jf_ptb_decode(NULL, 0, map, NULL, 10, &d);
	assert_int_equal(d.count, 0);
	assert_int_equal(d.rc, 0);
	assert_int_equal(d.stats.trace_bytes, 0);
	assert_int_equal(d.stats.lost_bytes, 0);
	jf_ptb_decode_free(&d);
	jf_codemap_free(map);
}

/* Packets without any PSB: nothing can be decoded; every byte is reported lost for want of
 * a sync point. */
static void test_no_psb(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;

	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, BASE);
	jf_ptb_tnt(b, "TTNT");
	jf_ptb_pad(b);
	jf_ptb_tip(b, pt_ipc_update_16, 0x400030);
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_lost(&c, 0, jf_ptb_size(b), JF_LOST_NO_SYNC);
	expect_end(&c);
	assert_int_equal(d.stats.lost_bytes, jf_ptb_size(b));
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* Random-looking bytes: no PSB either. */
static void test_garbage(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	uint8_t junk[4096];
	struct jf_ptb_decode d;
	uint32_t x = 12345;
	size_t i;

	for (i = 0; i < sizeof(junk); i++) {
		x = x * 1103515245u + 12345u;
		junk[i] = (uint8_t)(x >> 16);
	}
	jf_ptb_decode(junk, sizeof(junk), map, NULL, 10000, &d);
	assert_int_equal(d.count, 1);
	assert_int_equal(d.flows[0].kind, JF_FLOW_LOST);
	assert_int_equal(d.stats.lost_bytes, sizeof(junk));
	jf_ptb_decode_free(&d);
	jf_codemap_free(map);
}

/* ---- truncation ------------------------------------------------------------------------ */

/* Every prefix of a good stream decodes without crash or hang; the instructions decoded are
 * the start of the program's run (a shorter trace cannot show a different path), and what
 * cannot be decoded is reported. */
static void test_truncated_everywhere(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_insn_cache *cache = jf_insn_cache_new(map);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	size_t n, i, size, psb_size;

	jf_ptb_psb(b);
	psb_size = jf_ptb_size(b);
	jf_ptb_free(b);
	b = jf_ptb_new();
	run_prog(b, 1);
	size = jf_ptb_size(b);
	for (n = 0; n <= size; n++) {
		struct insn_list got = { { 0 }, 0 };

		jf_ptb_decode(jf_ptb_bytes(b), n, map, NULL, 1000, &d);
		assert_int_equal(d.stats.trace_bytes, n);
		assert_true(d.stats.lost_bytes <= n);
		if (n > 0 && n < psb_size) {
			/* Not even one PSB: all of it lost. */
			assert_int_equal(d.count, 1);
			assert_int_equal(d.flows[0].kind, JF_FLOW_LOST);
			assert_int_equal(d.flows[0].u.lost.bytes, n);
		}
		for (i = 0; i < d.count; i++) {
			if (d.flows[i].kind == JF_FLOW_BLOCK)
				assert_int_equal(jf_block_walk(cache, &d.flows[i].u.block, add_insn,
							       &got, NULL), 0);
		}
		assert_true(got.n <= 17);
		for (i = 0; i < got.n; i++) {
			if (got.ip[i] != prog_insns[i])
				fail_msg("prefix of %zu bytes: instruction %zu is 0x%llx, expected "
					 "0x%llx", n, i, (unsigned long long)got.ip[i],
					 (unsigned long long)prog_insns[i]);
		}
		if (n == size)
			assert_int_equal(got.n, 17);
		jf_ptb_decode_free(&d);
	}
	jf_ptb_free(b);
	jf_insn_cache_free(cache);
	jf_codemap_free(map);
}

/* ---- execution modes ------------------------------------------------------------------- */

/* The same bytes mean different instructions in 32- and 64-bit mode: 0x48 is "dec eax" in
 * 32-bit code and a REX.W prefix in 64-bit code. */
static const uint8_t code32[] = {
	/* 0x1000 */ 0x48,         /* dec eax */
	/* 0x1001 */ 0xff, 0xe0,   /* jmp eax (to 0x2000, 64-bit code) */
};
static const uint8_t code64[] = {
	/* 0x2000 */ 0x48, 0xff, 0xe0, /* jmp rax */
};

static void test_exec_mode_switch(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(code32, sizeof(code32), 0x1000);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct jf_error err;
	struct cursor c;
	const struct jf_flow *f;

	assert_int_equal(jf_codemap_add_bytes(map, code64, sizeof(code64), 0x2000, "code64",
					      &err), 0);
	jf_ptb_psb(b);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_32bit);
	jf_ptb_tip_pge(b, pt_ipc_update_32, 0x1000);
	jf_ptb_mode_exec(b, ptem_64bit);       /* binds to the TIP that follows */
	jf_ptb_tip(b, pt_ipc_update_16, 0x2000);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, 0x1000, JF_ISA_X86_32);
	expect_block(&c, 0x1000, 0x1001, 2, JF_END_JUMP_INDIRECT, JF_ISA_X86_32);
	f = expect_event(&c, JF_FLOW_EXEC_MODE, 0x2000);
	assert_int_equal(f->u.exec_mode.isa, JF_ISA_X86_64);
	expect_block(&c, 0x2000, 0x2000, 1, JF_END_JUMP_INDIRECT, JF_ISA_X86_64);
	assert_int_equal(d.flows[c.i - 1].u.block.last_size, 3);
	expect_event_noip(&c, JF_FLOW_DISABLED);
	expect_end(&c);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* ---- timing ---------------------------------------------------------------------------- */

/* perf's conversion, by hand: ns = zero + (tsc * mult) >> shift. */
static void test_tsc_conversion(void **state)
{
	struct jf_tsc_conversion conv = { 1, 1, 3, 1000 };
	struct jf_tsc_conversion big = { 1, 10, 1000, 5 };
	struct jf_tsc_conversion none = { 0, 0, 0, 0 };

	assert_int_equal(jf_tsc_to_ns(&conv, 0x10000), 1000 + 0x10000 * 3 / 2);
	assert_int_equal(jf_tsc_to_ns(&conv, 7), 1000 + 21 / 2);
	/* (2^63 * 1000) >> 10 = 2^53 * 1000: the product overflows 64 bits, the result not */
	assert_true(jf_tsc_to_ns(&big, 1ull << 63) == 5 + (1ull << 53) * 1000);
	assert_true(jf_tsc_to_ns(&big, (1ull << 63) + 1023) == 5 + (1ull << 53) * 1000 + 999);
	assert_int_equal(jf_tsc_to_ns(&none, 12345), 12345);
}

static uint64_t ns(uint64_t tsc)
{
	return 1000 + (tsc * 3 >> 1); /* the conversion of test_timing_tsc_mtc, by hand */
}

/* The rest of prog's run after tracing is enabled at its start, with return compression. */
static void rest_of_prog(struct jf_ptb *b)
{
	jf_ptb_tip(b, pt_ipc_update_16, 0x400030);
	jf_ptb_tnt(b, "T");
	jf_ptb_tip(b, pt_ipc_update_16, 0x400040);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	jf_ptb_tip_pge(b, pt_ipc_update_16, 0x400042);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
}

/* Checks that every flow has a time from the set want[0..n), in order, starting with
 * want[0] and ending with want[n - 1]. */
static void expect_times(const struct jf_ptb_decode *d, const uint64_t *want, size_t n)
{
	struct cursor c = { d, 0 };
	size_t at = 0;

	for (c.i = 0; c.i < d->count; c.i++) {
		const struct jf_flow *f = &d->flows[c.i];

		CHECK(&c, f->flags & JF_FLOW_HAS_TIME, "every record has a time");
		while (at < n && f->time != want[at])
			at++;
		CHECK(&c, at < n, "time %llu is not one of the expected times, in order",
		      (unsigned long long)f->time);
	}
	c.i = 0;
	CHECK(&c, d->count && d->flows[0].time == want[0], "first time %llu",
	      (unsigned long long)want[0]);
	c.i = d->count - 1;
	CHECK(&c, d->flows[d->count - 1].time == want[n - 1], "last time %llu",
	      (unsigned long long)want[n - 1]);
	assert_true(d->stats.has_time);
	assert_int_equal(d->stats.first_time, want[0]);
	assert_int_equal(d->stats.last_time, want[n - 1]);
}

/* CPUID 0x15 saying TSC = 2 * CTC, MTCFreq 4, and ns = 1000 + TSC * 3 / 2 (see ns). */
static void mtc_timing(struct jf_pt_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpuid_0x15_eax = 1;
	cfg->cpuid_0x15_ebx = 2;
	cfg->mtc_freq = 4;
	cfg->conv = (struct jf_tsc_conversion){ 1, 1, 3, 1000 };
}

/* PSB+ with TSC 0x10000 and TMA (CTC 0x100), then 64-bit code. */
static void start_timed(struct jf_ptb *b)
{
	jf_ptb_psb(b);
	jf_ptb_tsc(b, 0x10000);
	jf_ptb_tma(b, 0x100, 0);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
}

/* TSC and TMA in the PSB+, then MTCs. With CPUID 0x15 saying TSC = 2 * CTC and MTCFreq 4,
 * each MTC that advances the CTC by 1 << 4 advances the TSC by 32:
 * TSC 0x10000 (CTC 0x100), MTC 0x11 (CTC 0x110) -> 0x10020, MTC 0x12 -> 0x10040. */
static void test_timing_tsc_mtc(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_config cfg;
	struct jf_ptb_decode d;
	const uint64_t want[] = { ns(0x10000), ns(0x10020), ns(0x10040) };

	mtc_timing(&cfg);
	start_timed(b);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, BASE);
	jf_ptb_tnt(b, "T");
	jf_ptb_mtc(b, 0x11);
	jf_ptb_tnt(b, "T");
	jf_ptb_mtc(b, 0x12);
	jf_ptb_tnt(b, "NT");
	rest_of_prog(b);
	decode(b, map, &cfg, &d);
	expect_insns(&d, map, prog_insns, 17);
	expect_times(&d, want, 3);
	assert_true(d.stats.time_is_ns);
	assert_int_equal(d.stats.errors, 0);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* A block that starts where libipt's block cache knows nothing yet and runs into code it
 * knows: libipt cuts it there (the first part without a query, the rest from the cache),
 * and join_cache_splits makes it one block again. Its time is the one after the query that
 * ends it, as it would be uncut, even when that query reads an MTC the first part did not
 * see (fuzz_pt_decode: the join once required equal times and left the block in two).
 * Here tracing starts inside mov (0x400004: add bh, bh; leave; jnz), so the cache knows
 * 0x400007 but not the loop head 0x400005 that the taken jnz goes to. */
static void test_cache_split_block_takes_time_of_its_end(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_config cfg;
	struct jf_ptb_decode d;
	struct cursor c;

	mtc_timing(&cfg);
	cfg.join_cache_splits = 1;
	start_timed(b);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, 0x400004);
	jf_ptb_tnt(b, "T"); /* jnz taken: to 0x400005 */
	jf_ptb_mtc(b, 0x11);
	jf_ptb_tnt(b, "T"); /* jnz taken */
	jf_ptb_mtc(b, 0x12);
	jf_ptb_tnt(b, "N"); /* jnz not taken */
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	decode(b, map, &cfg, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, 0x400004, JF_ISA_X86_64);
	CHECK(&c, block64(&c, 0x400004, 0x400007, 3, JF_END_COND)->time == ns(0x10000),
	      "the first block's time");
	CHECK(&c, block64(&c, 0x400005, 0x400007, 2, JF_END_COND)->time == ns(0x10020),
	      "the time after the MTC its jnz's query read");
	block64(&c, 0x400005, 0x400007, 2, JF_END_COND);
	assert_int_equal(d.stats.errors, 0);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* CYC packets with the core:bus ratio from CBR and the nominal frequency: with nom_freq 4
 * and CBR 2, one cycle is 4 / 2 = 2 TSC ticks; CYC 100 then CYC 50 move the time 200 and
 * 100 ticks past the TSC. Without a conversion the time stays in TSC ticks. */
static void test_timing_cyc(void **state)
{
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_pt_config cfg;
	struct jf_ptb_decode d;
	const uint64_t want[] = { 0x20000, 0x20000 + 200, 0x20000 + 300 };
	struct jf_ptb_decode timed;
	size_t i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.nom_freq = 4;
	jf_ptb_psb(b);
	jf_ptb_tsc(b, 0x20000);
	jf_ptb_cbr(b, 2);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, BASE);
	jf_ptb_cyc(b, 100);
	jf_ptb_tnt(b, "T");
	jf_ptb_cyc(b, 50);
	jf_ptb_tnt(b, "TNT");
	rest_of_prog(b);
	decode(b, map, &cfg, &d);
	/* The PSB+'s CBR may be reported as an event of its own: with ratio 2. */
	memset(&timed, 0, sizeof(timed));
	timed.flows = calloc(d.count, sizeof(*timed.flows));
	assert_non_null(timed.flows);
	for (i = 0; i < d.count; i++) {
		if (d.flows[i].kind == JF_FLOW_OTHER && !strcmp(d.flows[i].u.other.name, "cbr")) {
			assert_int_equal(d.flows[i].u.other.a, 2);
			continue;
		}
		timed.flows[timed.count++] = d.flows[i];
	}
	timed.stats = d.stats;
	expect_insns(&d, map, prog_insns, 17);
	expect_times(&timed, want, 3);
	assert_false(d.stats.time_is_ns);
	free(timed.flows);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* ---- PTWRITE --------------------------------------------------------------------------- */

static const uint8_t ptw_code[] = {
	/* 0x400000 */ 0xb8, 0x2a, 0x00, 0x00, 0x00,  /* mov eax, 42 */
	/* 0x400005 */ 0xf3, 0x48, 0x0f, 0xae, 0xe0,  /* ptwrite rax */
	/* 0x40000a */ 0x0f, 0x05,                    /* syscall */
};

static void check_ptwrite(int with_fup)
{
	struct jf_codemap *map = jf_ptb_codemap(ptw_code, sizeof(ptw_code), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;
	const struct jf_flow *f;

	start(b, BASE);
	jf_ptb_ptw(b, 42, with_fup);
	if (with_fup)
		jf_ptb_fup(b, pt_ipc_update_16, 0x400005); /* the PTWRITE's own IP */
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, BASE, JF_ISA_X86_64);
	/* mov, ptwrite: the payload belongs to the ptwrite, which ends the block */
	block64(&c, 0x400000, 0x400005, 2, JF_END_NONE);
	assert_int_equal(d.flows[c.i - 1].u.block.last_size, 5);
	f = expect_event(&c, JF_FLOW_PTWRITE, 0x400005);
	assert_int_equal(f->u.ptwrite.payload, 42);
	block64(&c, 0x40000a, 0x40000a, 1, JF_END_FAR);
	expect_event_noip(&c, JF_FLOW_DISABLED);
	expect_end(&c);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

static void test_ptwrite(void **state)
{
	check_ptwrite(0);
}

static void test_ptwrite_with_fup(void **state)
{
	check_ptwrite(1);
}

/* ---- asynchronous transfers and long TNT ------------------------------------------------ */

/* An interrupt before the second "dec ecx": FUP (where the loop was interrupted) and TIP (the
 * handler, an iretq at 0x400050), then TIP back to the interrupted instruction. */
static void test_interrupt(void **state)
{
	static const uint8_t handler[] = { 0x48, 0xcf }; /* 0x400050: iretq */
	static const uint64_t insns[] = {
		0x400000, 0x400005, 0x400007, 0x400050,          /* interrupted at 0x400005 */
		0x400005, 0x400007, 0x400005, 0x400007,
		0x400009, 0x400020, 0x400021, 0x40000e, 0x400030, 0x400033,
		0x400010, 0x400040, 0x400042, 0x400043,
	};
	struct jf_codemap *map = jf_ptb_codemap(prog, sizeof(prog), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct jf_error err;
	struct cursor c;
	const struct jf_flow *f;

	assert_int_equal(jf_codemap_add_bytes(map, handler, sizeof(handler), 0x400050, "handler",
					      &err), 0);
	start(b, BASE);
	jf_ptb_tnt(b, "T");
	jf_ptb_fup(b, pt_ipc_update_16, 0x400005);
	jf_ptb_tip(b, pt_ipc_update_16, 0x400050);
	jf_ptb_tip(b, pt_ipc_update_16, 0x400005);     /* iretq */
	jf_ptb_tnt(b, "TNT");
	rest_of_prog(b);
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, BASE, JF_ISA_X86_64);
	block64(&c, 0x400000, 0x400007, 3, JF_END_COND);
	f = expect_event(&c, JF_FLOW_ASYNC, 0x400050);
	assert_int_equal(f->u.async.from, 0x400005);
	block64(&c, 0x400050, 0x400050, 1, JF_END_FAR);
	block64(&c, 0x400005, 0x400007, 2, JF_END_COND);
	block64(&c, 0x400005, 0x400007, 2, JF_END_COND);
	expect_insns(&d, map, insns, sizeof(insns) / sizeof(insns[0]));
	assert_int_equal(d.stats.errors, 0);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

/* Ten conditional branches in one TNT-64 packet. */
static void test_tnt64(void **state)
{
	static const uint8_t loop10[] = {
		/* 0x400000 */ 0xb9, 0x0a, 0x00, 0x00, 0x00, /* mov ecx, 10 */
		/* 0x400005 */ 0xff, 0xc9,                   /* loop: dec ecx */
		/* 0x400007 */ 0x75, 0xfc,                   /* jnz loop */
		/* 0x400009 */ 0x0f, 0x05,                   /* syscall */
	};
	struct jf_codemap *map = jf_ptb_codemap(loop10, sizeof(loop10), BASE);
	struct jf_ptb *b = jf_ptb_new();
	struct jf_ptb_decode d;
	struct cursor c;
	int i;

	start(b, BASE);
	jf_ptb_tnt(b, "TTTTTTTTTN");                   /* 9 times back, then out */
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	assert_int_equal(jf_ptb_bytes(b)[jf_ptb_size(b) - 1 - 8], 0x02); /* TNT-64: 02 a3 */
	assert_int_equal(jf_ptb_bytes(b)[jf_ptb_size(b) - 1 - 7], 0xa3);
	decode(b, map, NULL, &d);
	c = (struct cursor){ &d, 0 };
	expect_enabled(&c, BASE, JF_ISA_X86_64);
	block64(&c, 0x400000, 0x400007, 3, JF_END_COND);
	for (i = 0; i < 9; i++)
		block64(&c, 0x400005, 0x400007, 2, JF_END_COND);
	block64(&c, 0x400009, 0x400009, 1, JF_END_FAR);
	expect_event_noip(&c, JF_FLOW_DISABLED);
	expect_end(&c);
	assert_int_equal(d.stats.insns, 3 + 9 * 2 + 1);
	jf_ptb_decode_free(&d);
	jf_ptb_free(b);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branches_calls_returns_compressed),
		cmocka_unit_test(test_returns_uncompressed),
		cmocka_unit_test(test_end_on_call),
		cmocka_unit_test(test_overflow),
		cmocka_unit_test(test_resync_after_corrupt_packet),
		cmocka_unit_test(test_bad_status_update),
		cmocka_unit_test(test_bad_status_update_at_end),
		cmocka_unit_test(test_pge_while_enabled),
		cmocka_unit_test(test_tnt_without_conditional_branch),
		cmocka_unit_test(test_tip_to_unmapped_code),
		cmocka_unit_test(test_suppressed_tip_at_indirect_branch),
		cmocka_unit_test(test_unknown_mode_not_from_cache),
		cmocka_unit_test(test_mode_switch_same_code),
		cmocka_unit_test(test_empty_trace),
		cmocka_unit_test(test_no_psb),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_exec_mode_switch),
		cmocka_unit_test(test_tsc_conversion),
		cmocka_unit_test(test_timing_tsc_mtc),
		cmocka_unit_test(test_timing_cyc),
		cmocka_unit_test(test_cache_split_block_takes_time_of_its_end),
		cmocka_unit_test(test_ptwrite),
		cmocka_unit_test(test_ptwrite_with_fup),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test(test_tnt64),
	};
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
