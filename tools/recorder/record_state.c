/* The recorder's per-thread logic: consecutive blocks -> PT packets (see record_state.h). */
#include "record_state.h"

#include "zone_copy.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void note(struct jf_record_state *st, const char *fmt, ...)
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
	for (i = 0; i < JF_RECORD_MAX_FDS; i++)
		free(st->fd_paths[i]);
	for (i = 0; i < st->nzone_files; i++)
		free(st->zone_files[i]);
	for (i = 0; i < st->nnotes; i++)
		free(st->notes[i]);
	jf_block_map_free(st->blocks);
	free(st);
}

/* ---- threads ---- */

static int thread_sink(void *ctx, const uint8_t *bytes, size_t size)
{
	struct jf_record_thread *t = ctx;
	struct jf_record_state *st = t->owner;

	jf_perf_aux(&st->perf, st->pid, t->tid ? t->tid : -1, t->queue, t->aux_offset, bytes,
		    size, jf_pt_perf_time(st->clock));
	t->aux_offset += size;
	return st->perf.failed ? -1 : 0;
}

static void announce(struct jf_record_state *st, struct jf_record_thread *t)
{
	if (t->announced || !t->tid)
		return;
	/* Dated when the thread appeared (its tid may only come later in the log): perf
	 * must know the thread before it decodes the thread's first packet. */
	if (t->queue != 0)
		jf_perf_fork(&st->perf, st->pid, st->pid, t->tid, t->ptid,
			     jf_pt_perf_time(t->start_clock));
	jf_perf_itrace_start(&st->perf, st->pid, t->tid, jf_pt_perf_time(t->start_clock));
	t->announced = 1;
}

static int grow(void *array_ptr, unsigned *cap, unsigned need)
{
	struct jf_record_thread ***array = array_ptr;
	struct jf_record_thread **n;
	unsigned new_cap;

	if (need < *cap)
		return 0;
	new_cap = need + 16;
	n = realloc(*array, new_cap * sizeof(*n));
	if (!n)
		return -1;
	memset(n + *cap, 0, (new_cap - *cap) * sizeof(*n));
	*array = n;
	*cap = new_cap;
	return 0;
}

static struct jf_record_thread *thread_for(struct jf_record_state *st, unsigned cpu)
{
	struct jf_record_thread *t;

	if (cpu < st->cpu_cap && st->by_cpu[cpu])
		return st->by_cpu[cpu];
	if (grow(&st->by_cpu, &st->cpu_cap, cpu) || grow(&st->threads, &st->threads_cap, st->nthreads))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t)
		t->pt = malloc(sizeof(*t->pt));
	if (!t || !t->pt) {
		if (t)
			free(t->pt);
		free(t);
		return NULL;
	}
	t->owner = st;
	if (jf_pt_stream_init(t->pt, thread_sink, t, st->timing)) {
		free(t->pt);
		free(t);
		return NULL;
	}
	t->cpu = cpu;
	t->start_clock = st->clock;
	t->queue = st->nthreads; /* one AUX buffer per thread */
	if (st->nthreads == 0) {
		t->tid = st->pid;
	} else {
		t->ptid = st->pid;
		if (st->npending_tids) {
			t->tid = st->pending_tids[0];
			memmove(st->pending_tids, st->pending_tids + 1,
				--st->npending_tids * sizeof(st->pending_tids[0]));
		}
	}
	st->by_cpu[cpu] = t;
	st->threads[st->nthreads++] = t;
	announce(st, t);
	return t;
}

/* The thread leaves for good: its stream ends with the exit system call's TIP.PGD. */
static void thread_exit(struct jf_record_state *st, struct jf_record_thread *t)
{
	if (t->exited)
		return;
	t->exited = 1;
	jf_pt_advance(t->pt, st->clock);
	if (t->have_prev && t->prev.exit == JF_EXIT_SYSCALL)
		jf_pt_disable(t->pt);
	if (st->by_cpu[t->cpu] == t)
		st->by_cpu[t->cpu] = NULL;
}

