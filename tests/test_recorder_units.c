/* Unit tests of the recorder's parts: the QEMU log parser (well-formed, glued, truncated
 * and corrupt lines), the block classifier (capstone), the PT stream (decoded back with
 * libipt's query decoder, an independent implementation of the packet semantics), the
 * plugin stream reader (records split anywhere, truncated, corrupt) and the zone file
 * retimer (hostile sizes). */
#include "test_support.h"

#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_map.h"
#include "plugin_stream.h"
#include "pt_stream.h"
#include "qemu_log.h"
#include "record_filter.h"
#include "zone_copy.h"

/* ---- QEMU log parser ---- */

struct seen {
	int translations, execs, syscalls, results, signals, garbage, stopped;
	uint64_t tb_pc, exec_pc, stopped_pc;
	size_t tb_size;
	uint8_t tb_bytes[64];
	unsigned cpu;
	uint32_t cflags;
	char syscall[64], result[64];
	char order[64];               /* one letter a callback: e exec, s system call, r result */
};

static void note(struct seen *s, char what)
{
	size_t n = strlen(s->order);

	if (n + 1 < sizeof(s->order))
		s->order[n] = what;
}

static void on_tb(void *ctx, uint64_t pc, const uint8_t *bytes, size_t size)
{
	struct seen *s = ctx;

	s->translations++;
	s->tb_pc = pc;
	s->tb_size = size;
	memcpy(s->tb_bytes, bytes, size < sizeof(s->tb_bytes) ? size : sizeof(s->tb_bytes));
}

static void on_exec(void *ctx, const struct jf_qlog_exec *e)
{
	struct seen *s = ctx;

	note(s, 'e');
	s->execs++;
	s->exec_pc = e->pc;
	s->cpu = e->cpu;
	s->cflags = e->cflags;
}

static void on_syscall(void *ctx, const char *name, const char *args)
{
	struct seen *s = ctx;

	(void)args;
	note(s, 's');
	s->syscalls++;
	snprintf(s->syscall, sizeof(s->syscall), "%s", name);
}

static void on_result(void *ctx, const char *r)
{
	struct seen *s = ctx;

	note(s, 'r');
	s->results++;
	snprintf(s->result, sizeof(s->result), "%s", r);
}

static void on_signal(void *ctx, const char *name)
{
	(void)name;
	((struct seen *)ctx)->signals++;
}

static void on_garbage(void *ctx, const char *line)
{
	(void)line;
	((struct seen *)ctx)->garbage++;
}

static void on_stopped(void *ctx, uint64_t pc)
{
	((struct seen *)ctx)->stopped++;
	((struct seen *)ctx)->stopped_pc = pc;
}

static struct jf_qlog_parser *parser_for(struct seen *s)
{
	static struct jf_qlog_parser p;
	struct jf_qlog_callbacks cb = { .ctx = s, .translation = on_tb, .exec = on_exec,
					.syscall = on_syscall, .syscall_result = on_result,
					.signal = on_signal, .garbage = on_garbage,
					.stopped = on_stopped };

	memset(s, 0, sizeof(*s));
	jf_qlog_init(&p, &cb);
	return &p;
}

static void feed(struct jf_qlog_parser *p, const char *text)
{
	const char *nl;

	while ((nl = strchr(text, '\n')) != NULL) {
		jf_qlog_line(p, text, (size_t)(nl - text));
		text = nl + 1;
	}
	if (*text)
		jf_qlog_line(p, text, strlen(text));
}

static void test_log_translation_and_exec(void **state)
{
	struct seen s;
	struct jf_qlog_parser *p = parser_for(&s);
	static const uint8_t expect[] = { 0x31, 0xed, 0x48, 0xc7, 0x44, 0x24, 0x30, 0x00,
					  0x10, 0x00, 0x00, 0xc3 };

	(void)state;
	feed(p, "----------------\n"
		"IN: _start\n"
		"0x004014f0:  31 ed                    xorl     %ebp, %ebp\n"
		"0x004014f2:  48 c7 44 24 30 00 10 00  movq     $0x1000, 0x30(%rsp)\n"
		"0x004014fa:  00\n"
		"0x004014fb:  c3                       retq     \n"
		"\n"
		"Trace 3: 0x7fde00000100 [0000000000000000/00000000004014f0/1040c0b3/00080200] _start\n");
	jf_qlog_finish(p);
	assert_int_equal(s.translations, 1);
	assert_int_equal(s.tb_pc, 0x4014f0);
	assert_int_equal(s.tb_size, sizeof(expect));
	assert_memory_equal(s.tb_bytes, expect, sizeof(expect));
	assert_int_equal(s.execs, 1);
	assert_int_equal(s.exec_pc, 0x4014f0);
	assert_int_equal(s.cpu, 3);
	assert_int_equal(s.cflags, 0x80200);
	assert_int_equal(s.garbage, 0);
}

