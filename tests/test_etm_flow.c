/* The AArch64 recorder's ETMv4 writer (etm_flow.c) on executions chosen to reach every
 * path: loops (E and N atoms), a return (E and an address), a system call (Exception,
 * Trace On), two threads taking turns (IRQ exceptions, contexts), a signal-like jump after
 * a conditional branch (the branch left out and counted), a thread that never ends its last
 * block (counted), a signal's handler after a conditional branch that returns by
 * rt_sigreturn (placed exactly) or never returns (an Overflow). Written as a snapshot, decoded by OpenCSD's trc_pkt_lister; for every
 * thread (context ID) the lister's ranges, expanded to instruction addresses, must be
 * exactly the instructions of the blocks that thread ran, in order, less the ones the flow
 * says it left out. With an IP filter, only the blocks inside it, and a block that falls
 * through out of it is counted lost. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etm_flow.h"
#include "etm_snapshot.h"

/* A64 code (little-endian words):
 *   10000 d2800060 mov x0, #3       block 1: 10000..10008 (exit: b.ne 10004)
 *   10004 f1000400 subs x0, x0, #1  block 2: 10004..10008 (exit: b.ne 10004)
 *   10008 54ffffe1 b.ne 10004
 *   1000c d65f03c0 ret              block 3 (exit: ret)
 *   20000 d4000001 svc #0           block 4 (exit: svc)
 *   20004 d503201f nop              block 5: 20004..20008 (exit: b 10000)
 *   20008 17ffbffe b 10000
 * and block 6, the mov alone (10000..10004, no branch: it falls through into block 2). */
static const uint32_t code_10000[] = { 0xd2800060, 0xf1000400, 0x54ffffe1, 0xd65f03c0 };
static const uint32_t code_20000[] = { 0xd4000001, 0xd503201f, 0x17ffbffe };

/* exit (AArch64 system call 93) with no arguments: what ends block 4's svc. */
enum { EXIT_SYSCALL = 93 };
static const uint64_t no_args[6];

struct block_def {
	uint64_t pc;
	uint32_t ninsns;
};

static const struct block_def blocks[] = {
	{ 0 }, { 0x10000, 3 }, { 0x10004, 2 }, { 0x1000c, 1 }, { 0x20000, 1 }, { 0x20004, 2 },
	{ 0x10000, 1 },
};

static const uint8_t *bytes_at(uint64_t pc)
{
	if (pc >= 0x20000)
		return (const uint8_t *)code_20000 + (pc - 0x20000);
	return (const uint8_t *)code_10000 + (pc - 0x10000);
}

/* What each thread ran, instruction by instruction, as the trace must show it. */
struct expected {
	int32_t tid;
	uint64_t addr[256];
	size_t n;
};

static struct expected expect[2] = { { .tid = 100 }, { .tid = 200 } };

static struct expected *expected_of(int32_t tid)
{
	return tid == 100 ? &expect[0] : &expect[1];
}

/* Thread tid runs block id; `drop_last` leaves its last instruction out of the expected
 * instructions (the flow cannot show it). */
static void run(struct jf_etm_flow *f, int32_t tid, uint32_t id, int drop_last)
{
	struct expected *e = expected_of(tid);
	uint32_t i, keep = blocks[id].ninsns - (drop_last ? 1 : 0);

	jf_etm_flow_execs(f, tid, &id, 1);
	for (i = 0; i < keep; i++)
		e->addr[e->n++] = blocks[id].pc + 4 * i;
}