/* Hand the rest of the thread's stream to perf.data, and its EXIT record. */
static int thread_finish(struct jf_record_state *st, struct jf_record_thread *t)
{
	int rc;

	if (t->finished)
		return 0;
	t->finished = 1;
	rc = jf_pt_stream_finish(t->pt);
	t->stats = t->pt->stats;
	free(t->pt);
	t->pt = NULL;
	jf_perf_exit(&st->perf, st->pid, st->pid, t->tid, t->tid, jf_pt_perf_time(st->clock));
	return rc;
}

static void new_tid(struct jf_record_state *st, int tid)
{
	unsigned i;

	/* A thread that already runs without a name gets it; else keep it for the next. */
	for (i = 1; i < st->nthreads; i++) {
		struct jf_record_thread *t = st->threads[i];

		if (!t->tid) {
			t->tid = tid;
			announce(st, t);
			return;
		}
	}
	if (st->npending_tids < sizeof(st->pending_tids) / sizeof(st->pending_tids[0]))
		st->pending_tids[st->npending_tids++] = tid;
}

/* Something happened between prev and the block at pc that the log does not show (a
 * signal delivered between blocks). known_ip: where the thread was interrupted, or 0. */
static void interruption(struct jf_record_thread *t, uint64_t known_ip, uint64_t pc)
{
	static const char *const kinds[] = { "no branch", "conditional branch", "jump", "call",
					     "indirect jump", "indirect call", "return",
					     "system call", "faulting instruction" };
	struct jf_record_state *st = t->owner;

	if (!known_ip && st->interruptions_noted++ < 8)
		note(st, "thread %d: after the block at %#llx (ends with a %s at %#llx) came %#llx: "
		     "%s at PT offset %llu", t->tid, (unsigned long long)t->prev.pc,
		     kinds[t->prev.exit < 9 ? t->prev.exit : 8], (unsigned long long)t->prev.last_ip,
		     (unsigned long long)pc, "direction unknown, reported as an overflow (OVF)",
		     (unsigned long long)t->pt->stats.bytes);
	if (known_ip) {
		jf_pt_async_disable(t->pt, known_ip);
		jf_pt_enable(t->pt, pc);
		t->async_events++;
	} else {
		jf_pt_overflow(t->pt, pc);
		t->lost_events++;
	}
}

/* The packets for leaving prev and arriving at pc. Returns 1 when the block at pc only
 * continues prev's last instruction (a rep string operation's next iteration). */
static int transition(struct jf_record_thread *t, const struct jf_block *prev, uint64_t pc)
{
	struct jf_pt_stream *pt = t->pt;

	switch (prev->exit) {
	case JF_EXIT_NONE:
		if (pc == prev->next_ip)
			return 0;
		if (prev->last_is_rep && pc == prev->last_ip)
			return 1;
		interruption(t, prev->next_ip, pc);
		return 0;
	case JF_EXIT_COND:
		if (pc == prev->target)
			jf_pt_cond(pt, 1);
		else if (pc == prev->next_ip)
			jf_pt_cond(pt, 0);
		else
			interruption(t, 0, pc); /* which way it went is unknown */
		return 0;
	case JF_EXIT_JUMP:
		if (pc != prev->target)
			interruption(t, prev->target, pc);
		return 0;
	case JF_EXIT_CALL:
		jf_pt_call(pt, prev->next_ip);
		if (pc != prev->target)
			interruption(t, prev->target, pc);
		return 0;
	case JF_EXIT_IND_CALL:
		jf_pt_call(pt, prev->next_ip);
		jf_pt_indirect(pt, pc);
		return 0;
	case JF_EXIT_IND_JUMP:
		jf_pt_indirect(pt, pc);
		return 0;
	case JF_EXIT_RET:
		jf_pt_return(pt, pc);
		return 0;
	case JF_EXIT_SYSCALL:
		/* Into the kernel and back: to the next instruction, or to a signal handler,
		 * or (rt_sigreturn) to wherever the signal interrupted the thread. */
		jf_pt_disable(pt);
		jf_pt_enable(pt, pc);
		return 0;
	case JF_EXIT_FAULT:
	default:
		interruption(t, prev->last_ip, pc);
		return 0;
	}
}

