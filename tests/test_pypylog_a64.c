/* PyPy's AArch64 backend in the PYPYLOG reader and the layout (jitflow/pypylog_layout.h),
 * on a real log: tests/data/pypy/loop_a64.pypylog is Debian's pypy3:arm64 7.3.11 running
 * tests/data/pypy/loop.py (copied to /tmp/pypy-a64) under `jitflow record --filter=jit`
 * (qemu-aarch64). The layout is found by disassembling the dumps; what it must agree with
 * are PyPy's own later writes, which the layout does not read:
 *   - every guard's branch is assembled as a BRK and then rewritten by PyPy into the b.cond
 *     to its stub (a 4-byte dump after the trace's load, before its addresses are logged),
 *     and every such rewrite is one guard's branch: guard_nonnull_class has two (its null
 *     test, then its class test), guard_not_invalidated none (a NOP PyPy overwrites only
 *     when it invalidates the loop);
 *   - the bridge is attached by rewriting its guard's failure stub (a 20-byte "movz/movk
 *     x16, BRIDGE; blr x16" dump once the bridge's addresses are logged): exactly at the
 *     stub the layout gives the guard the bridge hangs off.
 * Counters: this PyPy emits them (PYPYLOG has jit-backend-counts) but never prints them,
 * so the log has no counts; the loop has its entry counter and one for each of its two
 * labels, the bridge one, as in the x86-64 log of the same program (loop.pypylog). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/flow.h"
#include "jitflow/pypylog.h"
#include "jitflow/pypylog_layout.h"
#include "test_support.h"

static char *text;
static size_t size;
static struct jf_pypylog *log_a64;
static struct jf_pypylog_layout *lay;

static int setup(void **state)
{
	char path[4096];
	struct jf_error err;

	(void)state;
	snprintf(path, sizeof(path), "%s/tests/data/pypy/loop_a64.pypylog", jf_test_source_dir());
	text = jf_test_read_file(path, &size);
	if (!text || jf_pypylog_parse(&log_a64, text, size, "loop_a64.pypylog", &err) < 0 ||
	    jf_pypylog_layout(log_a64, &lay, &err) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	jf_pypylog_layout_free(lay);
	jf_pypylog_free(log_a64);
	free(text);
	return 0;
}

static void log_is_read_as_aarch64(void **state)
{
	(void)state;
	assert_int_equal(log_a64->problems, 0);
	assert_int_equal(log_a64->isa, JF_ISA_A64);
	assert_int_equal(log_a64->ntraces, 2);
	assert_int_equal(log_a64->has_counts, 0);
	assert_int_equal(lay->problems, 0);
	assert_int_equal(lay->traces_done, 2);
}

/* PyPy rewrites the BRK at each guard's branch before it logs the trace's addresses (after
 * them it only patches the frame depth: a movz at the bridge's first instruction). */
static int is_guard_fixup(size_t ti, uint64_t addr)
{
	const struct jf_pypylog_trace *t = &log_a64->traces[ti];
	size_t i;

	for (i = 0; i < log_a64->ndumps; i++) {
		const struct jf_pypylog_dump *d = &log_a64->dumps[i];

		if (d->size == 4 && d->addr == addr && d->line < t->line && d->addr >= t->entry &&
		    d->addr < t->failures)
			return 1;
	}
	return 0;
}

static size_t guard_fixups(size_t ti)
{
	const struct jf_pypylog_trace *t = &log_a64->traces[ti];
	size_t i, n = 0;

	for (i = 0; i < log_a64->ndumps; i++) {
		const struct jf_pypylog_dump *d = &log_a64->dumps[i];

		n += d->size == 4 && d->line < t->line && d->addr >= t->entry &&
		     d->addr < t->failures;
	}
	return n;
}

