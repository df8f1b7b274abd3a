/* The emitter object: opening jit-PID.dump, the executable marker mapping, the record
 * prefixes, the sequence numbers, flushing and closing. Thread buffers are in
 * thread_buffers.c, the record types in records.c. */
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

static atomic_uint_fast64_t next_emitter_id = 1;

JF_EMIT_CODE
int jf_emit_fail(struct jf_emitter *em, const char *what)
{
	int saved = errno;

	if (!atomic_exchange(&em->failed, 1))
		snprintf(em->error, sizeof(em->error), "%s: %s: %s", em->path ? em->path : "jitdump",
			 what, strerror(saved));
	return -1;
}

/* The caller holds file_lock (or the file is not shared yet). */
JF_EMIT_CODE
int jf_emit_write_all(struct jf_emitter *em, const uint8_t *p, size_t size)
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
void jf_emit_put_str(struct jf_emitter *em, struct jf_emit_tbuf *tb, const char *s)
{
	if (!s)
		s = "";
	jf_emit_put(em, tb, s, strlen(s) + 1);
}

/* id, total_size and the timestamp, as one store of 16 bytes. */
JF_EMIT_CODE
static void put_prefix(struct jf_emitter *em, struct jf_emit_tbuf *tb, uint32_t id,
		       size_t total)
{
	struct {
		uint32_t id, total;
		uint64_t timestamp;
	} p = { id, (uint32_t)total, jf_emit_now(em->clock_tsc) };

	jf_emit_put(em, tb, &p, sizeof(p));
}

JF_EMIT_CODE
void jf_emit_begin_jitdump(struct jf_emitter *em, struct jf_emit_tbuf *tb, uint32_t id,
			   size_t body_size)
{
	put_prefix(em, tb, id, JF_JITDUMP_PREFIX_SIZE + body_size);
}

JF_EMIT_CODE
uint64_t jf_emit_begin_ext(struct jf_emitter *em, struct jf_emit_tbuf *tb, uint32_t id,
			   size_t body_size)
{
	struct jf_emit_ext_prefix p;

	jf_emit_ext_prefix(em, tb, &p, id, body_size);
	jf_emit_put(em, tb, &p, sizeof(p));
	return p.seq;
}

JF_EMIT_CODE
static int write_header(struct jf_emitter *em)
{
	struct {
		uint32_t magic, version, total_size, elf_mach, pad1, pid;
		uint64_t timestamp, flags;
	} h = { JF_JITDUMP_MAGIC, JF_JITDUMP_VERSION, JF_JITDUMP_HEADER_SIZE,
		jf_emit_elf_machine(), 0, em->pid, jf_emit_now(em->clock_tsc),
		em->clock_tsc ? JF_JITDUMP_FLAG_ARCH_TIMESTAMP : 0 };

	_Static_assert(sizeof(h) == JF_JITDUMP_HEADER_SIZE, "jitdump header is 40 bytes");
	return jf_emit_write_all(em, (const uint8_t *)&h, sizeof(h));
}

/* A pair of simultaneous clock readings, so a reader can convert timestamps to the trace's
 * clock (and, from the pairs at open and close, derive the tick rate). */
JF_EMIT_CODE
static uint64_t emit_clock(struct jf_emitter *em)
{
	struct jf_emit_tbuf *tb = jf_emit_begin(em);
	uint64_t seq, mono, ticks;

	if (!tb)
		return 0;
	seq = jf_emit_begin_ext(em, tb, JF_ZONE_CLOCK, JF_ZONE_CLOCK_FIXED);
	ticks = jf_emit_ticks();
	mono = jf_emit_monotonic_ns();
#if defined(__aarch64__)
	jf_emit_put_u32(em, tb, em->clock_tsc ? JF_ZONE_CLOCK_ARM_CNTVCT : JF_ZONE_CLOCK_MONOTONIC);
#else
	jf_emit_put_u32(em, tb, em->clock_tsc ? JF_ZONE_CLOCK_TSC : JF_ZONE_CLOCK_MONOTONIC);
#endif
	jf_emit_put_u32(em, tb, 0);
	jf_emit_put_u64(em, tb, jf_emit_tick_hz());
	jf_emit_put_u64(em, tb, mono);
	jf_emit_put_u64(em, tb, ticks);
	return jf_emit_end(em, tb, seq);
}

