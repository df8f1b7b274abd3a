/* The AArch64 recorder's state: QEMU's translations and each thread's executed blocks in,
 * one ETMv4 instruction trace stream (etm_stream.h) out, as one core that runs the
 * program's threads in turn and traces EL0 only would write it.
 *
 * Consecutive blocks of a thread give each waypoint's outcome: a direct branch E, a
 * conditional branch E or N, an indirect branch E and its target's address. A system call
 * (SVC) is an exception (type Call) whose preferred return address follows; the kernel is
 * not traced, so the thread's next block comes after Trace On with an Address with
 * Context. Going from one thread to another is an IRQ exception taken before the first
 * instruction of the block the thread runs next (it runs that block when it is back, after
 * Trace On and an Address with Context naming it). A block that cannot follow the one
 * before (a signal's handler entered between two blocks) is an IRQ at the address where
 * the thread was; when that address is not known (after a conditional or indirect branch,
 * whose outcome the next block does not show) the branch instruction is left out and
 * counted (`lost_instructions`).
 *
 * With an IP filter (record_filter.h, as ETM's address range comparators select ViewInst
 * ranges) only blocks that start inside it are traced: the branch that leaves writes its
 * atom and the trace stops there (no address after an indirect branch); the first block
 * back inside comes after Trace On and an Address with Context. A block that leaves the
 * filter by falling through ends after no waypoint the trace could show: its instructions,
 * and those since the waypoint before, are counted in `lost_instructions`. Blocks outside are counted in `filtered`. For
 * `--filter=jit`, the anonymous executable memory a thread maps (mmap, mprotect) joins the
 * filter when the system call returns.
 *
 * Time is the PT recorder's synthetic clock (one instruction a nanosecond, pt_stream.h),
 * counted in the trace's order: a thread's block that ran before the core went to another
 * thread is in the trace (and on the clock) when the thread is back. A Timestamp packet
 * follows every Address with Context that enters a thread or follows an A-Sync, every
 * Exception (the thread's own time stops there) and the trace's end: its value is the
 * number of instructions the trace shows before it (plus the clock's base). */
#ifndef JITFLOW_RECORDER_ETM_FLOW_H
#define JITFLOW_RECORDER_ETM_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "block_map_a64.h"
#include "etm_stream.h"
#include "plugin_stream.h"
#include "record_filter.h"
#include "record_jitcode.h"

struct jf_etm_thread {
	int32_t tid;
	int has_pending;        /* a block that ran, whose exit the trace has not shown yet */
	uint32_t pending;       /* its translation id */
	int ran;                /* it ran a block: first_time is set */
	uint64_t first_time;    /* when its first block began (perf time, ns) */
	uint64_t last_time;     /* when its last block in the trace ended */
	uint64_t unended;       /* instructions the trace showed since its last waypoint */
	uint64_t traced;        /* its instructions in the trace so far (its position) */
	int64_t call;           /* the system call it is in (-1: none) and its arguments */
	uint64_t call_args[6];
	uint32_t last;          /* the block it ran last (0: none) */
	/* A signal delivered right after a conditional or indirect branch (the pending
	 * block's): where the branch went shows only when the handler's rt_sigreturn
	 * resumes the thread. Until then its blocks are held here (etm_flow.c). */
	int deferring;
	int sigreturned;        /* made rt_sigreturn: its next block is where it resumes */
	unsigned handler_depth; /* handlers nested in the held stretch */
	uint32_t *held;
	size_t nheld, held_cap;
};

/* Signal handlers the program installed (rt_sigaction); more are counted, not followed. */
enum { JF_ETM_MAX_HANDLERS = 64 };

/* One translation's guest bytes, kept for the memory image. */
struct jf_etm_code {
	uint64_t pc;
	size_t offset, size;    /* in jf_etm_flow.bytes */
};

