/* Reading PyPy's JIT log (PYPYLOG): the sections that describe machine code.
 *
 *     PYPYLOG=jit-backend-dump,jit-backend-addr,jit-log-opt,jit-backend-counts:FILE pypy3 x.py
 *
 * A log is a sequence of sections, "[TSC] {name" ... "[TSC] name}", possibly nested and
 * interleaved with sections this reader does not know (skipped, counted). Read here:
 *
 *   jit-backend-dump   "CODE_DUMP @ADDR +OFFSET HEX": bytes the assembler wrote at
 *                      ADDR+OFFSET (whole loops, bridges and helpers, and later patches);
 *   jit-backend-addr   "Loop N (NAME) has address A to B (bootstrap C)" or
 *                      "bridge out of Guard 0xD has address A to B", then indented
 *                      "gc table:", "function:", "jump target:", "resops:", "failures:",
 *                      "end:" lines;
 *   jit-log-opt-loop / jit-log-opt-bridge
 *                      the optimized trace: "# Loop N (NAME) : loop with K ops" or
 *                      "# bridge out of Guard 0xD with K ops", then one resop a line
 *                      ("+OFF: i3 = int_add(i1, i2)", "+OFF: guard_true(i4,
 *                      descr=<Guard0xD>) [...]", "label(..., descr=TargetToken(T))",
 *                      "debug_merge_point(DEPTH, N, 'CODE~#INDEX OPNAME')");
 *   jit-backend-counts "entry N:COUNT", "TargetToken(T):COUNT", "bridge B:COUNT" (B is a
 *                      guard descr in decimal), written at exit.
 *
 * and the timed sections of the VM's own work, as phase marks (jitflow/pypylog_phases.h
 * says which section is which phase): each opening and closing stamp of jit-tracing,
 * jit-optimize*, jit-backend, jit-blackhole, gc-minor*, gc-collect*, and the iteration
 * marks a program logs with jitflow's Python module ("{jitflow-iteration", then the
 * iteration's index on a line of its own).
 *
 * Whatever cannot be read (a garbled line, odd hex, a section cut short by the end of the
 * file) is reported as a problem naming the file and line, counted, and skipped; reading
 * carries on with the next line. Only running out of memory or an unreadable file fails.
 * Memory grows with the code and ops in the log. */
#ifndef JITFLOW_PYPYLOG_H
#define JITFLOW_PYPYLOG_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes written at addr: one CODE_DUMP line (contiguous lines of one section merged). */
struct jf_pypylog_dump {
	uint64_t tsc;          /* the section's opening stamp */
	uint32_t line;         /* of the first CODE_DUMP line */
	uint64_t addr;
	size_t size;
	const uint8_t *bytes;  /* valid until jf_pypylog_free */
};

enum jf_pypylog_trace_kind { JF_PYPY_LOOP = 1, JF_PYPY_BRIDGE = 2 };

/* A loop or bridge named by jit-backend-addr (and, when logged, its ops). */
struct jf_pypylog_trace {
	enum jf_pypylog_trace_kind kind;
	uint64_t number;       /* loops: N of "Loop N" */
	uint64_t guard;        /* bridges: the descr of the guard it hangs off */
	const char *name;      /* loops: "run;/tmp/x.py:5-8~#24 FOR_ITER"; bridges: "" */
	uint64_t start, end;   /* "has address START to END" */
	uint64_t gc_table, entry, resops, failures, code_end; /* 0 when not logged; entry is
	                        * "function:" (loops) or "jump target:" (bridges) */
	uint64_t tsc;
	uint32_t line;
	size_t first_op, nops; /* its ops in jf_pypylog.ops (nops 0: no jit-log-opt seen) */
};

enum jf_pypylog_op_kind {
	JF_PYPY_OP_OTHER = 0,
	JF_PYPY_OP_GUARD,      /* descr = guard descr (the "Guard0x..." value) */
	JF_PYPY_OP_LABEL,      /* descr = TargetToken id */
	JF_PYPY_OP_JUMP,       /* descr = TargetToken jumped to (0 if none) */
	JF_PYPY_OP_MERGE_POINT,
	JF_PYPY_OP_END,        /* "+OFF: --end of the loop--" */
};

