/* Zone files copied into an AArch64 recording (etm_zones.h). */
#include "etm_zones.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pt_stream.h"
#include "zone_copy.h"
#include "zone_files.h"

/* AArch64 Linux (asm-generic/unistd.h) system calls and mmap's PROT_EXEC. */
enum { SYS_CLOSE = 57, SYS_MMAP = 222, PROT_EXEC_BIT = 4 };

static struct jf_etm_zone_thread *thread_of(struct jf_etm_zones *z, int32_t tid)
{
	struct jf_etm_zone_thread *t;
	size_t i;

	for (i = 0; i < z->nthreads; i++)
		if (z->threads[i].tid == tid)
			return &z->threads[i];
	if (z->nthreads == z->threads_cap) {
		size_t cap = z->threads_cap ? z->threads_cap * 2 : 8;

		t = realloc(z->threads, cap * sizeof(*t));
		if (!t) {
			z->failed = 1;
			return NULL;
		}
		z->threads = t;
		z->threads_cap = cap;
	}
	t = &z->threads[z->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->call = -1;
	return t;
}

static void note_marker_call(struct jf_etm_zones *z, int32_t tid)
{
	struct jf_etm_zone_thread *t = thread_of(z, tid);

	if (!t)
		return;
	if (t->ntimes == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		uint64_t *times = realloc(t->times, cap * sizeof(*times));

		if (!times) {
			z->failed = 1;
			return;
		}
		t->times = times;
		t->cap = cap;
	}
	/* The clock where the marker's block starts: the instructions run before it. */
	t->times[t->ntimes++] = jf_pt_perf_time(z->flow->instructions);
}

static void on_hello(void *ctx, const struct jf_prec_hello *h)
{
	struct jf_etm_zones *z = ctx;

	if (z->next.hello)
		z->next.hello(z->next.ctx, h);
}

static void on_translation(void *ctx, const struct jf_prec_translation *t, const uint8_t *bytes)
{
	struct jf_etm_zones *z = ctx;

	z->next.translation(z->next.ctx, t, bytes);
}

/* The flow runs the blocks up to each marker call, so that the clock is at its start. */
static void on_execs(void *ctx, unsigned vcpu, int tid, const uint32_t *ids, size_t n)
{
	struct jf_etm_zones *z = ctx;
	const struct jf_etm_flow *f = z->flow;
	size_t i, from = 0;

	for (i = 0; z->marker_addr && i < n; i++) {
		if (ids[i] >= f->nblocks || !f->known[ids[i]] ||
		    f->blocks[ids[i]].pc != z->marker_addr)
			continue;
		z->next.execs(z->next.ctx, vcpu, tid, ids + from, i - from);
		note_marker_call(z, tid);
		from = i;
	}
	z->next.execs(z->next.ctx, vcpu, tid, ids + from, n - from);
}

static void on_syscall(void *ctx, const struct jf_prec_syscall *s, const char *string)
{
	struct jf_etm_zones *z = ctx;
	struct jf_etm_zone_thread *t;

	z->next.syscall(z->next.ctx, s, string);
	if (s->vcpu == JF_PREC_OTHER_PROCESS || !(t = thread_of(z, s->tid)))
		return;
	t->call = s->num;
	memcpy(t->args, s->args, sizeof(t->args));
}

static void add_file(struct jf_etm_zones *z, const char *path)
{
	size_t i;

	for (i = 0; i < z->nfiles; i++)
		if (!strcmp(z->files[i], path))
			return;
	if (z->nfiles < JF_ETM_ZONES_MAX_FILES && (z->files[z->nfiles] = strdup(path)))
		z->nfiles++;
}

static void on_syscall_ret(void *ctx, const struct jf_prec_syscall_ret *r, const char *string)
{
	struct jf_etm_zones *z = ctx;
	struct jf_etm_zone_thread *t;
	int64_t fd;

	z->next.syscall_ret(z->next.ctx, r, string);
	if (r->vcpu == JF_PREC_OTHER_PROCESS || !(t = thread_of(z, r->tid)) || t->call != r->num)
		return;
	t->call = -1;
	if (r->num == JF_A64_SYS_OPENAT && r->ret >= 0 && r->ret < JF_ETM_ZONES_MAX_FDS) {
		/* The plugin names the file the kernel opened (an empty name: not known). */
		free(z->fd_paths[r->ret]);
		z->fd_paths[r->ret] = string && *string && jf_zone_file_name(string) ?
				      strdup(string) : NULL;
	} else if (r->num == SYS_CLOSE && r->ret == 0 && t->args[0] < JF_ETM_ZONES_MAX_FDS) {
		free(z->fd_paths[t->args[0]]);
		z->fd_paths[t->args[0]] = NULL;
	} else if (r->num == SYS_MMAP && r->ret >= 0 && (t->args[2] & PROT_EXEC_BIT)) {
		fd = (int64_t)t->args[4];
		if (fd >= 0 && fd < JF_ETM_ZONES_MAX_FDS && z->fd_paths[fd])
			add_file(z, z->fd_paths[fd]);
	}
}

void jf_etm_zones_init(struct jf_etm_zones *z, struct jf_etm_flow *flow,
		       struct jf_prec_callbacks *cb, uint64_t marker_addr)
{
	memset(z, 0, sizeof(*z));
	z->flow = flow;
	z->next = *cb;
	z->marker_addr = marker_addr;
	cb->ctx = z;
	cb->hello = on_hello;
	cb->translation = on_translation;
	cb->execs = on_execs;
	cb->syscall = on_syscall;
	cb->syscall_ret = on_syscall_ret;
}

void jf_etm_zones_free(struct jf_etm_zones *z)
{
	size_t i;

	for (i = 0; i < JF_ETM_ZONES_MAX_FDS; i++)
		free(z->fd_paths[i]);
	for (i = 0; i < z->nfiles; i++)
		free(z->files[i]);
	for (i = 0; i < z->nthreads; i++)
		free(z->threads[i].times);
	free(z->threads);
	memset(z, 0, sizeof(*z));
}

/* Retimes one file's image and says in note what could not be done. */
static void retime(struct jf_etm_zones *z, uint8_t *data, size_t size, const char *path,
		   char *note, size_t note_size)
{
	struct jf_zone_markers *markers = calloc(z->nthreads + 1, sizeof(*markers));
	struct jf_zone_copy_result res = { 0 };
	struct jf_error why = { { 0 } };
	uint64_t marker = jf_zone_marker_calls_addr(data, size);
	size_t i;

	if (!markers) {
		snprintf(note, note_size, "%s: out of memory; its timestamps are the program's "
			 "clock, not the recording's", path);
		return;
	}
	for (i = 0; i < z->nthreads; i++) {
		markers[i].tid = z->threads[i].tid;
		markers[i].times = z->threads[i].times;
		markers[i].count = z->threads[i].ntimes;
	}
	if (jf_zone_retime(data, size, markers, z->nthreads, &res, &why))
		snprintf(note, note_size, "%s: %s", path, why.msg);
	else if (!res.retimed)
		snprintf(note, note_size, "%s: no marker calls seen at a fixed address (an "
			 "emitter in a shared library, or a position-independent program); its "
			 "timestamps are the program's clock, not the recording's", path);
	else if (res.markers_unmatched)
		snprintf(note, note_size, "%s: %zu marker calls had no record", path,
			 res.markers_unmatched);
	else if (z->failed)
		snprintf(note, note_size, "%s: out of memory while recording: some records "
			 "kept the program's clock", path);
	/* The trace cannot show a marker outside --filter: readers date records by time. */
	if (marker && z->flow->filter && !jf_rec_filter_has(z->flow->filter, marker))
		jf_zone_clear_marker_calls(data, size);
	free(markers);
}

static int copy_one(struct jf_etm_zones *z, const char *path, const char *dir, FILE *summary,
		    struct jf_error *err)
{
	const char *base = strrchr(path, '/');
	char dest[PATH_MAX + 64], part[PATH_MAX + 70], note[PATH_MAX + 256] = "";
	size_t size = 0, written = 0;
	uint8_t *data = jf_zone_file_read(path, &size);
	int fd, rc = 0;

