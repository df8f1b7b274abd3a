/* Shared between the files that make up the recorder's state (record_*.c); not an API. */
#ifndef JITFLOW_RECORDER_RECORD_INTERNAL_H
#define JITFLOW_RECORDER_RECORD_INTERNAL_H

#include <stdint.h>

#include "record_state.h"

/* A line for the manifest's "not_followed" list (what was not recorded, or not exactly). */
void jf_rec_note(struct jf_record_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* record_threads.c */
struct jf_record_thread *jf_rec_thread_for(struct jf_record_state *st, unsigned cpu);
void jf_rec_announce(struct jf_record_state *st, struct jf_record_thread *t);
void jf_rec_new_tid(struct jf_record_state *st, int tid);
/* A thread-creating clone call was printed (before QEMU creates the thread). */
void jf_rec_clone_line(struct jf_record_state *st);
void jf_rec_thread_exit(struct jf_record_state *st, struct jf_record_thread *t);
int jf_rec_thread_finish(struct jf_record_state *st, struct jf_record_thread *t);

/* record_flow.c: the log's blocks and signals */
void jf_rec_on_exec(void *ctx, const struct jf_qlog_exec *e);
void jf_rec_on_stopped(void *ctx, uint64_t pc);
void jf_rec_on_translation(void *ctx, uint64_t pc, const uint8_t *bytes, size_t size);
void jf_rec_on_signal(void *ctx, const char *name);
/* A thread waiting for its signal handler to return: resolved (resume = where it
 * returned) or given up (an OVF). */
void jf_rec_replay_deferred(struct jf_record_state *st, struct jf_record_thread *t,
			    uint64_t resume, int resolved);

/* record_syscalls.c */
void jf_rec_on_syscall(void *ctx, const char *name, const char *args);
void jf_rec_on_syscall_result(void *ctx, const char *result);

/* record_layout.c */
void jf_rec_map_image(struct jf_record_state *st, const struct jf_program_image *img,
		      const char *path, uint64_t base, uint64_t clock);
void jf_rec_follow_loader(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc);

#endif
