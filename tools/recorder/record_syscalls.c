/* What the strace lines of the log say: files opened and mapped executable (MMAP2, zone
 * files), new threads, forks and execs. */
#include "record_filter.h"
#include "record_internal.h"
#include "record_jitcode.h"
#include "record_zone_code.h"
#include "zone_files.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

void jf_rec_mmap(struct jf_record_state *st, uint64_t addr, uint64_t len, uint32_t prot,
		 uint32_t flags, long fd, uint64_t pgoff)
{
	if (!(prot & PROT_EXEC))
		return;
	if (fd < 0 || fd >= JF_RECORD_MAX_FDS || !st->fd_paths[fd]) {
		/* anonymous executable memory: JIT code, described by zone files or a JIT
		 * log; what runs there is listed in jit-code.txt */
		jf_rec_jitcode_region(st, addr, len);
		if (st->filter && jf_rec_filter_anon_exec(st->filter, addr, len))
			jf_rec_note(st, "--filter: more than %d ranges: the anonymous executable "
				    "mapping at %#llx and later ones are not traced", JF_REC_FILTER_MAX,
				    (unsigned long long)addr);
		return;
	}
	if (jf_zone_file_name(st->fd_paths[fd])) {
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

void jf_rec_mprotect(struct jf_record_state *st, uint64_t addr, uint64_t len, uint32_t prot)
{
	/* Memory made executable after it was written: a JIT's code (CPython maps each
	 * executor read-write, copies its stencils in, then makes it read-execute). Loaders
	 * map code executable with mmap itself, so this is taken as anonymous memory, and its
	 * code followed as the code of executable mappings is (jit-code.txt, observed code). */
	if (!(prot & PROT_EXEC))
		return;
	jf_rec_jitcode_region(st, addr, len);
	if (st->filter && jf_rec_filter_anon_exec(st->filter, addr, len))
		jf_rec_note(st, "--filter: more than %d ranges: the memory made executable at %#llx "
			    "and later ones are not traced", JF_REC_FILTER_MAX, (unsigned long long)addr);
}

/* strace's "addr,len,PROT_..." of the call being completed. */
static void on_mprotect(struct jf_record_state *st)
{
	char a[64];
	uint64_t addr, len;

	if (nth_arg(st->pending_args, 2, a, sizeof(a)) || !strstr(a, "PROT_EXEC"))
		return;
	addr = strtoull(st->pending_args, NULL, 0);
	if (nth_arg(st->pending_args, 1, a, sizeof(a)))
		return;
	len = strtoull(a, NULL, 0);
	jf_rec_mprotect(st, addr, len, PROT_EXEC);
}

/* strace's "addr,len,PROT_...,MAP_...,fd,offset" of the call being completed. */
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
	if (nth_arg(st->pending_args, 1, a, sizeof(a)))
		return;
	len = strtoull(a, NULL, 0);
	if (nth_arg(st->pending_args, 5, a, sizeof(a)))
		return;
	pgoff = strtoull(a, NULL, 0);
	if (nth_arg(st->pending_args, 3, a, sizeof(a)) == 0)
		flags = strstr(a, "MAP_SHARED") ? MAP_SHARED : MAP_PRIVATE;
	jf_rec_mmap(st, addr, len, prot, flags, fd, pgoff);
}

void jf_rec_file_opened(struct jf_record_state *st, long fd, const char *path)
{
	char full[PATH_MAX];

	if (fd < 0 || fd >= JF_RECORD_MAX_FDS)
		return;
	free(st->fd_paths[fd]);
	/* Relative paths are relative to QEMU's working directory, which is ours. */
	st->fd_paths[fd] = strdup(realpath(path, full) ? full : path);
}

void jf_rec_file_closed(struct jf_record_state *st, long fd)
{
	if (fd >= 0 && fd < JF_RECORD_MAX_FDS) {
		free(st->fd_paths[fd]);
		st->fd_paths[fd] = NULL;
	}
}

static void on_open(struct jf_record_state *st, long fd, int path_arg)
{
	char a[PATH_MAX], *q;

	if (nth_arg(st->pending_args, path_arg, a, sizeof(a)) || a[0] != '"')
		return;
	q = strchr(a + 1, '"');
	if (q)
		*q = '\0';
	jf_rec_file_opened(st, fd, a + 1);
}

void jf_rec_file_written(struct jf_record_state *st, long fd, long long written, long long end)
{
	struct jf_zone_writes *zw = NULL;
	unsigned i;

	if (fd < 0 || fd >= JF_RECORD_MAX_FDS || !st->fd_paths[fd] ||
	    !jf_zone_file_name(st->fd_paths[fd]) || written <= 0)
		return;
	for (i = 0; i < st->nzone_writes; i++)
		if (!strcmp(st->zone_writes[i].path, st->fd_paths[fd]))
			zw = &st->zone_writes[i];
	if (!zw) {
		if (st->nzone_writes == JF_RECORD_MAX_ZONE_FILES)
			return;
		zw = &st->zone_writes[st->nzone_writes++];
		zw->path = strdup(st->fd_paths[fd]);
	}
	if (zw->n == zw->cap) {
		size_t cap = zw->cap ? zw->cap * 2 : 64;
		uint64_t *e = realloc(zw->ends, cap * sizeof(*e)), *t;

		if (!e)
			return;
		zw->ends = e;
		t = realloc(zw->times, cap * sizeof(*t));
		if (!t)
			return;
		zw->times = t;
		zw->cap = cap;
	}
	zw->size = end >= 0 ? (uint64_t)end : zw->size + (uint64_t)written;
	zw->ends[zw->n] = zw->size;
	zw->times[zw->n] = jf_pt_perf_time(st->clock);
	zw->n++;
	jf_rec_zone_code_written(st, zw);
}

void jf_rec_on_syscall(void *ctx, const char *name, const char *args)
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
	if (!strcmp(name, "clone") && strstr(args, "CLONE_THREAD")) {
		jf_rec_clone_line(st);
	} else if (!strcmp(name, "close")) {
		jf_rec_file_closed(st, strtol(args, NULL, 0));
	} else if (!strcmp(name, "exit")) {
		/* QEMU prints the call right after the block that makes it: the exiting thread
		 * is the one in a system call that logged last. */
		struct jf_record_thread *t = NULL;
		unsigned i;

		for (i = 1; i < st->cpu_cap; i++) {
			struct jf_record_thread *c = st->by_cpu[i];

			if (c && c->have_prev && c->prev.exit == JF_EXIT_SYSCALL && !c->deferring &&
			    (!t || c->last_exec_seq > t->last_exec_seq))
				t = c;
		}
		if (t) {
			jf_rec_thread_exit(st, t);
			if (t->tid)
				jf_rec_thread_finish(st, t);
		}
	} else if (!strcmp(name, "execve") || !strcmp(name, "execveat")) {
		jf_rec_note(st, "execve(%.200s): the new program runs outside QEMU and is not recorded",
		     args);
	} else if (!strcmp(name, "fork") || !strcmp(name, "vfork") ||
		   (!strcmp(name, "clone") && !strstr(args, "CLONE_THREAD"))) {
		jf_rec_process_forked(st, st->last_exec_cpu < st->cpu_cap ?
					  st->by_cpu[st->last_exec_cpu] : NULL, name);
	}
}