static void test_log_glued_and_split_lines(void **state)
{
	struct seen s;
	struct jf_qlog_parser *p = parser_for(&s);

	(void)state;
	/* A system call whose result comes after another thread's exec record. */
	feed(p, "6964 clone(CLONE_VM|CLONE_THREAD,child_stack=0x40)Trace 1: 0x7fc61ac4cc40 "
		"[0000000000000000/0000000000460b12/1040c0b3/00080200] clone\n"
		"6964 set_robust_list(1,24) = -1 errno=38 (Function not implemented)\n"
		" = 6966\n"
		"--- SIGUSR1 {si_signo=SIGUSR1, si_code=SI_TKILL} ---\n"
		"Stopped execution of TB chain before 0x7fcfb804d4c0 [0000000000460c92] clone\n");
	assert_int_equal(s.execs, 1);
	assert_int_equal(s.exec_pc, 0x460b12);
	/* The clone first, then the new thread's block glued after it (a thread's first block
	 * before the clone that made it got the next thread's id in the recorder), then
	 * set_robust_list and the two results. */
	assert_string_equal(s.order, "sesrr");
	assert_int_equal(s.syscalls, 2);
	assert_int_equal(s.results, 2); /* set_robust_list's own, then the clone's */
	assert_string_equal(s.result, "6966");
	assert_int_equal(s.signals, 1);
	assert_int_equal(s.stopped, 1);
	assert_int_equal(s.stopped_pc, 0x460c92);
	assert_int_equal(s.garbage, 0);
}

static void test_log_truncated_and_corrupt(void **state)
{
	static const char *const bad[] = {
		"Trace 0: 0x7f",
		"Trace 0: 0x7fde00000100 [0000000000000000/00000000004014f0/1040c0b3",
		"Trace x: 0x7fde00000100 [0000000000000000/00000000004014f0/1040c0b3/00000200]",
		"Trace 0: 0x7fde00000100 [00000000000000zz/00000000004014f0/1040c0b3/00000200] f",
		"Trace 99999999999999999999: 0x1 [0/1/2/3]",
		"Stopped execution of TB chain before 0x12 [zz]",
		"random words",
		"\x01\x02\xff",
	};
	struct seen s;
	struct jf_qlog_parser *p = parser_for(&s);
	char *huge = malloc(100000);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		jf_qlog_line(p, bad[i], strlen(bad[i]));
	assert_int_equal(s.execs, 0);
	assert_int_equal(s.garbage, (int)(sizeof(bad) / sizeof(bad[0])));
	/* A translation cut off by the end of the log is still delivered; garbage inside
	 * one (non-contiguous addresses) is counted, not fatal. */
	feed(p, "IN: f\n0x00001000:  90                       nop\n"
		"0x00009999:  90                       nop\n0x00001001:  c3   ret");
	jf_qlog_finish(p);
	assert_int_equal(s.translations, 1);
	assert_int_equal(s.tb_size, 2);
	/* A line far longer than any QEMU writes. */
	memset(huge, 'T', 99999);
	huge[99999] = '\0';
	jf_qlog_line(p, huge, 99999);
	free(huge);
}

/* ---- block classification ---- */

static void test_classify(void **state)
{
	static const struct {
		uint8_t bytes[8];
		size_t size;
		enum jf_exit_kind kind;
		uint64_t target;
		int rep;
	} cases[] = {
		{ { 0x74, 0x10 }, 2, JF_EXIT_COND, 0x1012, 0 },                 /* je */
		{ { 0xe2, 0xfe }, 2, JF_EXIT_COND, 0x1000, 0 },                 /* loop */
		{ { 0xeb, 0x00 }, 2, JF_EXIT_JUMP, 0x1002, 0 },                 /* jmp rel8 */
		{ { 0xe8, 0x00, 0x01, 0x00, 0x00 }, 5, JF_EXIT_CALL, 0x1105, 0 }, /* call */
		{ { 0xff, 0xd0 }, 2, JF_EXIT_IND_CALL, 0, 0 },                  /* call *%rax */
		{ { 0xff, 0xe2 }, 2, JF_EXIT_IND_JUMP, 0, 0 },                  /* jmp *%rdx */
		{ { 0xc3 }, 1, JF_EXIT_RET, 0, 0 },                             /* ret */
		{ { 0xf3, 0xc3 }, 2, JF_EXIT_RET, 0, 0 },                       /* rep ret */
		{ { 0x0f, 0x05 }, 2, JF_EXIT_SYSCALL, 0, 0 },                   /* syscall */
		{ { 0x0f, 0x0b }, 2, JF_EXIT_FAULT, 0, 0 },                     /* ud2 */
		{ { 0xf3, 0xa4 }, 2, JF_EXIT_NONE, 0, 1 },                      /* rep movsb */
		{ { 0x48, 0x01, 0xd8 }, 3, JF_EXIT_NONE, 0, 0 },                /* add */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct jf_block b;

		memset(&b, 0, sizeof(b));
		assert_int_equal(jf_block_classify_insn(cases[i].bytes, cases[i].size, 0x1000, &b),
				 cases[i].size);
		assert_int_equal(b.exit, cases[i].kind);
		assert_int_equal(b.target, cases[i].target);
		assert_int_equal(b.last_is_rep, cases[i].rep);
		assert_int_equal(b.next_ip, 0x1000 + cases[i].size);
	}
}

/* The block of one translation of bytes at pc, as its execution finds it. */
static const struct jf_block *translated_block(struct jf_block_map *m, uint64_t pc,
					       const uint8_t *bytes, size_t size)
{
	const struct jf_block *b;

	assert_int_equal(jf_block_map_translated(m, pc, bytes, size), 0);
	b = jf_block_map_executed(m, pc, 0, 0);
	assert_non_null(b);
	return b;
}

/* libgcc's unwinder (run by every LuaJIT trace abort) holds CET shadow-stack instructions
 * that capstone 4 cannot decode; they are NOPs without CET, and the branch after them
 * must still be the block's exit. Bytes from _Unwind_RaiseException. */