static void follow_loader(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc);

/* One block of thread t, at pc, in order: the packets for getting there, then its clock. */
static void run_block(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc,
		      const struct jf_block *b)
{
	uint64_t ninsn;

	jf_pt_advance(t->pt, st->clock);
	if (!t->started) {
		jf_pt_enable(t->pt, pc);
		t->started = 1;
	} else if (!t->have_prev) {
		jf_pt_overflow(t->pt, pc); /* after a block we could not classify */
		t->lost_events++;
	}
	if (!b) {
		/* QEMU never showed this block's bytes: its exit cannot be classified. */
		st->unknown_blocks++;
		t->have_prev = 0;
		return;
	}
	ninsn = b->ninsn;
	if (st->fork_resume_ip && t->have_prev && t->prev.exit == JF_EXIT_SYSCALL &&
	    pc == st->fork_resume_ip && ++st->fork_resumptions == 2) {
		st->fork_mixed++;
		note(st, "thread %d: between instruction clock %llu and %llu its stream holds the "
		     "blocks of both the parent and the child of a fork (QEMU logs both as one CPU; "
		     "they cannot be separated)", t->tid, (unsigned long long)st->fork_clock,
		     (unsigned long long)st->clock);
		st->fork_resume_ip = 0;
	}
	if (t->resume_at_last) {
		/* The block logged last did not run. If it is this one, the thread simply
		 * runs it now; if not, something (a signal) took the thread away from it. */
		t->resume_at_last = 0;
		if (pc != t->last_pc)
			interruption(t, t->last_pc, pc);
	} else if (t->have_prev && transition(t, &t->prev, pc) && ninsn) {
		ninsn--;
	}
	t->last_pc = pc;
	t->last_ninsn = (uint32_t)ninsn;
	if (st->marker_addr && pc == st->marker_addr) {
		/* The zone emitter's marker call: its time dates the thread's next zone record
		 * (zone_copy.c). Optionally also a PTW packet; QEMU's log does not show the
		 * sequence number argument, so its payload is the call's ordinal on the thread. */
		st->marker_calls++;
		t->marker_calls++;
		if (t->nmarker_times == t->marker_times_cap) {
			size_t cap = t->marker_times_cap ? t->marker_times_cap * 2 : 64;
			uint64_t *n = realloc(t->marker_times, cap * sizeof(*n));

			if (n) {
				t->marker_times = n;
				t->marker_times_cap = cap;
			}
		}
		if (t->nmarker_times < t->marker_times_cap)
			t->marker_times[t->nmarker_times++] = jf_pt_perf_time(st->clock);
		if (st->marker_ptw)
			jf_pt_ptwrite(t->pt, t->marker_calls);
	}
	jf_pt_boundary(t->pt, pc);
	st->clock += ninsn;
	t->instructions += ninsn;
	t->prev = *b;
	t->have_prev = 1;
}

/* ---- signals that interrupt a thread where the log cannot say ----
 *
 * QEMU delivers a signal between two blocks. When the block before ended with a
 * conditional or indirect branch, where that branch went (= where the signal interrupted
 * the thread) only shows when the handler returns: rt_sigreturn resumes there. Until then
 * the thread's blocks wait here (memory bounded by the handler's length, capped); then
 * the branch, the FUP + TIP.PGD of the interruption and the handler's blocks are written
 * in order. */

enum { MAX_DEFERRED_BLOCKS = 1 << 20 };

static int unknown_successor(const struct jf_block *b)
{
	return b->exit == JF_EXIT_COND || b->exit == JF_EXIT_IND_JUMP ||
	       b->exit == JF_EXIT_IND_CALL || b->exit == JF_EXIT_RET;
}

