/* Shared between the files that make up the recorder's state (record_*.c); not an API. */
#ifndef JITFLOW_RECORDER_RECORD_INTERNAL_H
#define JITFLOW_RECORDER_RECORD_INTERNAL_H

#include <stdint.h>

#include "record_state.h"

/* The plugin backend's blocks are known by (flags = the translation's id, cflags = this):
 * no QEMU cflags value has all these bits, so plugin keys never meet log keys. */
#define JF_REC_PLUGIN_KEY 0xffffffffu

/* A line for the manifest's "not_followed" list (what was not recorded, or not exactly). */
void jf_rec_note(struct jf_record_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* record_threads.c */
struct jf_record_thread *jf_rec_thread_for(struct jf_record_state *st, unsigned cpu);
void jf_rec_announce(struct jf_record_state *st, struct jf_record_thread *t);
void jf_rec_new_tid(struct jf_record_state *st, int tid);
/* Whether tid names a thread already (a clone cannot return it). */
int jf_rec_tid_in_use(const struct jf_record_state *st, int tid);
/* A thread-creating clone call was printed (before QEMU creates the thread). */
void jf_rec_clone_line(struct jf_record_state *st);
void jf_rec_thread_exit(struct jf_record_state *st, struct jf_record_thread *t);
int jf_rec_thread_finish(struct jf_record_state *st, struct jf_record_thread *t);

/* record_flow.c: the log's blocks and signals */
void jf_rec_on_exec(void *ctx, const struct jf_qlog_exec *e);
/* The same with the block already known (b: what ran, NULL when its bytes are unknown). */
void jf_rec_exec_block(struct jf_record_state *st, const struct jf_qlog_exec *e,
		       const struct jf_block *b);
void jf_rec_on_stopped(void *ctx, uint64_t pc);
void jf_rec_on_translation(void *ctx, uint64_t pc, const uint8_t *bytes, size_t size);
void jf_rec_on_signal(void *ctx, const char *name);
/* A thread waiting for its signal handler to return: resolved (resume = where it
 * returned) or given up (an OVF). */
void jf_rec_replay_deferred(struct jf_record_state *st, struct jf_record_thread *t,
			    uint64_t resume, int resolved);

/* Whether the block after b is unknown until something else says (conditional and
 * indirect branches, returns). */
int jf_rec_unknown_successor(const struct jf_block *b);

/* record_signals.c: signals known exactly (plugin backend) */
/* rt_sigaction installed handler (0, 1: SIG_DFL, SIG_IGN) for signum. */
void jf_rec_sigaction(struct jf_record_state *st, unsigned signum, uint64_t handler);
/* Whether the block at pc cannot follow prev by prev's own exit. */
int jf_rec_cannot_follow(const struct jf_block *prev, uint64_t pc);
/* Before thread t's block at pc runs: a handler's entry (a delivery), the resumption
 * after rt_sigreturn (t->sigreturned), or neither. */
void jf_rec_exact_signal(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc);

/* record_syscalls.c: the log's strace lines, and what they (or the plugin's system call
 * records, record_plugin.c) say */
void jf_rec_on_syscall(void *ctx, const char *name, const char *args);
void jf_rec_on_syscall_result(void *ctx, const char *result);
void jf_rec_file_opened(struct jf_record_state *st, long fd, const char *path);
void jf_rec_file_closed(struct jf_record_state *st, long fd);
/* An mmap that returned addr: an MMAP2 record when it maps a known file executable. */
void jf_rec_mmap(struct jf_record_state *st, uint64_t addr, uint64_t len, uint32_t prot,
		 uint32_t flags, long fd, uint64_t pgoff);
/* An mprotect of [addr, addr+len) to prot that succeeded. */
void jf_rec_mprotect(struct jf_record_state *st, uint64_t addr, uint64_t len, uint32_t prot);
/* A write of `written` bytes into fd, ending at file offset `end` (-1: the file's end). */
void jf_rec_file_written(struct jf_record_state *st, long fd, long long written, long long end);
/* fork/vfork/clone of a process by thread t (NULL: unknown), which is not followed. */
void jf_rec_process_forked(struct jf_record_state *st, struct jf_record_thread *t,
			   const char *call);

/* record_layout.c */
void jf_rec_map_image(struct jf_record_state *st, const struct jf_program_image *img,
		      const char *path, uint64_t base, uint64_t clock);
void jf_rec_follow_loader(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc);

#endif