	if (!data) {
		fprintf(summary, "zone_note = %s cannot be read (%m); not copied\n", path);
		return 0;
	}
	retime(z, data, size, path, note, sizeof(note));
	if (*note)
		fprintf(summary, "zone_note = %s\n", note);
	/* Written beside and renamed over, so that a program that wrote its zone file into
	 * the recording folder itself ($JITFLOW_ZONE_DIR) keeps it whole if writing fails. */
	snprintf(dest, sizeof(dest), "%s/%s", dir, base ? base + 1 : path);
	snprintf(part, sizeof(part), "%s.part", dest);
	fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = jf_fail(err, "%s: cannot create: %m", part);
	} else if (jf_zone_file_write(fd, data, size, &written) ? (close(fd), 1) :
		   close(fd) || rename(part, dest)) {
		rc = jf_fail(err, "%s: cannot write: %m (%zu of its %zu bytes written; not "
			     "copied: the recording decodes without it; the program's own %s is "
			     "whole)", dest, written, size, path);
		unlink(part);
	}
	free(data);
	return rc;
}

int jf_etm_zones_copy(struct jf_etm_zones *z, const char *dir, struct jf_error *err)
{
	char path[PATH_MAX + 16];
	FILE *summary;
	size_t i;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/recording.txt", dir);
	summary = fopen(path, "a");
	if (!summary)
		return jf_fail(err, "%s: cannot append: %m", path);
	fprintf(summary, "zone_files = %zu\n", z->nfiles);
	for (i = 0; i < z->nfiles && !rc; i++)
		rc = copy_one(z, z->files[i], dir, summary, err);
	if (fclose(summary) && !rc)
		rc = jf_fail(err, "%s: write failed: %m", path);
	return rc;
}
