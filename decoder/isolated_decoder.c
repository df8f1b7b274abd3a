/* A decoder running in a child process (see jitflow/isolate.h and isolate_child.h).
 *
 * Parent and child talk over a socket pair in tagged records: a flow record, the end of the
 * trace (with the inner decoder's statistics, which hold facts only the backend knows:
 * trace bytes, clock), a fatal error message, or (lockstep mode) a request for code bytes.
 * In lockstep mode the parent asks for each record (sending its code map's generation) and
 * answers the child's reads until the record comes. Anything else, or the socket closing
 * early, means the child died: the parent reads where from the page they share, reports
 * it and starts a new child that goes on after the crash (see handle_crash). */
#include "jitflow/isolate.h"
#include "isolate_child.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <stdint.h>
#include <unistd.h>

enum tag { TAG_FLOW = 1, TAG_END, TAG_FATAL, TAG_READ };

/* A child that sends nothing for this long is stuck (OpenCSD can loop on corrupt input). */
enum { QUIET_LIMIT_MS = 60 * 1000, BUFFER = 1 << 16, MAX_READ = 1 << 16 };

/* Children started per decoder: each crash costs a replay up to it (see isolate_child.h),
 * so a trace that crashes the library again and again ends after this many. */
enum { MAX_CHILDREN = 24 };

struct request {
	uint64_t generation;   /* of the parent's code map */
};

struct read_request {
	uint64_t addr;
	uint32_t size;
};

struct isolated {
	struct jf_decoder *inner; /* never run here: every child starts from this state */
	struct jf_codemap *map;   /* lockstep mode: the map the child reads; NULL: streaming */
	int fd;                   /* the socket to the current child */
	uint8_t buf[BUFFER];
	size_t pos, len;
	int stuck;
	int asked;                /* lockstep: a record was asked for and has not come */
	pid_t child;
	unsigned children;
	char name[32];
	struct jf_decoder *self;  /* the wrapping decoder, for its statistics */
	int done;
	int has_last;
	struct jf_flow last;      /* the last record that arrived, for a crash's time */
	struct jf_isolate_spot *spot; /* shared with the children */
	struct jf_isolate_plan plan;  /* for the next child */
};

/* --- the child --- */

static FILE *child_out;
static int child_fd;

static void child_flush(void)
{
	fflush(child_out);
}