static void replay_deferred(struct jf_record_state *st, struct jf_record_thread *t,
			    uint64_t resume, int resolved)
{
	const struct jf_block *from = &t->defer_from;
	size_t i;

	if (resolved) {
		switch (from->exit) {
		case JF_EXIT_COND:
			jf_pt_cond(t->pt, resume == from->target);
			break;
		case JF_EXIT_IND_CALL:
			jf_pt_call(t->pt, from->next_ip);
			jf_pt_indirect(t->pt, resume);
			break;
		case JF_EXIT_RET:
			jf_pt_return(t->pt, resume);
			break;
		default:
			jf_pt_indirect(t->pt, resume);
			break;
		}
		jf_pt_async_disable(t->pt, resume);
		t->async_events++;
		t->have_prev = 0;
		t->started = 0; /* the handler's first block re-enables tracing */
		t->pt->enabled = 0;
	} else {
		t->have_prev = 0; /* an OVF before the handler: where it interrupted is lost */
		if (st->interruptions_noted++ < 8)
			note(st, "thread %d: a signal interrupted the block at %#llx and the "
			     "handler did not return where the log could see it: reported as an "
			     "overflow (OVF)", t->tid, (unsigned long long)from->pc);
	}
	t->deferring = 0;
	for (i = 0; i < t->ndeferred; i++) {
		if (i == 0 && resolved)
			t->started = 0;
		run_block(st, t, t->deferred[i].pc, &t->deferred[i].block);
		if (i == 0 && resolved)
			t->started = 1;
	}
	t->ndeferred = 0;
}

/* Queue a block of a deferring thread; resolve when rt_sigreturn's resumption shows. */
static void defer_block(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc,
			const struct jf_block *b)
{
	const struct jf_block *from = &t->defer_from;

	if (t->ndeferred > 0) {
		const struct jf_deferred *last = &t->deferred[t->ndeferred - 1];

		/* After a system call, a block that is not the call's next instruction is a
		 * return from the signal (or a nested signal's handler: ruled out for
		 * conditional branches by their two possible targets). */
		if (last->block.exit == JF_EXIT_SYSCALL && pc != last->block.next_ip &&
		    (from->exit != JF_EXIT_COND || pc == from->target || pc == from->next_ip)) {
			replay_deferred(st, t, pc, 1);
			run_block(st, t, pc, b);
			return;
		}
	}
	if (!b || t->ndeferred >= MAX_DEFERRED_BLOCKS) {
		replay_deferred(st, t, 0, 0);
		run_block(st, t, pc, b);
		return;
	}
	if (t->ndeferred == t->deferred_cap) {
		size_t cap = t->deferred_cap ? t->deferred_cap * 2 : 256;
		struct jf_deferred *n = realloc(t->deferred, cap * sizeof(*n));

		if (!n) {
			replay_deferred(st, t, 0, 0);
			run_block(st, t, pc, b);
			return;
		}
		t->deferred = n;
		t->deferred_cap = cap;
	}
	t->deferred[t->ndeferred].pc = pc;
	t->deferred[t->ndeferred].block = *b;
	t->ndeferred++;
}

static void on_exec(void *ctx, const struct jf_qlog_exec *e)
{
	struct jf_record_state *st = ctx;
	struct jf_record_thread *t = thread_for(st, e->cpu);
	const struct jf_block *b;

	if (!t)
		return;
	st->last_exec_cpu = e->cpu;
	st->blocks_executed++;
	t->blocks++;
	if (st->layout_state != 2)
		follow_loader(st, t, e->pc);
	b = jf_block_map_executed(st->blocks, e->pc, e->flags, e->cflags);
	if (t->deferring) {
		defer_block(st, t, e->pc, b);
		return;
	}
	if (t->signal_arrived) {
		t->signal_arrived = 0;
		if (!t->resume_at_last && t->have_prev && unknown_successor(&t->prev) && b) {
			t->deferring = 1;
			t->defer_from = t->prev;
			t->ndeferred = 0;
			defer_block(st, t, e->pc, b);
			return;
		}
	}
	run_block(st, t, e->pc, b);
}

