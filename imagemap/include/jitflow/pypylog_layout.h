/* Where PyPy's guards and counters are in its machine code, found from the code itself.
 *
 * The "+N:" offsets of jit-log-opt do not land on a guard's branch (guards are fused with
 * the comparison before them; some ops emit no code), so they are not used. Instead, for
 * every loop and bridge of a log (jitflow/pypylog.h), its bytes as the assembler left them
 * (the dump that loaded it plus the fix-ups written before its ops or the next trace were
 * logged; not the "jmp stub" PyPy writes later over the code after an invalidated
 * guard_not_invalidated) are disassembled with capstone:
 *
 *   - the failure-recovery stubs in [failures, end) each begin with "push [rip+X]": the
 *     guard's descr from its gc table slot; descrs enter the gc table in the order of the
 *     guard ops, so ordered by slot the stubs are in guard order (themselves they are
 *     mostly, not always, in that order: those reached from out-of-line paths come last);
 *     guard_not_forced_2 has none (a forced frame resumes from the descr it stored);
 *   - a guard's branch is the conditional jump into its stub, from the trace's code or
 *     from its out-of-line paths after "failures" (guard_not_invalidated and
 *     guard_not_forced have none: they leave another way);
 *   - with jit-backend-counts on, each counter is "movabs r11, COUNTER; inc qword [r11]":
 *     the first one in a loop counts its entries ("entry N"), in a bridge its entries
 *     ("bridge B"), and each later one a label ("TargetToken(T)"), in the order of the label
 *     ops.
 *
 * PyPy's AArch64 backend (the log's "BACKEND arm"; capstone's AArch64 mode) has the same
 * layout in other instructions: a stub begins "ldr x16, SLOT; str x16, [x29, #16]" (the
 * descr from its gc table slot, a PC-relative literal load, into the frame); a guard's
 * branch is a b.cond, cbz/cbnz or tbz/tbnz into its stub, and guard_nonnull_class has two
 * (the null test, then the class test); a counter is "movz/movk xN, COUNTER; ldr xM, [xN];
 * add xM, xM, #1; str xM, [xN]", placed at its movz. PyPy 7.3.11's AArch64 backend
 * emits the counters but never prints them (no jit-backend-counts section: its CPU class
 * does not pass finish_once on to the assembler), so they count from the trace alone. A
 * bridge is attached by rewriting its guard's stub, not the branch.
 *
 * A trace whose stubs or counters do not match its ops in number gets no guards or points
 * and is counted as a problem (never paired by guesswork). */
#ifndef JITFLOW_PYPYLOG_LAYOUT_H
#define JITFLOW_PYPYLOG_LAYOUT_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"
#include "jitflow/pypylog.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_pypylog_guard_site {
	size_t trace;          /* index into log->traces */
	const struct jf_pypylog_op *op;
	uint64_t descr;        /* the guard's descr: its id (bridges hang off it) */
	uint64_t stub;         /* its failure-recovery stub; 0 if none (guard_not_forced_2) */
	uint64_t branch;       /* the conditional jump into the stub; 0 if none */
	uint64_t extra_branch; /* a second one before it (AArch64's guard_nonnull_class tests
	                        * for null first); 0 if none */
};

/* A counter of jit-backend-counts: passing addr counts once. */
struct jf_pypylog_point {
	size_t trace;
	uint8_t kind;          /* enum jf_pypylog_count_kind */
	uint64_t id;           /* loop number, TargetToken or guard descr, as in the counts */
	uint64_t addr;         /* the counter's first instruction */
};

struct jf_pypylog_layout {
	struct jf_pypylog_guard_site *guards; size_t nguards;
	struct jf_pypylog_point *points;      size_t npoints;
	uint64_t traces_done;  /* traces whose guards (and points, when counted) were found */
	uint64_t problems;     /* traces skipped; the first messages kept */
	char problem[8][192];
};

int jf_pypylog_layout(const struct jf_pypylog *log, struct jf_pypylog_layout **out,
		      struct jf_error *err);
void jf_pypylog_layout_free(struct jf_pypylog_layout *layout);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
