/* The recorder's state: creation, the log callbacks, the start and the end of a recording
 * (see record_state.h; the work is in record_threads.c, record_flow.c, record_syscalls.c,
 * record_layout.c and record_zones.c). */
#include "record_internal.h"
#include "record_code_changes.h"
#include "record_clock.h"
#include "record_jitcode.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jf_rec_note(struct jf_record_state *st, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (st->nnotes >= JF_RECORD_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	st->notes[st->nnotes++] = strdup(buf);
}

struct jf_record_state *jf_record_state_new(const char *program, int timing,
					    struct jf_error *err)
{
	struct jf_record_state *st = calloc(1, sizeof(*st));

	if (!st) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	snprintf(st->program, sizeof(st->program), "%s", program);
	st->timing = timing;
	if (jf_program_image_load(&st->image, program, err)) {
		free(st);
		return NULL;
	}
	st->blocks = jf_block_map_new();
	if (!st->blocks) {
		jf_fail(err, "out of memory");
		free(st);
		return NULL;
	}
	return st;
}

void jf_record_state_free(struct jf_record_state *st)
{
	unsigned i;

	if (!st)
		return;
	for (i = 0; i < st->nthreads; i++) {
		if (st->threads[i]->pt) { /* only after a failure */
			jf_pt_stream_finish(st->threads[i]->pt);
			free(st->threads[i]->pt);
		}
		free(st->threads[i]->marker_times);
		free(st->threads[i]->deferred);
		free(st->threads[i]);
	}
	free(st->threads);
	free(st->by_cpu);
	free(st->filter);

	for (i = 0; i < JF_RECORD_MAX_FDS; i++)
		free(st->fd_paths[i]);
	for (i = 0; i < st->nzone_files; i++)
		free(st->zone_files[i]);
	for (i = 0; i < st->nzone_writes; i++) {
		free(st->zone_writes[i].path);
		free(st->zone_writes[i].ends);
		free(st->zone_writes[i].times);
	}
	for (i = 0; i < st->nnotes; i++)
		free(st->notes[i]);
	jf_block_map_free(st->blocks);
	jf_rec_code_changes_finish(st);
	jf_rec_jitcode_finish(st);
	jf_rec_clock_finish(st);
	free(st);
}

void jf_record_state_callbacks(struct jf_record_state *st, struct jf_qlog_callbacks *cb)
{
	memset(cb, 0, sizeof(*cb));
	cb->ctx = st;
	cb->translation = jf_rec_on_translation;
	cb->exec = jf_rec_on_exec;
	cb->stopped = jf_rec_on_stopped;
	cb->syscall = jf_rec_on_syscall;
	cb->syscall_result = jf_rec_on_syscall_result;
	cb->signal = jf_rec_on_signal;
}

void jf_record_state_begin(struct jf_record_state *st, int pid)
{
	const char *base = strrchr(st->program, '/');
	int i;

	st->pid = pid;
	st->perf.timing = st->timing;
	jf_perf_write_unfinished_header(&st->perf);
	jf_perf_auxtrace_info(&st->perf);
	jf_perf_comm(&st->perf, pid, pid, base ? base + 1 : st->program, 1, jf_pt_perf_time(0));
	if (st->image.is_static_exec) {
		jf_rec_map_image(st, &st->image, st->program, 0, 0);
		st->marker_addr = st->image.marker_addr;
		st->layout_state = 2;
	}
	(void)i;
	jf_rec_thread_for(st, 0);
}

int jf_record_state_end(struct jf_record_state *st, const struct jf_perf_info *info)
{
	unsigned i;
	int rc = 0;

	(void)info;
	for (i = 0; i < st->nthreads; i++) {
		struct jf_record_thread *t = st->threads[i];

		if (t->deferring)
			jf_rec_replay_deferred(st, t, 0, 0);
		/* A thread whose last block ended in a system call left in it (exit). */
		jf_rec_thread_exit(st, t);
		if (!t->tid) {
			t->tid = st->pid + 1000000 + (int)i; /* never named by the log */
			jf_rec_note(st, "thread on CPU %u: its thread id was not in QEMU's log; a "
			     "made-up id %d is used", t->cpu, t->tid);
			jf_rec_announce(st, t);
		}
		if (jf_rec_thread_finish(st, t))
			rc = -1;
	}
	jf_perf_finished_round(&st->perf);
	jf_rec_code_changes_finish(st);
	jf_rec_jitcode_finish(st);
	jf_rec_clock_finish(st);
	return rc;
}