static void on_stopped(void *ctx, uint64_t pc)
{
	struct jf_record_state *st = ctx;
	struct jf_record_thread *t = NULL;
	unsigned i;

	/* The thread that logged it last is the likeliest one; else any that is at pc. */
	if (st->last_exec_cpu < st->cpu_cap && st->by_cpu[st->last_exec_cpu] &&
	    st->by_cpu[st->last_exec_cpu]->last_pc == pc)
		t = st->by_cpu[st->last_exec_cpu];
	for (i = 0; !t && i < st->cpu_cap; i++)
		if (st->by_cpu[i] && st->by_cpu[i]->last_pc == pc && !st->by_cpu[i]->resume_at_last)
			t = st->by_cpu[i];
	if (!t || t->resume_at_last)
		return;
	if (t->deferring) {
		/* A queued block that did not run: it will be logged again when it does. */
		if (t->ndeferred && t->deferred[t->ndeferred - 1].pc == pc)
			t->ndeferred--;
		return;
	}
	/* Take back what the block was counted for; the branch that led to it stays. */
	st->clock -= t->last_ninsn;
	t->instructions -= t->last_ninsn;
	t->resume_at_last = 1;
	st->stopped_blocks++;
}

static void on_translation(void *ctx, uint64_t pc, const uint8_t *bytes, size_t size)
{
	struct jf_record_state *st = ctx;

	jf_block_map_translated(st->blocks, pc, bytes, size);
}

/* ---- system calls ---- */

/* The n-th comma-separated argument (0-based) of an strace argument list. */
static int nth_arg(const char *args, int n, char *out, size_t size)
{
	const char *s = args;
	size_t len;
	int quoted = 0;

	while (n > 0 && *s) {
		if (*s == '"')
			quoted = !quoted;
		else if (*s == ',' && !quoted)
			n--;
		s++;
	}
	if (n)
		return -1;
	len = 0;
	while (s[len] && (s[len] != ',' || quoted)) {
		if (s[len] == '"')
			quoted = !quoted;
		len++;
	}
	if (len >= size)
		len = size - 1;
	memcpy(out, s, len);
	out[len] = '\0';
	return 0;
}

static int is_zone_file(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "jit-", 4) && strstr(base, ".dump") != NULL;
}

static void on_mmap(struct jf_record_state *st, uint64_t addr)
{
	char a[64];
	uint64_t len, pgoff;
	uint32_t prot = 0, flags = 0;
	long fd;

	if (nth_arg(st->pending_args, 2, a, sizeof(a)) || !strstr(a, "PROT_EXEC"))
		return;
	prot = PROT_EXEC | (strstr(a, "PROT_READ") ? PROT_READ : 0) |
	       (strstr(a, "PROT_WRITE") ? PROT_WRITE : 0);
	if (nth_arg(st->pending_args, 4, a, sizeof(a)))
		return;
	fd = strtol(a, NULL, 0);
	if (fd < 0 || fd >= JF_RECORD_MAX_FDS || !st->fd_paths[fd])
		return; /* anonymous executable memory: JIT code, described by zone files */
	if (nth_arg(st->pending_args, 1, a, sizeof(a)))
		return;
	len = strtoull(a, NULL, 0);
	if (nth_arg(st->pending_args, 5, a, sizeof(a)))
		return;
	pgoff = strtoull(a, NULL, 0);
	if (nth_arg(st->pending_args, 3, a, sizeof(a)) == 0)
		flags = strstr(a, "MAP_SHARED") ? MAP_SHARED : MAP_PRIVATE;
	if (is_zone_file(st->fd_paths[fd])) {
		/* The marker mapping of a zone file: name the retimed copy in the recording's
		 * directory, which is what perf inject --jit and jitflow must read. */
		const char *base = strrchr(st->fd_paths[fd], '/');
		char copy[2 * PATH_MAX];
		unsigned i;

		snprintf(copy, sizeof(copy), "%s/%s", st->out_dir, base ? base + 1 : st->fd_paths[fd]);
		jf_perf_mmap2(&st->perf, st->pid, st->pid, addr, len, pgoff, prot, flags, copy,
			      jf_pt_perf_time(st->clock));
		st->mmap_records++;
		for (i = 0; i < st->nzone_files; i++)
			if (!strcmp(st->zone_files[i], st->fd_paths[fd]))
				return;
		if (st->nzone_files < JF_RECORD_MAX_ZONE_FILES)
			st->zone_files[st->nzone_files++] = strdup(st->fd_paths[fd]);
		return;
	}
	jf_perf_mmap2(&st->perf, st->pid, st->pid, addr, len, pgoff, prot, flags,
		      st->fd_paths[fd], jf_pt_perf_time(st->clock));
	st->mmap_records++;
}