static void every_branch_is_one_of_pypys_fixups(void **state)
{
	size_t ti, i, branches[2] = { 0, 0 }, nonnull_class = 0;

	(void)state;
	for (i = 0; i < lay->nguards; i++) {
		const struct jf_pypylog_guard_site *g = &lay->guards[i];
		const struct jf_pypylog_trace *t = &log_a64->traces[g->trace];

		assert_true(g->stub >= t->failures && g->stub < t->code_end);
		if (!strcmp(g->op->name, "guard_not_invalidated")) {
			assert_int_equal(g->branch, 0);
			continue;
		}
		assert_true(is_guard_fixup(g->trace, g->branch));
		branches[g->trace]++;
		if (!strcmp(g->op->name, "guard_nonnull_class")) {
			assert_true(is_guard_fixup(g->trace, g->extra_branch));
			assert_true(g->extra_branch < g->branch);
			branches[g->trace]++;
			nonnull_class++;
		} else {
			assert_int_equal(g->extra_branch, 0);
		}
	}
	assert_int_equal(nonnull_class, 2);
	for (ti = 0; ti < 2; ti++)
		assert_int_equal(branches[ti], guard_fixups(ti));
	assert_int_equal(branches[0], 24); /* the loop's 4-byte dumps, counted with grep */
}

static void bridge_attaches_at_its_guards_stub(void **state)
{
	const struct jf_pypylog_trace *bridge = &log_a64->traces[1], *loop = &log_a64->traces[0];
	const struct jf_pypylog_guard_site *g = NULL;
	size_t i, attached = 0;

	(void)state;
	assert_int_equal(bridge->kind, JF_PYPY_BRIDGE);
	for (i = 0; i < lay->nguards; i++)
		if (lay->guards[i].descr == bridge->guard)
			g = &lay->guards[i];
	assert_non_null(g);
	assert_int_equal(g->trace, 0);
	assert_string_equal(g->op->name, "guard_true");
	for (i = 0; i < log_a64->ndumps; i++) {
		const struct jf_pypylog_dump *d = &log_a64->dumps[i];

		if (d->line > bridge->line && d->addr >= loop->failures && d->addr < loop->code_end) {
			assert_int_equal(d->addr, g->stub);
			assert_int_equal(d->size, 20);
			attached++;
		}
	}
	assert_int_equal(attached, 1);
}

static void counters_like_the_x86_log(void **state)
{
	size_t i, entries = 0, labels = 0, bridges = 0;

	(void)state;
	for (i = 0; i < lay->npoints; i++) {
		const struct jf_pypylog_point *p = &lay->points[i];
		const struct jf_pypylog_trace *t = &log_a64->traces[p->trace];

		assert_true(p->addr >= t->entry && p->addr < t->failures);
		entries += p->kind == JF_PYPY_COUNT_ENTRY && p->id == 1;
		labels += p->kind == JF_PYPY_COUNT_LABEL;
		bridges += p->kind == JF_PYPY_COUNT_BRIDGE && p->id == log_a64->traces[1].guard;
	}
	assert_int_equal(lay->npoints, 4);
	assert_int_equal(entries, 1);
	assert_int_equal(labels, 2);
	assert_int_equal(bridges, 1);
}

/* A BACKEND line jitflow cannot read, or one that contradicts the log's earlier dumps, is a
 * located problem; the log is read on with the first instruction set. */
static void unknown_or_mixed_backends_are_located(void **state)
{
	static const char text_[] =
		"[1] {jit-backend-dump\nBACKEND arm\nCODE_DUMP @1000 +0  1F2003D5\n[2] jit-backend-dump}\n"
		"[3] {jit-backend-dump\nBACKEND x86_64\nCODE_DUMP @1004 +0  90\n[4] jit-backend-dump}\n"
		"[5] {jit-backend-dump\nBACKEND ppc\nCODE_DUMP @1008 +0  90\n[6] jit-backend-dump}\n";
	struct jf_pypylog *log;
	struct jf_error err;

	(void)state;
	assert_int_equal(jf_pypylog_parse(&log, text_, sizeof(text_) - 1, "mixed.log", &err), 0);
	assert_int_equal(log->isa, JF_ISA_A64);
	assert_int_equal(log->ndumps, 3);
	assert_int_equal(log->problems, 2);
	assert_non_null(strstr(log->problem[0], "mixed.log:6: BACKEND: another instruction set"));
	assert_non_null(strstr(log->problem[1], "mixed.log:10: BACKEND: expected x86_64 or arm"));
	jf_pypylog_free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(log_is_read_as_aarch64),
		cmocka_unit_test(every_branch_is_one_of_pypys_fixups),
		cmocka_unit_test(bridge_attaches_at_its_guards_stub),
		cmocka_unit_test(counters_like_the_x86_log),
		cmocka_unit_test(unknown_or_mixed_backends_are_located),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, setup, teardown));
}
