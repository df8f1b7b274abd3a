/* The per-iteration series (one row per iteration mark of the runtime) in bounded memory.
 *
 * A long run marks millions of iterations, and the series grows with them, not with the
 * code: rows are kept in a buffer of CHUNK rows, and each full buffer is written to a
 * temporary file in $TMPDIR (or /tmp), unlinked as soon as it is created, so that
 * nothing is left behind. Reading goes through a window of CHUNK rows, so the views that
 * print the series in order read the file once. A series of at most CHUNK rows never
 * touches a file. The analysis and every result taken from it share one series (counted
 * references): a result costs no copy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis_internal.h"

#define CHUNK 4096 /* rows (200 bytes each): 800 KiB */

struct jf_iteration_series {
	unsigned refs;
	size_t n;                      /* rows, written or in the buffer */
	size_t flushed;                /* rows in the file (always whole chunks) */
	int fd;                        /* -1 until the first chunk is written */
	int failed;                    /* errno of a failed read or write, else 0 */
	struct jf_iteration_result tail[CHUNK];   /* rows flushed .. n */
	struct jf_iteration_result window[CHUNK]; /* rows window_first .. + CHUNK of the file */
	size_t window_first;
	int window_valid;
};

struct jf_iteration_series *jf_iteration_series_new(void)
{
	struct jf_iteration_series *s = malloc(sizeof(*s));

	if (!s)
		return NULL;
	memset(s, 0, offsetof(struct jf_iteration_series, tail));
	s->refs = 1;
	s->fd = -1;
	s->window_valid = 0;
	return s;
}

struct jf_iteration_series *jf_iteration_series_ref(struct jf_iteration_series *s)
{
	if (s)
		s->refs++;
	return s;
}

void jf_iteration_series_unref(struct jf_iteration_series *s)
{
	if (!s || --s->refs)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

size_t jf_iteration_series_count(const struct jf_iteration_series *s)
{
	return s ? s->n : 0;
}

static int open_spill(struct jf_iteration_series *s)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];

	if (!dir || !*dir)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/jitflow-iterations-XXXXXX", dir);
	s->fd = mkstemp(path);
	if (s->fd < 0)
		return -1;
	unlink(path);
	return 0;
}

static int write_all(int fd, const void *buf, size_t len, off_t at)
{
	const char *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, at);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
		at += w;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len, off_t at)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, at);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO; /* the file is shorter than what was written */
			return -1;
		}
		p += r;
		len -= (size_t)r;
		at += r;
	}
	return 0;
}

int jf_iteration_series_append(struct jf_iteration_series *s, const struct jf_iteration_result *row)
{
	if (s->n - s->flushed == CHUNK) {
		if ((s->fd < 0 && open_spill(s) < 0) ||
		    write_all(s->fd, s->tail, sizeof(s->tail),
			      (off_t)(s->flushed * sizeof(*row))) < 0) {
			s->failed = errno ? errno : EIO;
			return -1;
		}
		s->flushed += CHUNK;
	}
	s->tail[s->n++ - s->flushed] = *row;
	return 0;
}

/* Row i in memory: in the buffer, or in the read window (loaded from the file). */
static struct jf_iteration_result *row_at(struct jf_iteration_series *s, size_t i)
{
	size_t first = i / CHUNK * CHUNK;

	if (i >= s->flushed)
		return &s->tail[i - s->flushed];
	if (!s->window_valid || s->window_first != first) {
		s->window_valid = 0;
		if (read_all(s->fd, s->window, sizeof(s->window),
			     (off_t)(first * sizeof(s->window[0]))) < 0) {
			s->failed = errno ? errno : EIO;
			return NULL;
		}
		s->window_first = first;
		s->window_valid = 1;
	}
	return &s->window[i - first];
}

int jf_iteration_series_get(struct jf_iteration_series *s, size_t i, struct jf_iteration_result *row)
{
	const struct jf_iteration_result *p = i < s->n ? row_at(s, i) : NULL;

	if (!p) {
		memset(row, 0, sizeof(*row));
		return -1;
	}
	*row = *p;
	return 0;
}

int jf_iteration_series_add_time(struct jf_iteration_series *s, size_t i, uint64_t delta)
{
	struct jf_iteration_result *p = i < s->n ? row_at(s, i) : NULL;

	if (!p)
		return -1;
	p->time += delta;
	if (i < s->flushed &&
	    write_all(s->fd, p, sizeof(*p), (off_t)(i * sizeof(*p))) < 0) {
		s->failed = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

int jf_iteration_series_error(const struct jf_iteration_series *s)
{
	return s ? s->failed : 0;
}

/* ---- the result's view of it ---------------------------------------------------------- */

int jf_analysis_iteration(const struct jf_analysis_result *r, size_t i,
			  struct jf_iteration_result *row)
{
	if (i >= r->niterations) {
		memset(row, 0, sizeof(*row));
		return -1;
	}
	/* The iteration under way when the trace ended follows the closed ones. */
	if (r->has_open_iteration && i + 1 == r->niterations) {
		*row = r->open_iteration;
		return 0;
	}
	return jf_iteration_series_get(r->iteration_series, i, row);
}

int jf_analysis_iterations_error(const struct jf_analysis_result *r)
{
	return jf_iteration_series_error(r->iteration_series);
}