static int read_full(int fd, void *dst, size_t n)
{
	uint8_t *d = dst;

	while (n) {
		ssize_t got = read(fd, d, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		d += got;
		n -= (size_t)got;
	}
	return 0;
}

/* Code bytes from the parent's map (lockstep mode), one round trip each. */
static size_t child_read_remote(uint64_t addr, void *buf, size_t size)
{
	struct read_request rq = { addr, (uint32_t)(size > MAX_READ ? MAX_READ : size) };
	uint32_t got;

	fputc(TAG_READ, child_out);
	fwrite(&rq, sizeof(rq), 1, child_out);
	fflush(child_out);
	if (read_full(child_fd, &got, sizeof(got)) < 0 || got > rq.size ||
	    read_full(child_fd, buf, got) < 0)
		_exit(3); /* the parent is gone */
	return got;
}

/* The child's copy of what it read from the parent's map, valid while the map's generation
 * (sent with every request for a record) stays the one it was read under: the parent's map
 * does not change within a generation. OpenCSD reads an instruction or two at a time, so
 * without it every instruction cost a round trip to the parent. */
enum { CODE_CACHE_LINES = 256, CODE_CACHE_LINE = 4096 };
static struct code_line {
	uint64_t start, generation; /* generation 0: empty (maps start at 1) */
	uint32_t len;               /* bytes the parent had from start on, to the line's end */
	uint8_t bytes[CODE_CACHE_LINE];
} *code_cache;

static size_t child_read(uint64_t addr, void *buf, size_t size)
{
	uint64_t gen = jf_isolate_child->generation;
	struct code_line *l;
	uint64_t off;
	size_t n;

	if (!code_cache)
		code_cache = calloc(CODE_CACHE_LINES, sizeof(*code_cache));
	if (!code_cache || gen == 0)
		return child_read_remote(addr, buf, size);
	l = &code_cache[(addr / CODE_CACHE_LINE) % CODE_CACHE_LINES];
	if (l->generation != gen || addr < l->start || addr >= l->start + l->len) {
		/* from addr to the end of its line: what follows addr in the same read */
		l->start = addr;
		l->len = (uint32_t)child_read_remote(addr, l->bytes,
						     CODE_CACHE_LINE - addr % CODE_CACHE_LINE);
		l->generation = gen;
		if (l->len == 0)
			return 0;
	}
	off = addr - l->start;
	n = l->len - off < size ? l->len - off : size;
	memcpy(buf, l->bytes + off, n);
	return n;
}

static void send_result(int rc, const struct jf_flow *f, struct jf_decoder *inner,
			const struct jf_error *err)
{
	if (rc > 0) {
		fputc(TAG_FLOW, child_out);
		fwrite(f, sizeof(*f), 1, child_out);
	} else if (rc == 0) {
		fputc(TAG_END, child_out);
		fwrite(jf_decoder_stats(inner), sizeof(struct jf_decode_stats), 1, child_out);
	} else {
		fputc(TAG_FATAL, child_out);
		fwrite(err, sizeof(*err), 1, child_out);
	}
}

/* The next record the parent has not had yet (a replaying child drops the others). */
static int next_new(struct jf_decoder *inner, struct jf_flow *f, struct jf_error *err)
{
	int rc;

	while ((rc = jf_decoder_next(inner, f, err)) > 0 && jf_isolate_replaying())
		;
	return rc;
}

/* Decode and send, then leave without running the parent's exit handlers (its stdio
 * buffers belong to the parent). */
static void run_child(struct isolated *s, int fd)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	static struct jf_isolate_child me;
	struct jf_error err = { "" };
	struct jf_flow f;
	struct request rq;
	size_t i;
	int rc;

	/* A crash must end the child, whatever handlers the parent installed. */
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
	child_fd = fd;
	child_out = fdopen(fd, "w");
	if (!child_out)
		_exit(2);
	setvbuf(child_out, NULL, _IOFBF, 1 << 16);
	me.spot = s->spot;
	me.plan = s->plan;
	me.flush = child_flush;
	me.remote = s->map != NULL;
	me.read = child_read;
	jf_isolate_child = &me;
	if (!s->map) {
		while ((rc = next_new(s->inner, &f, &err)) > 0)
			send_result(rc, &f, s->inner, &err);
		send_result(rc, &f, s->inner, &err);
	} else {
		do {
			if (read_full(fd, &rq, sizeof(rq)) < 0)
				_exit(0);
			me.generation = rq.generation;
			rc = next_new(s->inner, &f, &err);
			send_result(rc, &f, s->inner, &err);
			fflush(child_out);
		} while (rc > 0);
	}
	fflush(child_out);
	_exit(0);
}

/* --- the parent --- */

static int start_child(struct isolated *s, struct jf_error *err)
{
	int fds[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) < 0)
		return jf_fail(err, "cannot start a decoding process: %s", strerror(errno));
	memset(s->spot, 0, sizeof(*s->spot));
	fflush(NULL); /* nothing buffered may be written twice */
	s->child = fork();
	if (s->child < 0) {
		close(fds[0]);
		close(fds[1]);
		s->child = 0;
		return jf_fail(err, "cannot start a decoding process: %s", strerror(errno));
	}
	if (s->child == 0) {
		close(fds[0]);
		run_child(s, fds[1]);
	}
	close(fds[1]);
	s->children++;
	s->fd = fds[0];
	s->pos = s->len = 0;
	s->stuck = 0;
	s->asked = 0;
	return 0;
}

static void stop_child(struct isolated *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->child > 0) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	s->child = 0;
}

static void error_record(struct isolated *s, struct jf_flow *f, const char *msg)
{
	size_t n = strlen(msg);

	memset(f, 0, sizeof(*f));
	f->kind = JF_FLOW_ERROR;
	f->flags = JF_FLOW_IP_SUPPRESSED;
	if (s->has_last) {
		f->source = s->last.source;
		f->offset = s->last.offset;
		/* The crash is no earlier than the last record that arrived. */
		f->flags |= s->last.flags & JF_FLOW_HAS_TIME;
		f->time = s->last.time;
	}
	f->u.error.code = -1;
	f->u.error.phase = JF_PHASE_DECODE;
	if (n >= sizeof(f->u.error.text))
		n = sizeof(f->u.error.text) - 1;
	memcpy(f->u.error.text, msg, n);
	f->u.error.text[n] = 0;
}

