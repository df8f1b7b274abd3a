/* A decoder running in a child process (see jitflow/isolate.h).
 *
 * The pipe carries tagged records: a flow record, the end of the trace (with the inner
 * decoder's statistics, which hold facts only the backend knows: trace bytes, clock), or a
 * fatal error message. Anything else, or the pipe closing early, means the child died. */
#include "jitflow/isolate.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <stdint.h>
#include <unistd.h>

enum tag { TAG_FLOW = 1, TAG_END, TAG_FATAL };

/* A child that sends nothing for this long is stuck (OpenCSD can loop on corrupt input). */
enum { QUIET_LIMIT_MS = 60 * 1000, BUFFER = 1 << 16 };

struct isolated {
	int fd;                 /* the child's records */
	uint8_t buf[BUFFER];
	size_t pos, len;
	int stuck;
	pid_t child;
	char name[32];
	struct jf_decoder *self; /* the wrapping decoder, for its statistics */
	int done;
	int has_last;
	struct jf_flow last;    /* the last record that arrived, to locate a crash */
};

/* The child: decode and send everything, then leave without running the parent's exit
 * handlers (its stdio buffers belong to the parent). */
static void run_child(struct jf_decoder *inner, int fd)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	FILE *out = fdopen(fd, "w");
	struct jf_error err = { "" };
	struct jf_flow f;
	size_t i;
	int rc;

	/* A crash must end the child, whatever handlers the parent installed. */
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
	if (!out)
		_exit(2);
	setvbuf(out, NULL, _IOFBF, 1 << 16);
	while ((rc = jf_decoder_next(inner, &f, &err)) > 0) {
		fputc(TAG_FLOW, out);
		fwrite(&f, sizeof(f), 1, out);
	}
	if (rc == 0) {
		fputc(TAG_END, out);
		fwrite(jf_decoder_stats(inner), sizeof(struct jf_decode_stats), 1, out);
	} else {
		fputc(TAG_FATAL, out);
		fwrite(&err, sizeof(err), 1, out);
	}
	fflush(out);
	_exit(0);
}

/* The child stopped sending without saying it was done: report how it ended, located
 * after the last record that arrived. */
static void child_died(struct isolated *s, struct jf_flow *f)
{
	int status = 0;
	const char *how = "stopped";
	char what[64], msg[160];
	size_t n;

	close(s->fd);
	s->fd = -1;
	if (s->stuck)
		kill(s->child, SIGKILL);
	if (waitpid(s->child, &status, 0) == s->child && WIFSIGNALED(status))
		how = s->stuck ? "no progress for a minute" : strsignal(WTERMSIG(status));
	s->child = 0;
	memset(f, 0, sizeof(*f));
	f->kind = JF_FLOW_ERROR;
	f->flags = JF_FLOW_IP_SUPPRESSED;
	if (s->has_last) {
		f->source = s->last.source;
		f->offset = s->last.offset;
	}
	f->u.error.code = -1;
	f->u.error.phase = JF_PHASE_DECODE;
	snprintf(what, sizeof(what), "%s", how);
	snprintf(msg, sizeof(msg), "%s crashed (%s); decoding stopped", s->name, what);
	n = strlen(msg);
	if (n >= sizeof(f->u.error.text))
		n = sizeof(f->u.error.text) - 1;
	memcpy(f->u.error.text, msg, n);
	f->u.error.text[n] = 0;
}

/* Copy n bytes of the child's output to dst; 0 when the pipe ended (or the child went
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

static int isolated_next(void *self, struct jf_flow *f, struct jf_error *err)
{
	struct isolated *s = self;
	uint8_t tag = 0;

	if (s->done)
		return 0;
	take(s, &tag, 1);
	if (tag == TAG_FLOW && take(s, f, sizeof(*f))) {
		s->last = *f;
		s->has_last = 1;
		return 1;
	}
	if (tag == TAG_END) {
		struct jf_decode_stats inner;

		if (take(s, &inner, sizeof(inner))) {
			struct jf_decode_stats *out = jf_decoder_stats_mut(s->self);

			out->trace_bytes = inner.trace_bytes;
			out->time_is_ns = inner.time_is_ns;
			out->time_is_synthetic = inner.time_is_synthetic;
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
	child_died(s, f);
	s->done = 1;
	return 1;
}

static void isolated_free(void *self)
{
	struct isolated *s = self;

	if (s->fd >= 0)
		close(s->fd);
	if (s->child > 0) {
		kill(s->child, SIGKILL);
		waitpid(s->child, NULL, 0);
	}
	free(s);
}

static const struct jf_decoder_ops isolated_ops = { isolated_next, isolated_free };

struct jf_decoder *jf_isolated_decoder_new(struct jf_decoder *inner, const char *name,
					   struct jf_error *err)
{
	struct isolated *s;
	int fds[2];

	if (!inner)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s || pipe(fds) < 0) {
		free(s);
		jf_decoder_free(inner);
		jf_fail(err, "cannot start a decoding process: %s", strerror(errno));
		return NULL;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	fflush(NULL); /* nothing buffered may be written twice */
	s->child = fork();
	if (s->child < 0) {
		close(fds[0]);
		close(fds[1]);
		free(s);
		jf_decoder_free(inner);
		jf_fail(err, "cannot start a decoding process: %s", strerror(errno));
		return NULL;
	}
	if (s->child == 0) {
		close(fds[0]);
		run_child(inner, fds[1]);
	}
	close(fds[1]);
	jf_decoder_free(inner); /* the child has its own copy */
	s->fd = fds[0];
	s->self = jf_decoder_new(&isolated_ops, s);
	if (!s->self) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	return s->self;
}