static void on_open(struct jf_record_state *st, long fd, int path_arg)
{
	char a[PATH_MAX], full[PATH_MAX], *q;

	if (fd < 0 || fd >= JF_RECORD_MAX_FDS ||
	    nth_arg(st->pending_args, path_arg, a, sizeof(a)) || a[0] != '"')
		return;
	q = strchr(a + 1, '"');
	if (q)
		*q = '\0';
	free(st->fd_paths[fd]);
	/* Relative paths are relative to QEMU's working directory, which is ours. */
	st->fd_paths[fd] = strdup(realpath(a + 1, full) ? full : a + 1);
}

static void on_syscall(void *ctx, const char *name, const char *args)
{
	struct jf_record_state *st = ctx;

	st->syscalls++;
	/* exit and exit_group never return; QEMU prints no result for unknown calls */
	if (strcmp(name, "exit") && strcmp(name, "exit_group") && strcmp(name, "unknown")) {
		if (st->npending == sizeof(st->pending) / sizeof(st->pending[0])) {
			memmove(st->pending, st->pending + 1, sizeof(st->pending) - sizeof(st->pending[0]));
			st->npending--;
		}
		snprintf(st->pending[st->npending].name, sizeof(st->pending[0].name), "%s", name);
		snprintf(st->pending[st->npending].args, sizeof(st->pending[0].args), "%s", args);
		st->npending++;
	}
	if (!strcmp(name, "close")) {
		long fd = strtol(args, NULL, 0);

		if (fd >= 0 && fd < JF_RECORD_MAX_FDS) {
			free(st->fd_paths[fd]);
			st->fd_paths[fd] = NULL;
		}
	} else if (!strcmp(name, "exit")) {
		/* The thread that logged last, if it is in a system call, is the one exiting:
		 * QEMU prints the call right after the block that makes it. */
		struct jf_record_thread *t = st->last_exec_cpu < st->cpu_cap ?
					     st->by_cpu[st->last_exec_cpu] : NULL;

		if (t && t->have_prev && t->prev.exit == JF_EXIT_SYSCALL) {
			thread_exit(st, t);
			if (t->tid)
				thread_finish(st, t);
		}
	} else if (!strcmp(name, "execve") || !strcmp(name, "execveat")) {
		note(st, "execve(%.200s): the new program runs outside QEMU and is not recorded",
		     args);
	} else if (!strcmp(name, "fork") || !strcmp(name, "vfork") ||
		   (!strcmp(name, "clone") && !strstr(args, "CLONE_THREAD"))) {
		struct jf_record_thread *t = st->last_exec_cpu < st->cpu_cap ?
					     st->by_cpu[st->last_exec_cpu] : NULL;

		note(st, "%s: the child process is not followed (its own stream is not "
		     "recorded)", name);
		if (t && t->have_prev && t->prev.exit == JF_EXIT_SYSCALL) {
			st->fork_resume_ip = t->prev.next_ip;
			st->fork_resumptions = 0;
			st->fork_clock = st->clock;
		}
	}
}