/* The lister's ranges per context ID, expanded into instruction addresses. */
static void lister_addresses(const char *dir, struct expected *got, size_t nthreads)
{
	char cmd[2048], line[4096];
	unsigned long long start, end;
	long context = -1;
	const char *p;
	FILE *in;
	size_t t;

	snprintf(cmd, sizeof(cmd), "cd '%s' && trc_pkt_lister -ss_dir '%s' -decode -logstdout",
		 jf_test_tmpdir(), dir);
	in = popen(cmd, "r");
	assert_non_null(in);
	while (fgets(line, sizeof(line), in)) {
		assert_null(strstr(line, "OCSD_ERR"));
		assert_null(strstr(line, "ADDR_NACC"));
		if (strstr(line, "OCSD_GEN_TRC_ELEM_PE_CONTEXT") && (p = strstr(line, "CTXTID=")))
			context = strtol(p + 7, NULL, 16);
		p = strstr(line, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=");
		if (!p || sscanf(p, "OCSD_GEN_TRC_ELEM_INSTR_RANGE(exec range=%llx:[%llx]", &start,
				 &end) != 2)
			continue;
		for (t = 0; t < nthreads && got[t].tid != context; t++)
			;
		assert_true(t < nthreads);
		for (; start < end; start += 4) {
			assert_true(got[t].n < 256);
			got[t].addr[got[t].n++] = start;
		}
	}
	assert_int_equal(pclose(in), 0);
}

static void test_flow_against_lister(void **state)
{
	struct jf_etm_flow f;
	struct jf_etm_snapshot_stats stats;
	struct jf_error err = { { 0 } };
	char dir[600], cmd[700];
	uint32_t id;
	size_t t, i;
	int formatted;

	(void)state;
	assert_int_equal(jf_etm_flow_init(&f), 0);
	for (id = 1; id < sizeof(blocks) / sizeof(blocks[0]); id++)
		jf_etm_flow_translation(&f, id, blocks[id].pc, bytes_at(blocks[id].pc),
					4 * blocks[id].ninsns, blocks[id].ninsns);
	/* Thread 100: the loop (taken, taken, not taken), ret to the svc. */
	run(&f, 100, 1, 0);
	run(&f, 100, 2, 0);
	run(&f, 100, 2, 0);
	run(&f, 100, 3, 0);
	run(&f, 100, 4, 0);
	jf_etm_flow_syscall(&f, 100, EXIT_SYSCALL, no_args);
	/* Thread 200 comes in (no exception: 100 is in the kernel), runs the tail and the
	 * loop's first pass; then 100 again: 200 is interrupted before its next block. */
	run(&f, 200, 5, 0);
	run(&f, 200, 1, 0);
	run(&f, 100, 5, 0);
	run(&f, 100, 1, 0);
	/* 200 is back: its pending block 1 goes on into block 2, whose b.ne is then followed
	 * by a jump to neither target (a signal's handler): its b.ne is left out. */
	run(&f, 200, 2, 1);
	run(&f, 200, 5, 0);
	run(&f, 200, 1, 0);
	/* 100 finishes its loop and ends in its svc; 200 never ends its block 1. */
	run(&f, 100, 2, 0);
	run(&f, 100, 2, 0);
	run(&f, 100, 3, 0);
	run(&f, 100, 4, 0);
	jf_etm_flow_syscall(&f, 100, EXIT_SYSCALL, no_args);
	expect[1].n -= blocks[1].ninsns; /* 200's last block: ran, never ended */
	jf_etm_flow_finish(&f);

	assert_int_equal(f.switches, 3);
	assert_int_equal(f.discontinuities, 1);
	assert_int_equal(f.unended_threads, 1);
	assert_int_equal(f.lost_instructions, 1 + blocks[1].ninsns);
	assert_int_equal(f.etm.exceptions, 2 + 3 + 1); /* svc x2, switches x3, the jump */

	/* The buffer raw, then in formatter frames (as an ETR writes it): the lister reads
	 * the same. */
	for (formatted = 0; formatted < 2; formatted++) {
		struct expected got[2] = { { .tid = 100 }, { .tid = 200 } };

		snprintf(dir, sizeof(dir), "%s/flow%s", jf_test_tmpdir(),
			 formatted ? "-formatted" : "");
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
		assert_int_equal(system(cmd), 0);
		if (jf_etm_snapshot_write(&f, dir, formatted, &stats, &err))
			fail_msg("%s", err.msg);
		/* 0x10000 and 0x20000 are 64 KiB apart: joined */
		assert_int_equal(stats.regions, 1);
		assert_int_equal(stats.conflicts, 0);
		jf_etm_snapshot_stats_free(&stats);
		lister_addresses(dir, got, 2);
		for (t = 0; t < 2; t++) {
			assert_int_equal(got[t].n, expect[t].n);
			for (i = 0; i < got[t].n; i++)
				assert_int_equal(got[t].addr[i], expect[t].addr[i]);
		}
	}
	jf_etm_flow_free(&f);
}

/* A flow of thread 100 with an IP filter (none when spec is NULL), snapshot written to
 * dir/NAME and listed. */
static void filtered_flow_start(struct jf_etm_flow *f, struct jf_rec_filter *filter,
				const char *spec)
{
	struct jf_error err;
	uint32_t id;

	if (spec)
		assert_int_equal(jf_rec_filter_parse(filter, spec, &err), 0);
	assert_int_equal(jf_etm_flow_init(f), 0);
	f->filter = spec ? filter : NULL;
	for (id = 1; id < sizeof(blocks) / sizeof(blocks[0]); id++)
		jf_etm_flow_translation(f, id, blocks[id].pc, bytes_at(blocks[id].pc),
					4 * blocks[id].ninsns, blocks[id].ninsns);
	expect[0].n = 0;
}

static void filtered_flow_check(struct jf_etm_flow *f, const char *name)
{
	struct expected got[1] = { { .tid = 100 } };
	struct jf_etm_snapshot_stats stats;
	struct jf_error err = { { 0 } };
	char dir[600], cmd[700];
	size_t i;

	jf_etm_flow_finish(f);
	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	assert_int_equal(system(cmd), 0);
	if (jf_etm_snapshot_write(f, dir, 0, &stats, &err))
		fail_msg("%s", err.msg);
	jf_etm_snapshot_stats_free(&stats);
	lister_addresses(dir, got, 1);
	assert_int_equal(got[0].n, expect[0].n);
	for (i = 0; i < got[0].n; i++)
		assert_int_equal(got[0].addr[i], expect[0].addr[i]);
}

/* Filtered to 10000-10010: the loop and its ret are traced each time block 5 (b 10000,
 * outside) enters it, until the ret goes out to the svc; what ran outside is counted in
 * `filtered`. Filtered to the mov alone: block 6 falls through out of the filter, so no
 * waypoint inside ends it and the trace shows nothing of it: its instruction is lost. */
static void test_filtered_flow(void **state)
{
	struct jf_rec_filter filter;
	struct jf_etm_flow f;
	uint32_t outside[] = { 5, 4 }, in_then_out[] = { 5, 6, 2, 3, 4 };
	int round;

	(void)state;
	filtered_flow_start(&f, &filter, "10000-10010");
	for (round = 0; round < 2; round++) {
		jf_etm_flow_execs(&f, 100, &outside[0], 1);
		run(&f, 100, 1, 0);
		run(&f, 100, 2, 0);
		run(&f, 100, 2, 0);
		run(&f, 100, 3, 0);
		jf_etm_flow_execs(&f, 100, &outside[1], 1);
		jf_etm_flow_syscall(&f, 100, EXIT_SYSCALL, no_args);
	}
	filtered_flow_check(&f, "filtered-loop");
	assert_int_equal(f.lost_instructions, 0);
	assert_int_equal(f.filtered, 2 * (blocks[5].ninsns + blocks[4].ninsns));
	jf_etm_flow_free(&f);

	filtered_flow_start(&f, &filter, "10000-10004");
	jf_etm_flow_execs(&f, 100, in_then_out, 5);
	filtered_flow_check(&f, "filtered-fallthrough");
	assert_int_equal(f.lost_instructions, blocks[6].ninsns);
	assert_int_equal(f.filtered, blocks[5].ninsns + blocks[2].ninsns + blocks[3].ninsns +
				     blocks[4].ninsns);
	assert_int_equal(f.unended_threads, 0);
	jf_etm_flow_free(&f);
}

/* A signal handler at 20004 (block 5) entered right after block 1's b.ne, which the
 * handler's block cannot say the direction of. Returned by rt_sigreturn (system call 139,
 * in block 4) to 1000c, the b.ne's fall-through: written in order, the b.ne N, the
 * interruption there, the handler, nothing lost. Not returned (the thread exits inside):
 * an Overflow, block 1's instructions lost and counted, then the rest decoded. */
static void test_signal_after_conditional_branch(void **state)
{
	struct jf_rec_filter unused;
	struct jf_etm_flow f;
	uint32_t handler_to_svc[] = { 5, 1, 2, 3, 4 };
	size_t i;

	(void)state;
	filtered_flow_start(&f, &unused, NULL);
	jf_etm_flow_sigaction(&f, 0x20004);
	run(&f, 100, 1, 0);
	for (i = 0; i < 5; i++)
		run(&f, 100, handler_to_svc[i], 0);
	jf_etm_flow_syscall(&f, 100, 139, no_args);
	run(&f, 100, 3, 0);
	run(&f, 100, 4, 0);
	jf_etm_flow_syscall(&f, 100, EXIT_SYSCALL, no_args);
	filtered_flow_check(&f, "signal-returned");
	assert_int_equal(f.handler_entries, 1);
	assert_int_equal(f.signals_resolved, 1);
	assert_int_equal(f.discontinuities, 0);
	assert_int_equal(f.lost_instructions, 0);
	assert_int_equal(f.overflows, 0);
	jf_etm_flow_free(&f);

	filtered_flow_start(&f, &unused, NULL);
	jf_etm_flow_sigaction(&f, 0x20004);
	run(&f, 100, 1, 0);
	expect[0].n -= blocks[1].ninsns; /* hidden by the Overflow */
	for (i = 0; i < 5; i++)
		run(&f, 100, handler_to_svc[i], 0);
	jf_etm_flow_syscall(&f, 100, EXIT_SYSCALL, no_args);
	filtered_flow_check(&f, "signal-not-returned");
	assert_int_equal(f.handler_entries, 1);
	assert_int_equal(f.signals_resolved, 0);
	assert_int_equal(f.overflows, 1);
	assert_int_equal(f.first_overflow_pc, blocks[1].pc);
	assert_int_equal(f.lost_instructions, blocks[1].ninsns);
	assert_int_equal(f.unended_threads, 0);
	assert_int_equal(f.etm.overflows, 1);
	jf_etm_flow_free(&f);
}

/* Translations that a damaged stream would carry: out of order, not whole instructions;
 * executions of ids never translated. Counted, and the trace stays decodable. */
static void test_damaged_records(void **state)
{
	struct jf_etm_flow f;
	uint32_t ids[] = { 1, 7, 1 };

	(void)state;
	assert_int_equal(jf_etm_flow_init(&f), 0);
	jf_etm_flow_translation(&f, 2, 0x10000, bytes_at(0x10000), 12, 3); /* skips id 1 */
	jf_etm_flow_translation(&f, 1, 0x10000, bytes_at(0x10000), 10, 3); /* 10 bytes */
	jf_etm_flow_translation(&f, 1, 0x10000, bytes_at(0x10000), 12, 3);
	jf_etm_flow_execs(&f, 5, ids, 3);
	jf_etm_flow_finish(&f);
	assert_int_equal(f.bad_translations, 2);
	assert_int_equal(f.unknown_ids, 1);
	assert_int_equal(f.blocks_executed, 2);
	assert_int_equal(f.failed, 0);
	jf_etm_flow_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flow_against_lister),
		cmocka_unit_test(test_filtered_flow),
		cmocka_unit_test(test_signal_after_conditional_branch),
		cmocka_unit_test(test_damaged_records),
	};

	jf_test_require_tools("command -v trc_pkt_lister", "trc_pkt_lister (libopencsd-bin)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