/* Where the marker function is in this process, and which markers follow records. */
JF_EMIT_CODE
static uint64_t emit_marker_info(struct jf_emitter *em)
{
	struct jf_emit_tbuf *tb = jf_emit_begin(em);
	uint64_t seq;
	uint32_t methods = 0;

	if (!tb)
		return 0;
	if (!(em->flags & JF_EMIT_NO_MARKER_CALLS))
		methods |= JF_ZONE_MARKER_CALLS;
	if (em->use_ptwrite)
		methods |= JF_ZONE_MARKER_PTWRITE;
	seq = jf_emit_begin_ext(em, tb, JF_ZONE_MARKER, JF_ZONE_MARKER_FIXED);
	jf_emit_put_u64(em, tb, (uint64_t)(uintptr_t)&jf_emitter_marker);
	jf_emit_put_u32(em, tb, methods);
	jf_emit_put_u32(em, tb, 0);
	return jf_emit_end(em, tb, seq);
}

JF_EMIT_CODE
static void free_emitter(struct jf_emitter *em)
{
	pthread_mutex_destroy(&em->file_lock);
	pthread_mutex_destroy(&em->tbufs_lock);
	pthread_mutex_destroy(&em->index_lock);
	free(em->path);
	free(em);
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
	pthread_mutex_init(&em->file_lock, NULL);
	pthread_mutex_init(&em->tbufs_lock, NULL);
	pthread_mutex_init(&em->index_lock, NULL);
	em->id = atomic_fetch_add(&next_emitter_id, 1);
	em->flags = flags;
	/* A record reads the clock: CLOCK_MONOTONIC only where that is no system call (a
	 * vDSO), else the arch counter, which the file header then says (ARCH_TIMESTAMP). */
	em->clock_tsc = (flags & JF_EMIT_CLOCK_TSC) || !jf_emit_monotonic_is_cheap();
	em->pid = (uint32_t)getpid();
	atomic_init(&em->next_seq, 1);
	em->use_ptwrite = (flags & JF_EMIT_PTWRITE) && jf_emit_cpu_has_ptwrite();
	snprintf(path, sizeof(path), "%s/jit-%u.dump", dir, em->pid);
	em->path = strdup(path);
	em->fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (!em->path || em->fd < 0) {
		if (em->fd >= 0)
			close(em->fd);
		free_emitter(em);
		return NULL;
	}
	write_header(em);
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
	jf_emit_register_open(em);
	emit_clock(em);
	emit_marker_info(em);
	jf_emit_interp_range(em, JF_INTERP_INSTRUMENTATION,
			     (uint64_t)(uintptr_t)__start_jitflow_emit_text,
			     (uint64_t)(uintptr_t)__stop_jitflow_emit_text, "jitflow emitter");
	return em;
}

JF_EMIT_CODE
int jf_emitter_flush(struct jf_emitter *em)
{
	if (!em)
		return -1;
	return jf_emit_flush_all(em);
}

/* The caller must make sure no other thread still emits through em. */
JF_EMIT_CODE
void jf_emitter_close(struct jf_emitter *em)
{
	struct {
		uint32_t id, total;
		uint64_t timestamp;
	} close_rec;

	if (!em)
		return;
	emit_clock(em);
	jf_emit_unregister_open(em);
	jf_emit_tbufs_free(em);
	/* perf's CODE_CLOSE ends the file, after every thread's records. */
	close_rec.id = JF_JITDUMP_CODE_CLOSE;
	close_rec.total = JF_JITDUMP_PREFIX_SIZE;
	close_rec.timestamp = jf_emit_now(em->clock_tsc);
	if (!atomic_load(&em->failed))
		jf_emit_write_all(em, (const uint8_t *)&close_rec, sizeof(close_rec));
	if (em->marker_map)
		munmap(em->marker_map, em->marker_map_size);
	close(em->fd);
	jf_code_index_free(&em->code_index);
	free_emitter(em);
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