void jf_rec_process_forked(struct jf_record_state *st, struct jf_record_thread *t,
			   const char *call)
{
	jf_rec_note(st, "%s: the child process is not followed (its own stream is not "
	     "recorded)", call);
	if (t && t->have_prev && t->prev.exit == JF_EXIT_SYSCALL) {
		st->fork_resume_ip = t->prev.next_ip;
		st->fork_resumptions = 0;
		st->fork_clock = st->clock;
	}
}

void jf_rec_on_syscall_result(void *ctx, const char *result)
{
	struct jf_record_state *st = ctx;
	const char *name;
	long long value;
	char *end;
	unsigned pick, i;

	if (!st->npending)
		return;
	value = strtoll(result, &end, 0);
	/* Which waiting call this result completes: normally the newest. But a thread id
	 * (above the process id, below Linux's PID_MAX_LIMIT) belongs to the newest waiting
	 * clone, and a clone returns nothing else in the parent; so other values go to the
	 * newest other call. gettid returns thread ids too: an id that names a thread
	 * already cannot be a clone's, nor can the result that follows a gettid call (QEMU
	 * writes a call and its result together unless another thread writes in between). */
	pick = st->npending - 1;
	if (end != result) {
		int tid_like = value > st->pid && value < (1 << 22) &&
			       !jf_rec_tid_in_use(st, (int)value) &&
			       strcmp(st->pending[pick].name, "gettid");
		int found = 0;

		for (i = st->npending; i-- > 0 && !found;) {
			int is_clone = !strcmp(st->pending[i].name, "clone");

			if (is_clone == tid_like) {
				pick = i;
				found = 1;
			}
		}
		/* Nothing else waits: a thread-creating clone's result it cannot be (a failed
		 * clone's -1 is lost with it, which costs nothing). */
		if (!found && !tid_like && !strcmp(st->pending[pick].name, "clone"))
			return;
	}
	memcpy(&st->pending_result, &st->pending[pick], sizeof(st->pending_result));
	memmove(&st->pending[pick], &st->pending[pick + 1],
		(st->npending - pick - 1) * sizeof(st->pending[0]));
	st->npending--;
	name = st->pending_result.name;
	st->pending_args = st->pending_result.args;
	if (end != result) {
		if (!strcmp(name, "openat"))
			on_open(st, (long)value, 1);
		else if (!strcmp(name, "open"))
			on_open(st, (long)value, 0);
		else if (!strcmp(name, "mmap") && value != -1)
			on_mmap(st, (uint64_t)value);
		else if (!strcmp(name, "mprotect") && value == 0)
			on_mprotect(st);
		else if (!strcmp(name, "write") || !strcmp(name, "writev"))
			jf_rec_file_written(st, strtol(st->pending_args, NULL, 0), value, -1);
		else if (!strcmp(name, "pwrite64")) {
			char off[64];

			if (nth_arg(st->pending_args, 3, off, sizeof(off)) == 0)
				jf_rec_file_written(st, strtol(st->pending_args, NULL, 0), value,
					   strtoll(off, NULL, 0) + value);
		}
		else if (!strcmp(name, "clone") && value > 0) {
			/* Threads share the CPU loop; CLONE_VFORK (posix_spawn) without
			 * CLONE_THREAD is a new process to QEMU, like fork. */
			if (strstr(st->pending_args, "CLONE_THREAD"))
				jf_rec_new_tid(st, (int)value);
			else
				jf_rec_note(st, "clone without CLONE_THREAD (a new process): child pid %lld",
				     value);
		}
	}
}