struct jf_etm_flow {
	csh cs;
	struct jf_a64_block *blocks;   /* by translation id (0 unused) */
	uint8_t *known;                /* whether that id was translated */
	size_t nblocks;
	uint32_t last_id;              /* the last translation's */
	struct jf_etm_code *code;
	size_t ncode, code_cap;
	uint8_t *bytes;
	size_t nbytes, bytes_cap;
	struct jf_etm_thread *threads;
	size_t nthreads, threads_cap;
	struct jf_etm_thread *current;  /* the thread the trace is in; NULL: none (the core is
	                                 * at EL1, or nothing ran yet) */
	struct jf_etm_stream etm;
	uint64_t first_pc;
	/* Counts for the recording's summary. */
	uint64_t instructions;          /* every executed block's instructions */
	uint64_t untraced;              /* of those, the instructions of blocks the trace shows
	                                 * later (threads' pending blocks) */
	uint64_t blocks_executed, syscalls, switches;
	uint64_t bad_translations;      /* out of order, or not whole instructions: dropped */
	uint64_t unknown_ids;           /* executions of a translation never seen (dropped) */
	uint64_t discontinuities;       /* blocks that could not follow the one before, not
	                                 * at a signal handler */
	uint64_t handler_entries;       /* signal deliveries into an installed handler */
	uint64_t signals_resolved;      /* of those after a conditional or indirect branch:
	                                 * placed where rt_sigreturn resumed the thread */
	uint64_t target_never_ran;      /* not returned, after an indirect branch: the
	                                 * branch is written as leaving the trace */
	uint64_t overflows;             /* not returned, after a conditional branch: an
	                                 * Overflow packet (its instructions in
	                                 * lost_instructions) */
	uint64_t hidden;                /* the instructions Overflows hid */
	uint64_t first_overflow_offset; /* where the first one is in the trace buffer */
	uint64_t first_overflow_pc;     /* the interrupted block's address */
	uint64_t handler_set[JF_ETM_MAX_HANDLERS];
	unsigned nhandlers;
	uint64_t handlers_dropped;
	uint64_t lost_instructions;     /* ran, but not in the trace (see above) */
	uint64_t unended_threads;       /* threads whose last block's end was never seen */
	uint64_t filtered;              /* ran outside the IP filter */
	struct jf_rec_filter *filter;   /* NULL: everything is traced (not owned) */
	/* Anonymous executable memory's blocks as they first ran with new bytes
	 * (record_jitcode.h: jit-code.txt, which places a PyPy log's code writes); NULL: not
	 * followed (not owned). */
	struct jf_rec_jitcode *jitcode;
	uint64_t jitcode_dropped;       /* such mappings beyond what it follows */
	int failed;                     /* out of memory */
};

int jf_etm_flow_init(struct jf_etm_flow *f);
void jf_etm_flow_free(struct jf_etm_flow *f);

/* A translation (id from 1, as the plugin numbers them) of ninsns instructions at pc. */
void jf_etm_flow_translation(struct jf_etm_flow *f, uint32_t id, uint64_t pc,
			     const uint8_t *bytes, size_t nbytes, uint32_t ninsns);
/* Blocks thread tid executed, in order. */
void jf_etm_flow_execs(struct jf_etm_flow *f, int32_t tid, const uint32_t *ids, size_t n);
/* Thread tid made system call num (args: its six arguments): its last block ended with
 * the SVC. */
void jf_etm_flow_syscall(struct jf_etm_flow *f, int32_t tid, int64_t num,
			 const uint64_t args[6]);
/* rt_sigaction installed handler (its address; SIG_DFL and SIG_IGN are ignored). */
void jf_etm_flow_sigaction(struct jf_etm_flow *f, uint64_t handler);
/* The system call of thread tid returned ret. */
void jf_etm_flow_syscall_ret(struct jf_etm_flow *f, int32_t tid, int64_t num, int64_t ret);
/* The plugin stream reader's callbacks that apply its records to f (hello records are not
 * needed). */
void jf_etm_flow_callbacks(struct jf_etm_flow *f, struct jf_prec_callbacks *cb);
/* End of the program: what every thread still holds, and the atoms still buffered. */
void jf_etm_flow_finish(struct jf_etm_flow *f);

#endif