/* Where the next child goes on: a crash in a call of many bytes is first narrowed down
 * (the same bytes fed one frame, or one byte of a raw stream, at a time); a crash in a
 * call of one unit, or at a flush or the end, skips that unit. Every plan moves past the
 * crash, so the same bytes never crash twice in the same way. */
static int plan_restart(struct isolated *s, const struct jf_isolate_spot *at)
{
	struct jf_isolate_plan *p = &s->plan;
	uint64_t unit = at->unit ? at->unit : 1;

	if (!at->in_call || s->children >= MAX_CHILDREN || p->nskips >= JF_ISOLATE_MAX_SKIPS)
		return -1;
	if (at->op == JF_ISOLATE_DATA && at->len > unit && !at->narrowed) {
		p->narrowing = 1;
		p->narrow_buffer = at->buffer;
		p->narrow_from = at->pos;
		p->narrow_to = at->pos + at->len;
	} else {
		struct jf_isolate_skip *k = &p->skips[p->nskips++];
		uint64_t to = at->pos + (at->len > unit ? at->len : unit);

		k->buffer = at->buffer;
		k->from = at->pos;
		k->to = at->op == JF_ISOLATE_EOT ? at->size : (to + unit - 1) / unit * unit;
		k->done = 0;
		p->narrowing = 0;
	}
	/* A child that crashes while replaying (OpenCSD reading memory it does not own may
	 * crash one time and not the next) skips that spot too; what it would have sent
	 * there, the parent has had already, so the send point stays. */
	if (!at->replaying) {
		p->send_buffer = at->buffer;
		p->send_from = at->pos;
	}
	p->replaying = 1;
	return 0;
}

/* The child stopped without saying it was done. Returns 1 with an error record in *f,
 * or 0 when a new child goes on without one to report (the crash narrowed down was
 * reported already). */
static int handle_crash(struct isolated *s, struct jf_flow *f)
{
	struct jf_isolate_spot at = *s->spot;
	int status = 0;
	const char *how = "stopped";
	char msg[160];
	struct jf_error err;

	close(s->fd);
	s->fd = -1;
	if (s->stuck)
		kill(s->child, SIGKILL);
	if (waitpid(s->child, &status, 0) == s->child && WIFSIGNALED(status))
		how = s->stuck ? "no progress for a minute" : strsignal(WTERMSIG(status));
	s->child = 0;
	if (plan_restart(s, &at) < 0 || start_child(s, &err) < 0) {
		snprintf(msg, sizeof(msg), "%s crashed (%s); decoding stopped", s->name, how);
		error_record(s, f, msg);
		s->done = 1;
		return 1;
	}
	if (at.narrowed)
		return 0;
	snprintf(msg, sizeof(msg), "%s crashed (%s); resumed after it", s->name, how);
	error_record(s, f, msg);
	/* Located at the call that crashed: the first byte it was given. */
	f->source = at.source;
	f->offset = at.base + at.pos;
	return 1;
}

/* Copy n bytes of the child's output to dst; 0 when the socket closed (or the child went
 * quiet for too long) first. */