static void on_syscall_result(void *ctx, const char *result)
{
	struct jf_record_state *st = ctx;
	const char *name;
	long long value;
	char *end;

	if (!st->npending)
		return;
	st->npending--;
	name = st->pending[st->npending].name;
	st->pending_args = st->pending[st->npending].args;
	value = strtoll(result, &end, 0);
	if (end != result) {
		if (!strcmp(name, "openat"))
			on_open(st, (long)value, 1);
		else if (!strcmp(name, "open"))
			on_open(st, (long)value, 0);
		else if (!strcmp(name, "mmap") && value != -1)
			on_mmap(st, (uint64_t)value);
		else if (!strcmp(name, "clone") && value > 0) {
			/* Threads share the CPU loop; CLONE_VFORK (posix_spawn) without
			 * CLONE_THREAD is a new process to QEMU, like fork. */
			if (strstr(st->pending_args, "CLONE_THREAD"))
				new_tid(st, (int)value);
			else
				note(st, "clone without CLONE_THREAD (a new process): child pid %lld",
				     value);
		}
	}
}

static void on_signal(void *ctx, const char *name)
{
	struct jf_record_state *st = ctx;

	(void)name;
	st->signals++;
	/* QEMU prints it while setting up the handler on the receiving thread, which is
	 * (nearly always) the one that logged last. */
	if (st->last_exec_cpu < st->cpu_cap && st->by_cpu[st->last_exec_cpu])
		st->by_cpu[st->last_exec_cpu]->signal_arrived = 1;
}

void jf_record_state_callbacks(struct jf_record_state *st, struct jf_qlog_callbacks *cb)
{
	memset(cb, 0, sizeof(*cb));
	cb->ctx = st;
	cb->translation = on_translation;
	cb->exec = on_exec;
	cb->stopped = on_stopped;
	cb->syscall = on_syscall;
	cb->syscall_result = on_syscall_result;
	cb->signal = on_signal;
}

/* MMAP2 records for an ELF file's executable segments, moved by base. */
static void map_image(struct jf_record_state *st, const struct jf_program_image *img,
		      const char *path, uint64_t base, uint64_t clock)
{
	int i;

	for (i = 0; i < img->nsegments; i++) {
		const struct jf_image_segment *s = &img->segments[i];

		jf_perf_mmap2(&st->perf, st->pid, st->pid, base + s->addr, s->len, s->pgoff,
			      s->prot, MAP_PRIVATE, path, jf_pt_perf_time(clock));
		st->mmap_records++;
	}
}

/* Before the block at pc runs on t: learn load addresses the log only shows this way. */
static void follow_loader(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc)
{
	if (st->layout_state == 0) {
		st->layout_state = 2;
		if (st->image.interp[0]) {
			struct jf_error err;
			char path[PATH_MAX];

			/* The loader QEMU uses is the host's (same architecture). */
			if (!realpath(st->image.interp, path) ||
			    jf_program_image_load(&st->interp, path, &err)) {
				note(st, "dynamic loader %s cannot be read; its code and the "
				     "program's are not mapped in the recording", st->image.interp);
				return;
			}
			st->interp_base = pc - st->interp.entry;
			st->interp_end = st->interp_base;
			for (int i = 0; i < st->interp.nsegments; i++) {
				const struct jf_image_segment *s = &st->interp.segments[i];

				if (st->interp_base + s->addr + s->len > st->interp_end)
					st->interp_end = st->interp_base + s->addr + s->len;
			}
			map_image(st, &st->interp, path, st->interp_base, 0);
			st->layout_state = st->image.is_pie ? 1 : 2;
			if (!st->image.is_pie) {
				map_image(st, &st->image, st->program, 0, 0);
				st->marker_addr = st->image.marker_addr;
			}
		} else if (st->image.is_pie) {
			/* static-pie: the first block is the program's entry point */
			st->main_base = pc - st->image.entry;
			map_image(st, &st->image, st->program, st->main_base, 0);
			st->marker_addr = st->image.marker_addr ?
					  st->image.marker_addr + st->main_base : 0;
		}
		return;
	}
	/* The loader enters the program with an indirect jump to its (page-offset-exact)
	 * entry point, outside the loader. QEMU mapped the program before the loader's
	 * first instruction, so that is the record's date too (perf orders by time). */
	if (st->layout_state == 1 && t->have_prev && t->prev.exit == JF_EXIT_IND_JUMP &&
	    ((pc - st->image.entry) & 0xfff) == 0 &&
	    (pc < st->interp_base || pc >= st->interp_end)) {
		st->main_base = pc - st->image.entry;
		map_image(st, &st->image, st->program, st->main_base, 0);
		st->marker_addr = st->image.marker_addr ? st->image.marker_addr + st->main_base : 0;
		st->layout_state = 2;
	}
}