static void test_shadow_stack_nops(void **state)
{
	static const uint8_t rdssp_je[] = { 0xf3, 0x48, 0x0f, 0x1e, 0xc8,  /* rdsspq %rax */
					    0x48, 0x85, 0xc0,              /* test %rax,%rax */
					    0x74, 0x26 };                  /* je +0x26 */
	static const uint8_t incssp_jmp[] = { 0xf3, 0x48, 0x0f, 0xae, 0xe9, /* incsspq %rcx */
					      0xeb, 0x0b };                 /* jmp +0xb */
	static const uint8_t rdssp_only[] = { 0x90, 0xf3, 0x0f, 0x1e, 0xc8 }; /* nop; rdsspd */
	struct jf_block_map *m = jf_block_map_new();
	const struct jf_block *b;

	(void)state;
	assert_non_null(m);
	b = translated_block(m, 0x17000, rdssp_je, sizeof(rdssp_je));
	assert_int_equal(b->ninsn, 3);
	assert_int_equal(b->exit, JF_EXIT_COND);
	assert_int_equal(b->last_ip, 0x17008);
	assert_int_equal(b->target, 0x17030);
	b = translated_block(m, 0x18000, incssp_jmp, sizeof(incssp_jmp));
	assert_int_equal(b->ninsn, 2);
	assert_int_equal(b->exit, JF_EXIT_JUMP);
	assert_int_equal(b->target, 0x18012);
	b = translated_block(m, 0x19000, rdssp_only, sizeof(rdssp_only));
	assert_int_equal(b->ninsn, 2);
	assert_int_equal(b->exit, JF_EXIT_NONE);
	assert_int_equal(b->last_ip, 0x19001);
	assert_int_equal(b->next_ip, 0x19005);
	assert_int_equal(jf_block_map_undecodable(m), 0);
	assert_int_equal(jf_block_map_prefix_size(m, 0x17000, rdssp_je, sizeof(rdssp_je), 2), 8);
	jf_block_map_free(m);
}

/* ---- PT stream, decoded by libipt ---- */

struct sink {
	uint8_t *data;
	size_t size;
};

static int collect(void *ctx, const uint8_t *bytes, size_t size)
{
	struct sink *s = ctx;

	s->data = realloc(s->data, s->size + size);
	memcpy(s->data + s->size, bytes, size);
	s->size += size;
	return 0;
}

/* Next query result, after handling the events libipt says are pending; events seen are
 * checked against the expected list in order. */
struct expect_events {
	const struct pt_event *list;
	size_t n, next;
};

static int drain(struct pt_query_decoder *q, int status, struct expect_events *ev)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event e;

		status = pt_qry_event(q, &e, sizeof(e));
		assert_true(status >= 0);
		if (e.type == ptev_cbr || e.type == ptev_mnt ||
		    e.type == ptev_exec_mode || e.type == ptev_tick)
			continue; /* timing and mode: not what this test is about */
		assert_true(ev->next < ev->n);
		assert_int_equal(e.type, ev->list[ev->next].type);
		switch (e.type) {
		case ptev_enabled:
			assert_int_equal(e.variant.enabled.ip, ev->list[ev->next].variant.enabled.ip);
			break;
		case ptev_async_disabled:
			assert_int_equal(e.variant.async_disabled.at,
					 ev->list[ev->next].variant.async_disabled.at);
			break;
		case ptev_disabled: /* with an IP when one is expected (an IP filter's edge) */
			assert_int_equal(e.ip_suppressed, !ev->list[ev->next].variant.disabled.ip);
			if (!e.ip_suppressed)
				assert_int_equal(e.variant.disabled.ip,
						 ev->list[ev->next].variant.disabled.ip);
			break;
		case ptev_overflow:
			assert_int_equal(e.ip_suppressed, ev->list[ev->next].ip_suppressed);
			break;
		case ptev_ptwrite:
			assert_int_equal(e.variant.ptwrite.payload,
					 ev->list[ev->next].variant.ptwrite.payload);
			break;
		default:
			break;
		}
		ev->next++;
	}
	return status;
}

/* libipt's query decoder over the bytes the stream wrote (config must outlive it). */
static struct pt_query_decoder *query_decoder(const struct sink *sink, struct pt_config *config)
{
	struct pt_query_decoder *q;

	pt_config_init(config);
	config->begin = sink->data;
	config->end = sink->data + sink->size;
	q = pt_qry_alloc_decoder(config);
	assert_non_null(q);
	return q;
}