static int take(struct isolated *s, void *dst, size_t n)
{
	uint8_t *d = dst;

	while (n) {
		size_t k;

		if (s->pos == s->len) {
			struct pollfd p = { .fd = s->fd, .events = POLLIN };
			ssize_t got;
			int r = poll(&p, 1, QUIET_LIMIT_MS);

			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0) {
				s->stuck = 1;
				return 0;
			}
			got = read(s->fd, s->buf, sizeof(s->buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				return 0;
			s->pos = 0;
			s->len = (size_t)got;
		}
		k = s->len - s->pos < n ? s->len - s->pos : n;
		memcpy(d, s->buf + s->pos, k);
		s->pos += k;
		d += k;
		n -= k;
	}
	return 1;
}

static int give(struct isolated *s, const void *src, size_t n)
{
	const uint8_t *p = src;

	while (n) {
		ssize_t put = send(s->fd, p, n, MSG_NOSIGNAL);

		if (put < 0 && errno == EINTR)
			continue;
		if (put <= 0)
			return 0;
		p += put;
		n -= (size_t)put;
	}
	return 1;
}

/* A read request of the child, answered from the map as it is now. */
static int answer_read(struct isolated *s)
{
	static uint8_t bytes[MAX_READ];
	struct read_request rq;
	uint32_t got;

	if (!take(s, &rq, sizeof(rq)) || rq.size > MAX_READ)
		return 0;
	got = (uint32_t)jf_codemap_read(s->map, rq.addr, bytes, rq.size);
	return give(s, &got, sizeof(got)) && give(s, bytes, got);
}

/* The facts only the backend knows (trace size, clock), onto the wrapping decoder. */
static void copy_backend_stats(struct jf_decoder *self, const struct jf_decode_stats *inner)
{
	struct jf_decode_stats *out = jf_decoder_stats_mut(self);

	out->trace_bytes = inner->trace_bytes;
	out->time_is_ns = inner->time_is_ns;
	out->time_is_synthetic = inner->time_is_synthetic;
}

static int isolated_next(void *self, struct jf_flow *f, struct jf_error *err)
{
	struct isolated *s = self;

	while (!s->done) {
		uint8_t tag = 0;

		if (s->map && !s->asked) {
			struct request rq = { jf_codemap_generation(s->map) };

			s->asked = give(s, &rq, sizeof(rq));
		}
		if (s->asked || !s->map)
			take(s, &tag, 1);
		if (tag == TAG_READ && answer_read(s))
			continue;
		if (tag == TAG_FLOW && take(s, f, sizeof(*f))) {
			s->last = *f;
			s->has_last = 1;
			s->asked = 0;
			return 1;
		}
		if (tag == TAG_END) {
			struct jf_decode_stats inner;

			if (take(s, &inner, sizeof(inner))) {
				copy_backend_stats(s->self, &inner);
				s->done = 1;
				return 0;
			}
		}
		if (tag == TAG_FATAL) {
			struct jf_error e;

			if (take(s, &e, sizeof(e))) {
				s->done = 1;
				return jf_fail(err, "%s", e.msg);
			}
		}
		if (handle_crash(s, f))
			return 1;
	}
	return 0;
}

static void isolated_free(void *self)
{
	struct isolated *s = self;

	stop_child(s);
	jf_decoder_free(s->inner);
	if (s->spot)
		munmap(s->spot, sizeof(*s->spot));
	free(s);
}

static const struct jf_decoder_ops isolated_ops = { isolated_next, isolated_free };

static struct jf_decoder *isolate(struct jf_decoder *inner, struct jf_codemap *map,
				  const char *name, struct jf_error *err)
{
	const char *isolate = getenv("JITFLOW_ISOLATE");
	struct isolated *s;
	void *spot;

	if (!inner)
		return NULL;
	/* A fuzzer needs the library's coverage and crashes in its own process
	 * (decoder/fuzz/fuzz_perf_cs_data.c); anything else keeps the child. */
	if (isolate && !strcmp(isolate, "0"))
		return inner;
	s = calloc(1, sizeof(*s));
	spot = mmap(NULL, sizeof(*s->spot), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	if (!s || spot == MAP_FAILED) {
		free(s);
		if (spot != MAP_FAILED)
			munmap(spot, sizeof(*s->spot));
		jf_decoder_free(inner);
		jf_fail(err, "cannot start a decoding process: %s", strerror(errno));
		return NULL;
	}
	s->spot = spot;
	s->inner = inner;
	s->map = map;
	s->fd = -1;
	snprintf(s->name, sizeof(s->name), "%s", name);
	if (start_child(s, err) < 0) {
		isolated_free(s);
		return NULL;
	}
	s->self = jf_decoder_new(&isolated_ops, s);
	if (!s->self) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	/* What the backend knew when it was made (a snapshot's trace size) is there from the
	 * start, as without the child: a decoder wrapping this one (the zone filter) copies
	 * it with the first record, before the child's end says it again. */
	copy_backend_stats(s->self, jf_decoder_stats(inner));
	return s->self;
}

struct jf_decoder *jf_isolated_decoder_new(struct jf_decoder *inner, const char *name,
					   struct jf_error *err)
{
	return isolate(inner, NULL, name, err);
}

struct jf_decoder *jf_isolated_decoder_lockstep(struct jf_decoder *inner,
						struct jf_codemap *map, const char *name,
						struct jf_error *err)
{
	return isolate(inner, map, name, err);
}