struct jf_pypylog_op {
	uint32_t line;
	uint8_t kind;          /* enum jf_pypylog_op_kind */
	int has_offset;
	uint32_t offset;       /* "+OFF:" */
	const char *name;      /* "guard_class", "int_add", "debug_merge_point" */
	uint64_t descr;
	/* debug_merge_point only: */
	uint32_t depth;        /* inline depth (first argument) */
	const char *code;      /* "run;/tmp/x.py:5-8" (the code object and its lines) */
	uint32_t bytecode;     /* "#24" */
	const char *bytecode_name; /* "FOR_ITER" */
};

enum jf_pypylog_count_kind {
	JF_PYPY_COUNT_ENTRY = 'e',  /* entry N: loop N entered */
	JF_PYPY_COUNT_LABEL = 'l',  /* TargetToken(T): label passed */
	JF_PYPY_COUNT_BRIDGE = 'b', /* bridge B: bridge out of guard B entered */
};

struct jf_pypylog_count {
	uint8_t kind;          /* enum jf_pypylog_count_kind */
	uint64_t id;           /* N, T or B as written */
	uint64_t count;
	uint32_t line;
};

enum jf_pypylog_mark_kind {
	JF_PYPY_MARK_PHASE_BEGIN = 1, /* a timed section opens: phase = enum jf_vm_phase */
	JF_PYPY_MARK_PHASE_END = 2,   /* ... and closes */
	JF_PYPY_MARK_ITERATION = 3,   /* the program marked an iteration: arg = its index */
};

/* A stamp of the log that is an event, not code: in log order (which is stamp order on
 * each thread). A section cut short by the end of the log has a begin and no end. */
struct jf_pypylog_mark {
	uint64_t tsc;
	uint64_t arg;          /* iterations: the index the program gave */
	uint32_t line;
	uint8_t kind;          /* enum jf_pypylog_mark_kind */
	uint8_t phase;         /* enum jf_vm_phase (phase marks) */
};

enum { JF_PYPYLOG_PROBLEMS_KEPT = 16 };

struct jf_pypylog {
	char *path;
	struct jf_pypylog_dump *dumps;     size_t ndumps;
	struct jf_pypylog_trace *traces;   size_t ntraces;
	struct jf_pypylog_op *ops;         size_t nops;
	struct jf_pypylog_count *counts;   size_t ncounts;
	struct jf_pypylog_mark *marks;     size_t nmarks;
	uint64_t lines, sections, unknown_sections;
	int has_counts;                    /* a jit-backend-counts section was read */
	/* The machine code's instruction set (enum jf_isa), from the dumps' "BACKEND NAME":
	 * x86_64, or arm (PyPy's AArch64 backend names itself so, as its ARMv7 one does; the
	 * ARMv7 code is not read). JF_ISA_X86_64 where no dump names one. */
	uint8_t isa;
	/* Lines that could not be read: how many, and the first few messages
	 * ("FILE:LINE: expected ..."). */
	uint64_t problems;
	char problem[JF_PYPYLOG_PROBLEMS_KEPT][192];
	uint64_t unclosed;                 /* sections still open at the end (cut short) */
	/* storage (internal) */
	void *pool;
};

/* Read FILE. Returns 0 (problems counted in the result) or -1 with err (I/O, memory). */
int jf_pypylog_read(struct jf_pypylog **out, const char *path, struct jf_error *err);
/* The same from memory; name is used in messages. */
int jf_pypylog_parse(struct jf_pypylog **out, const char *data, size_t size, const char *name,
		     struct jf_error *err);
void jf_pypylog_free(struct jf_pypylog *log);

/* The trace a bridge or loop is: by loop number / guard descr; NULL if not in the log. */
const struct jf_pypylog_trace *jf_pypylog_loop(const struct jf_pypylog *log, uint64_t number);
const struct jf_pypylog_trace *jf_pypylog_bridge(const struct jf_pypylog *log, uint64_t guard);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