static void test_pt_stream_decodes_with_libipt(void **state)
{
	struct jf_pt_stream *pt = malloc(sizeof(*pt));
	struct sink sink = { 0 };
	struct pt_config config;
	struct pt_query_decoder *q;
	struct pt_event events[5];
	struct expect_events ev = { events, 5, 0 };
	uint64_t ip, clock = 0;
	int status, taken, i;

	(void)state;
	memset(events, 0, sizeof(events));
	events[0].type = ptev_enabled;
	events[0].variant.enabled.ip = 0x401000;
	events[1].type = ptev_disabled;
	events[2].type = ptev_enabled;
	events[2].variant.enabled.ip = 0x401010;
	events[3].type = ptev_ptwrite;
	events[3].variant.ptwrite.payload = 7;
	events[4].type = ptev_async_disabled;
	events[4].variant.async_disabled.at = 0x402000;

	assert_int_equal(jf_pt_stream_init(pt, collect, &sink, 1), 0);
	jf_pt_advance(pt, clock += 10);
	jf_pt_enable(pt, 0x401000);
	jf_pt_cond(pt, 1);
	jf_pt_cond(pt, 0);
	jf_pt_cond(pt, 1);
	jf_pt_call(pt, 0x401005);
	jf_pt_indirect(pt, 0x7fff12345678);     /* an indirect call's target */
	jf_pt_return(pt, 0x401005);            /* matches the call: compressed */
	jf_pt_return(pt, 0x500000);            /* matches nothing: TIP */
	jf_pt_disable(pt);                     /* a system call */
	jf_pt_advance(pt, clock += 1000);
	jf_pt_enable(pt, 0x401010);
	jf_pt_ptwrite(pt, 7);
	for (i = 0; i < 40000; i++) {          /* long enough for several PSBs and MTCs */
		jf_pt_cond(pt, i % 3 == 0);
		jf_pt_advance(pt, clock += 7);
		jf_pt_boundary(pt, 0x401010);
	}
	jf_pt_async_disable(pt, 0x402000);
	assert_int_equal(jf_pt_stream_finish(pt), 0);
	assert_true(pt->stats.psb > 1);
	assert_true(pt->stats.mtc > 0);
	assert_int_equal(pt->stats.ret_compressed, 1);

	q = query_decoder(&sink, &config);
	status = pt_qry_sync_forward(q, &ip);
	assert_true(status >= 0);
	status = drain(q, status, &ev);
	assert_int_equal(ev.next, 1);
	{
		static const int expect_tnt[] = { 1, 0, 1 };

		for (i = 0; i < 3; i++) {
			status = drain(q, pt_qry_cond_branch(q, &taken), &ev);
			assert_true(status >= 0);
			assert_int_equal(taken, expect_tnt[i]);
		}
	}
	status = drain(q, pt_qry_indirect_branch(q, &ip), &ev);
	assert_int_equal(ip, 0x7fff12345678);
	status = drain(q, pt_qry_cond_branch(q, &taken), &ev); /* the compressed return */
	assert_int_equal(taken, 1);
	status = drain(q, pt_qry_indirect_branch(q, &ip), &ev);
	assert_int_equal(ip, 0x500000);
	/* TIP.PGD, TIP.PGE and PTW are events; then the 40000 bits, PSBs in between. */
	for (i = 0; i < 40000; i++) {
		status = drain(q, pt_qry_cond_branch(q, &taken), &ev);
		if (status < 0)
			fail_msg("bit %d: %s", i, pt_errstr(pt_errcode(status)));
		assert_int_equal(taken, i % 3 == 0);
	}
	/* The FUP + TIP.PGD of the asynchronous disable. */
	status = drain(q, status, &ev);
	assert_int_equal(ev.next, 5);
	pt_qry_free_decoder(q);
	free(sink.data);
	free(pt);
}

/* The clock a thread's packets carry, as libipt reads it: exact at every branch, while
 * the thread runs (across MTC periods) and after it waited while other threads ran
 * (a few periods, and more than an MTC's 8 bits can count). A thread's blocks dated late
 * would be merged after other threads' blocks that ran after them (a zone
 * record that one thread wrote would apply before another thread's run of the old code). */
static void test_pt_stream_time_after_waits(void **state)
{
	static const uint64_t gaps[] = { 3, 700, 3000, 40000, 300000, 5, 1 << 20 };
	struct jf_pt_stream *pt = malloc(sizeof(*pt));
	struct sink sink = { 0 };
	struct pt_config config;
	struct pt_query_decoder *q;
	uint64_t ip, tsc, clock = 100, at[2 * 7 * 50];
	uint32_t lost_mtc, lost_cyc;
	size_t n = 0, i, k;
	int status;

	(void)state;
	assert_int_equal(jf_pt_stream_init(pt, collect, &sink, 1), 0);
	jf_pt_advance(pt, clock);
	jf_pt_enable(pt, 0x401000);
	for (i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++) {
		/* the thread runs: a branch every 37 instructions */
		for (k = 0; k < 50; k++) {
			jf_pt_advance(pt, clock += 37);
			jf_pt_indirect(pt, 0x401000 + k);
			at[n++] = clock;
		}
		/* a system call; the thread comes back after others ran gaps[i] instructions */
		jf_pt_disable(pt);
		jf_pt_advance(pt, clock += gaps[i]);
		jf_pt_enable(pt, 0x401000);
	}
	assert_int_equal(jf_pt_stream_finish(pt), 0);

	q = query_decoder(&sink, &config);
	config.cpuid_0x15_eax = 1; /* as the recording's AUXTRACE_INFO says */
	config.cpuid_0x15_ebx = JF_PT_TSC_PER_INSN;
	config.mtc_freq = JF_PT_MTC_PERIOD;
	config.nom_freq = JF_PT_NONTURBO_RATIO;
	pt_qry_free_decoder(q);
	q = pt_qry_alloc_decoder(&config);
	assert_non_null(q);
	status = pt_qry_sync_forward(q, &ip);
	assert_true(status >= 0);
	for (i = 0; i < n;) {
		struct pt_event ev;

		if (status & pts_event_pending) {
			status = pt_qry_event(q, &ev, sizeof(ev));
			assert_true(status >= 0);
			continue;
		}
		status = pt_qry_indirect_branch(q, &ip);
		if (status < 0)
			fail_msg("branch %zu: %s", i, pt_errstr(pt_errcode(status)));
		assert_int_equal(ip, 0x401000 + i % 50);
		assert_true(pt_qry_time(q, &tsc, &lost_mtc, &lost_cyc) >= 0);
		if (tsc != (at[i] + JF_PT_CLOCK_BASE) * JF_PT_TSC_PER_INSN)
			fail_msg("branch %zu (after a wait of %llu): time %llu, the clock was %llu", i,
				 (unsigned long long)(i >= 50 ? gaps[i / 50 - 1] : 0),
				 (unsigned long long)(tsc / JF_PT_TSC_PER_INSN - JF_PT_CLOCK_BASE),
				 (unsigned long long)at[i]);
		i++;
	}
	pt_qry_free_decoder(q);
	free(sink.data);
	free(pt);
}

