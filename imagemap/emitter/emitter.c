/* The emitter object: opening jit-PID.dump, the executable marker mapping, the record
 * buffer, flushing (explicitly, on close and at process exit) and the sequence numbers.
 * The record types themselves are in records.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emitter_internal.h"
#include "jitflow/zone_format.h"

/* The bounds of the emitter's code section (JF_EMIT_CODE), from the linker. */
extern const char __start_jitflow_emit_text[] __attribute__((visibility("hidden")));
extern const char __stop_jitflow_emit_text[] __attribute__((visibility("hidden")));

/* Emitters still open, flushed by the atexit handler. */
static pthread_mutex_t open_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct jf_emitter *open_list;
static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;

JF_EMIT_CODE
int jf_emit_fail(struct jf_emitter *em, const char *what)
{
	if (!em->failed) {
		snprintf(em->error, sizeof(em->error), "%s: %s: %s", em->path ? em->path : "jitdump",
			 what, strerror(errno));
		em->failed = 1;
	}
	return -1;
}

JF_EMIT_CODE
static int write_all(struct jf_emitter *em, const uint8_t *p, size_t size)
{
	while (size) {
		ssize_t n = write(em->fd, p, size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return jf_emit_fail(em, "write failed");
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

JF_EMIT_CODE
static int flush_locked(struct jf_emitter *em)
{
	int rc = 0;

	if (em->fill && !em->failed)
		rc = write_all(em, em->buffer, em->fill);
	em->fill = 0;
	return em->failed ? -1 : rc;
}

/* Fill the buffer, writing it out each time it is full. */
JF_EMIT_CODE
void jf_emit_put_slow(struct jf_emitter *em, const void *data, size_t size)
{
	const uint8_t *p = data;

	while (size) {
		size_t room = sizeof(em->buffer) - em->fill, n = size < room ? size : room;

		memcpy(em->buffer + em->fill, p, n);
		em->fill += n;
		p += n;
		size -= n;
		if (em->fill == sizeof(em->buffer))
			flush_locked(em);
	}
}


JF_EMIT_CODE
void jf_emit_put_str(struct jf_emitter *em, const char *s)
{
	if (!s)
		s = "";
	jf_emit_put(em, s, strlen(s) + 1);
}

JF_EMIT_CODE
static void put_prefix(struct jf_emitter *em, uint32_t id, size_t total)
{
	jf_emit_put_u32(em, id);
	jf_emit_put_u32(em, (uint32_t)total);
	jf_emit_put_u64(em, jf_emit_now(em->flags));
}

JF_EMIT_CODE
void jf_emit_begin_jitdump(struct jf_emitter *em, uint32_t id, size_t body_size)
{
	put_prefix(em, id, JF_JITDUMP_PREFIX_SIZE + body_size);
}

JF_EMIT_CODE
uint64_t jf_emit_begin_ext(struct jf_emitter *em, uint32_t id, size_t body_size)
{
	uint64_t seq = em->next_seq++;

	put_prefix(em, id, JF_JITDUMP_PREFIX_SIZE + JF_ZONE_EXT_PREFIX_SIZE + body_size);
	jf_emit_put_u64(em, seq);
	jf_emit_put_u32(em, jf_emit_tid());
	jf_emit_put_u16(em, JF_ZONE_EXT_VERSION);
	jf_emit_put_u16(em, 0);
	return seq;
}

JF_EMIT_CODE
uint64_t jf_emit_end(struct jf_emitter *em, uint64_t seq)
{
	int failed = em->failed;
	unsigned flags = em->flags;
	int ptw = em->use_ptwrite;

	pthread_mutex_unlock(&em->lock);
	if (failed)
		return 0;
	/* After the record, on the thread that made the change: from here on the trace runs
	 * over the described code. */
	if (!(flags & JF_EMIT_NO_MARKER_CALLS))
		jf_emitter_marker(seq);
	if (ptw)
		jf_emit_ptwrite(seq);
	return seq;
}

JF_EMIT_CODE
static void flush_all_at_exit(void)
{
	struct jf_emitter *em;

	pthread_mutex_lock(&open_list_lock);
	for (em = open_list; em; em = em->next_open) {
		pthread_mutex_lock(&em->lock);
		flush_locked(em);
		pthread_mutex_unlock(&em->lock);
	}
	pthread_mutex_unlock(&open_list_lock);
}

JF_EMIT_CODE
static void register_atexit(void)
{
	atexit(flush_all_at_exit);
}

JF_EMIT_CODE
static void write_header(struct jf_emitter *em)
{
	jf_emit_put_u32(em, JF_JITDUMP_MAGIC);
	jf_emit_put_u32(em, JF_JITDUMP_VERSION);
	jf_emit_put_u32(em, JF_JITDUMP_HEADER_SIZE);
	jf_emit_put_u32(em, jf_emit_elf_machine());
	jf_emit_put_u32(em, 0);
	jf_emit_put_u32(em, em->pid);
	jf_emit_put_u64(em, jf_emit_now(em->flags));
	jf_emit_put_u64(em, (em->flags & JF_EMIT_CLOCK_TSC) ? JF_JITDUMP_FLAG_ARCH_TIMESTAMP : 0);
}

/* A pair of simultaneous clock readings, so a reader can convert timestamps to the trace's
 * clock (and, from the pairs at open and close, derive the tick rate). */
JF_EMIT_CODE
static uint64_t emit_clock(struct jf_emitter *em)
{
	uint64_t seq, mono, ticks;

	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_CLOCK, JF_ZONE_CLOCK_FIXED);
	ticks = jf_emit_ticks();
	mono = jf_emit_monotonic_ns();
#if defined(__aarch64__)
	jf_emit_put_u32(em, (em->flags & JF_EMIT_CLOCK_TSC) ? JF_ZONE_CLOCK_ARM_CNTVCT
							     : JF_ZONE_CLOCK_MONOTONIC);
#else
	jf_emit_put_u32(em, (em->flags & JF_EMIT_CLOCK_TSC) ? JF_ZONE_CLOCK_TSC
							     : JF_ZONE_CLOCK_MONOTONIC);
#endif
	jf_emit_put_u32(em, 0);
	jf_emit_put_u64(em, jf_emit_tick_hz());
	jf_emit_put_u64(em, mono);
	jf_emit_put_u64(em, ticks);
	return jf_emit_end(em, seq);
}

/* Where the marker function is in this process, and which markers follow records. */
JF_EMIT_CODE
static uint64_t emit_marker_info(struct jf_emitter *em)
{
	uint64_t seq;
	uint32_t methods = 0;

	if (!(em->flags & JF_EMIT_NO_MARKER_CALLS))
		methods |= JF_ZONE_MARKER_CALLS;
	if (em->use_ptwrite)
		methods |= JF_ZONE_MARKER_PTWRITE;
	pthread_mutex_lock(&em->lock);
	seq = jf_emit_begin_ext(em, JF_ZONE_MARKER, JF_ZONE_MARKER_FIXED);
	jf_emit_put_u64(em, (uint64_t)(uintptr_t)&jf_emitter_marker);
	jf_emit_put_u32(em, methods);
	jf_emit_put_u32(em, 0);
	return jf_emit_end(em, seq);
}

JF_EMIT_CODE
struct jf_emitter *jf_emitter_open(const char *dir, unsigned flags)
{
	struct jf_emitter *em;
	char path[PATH_MAX];
	long page = sysconf(_SC_PAGESIZE);

	if (!dir)
		dir = getenv("JITFLOW_ZONE_DIR");
	if (!dir || !*dir)
		dir = ".";
	em = calloc(1, sizeof(*em));
	if (!em)
		return NULL;
	pthread_mutex_init(&em->lock, NULL);
	em->flags = flags;
	em->pid = (uint32_t)getpid();
	em->next_seq = 1;
	em->use_ptwrite = (flags & JF_EMIT_PTWRITE) && jf_emit_cpu_has_ptwrite();
	snprintf(path, sizeof(path), "%s/jit-%u.dump", dir, em->pid);
	em->path = strdup(path);
	em->fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (!em->path || em->fd < 0) {
		free(em->path);
		free(em);
		return NULL;
	}
	write_header(em);
	flush_locked(em);
	/* perf (and jitflow's recorder) learn of the file through the MMAP record of an
	 * executable mapping of it: the same trick as perf's own jvmti agent. */
	em->marker_map_size = page > 0 ? (size_t)page : 4096;
	em->marker_map = mmap(NULL, em->marker_map_size, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			      em->fd, 0);
	if (em->marker_map == MAP_FAILED) {
		/* Records are still written; only perf's automatic discovery is lost. */
		em->marker_map = NULL;
		snprintf(em->error, sizeof(em->error), "%s: executable marker mapping failed: %s",
			 em->path, strerror(errno));
	}
	emit_clock(em);
	emit_marker_info(em);
	jf_emit_interp_range(em, JF_INTERP_INSTRUMENTATION,
			     (uint64_t)(uintptr_t)__start_jitflow_emit_text,
			     (uint64_t)(uintptr_t)__stop_jitflow_emit_text, "jitflow emitter");

	pthread_once(&atexit_once, register_atexit);
	pthread_mutex_lock(&open_list_lock);
	em->next_open = open_list;
	open_list = em;
	pthread_mutex_unlock(&open_list_lock);
	return em;
}

JF_EMIT_CODE
int jf_emitter_flush(struct jf_emitter *em)
{
	int rc;

	if (!em)
		return -1;
	pthread_mutex_lock(&em->lock);
	rc = flush_locked(em);
	pthread_mutex_unlock(&em->lock);
	return rc;
}

JF_EMIT_CODE
void jf_emitter_close(struct jf_emitter *em)
{
	struct jf_emitter **p;

	if (!em)
		return;
	pthread_mutex_lock(&open_list_lock);
	for (p = &open_list; *p; p = &(*p)->next_open) {
		if (*p == em) {
			*p = em->next_open;
			break;
		}
	}
	pthread_mutex_unlock(&open_list_lock);

	emit_clock(em);
	pthread_mutex_lock(&em->lock);
	jf_emit_begin_jitdump(em, JF_JITDUMP_CODE_CLOSE, 0);
	flush_locked(em);
	pthread_mutex_unlock(&em->lock);
	if (em->marker_map)
		munmap(em->marker_map, em->marker_map_size);
	close(em->fd);
	jf_code_index_free(&em->code_index);
	pthread_mutex_destroy(&em->lock);
	free(em->path);
	free(em);
}

JF_EMIT_CODE
const char *jf_emitter_error(const struct jf_emitter *em)
{
	if (!em)
		return "no emitter";
	return em->error[0] ? em->error : NULL;
}

JF_EMIT_CODE
const char *jf_emitter_path(const struct jf_emitter *em)
{
	return em ? em->path : NULL;
}
