/* Parser for the log that `qemu-x86_64 -d in_asm,exec,nochain,strace` writes.
 *
 * QEMU 7.2 prints, interleaved in one stream:
 *   - translations:  "IN: symbol" then one line per guest instruction,
 *                    "0x004014f0:  31 ed                    xorl     %ebp, %ebp"
 *                    (instructions longer than 8 bytes continue on a line holding only
 *                    the address and the remaining bytes), ended by an empty line;
 *   - executions:    "Trace 0: 0x7fde00000100 [cs_base/pc/flags/cflags] symbol", one per
 *                    executed translation block (every one, because of nochain); the number
 *                    after "Trace" is the emulated CPU, i.e. the guest thread;
 *   - system calls:  "1234 openat(-100,\"/x\",O_RDONLY) = 3", whose " = result" part may
 *                    arrive on a later line when another thread logs in between;
 *   - signals:       "--- SIGUSR1 {si_signo=SIGUSR1, ...} ---";
 *   - a logged block that did not run after all:
 *                    "Stopped execution of TB chain before 0x7f.. [0000000000460c92] sym".
 * Lines from different threads can be glued together ("...)Trace 1: ..."), so an exec
 * record is recognised anywhere in a line.
 *
 * The parser is fed one line at a time and reports what it recognised through callbacks;
 * it keeps only the translation being collected, never the log. */
#ifndef JITFLOW_RECORDER_QEMU_LOG_H
#define JITFLOW_RECORDER_QEMU_LOG_H

#include <stddef.h>
#include <stdint.h>

struct jf_qlog_exec {
	unsigned cpu;      /* QEMU's CPU index: one per guest thread */
	uint64_t pc;       /* guest address of the block */
	uint32_t flags;    /* the block's hflags ... */
	uint32_t cflags;   /* ... and compile flags: with pc they identify the translation */
};

struct jf_qlog_callbacks {
	void *ctx;
	/* A translation block's guest bytes (as translated), starting at pc. */
	void (*translation)(void *ctx, uint64_t pc, const uint8_t *bytes, size_t size);
	void (*exec)(void *ctx, const struct jf_qlog_exec *exec);
	/* "Stopped execution of TB chain before HOST [PC] sym": the block at pc was logged
	 * but did not run (an exit request, e.g. a signal, came first); it runs later. */
	void (*stopped)(void *ctx, uint64_t pc);
	/* A system call as strace shows it: name and the raw argument text (no parentheses). */
	void (*syscall)(void *ctx, const char *name, const char *args);
	/* The result of the last system call printed (text after " = "). */
	void (*syscall_result)(void *ctx, const char *result);
	void (*signal)(void *ctx, const char *name);
	/* A line the parser could not make sense of (counted and reported, never fatal). */
	void (*garbage)(void *ctx, const char *line);
};

enum { JF_QLOG_MAX_TRANSLATION = 1 << 16 };

struct jf_qlog_parser {
	struct jf_qlog_callbacks cb;
	int in_translation;       /* between "IN:" and the empty line */
	uint64_t tb_pc;           /* first address of the translation */
	uint64_t tb_next;         /* address the next byte belongs to */
	size_t tb_size;
	uint8_t tb_bytes[JF_QLOG_MAX_TRANSLATION];
	uint64_t lines, garbage_lines;
};

void jf_qlog_init(struct jf_qlog_parser *p, const struct jf_qlog_callbacks *cb);
/* One line without its newline; line[len] need not be NUL. */
void jf_qlog_line(struct jf_qlog_parser *p, const char *line, size_t len);
/* End of the log: a translation still being collected is delivered. */
void jf_qlog_finish(struct jf_qlog_parser *p);

#endif