/* The IP filter's packets (--filter): a branch out of it is a TIP.PGD with its target,
 * after the TNT bits before it; no MTC while it keeps tracing off, and a PSB+ whose TSC
 * dates the next TIP.PGE; an overflow outside it is an OVF alone, then TIP.PGE. */
static void test_pt_filter_edges(void **state)
{
	const struct pt_event events[] = {
		{ .type = ptev_enabled, .variant.enabled.ip = 0x7f0000001000 },
		{ .type = ptev_disabled, .variant.disabled.ip = 0x401000 },
		{ .type = ptev_enabled, .variant.enabled.ip = 0x7f0000001040 },
		{ .type = ptev_overflow, .ip_suppressed = 1 },
		{ .type = ptev_enabled, .variant.enabled.ip = 0x7f0000002000 },
	};
	struct expect_events ev = { events, 5, 0 };
	struct jf_pt_stream *pt = malloc(sizeof(*pt));
	struct sink sink = { 0 };
	struct pt_config config;
	struct pt_query_decoder *q;
	uint64_t ip, tsc = 0;
	int status, taken;

	(void)state;
	assert_int_equal(jf_pt_stream_init(pt, collect, &sink, 1), 0);
	pt->filtered = 1;
	jf_pt_advance(pt, 10);
	jf_pt_enable(pt, 0x7f0000001000);
	jf_pt_cond(pt, 1);
	jf_pt_filter_disable(pt, 0x401000);     /* e.g. a call out of the JIT's code */
	jf_pt_advance(pt, 100000);              /* ~195 MTC periods outside the filter */
	assert_int_equal(pt->stats.mtc, 0);
	jf_pt_enable(pt, 0x7f0000001040);
	assert_int_equal(pt->stats.psb, 2);
	jf_pt_overflow_outside(pt);
	jf_pt_enable(pt, 0x7f0000002000);
	assert_int_equal(jf_pt_stream_finish(pt), 0);
	assert_int_equal(pt->stats.tip_pgd, 1);
	assert_int_equal(pt->stats.tip_pge, 3);

	q = query_decoder(&sink, &config);
	status = pt_qry_sync_forward(q, &ip);
	assert_true(status >= 0);
	status = drain(q, status, &ev);
	assert_int_equal(ev.next, 1);
	status = pt_qry_cond_branch(q, &taken);
	assert_true(status >= 0);
	assert_int_equal(taken, 1);
	/* TIP.PGD with its IP, then TIP.PGE at the PSB's TSC; then OVF and TIP.PGE. */
	while (status >= 0 && (status & pts_event_pending) && ev.next < 3) {
		struct pt_event e;

		status = pt_qry_event(q, &e, sizeof(e));
		assert_true(status >= 0);
		if (e.type == ptev_disabled) {
			assert_false(e.ip_suppressed);
			assert_int_equal(e.variant.disabled.ip, 0x401000);
			ev.next = 2;
		} else if (e.type == ptev_enabled && ev.next == 2) {
			assert_int_equal(e.variant.enabled.ip, 0x7f0000001040);
			tsc = e.tsc;
			ev.next = 3;
		}
	}
	assert_int_equal(ev.next, 3);
	assert_int_equal(tsc, (100000 + JF_PT_CLOCK_BASE) * JF_PT_TSC_PER_INSN);
	status = drain(q, status, &ev);
	assert_int_equal(ev.next, 5);
	pt_qry_free_decoder(q);
	free(sink.data);
	free(pt);
}

/* An overflow resets the decoder's last IP: the FUP after OVF must not be compressed
 * against the IP before it (a compressed one decodes to 0x11a5 instead of 0x4011a5). */
static void test_pt_overflow_ip_is_whole(void **state)
{
	struct jf_pt_stream *pt = malloc(sizeof(*pt));
	struct sink sink = { 0 };
	struct pt_config config;
	struct pt_query_decoder *q;
	struct pt_event e;
	uint64_t ip;
	int status, seen = 0;

	(void)state;
	assert_int_equal(jf_pt_stream_init(pt, collect, &sink, 0), 0);
	jf_pt_enable(pt, 0x401000);
	jf_pt_indirect(pt, 0x401234);          /* the last IP is now 0x401234 */
	jf_pt_overflow(pt, 0x4011a5);
	jf_pt_indirect(pt, 0x4011c0);
	assert_int_equal(jf_pt_stream_finish(pt), 0);

	q = query_decoder(&sink, &config);
	status = pt_qry_sync_forward(q, &ip);
	while (status >= 0) {
		while (status >= 0 && (status & pts_event_pending)) {
			status = pt_qry_event(q, &e, sizeof(e));
			if (status >= 0 && e.type == ptev_overflow) {
				assert_int_equal(e.variant.overflow.ip, 0x4011a5);
				seen = 1;
			}
		}
		if (status < 0 || (status & pts_eos))
			break;
		status = pt_qry_indirect_branch(q, &ip);
	}
	assert_int_equal(seen, 1);
	pt_qry_free_decoder(q);
	free(sink.data);
	free(pt);
}