void jf_record_state_begin(struct jf_record_state *st, int pid)
{
	const char *base = strrchr(st->program, '/');
	int i;

	st->pid = pid;
	st->perf.timing = st->timing;
	jf_perf_auxtrace_info(&st->perf);
	jf_perf_comm(&st->perf, pid, pid, base ? base + 1 : st->program, 1, jf_pt_perf_time(0));
	if (st->image.is_static_exec) {
		map_image(st, &st->image, st->program, 0, 0);
		st->marker_addr = st->image.marker_addr;
		st->layout_state = 2;
	}
	(void)i;
	thread_for(st, 0);
}

int jf_record_state_end(struct jf_record_state *st, const struct jf_perf_info *info)
{
	unsigned i;
	int rc = 0;

	(void)info;
	for (i = 0; i < st->nthreads; i++) {
		struct jf_record_thread *t = st->threads[i];

		if (t->deferring)
			replay_deferred(st, t, 0, 0);
		/* A thread whose last block ended in a system call left in it (exit). */
		thread_exit(st, t);
		if (!t->tid) {
			t->tid = st->pid + 1000000 + (int)i; /* never named by the log */
			note(st, "thread on CPU %u: its thread id was not in QEMU's log; a "
			     "made-up id %d is used", t->cpu, t->tid);
			announce(st, t);
		}
		if (thread_finish(st, t))
			rc = -1;
	}
	jf_perf_finished_round(&st->perf);
	return rc;
}

/* Reads a whole file (zone files hold code and records: they grow with the code image). */
static uint8_t *slurp(const char *path, size_t *size)
{
	uint8_t *data = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - len < 65536) {
			uint8_t *bigger = realloc(data, cap = cap ? cap * 2 : 1 << 20);

			if (!bigger) {
				free(data);
				close(fd);
				return NULL;
			}
			data = bigger;
		}
		n = read(fd, data + len, cap - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	*size = len;
	return data;
}

int jf_record_copy_zone_files(struct jf_record_state *st, const char *dir,
			      struct jf_error *err)
{
	struct jf_zone_markers *markers = calloc(st->nthreads + 1, sizeof(*markers));
	unsigned i;
	int rc = 0;

	if (!markers)
		return jf_fail(err, "out of memory");
	for (i = 0; i < st->nthreads; i++) {
		markers[i].tid = st->threads[i]->tid;
		markers[i].times = st->threads[i]->marker_times;
		markers[i].count = st->threads[i]->nmarker_times;
	}
	for (i = 0; i < st->nzone_files && !rc; i++) {
		const char *base = strrchr(st->zone_files[i], '/');
		struct jf_zone_copy_result res;
		struct jf_error why = { { 0 } };
		char dest[PATH_MAX];
		uint8_t *data;
		size_t size = 0;
		int out;

		base = base ? base + 1 : st->zone_files[i];
		snprintf(dest, sizeof(dest), "%s/%s", dir, base);
		data = slurp(st->zone_files[i], &size);
		if (!data) {
			note(st, "zone file %s cannot be read (%m); not copied", st->zone_files[i]);
			continue;
		}
		if (jf_zone_retime(data, size, markers, st->nthreads, &res, &why))
			note(st, "zone file %s: %s", st->zone_files[i], why.msg);
		if (!res.retimed)
			note(st, "zone file %s: no marker calls matched its records; its timestamps "
			     "are the program's clock, not the recording's", st->zone_files[i]);
		else if (res.markers_unmatched)
			note(st, "zone file %s: %zu marker calls had no record", st->zone_files[i],
			     res.markers_unmatched);
		out = open(dest, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0 || write(out, data, size) != (ssize_t)size)
			rc = jf_fail(err, "%s: cannot write: %m", dest);
		if (out >= 0)
			close(out);
		free(data);
	}
	free(markers);
	return rc;
}