/* ---- zone file retiming ---- */

static size_t put_record(uint8_t *buf, size_t off, uint32_t id, uint32_t size, uint64_t ts,
			 uint32_t tid)
{
	memset(buf + off, 0, size);
	memcpy(buf + off, &id, 4);
	memcpy(buf + off + 4, &size, 4);
	memcpy(buf + off + 8, &ts, 8);
	if (id >= 0x4A460000 && size >= 32)
		memcpy(buf + off + 24, &tid, 4);
	else if (id == 0 && size >= 24)
		memcpy(buf + off + 20, &tid, 4);
	return off + size;
}

static void test_zone_retime(void **state)
{
	uint8_t buf[512];
	uint32_t magic = 0x4A695444, header = 40, bad = 100000;
	uint64_t times[] = { 1000, 2000 }, ts;
	struct jf_zone_markers m = { .tid = 42, .times = times, .count = 2 };
	struct jf_zone_copy_result res;
	struct jf_error err;
	size_t end;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &magic, 4);
	memcpy(buf + 8, &header, 4);
	end = put_record(buf, 40, 0x4A46000C, 48, 5, 42);   /* MARKER, ext: marker 1 */
	end = put_record(buf, end, 0, 40, 6, 42);            /* CODE_LOAD */
	end = put_record(buf, end, 0x4A460002, 96, 7, 42);  /* REGION_LOAD: marker 2 */
	end = put_record(buf, end, 3, 16, 8, 0);             /* CODE_CLOSE */
	assert_int_equal(jf_zone_retime(buf, end, &m, 1, &res, &err), 0);
	assert_int_equal(res.records, 4);
	assert_int_equal(res.retimed, 2);
	memcpy(&ts, buf + 40 + 8, 8);
	assert_int_equal(ts, 1000);
	memcpy(&ts, buf + 88 + 8, 8);
	assert_int_equal(ts, 2000);                          /* CODE_LOAD: its REGION_LOAD's */
	memcpy(&ts, buf + 128 + 8, 8);
	assert_int_equal(ts, 2000);
	memcpy(&ts, buf + 224 + 8, 8);
	assert_int_equal(ts, 2000);                          /* CODE_CLOSE: the last time */

	/* A record size beyond the file: an error naming its offset. */
	memcpy(buf + 88 + 4, &bad, 4);
	assert_int_equal(jf_zone_retime(buf, end, &m, 1, &res, &err), -1);
	assert_non_null(strstr(err.msg, "offset 88"));
	/* Not a jitdump file at all. */
	memset(buf, 0xff, 8);
	assert_int_equal(jf_zone_retime(buf, end, &m, 1, &res, &err), -1);
	assert_non_null(strstr(err.msg, "offset 0"));
	/* Shorter than a header. */
	assert_int_equal(jf_zone_retime(buf, 10, &m, 1, &res, &err), -1);
}

/* Dating by write() calls: a record takes the time of the write that completed it. */
static void test_zone_retime_by_writes(void **state)
{
	uint8_t buf[256];
	uint32_t magic = 0x4A695444, header = 40;
	uint64_t ends[] = { 40, 96, 144 }, times[] = { 100, 200, 300 }, ts;
	struct jf_zone_copy_result res;
	struct jf_error err;
	size_t end;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &magic, 4);
	memcpy(buf + 8, &header, 4);
	end = put_record(buf, 40, 0, 40, 1, 1);     /* 40..80: completed by the write ending at 96 */
	end = put_record(buf, end, 2, 16, 2, 0);    /* 80..96: the same write */
	end = put_record(buf, end, 3, 48, 3, 0);    /* 96..144: the third */
	assert_int_equal(jf_zone_retime_by_writes(buf, end, ends, times, 3, &res, &err), 0);
	assert_int_equal(res.retimed, 3);
	memcpy(&ts, buf + 40 + 8, 8);
	assert_int_equal(ts, 200);
	memcpy(&ts, buf + 80 + 8, 8);
	assert_int_equal(ts, 200);
	memcpy(&ts, buf + 96 + 8, 8);
	assert_int_equal(ts, 300);
	memcpy(&ts, buf + 24, 8);
	assert_int_equal(ts, 100);                  /* the header: the first write */
	/* A record running past the end of the file. */
	assert_int_equal(jf_zone_retime_by_writes(buf, end - 1, ends, times, 3, &res, &err), -1);
	assert_non_null(strstr(err.msg, "offset 96"));
}

/* A recording whose trace cannot show the marker calls: the MARKER record's marker-calls
 * method is cleared (its other methods kept), nothing else changes; a damaged file is
 * read only up to the damage. */
static void test_zone_clear_marker_calls(void **state)
{
	uint8_t buf[256], before[256];
	uint32_t magic = 0x4A695444, header = 40, methods = 1 | 2, bad = 100000;
	uint64_t addr = 0x401234;
	size_t end;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &magic, 4);
	memcpy(buf + 8, &header, 4);
	end = put_record(buf, 40, 0, 40, 1, 1);              /* CODE_LOAD */
	end = put_record(buf, end, 0x4A46000C, 48, 5, 42);   /* MARKER at 80 */
	memcpy(buf + 80 + 32, &addr, 8);
	memcpy(buf + 80 + 40, &methods, 4);
	assert_int_equal(jf_zone_marker_calls_addr(buf, end), 0x401234);
	memcpy(before, buf, sizeof(buf));
	assert_int_equal(jf_zone_clear_marker_calls(buf, end), 1);
	memcpy(&methods, buf + 80 + 40, 4);
	assert_int_equal(methods, 2);                        /* PTWRITE still said */
	memcpy(before + 80 + 40, &methods, 4);
	assert_memory_equal(buf, before, sizeof(buf));
	assert_int_equal(jf_zone_marker_calls_addr(buf, end), 0);
	assert_int_equal(jf_zone_clear_marker_calls(buf, end), 0);
	/* A MARKER after a record whose size runs past the file is not read. */
	methods = 1;
	memcpy(buf + 80 + 40, &methods, 4);
	memcpy(buf + 40 + 4, &bad, 4);
	assert_int_equal(jf_zone_marker_calls_addr(buf, end), 0);
	assert_int_equal(jf_zone_clear_marker_calls(buf, end), 0);
	/* Not a jitdump file; shorter than a header. */
	assert_int_equal(jf_zone_marker_calls_addr(buf, 10), 0);
	memset(buf, 0xff, 8);
	assert_int_equal(jf_zone_marker_calls_addr(buf, end), 0);
}

/* ---- the IP filter ---- */

/* Anonymous executable memory that touches or overlaps a range the filter holds grows
 * it (a JIT mapping one executor at a time needs one range, not one each); START-END
 * ranges given on the command line never grow. */
static void test_filter_jit_ranges_merge(void **state)
{
	struct jf_rec_filter f;
	struct jf_error err;
	unsigned i;

	(void)state;
	assert_int_equal(jf_rec_filter_parse(&f, "jit,1000-2000", &err), 0);
	assert_int_equal(jf_rec_filter_anon_exec(&f, 0x2000, 0x1000), 0);
	assert_int_equal(f.nranges, 2);                      /* not merged into 1000-2000 */
	assert_int_equal(jf_rec_filter_anon_exec(&f, 0x3000, 0x1000), 0);   /* touches above */
	assert_int_equal(jf_rec_filter_anon_exec(&f, 0x1800, 0x800), 0);    /* below, overlaps */
	assert_int_equal(f.nranges, 2);
	assert_int_equal(f.start[1], 0x1800);
	assert_int_equal(f.end[1], 0x4000);
	assert_int_equal(jf_rec_filter_anon_exec(&f, 0x5000, 0x1000), 0);   /* a gap: new */
	assert_int_equal(f.nranges, 3);
	assert_true(jf_rec_filter_has(&f, 0x3fff));
	assert_false(jf_rec_filter_has(&f, 0x4000));
	assert_true(jf_rec_filter_has(&f, 0x5000));
	/* Full: the first one that cannot be kept says so, once. */
	for (i = 0; f.nranges < JF_REC_FILTER_MAX; i++)
		assert_int_equal(jf_rec_filter_anon_exec(&f, 0x100000 + i * 0x2000, 0x1000), 0);
	assert_int_equal(jf_rec_filter_anon_exec(&f, 0x90000000, 0x1000), 1);
	assert_int_equal(jf_rec_filter_anon_exec(&f, 0x90002000, 0x1000), 0);
	assert_int_equal(f.dropped, 2);
}

/* ---- plugin stream reader ---- */

struct prec_seen {
	int translations, execs, syscalls, results;
	uint64_t tb_pc;
	uint32_t tb_ninsns, ids[4];
	size_t nids;
	char path[64];
};

static void prec_tb(void *ctx, const struct jf_prec_translation *t, const uint8_t *bytes)
{
	struct prec_seen *s = ctx;

	(void)bytes;
	s->translations++;
	s->tb_pc = t->pc;
	s->tb_ninsns = t->ninsns;
}

static void prec_execs(void *ctx, unsigned vcpu, int tid, const uint32_t *ids, size_t n)
{
	struct prec_seen *s = ctx;

	(void)vcpu;
	(void)tid;
	s->execs++;
	s->nids = n;
	memcpy(s->ids, ids, (n < 4 ? n : 4) * sizeof(*ids));
}

static void prec_ret(void *ctx, const struct jf_prec_syscall_ret *r, const char *string)
{
	struct prec_seen *s = ctx;

	(void)r;
	s->results++;
	snprintf(s->path, sizeof(s->path), "%s", string);
}

/* Appends one record (head + fixed part + string, padded) to buf at *len. */
static void put_prec(uint8_t *buf, size_t *len, uint32_t type, const void *fixed, size_t fsize,
		       const void *extra, size_t esize)
{
	struct jf_prec_head h = { type, (uint32_t)((fsize + esize + 3) & ~(size_t)3) };

	memcpy(buf + *len, &h, sizeof(h));
	memset(buf + *len + sizeof(h), 0, h.size);
	memcpy(buf + *len + sizeof(h), fixed, fsize);
	if (esize)
		memcpy(buf + *len + sizeof(h) + fsize, extra, esize);
	*len += sizeof(h) + h.size;
}

/* hello, a translation, executions, an open's result with its path. */
static size_t sample_stream(uint8_t *buf)
{
	struct jf_prec_hello hello = { JF_PREC_MAGIC, JF_PREC_VERSION, 42, 1 };
	struct jf_prec_translation t = { 1, 3, 0x401000, 2, 0 };
	struct jf_prec_execs e = { 0, 42 };
	struct jf_prec_syscall_ret r = { 0, 42, 257, 3, 7, 0 };
	uint32_t ids[3] = { 1, 1, 1 };
	uint8_t execs[sizeof(e) + sizeof(ids)];
	static const uint8_t code[3] = { 0x90, 0xeb, 0xfd };
	size_t len = 0;

	memcpy(execs, &e, sizeof(e));
	memcpy(execs + sizeof(e), ids, sizeof(ids));
	put_prec(buf, &len, JF_PREC_HELLO, &hello, sizeof(hello), NULL, 0);
	put_prec(buf, &len, JF_PREC_TRANSLATION, &t, sizeof(t), code, sizeof(code));
	put_prec(buf, &len, JF_PREC_EXECS, execs, sizeof(execs), NULL, 0);
	put_prec(buf, &len, JF_PREC_SYSCALL_RET, &r, sizeof(r), "/tmp/x1", 7);
	return len;
}

static void test_plugin_stream(void **state)
{
	uint8_t buf[512];
	size_t len = sample_stream(buf), split;

	(void)state;
	/* Every split point of the stream into two pieces gives the same records. */
	for (split = 0; split <= len; split++) {
		struct prec_seen seen = { 0 };
		struct jf_prec_callbacks cb = { .ctx = &seen, .translation = prec_tb,
						.execs = prec_execs, .syscall_ret = prec_ret };
		struct jf_prec_reader r;

		assert_int_equal(jf_prec_init(&r, &cb), 0);
		assert_int_equal(jf_prec_feed(&r, buf, split), 0);
		assert_int_equal(jf_prec_feed(&r, buf + split, len - split), 0);
		assert_int_equal(jf_prec_finish(&r), 0);
		assert_int_equal(seen.translations, 1);
		assert_int_equal(seen.tb_pc, 0x401000);
		assert_int_equal(seen.tb_ninsns, 2);
		assert_int_equal(seen.execs, 1);
		assert_int_equal(seen.nids, 3);
		assert_int_equal(seen.ids[2], 1);
		assert_int_equal(seen.results, 1);
		assert_string_equal(seen.path, "/tmp/x1");
		assert_int_equal(r.records, 4);
		jf_prec_free(&r);
	}
}

/* One damaged stream: the reader stops with the offset and what was wrong. */
static void expect_error(const uint8_t *buf, size_t len, const char *what)
{
	struct prec_seen seen = { 0 };
	struct jf_prec_callbacks cb = { .ctx = &seen, .translation = prec_tb, .execs = prec_execs,
					.syscall_ret = prec_ret };
	struct jf_prec_reader r;

	assert_int_equal(jf_prec_init(&r, &cb), 0);
	if (jf_prec_feed(&r, buf, len) == 0)
		assert_int_equal(jf_prec_finish(&r), -1);
	if (!strstr(r.error, what))
		fail_msg("expected an error with '%s', got '%s'", what, r.error);
	assert_int_equal(jf_prec_feed(&r, buf, len), -1); /* stays stopped */
	jf_prec_free(&r);
}

static void test_plugin_stream_truncated_and_corrupt(void **state)
{
	uint8_t buf[512], bad[512];
	size_t len = sample_stream(buf), hello = 8 + sizeof(struct jf_prec_hello);
	struct jf_prec_head h;

	(void)state;
	/* Ends inside the last record. */
	expect_error(buf, len - 3, "ends inside a record");
	/* Not our stream: no hello first. */
	expect_error(buf + hello, len - hello, "offset 0: expected the plugin's hello record");
	/* An unknown record type, at the offset after the hello. */
	memcpy(bad, buf, len);
	h.type = 77;
	h.size = 8;
	memcpy(bad + hello, &h, sizeof(h));
	expect_error(bad, len, "offset 24: unknown record type 77");
	/* A size beyond any record. */
	h.type = JF_PREC_EXECS;
	h.size = 0x7ffffff0;
	memcpy(bad + hello, &h, sizeof(h));
	expect_error(bad, len, "claims 2147483632 bytes");
	/* A translation that claims more bytes than its record holds. */
	memcpy(bad, buf, len);
	bad[hello + 8 + 4] = 200;
	expect_error(bad, len, "translation of 200 bytes");
	/* A path string longer than its record. */
	memcpy(bad, buf, len);
	bad[len - 8 - 8] = 100;
	expect_error(bad, len, "string of 100 bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_translation_and_exec),
		cmocka_unit_test(test_log_glued_and_split_lines),
		cmocka_unit_test(test_log_truncated_and_corrupt),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_plugin_stream),
		cmocka_unit_test(test_plugin_stream_truncated_and_corrupt),
		cmocka_unit_test(test_shadow_stack_nops),
		cmocka_unit_test(test_pt_stream_decodes_with_libipt),
		cmocka_unit_test(test_pt_stream_time_after_waits),
		cmocka_unit_test(test_pt_overflow_ip_is_whole),
		cmocka_unit_test(test_pt_filter_edges),
		cmocka_unit_test(test_zone_retime),
		cmocka_unit_test(test_zone_retime_by_writes),
		cmocka_unit_test(test_zone_clear_marker_calls),
		cmocka_unit_test(test_filter_jit_ranges_merge),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
