/* PyPy's phase and iteration marks placed by the program's TSC reads
 * (jitflow/pypylog_clock.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getline */
#endif
#include "jitflow/pypylog_clock.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pypylog_notes.h"

struct clock_read {
	uint64_t tsc, position;
	int32_t tid;
	uint32_t used;         /* the stamps placed on it */
};

struct reads {
	struct clock_read *r;
	size_t n, cap;
};

#define problem(pl, ...) \
	jf_pypylog_note((pl)->problem, sizeof((pl)->problem) / sizeof((pl)->problem[0]), \
			&(pl)->nproblems, __VA_ARGS__)

static int read_line(struct reads *rs, struct jf_pypylog_clock_placement *pl, const char *line,
		     uint64_t lineno, const char *name)
{
	long long tid;
	unsigned long long pos, tsc;
	int used = 0;

	if (!line[0] || line[0] == '#' || line[0] == '\n')
		return 0;
	if (sscanf(line, "%lld %llu %llx%n", &tid, &pos, &tsc, &used) < 3 ||
	    strspn(line + used, " \r\n") != strlen(line + used) || tid < INT32_MIN ||
	    tid > INT32_MAX) {
		pl->bad_lines++;
		problem(pl, "%s:%" PRIu64 ": expected \"TID POSITION TSC\"", name, lineno);
		return 0;
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 1024;
		struct clock_read *r = realloc(rs->r, cap * sizeof(*r));

		if (!r)
			return -1;
		rs->r = r;
		rs->cap = cap;
	}
	rs->r[rs->n].tsc = tsc;
	rs->r[rs->n].position = pos;
	rs->r[rs->n].tid = (int32_t)tid;
	rs->r[rs->n].used = 0;
	rs->n++;
	return 0;
}

static int by_tsc(const void *a, const void *b)
{
	const struct clock_read *x = a, *y = b;

	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

/* The last read at or below tsc, or NULL. */
static struct clock_read *read_of(const struct reads *rs, uint64_t tsc)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rs->r[mid].tsc <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &rs->r[lo - 1] : NULL;
}

static int note_tid(struct jf_pypylog_clock_placement *pl, int32_t tid)
{
	size_t i;
	int32_t *t;

	for (i = 0; i < pl->ntids; i++)
		if (pl->tids[i] == tid)
			return 0;
	t = realloc(pl->tids, (pl->ntids + 1) * sizeof(*t));
	if (!t)
		return -1;
	pl->tids = t;
	pl->tids[pl->ntids++] = tid;
	return 0;
}

/* A section's end must be on the thread its begin was: the log's sections nest per
 * thread, so a begin is matched with the next end of its phase on its thread. */
static void check_pairs(const struct jf_pypylog *log, struct jf_pypylog_clock_placement *pl)
{
	size_t i, j;

	for (i = 0; i < log->nmarks; i++) {
		const struct jf_pypylog_mark *m = &log->marks[i];
		int depth = 0;

		if (m->kind != JF_PYPY_MARK_PHASE_BEGIN || !pl->at[i].placed)
			continue;
		for (j = i + 1; j < log->nmarks; j++) {
			const struct jf_pypylog_mark *e = &log->marks[j];

			if (!pl->at[j].placed || pl->at[j].tid != pl->at[i].tid)
				continue;
			if (e->kind == JF_PYPY_MARK_PHASE_BEGIN)
				depth++;
			else if (e->kind == JF_PYPY_MARK_PHASE_END && depth-- == 0)
				break;
		}
		if (j < log->nmarks && log->marks[j].phase != m->phase) {
			pl->crossed++;
			problem(pl, "%s:%" PRIu32 ": this section's end on its thread %" PRId32
				" (line %" PRIu32 ") is another phase's", log->path, m->line,
				pl->at[i].tid, log->marks[j].line);
		}
	}
}

int jf_pypylog_place_marks_stream(const struct jf_pypylog *log, FILE *f, const char *name,
				  struct jf_pypylog_clock_placement **out, struct jf_error *err)
{
	struct jf_pypylog_clock_placement *pl = calloc(1, sizeof(*pl));
	struct reads rs = { 0 };
	char *line = NULL;
	size_t cap = 0, i;
	uint64_t lineno = 0;
	int rc = 0;

	*out = NULL;
	if (pl)
		pl->at = calloc(log->nmarks ? log->nmarks : 1, sizeof(*pl->at));
	if (!pl || !pl->at) {
		rc = jf_fail(err, "out of memory");
		goto done;
	}
	while (getline(&line, &cap, f) >= 0)
		if (read_line(&rs, pl, line, ++lineno, name) < 0) {
			rc = jf_fail(err, "%s:%" PRIu64 ": out of memory", name, lineno);
			goto done;
		}
	pl->reads = rs.n;
	if (rs.n) /* a log with no TSC read has no array to sort */
		qsort(rs.r, rs.n, sizeof(*rs.r), by_tsc);
	for (i = 0; i < log->nmarks; i++) {
		const struct jf_pypylog_mark *m = &log->marks[i];
		struct clock_read *r = read_of(&rs, m->tsc);

		if (!r) {
			pl->unplaced++;
			problem(pl, "%s:%" PRIu32 ": stamp %" PRIx64 " is below every TSC read of "
				"the recording (%s): not the same run?", log->path, m->line, m->tsc,
				name);
			continue;
		}
		if (r->used++) {
			/* One rdtsc makes one stamp: a second one means the log and the reads
			 * disagree (placed anyway, where that read was). */
			pl->shared++;
			problem(pl, "%s:%" PRIu32 ": stamp %" PRIx64 " falls on the same TSC read "
				"as an earlier stamp", log->path, m->line, m->tsc);
		}
		pl->at[i].placed = 1;
		pl->at[i].tid = r->tid;
		pl->at[i].position = r->position;
		pl->placed++;
		if (note_tid(pl, r->tid) < 0) {
			rc = jf_fail(err, "out of memory");
			goto done;
		}
	}
	check_pairs(log, pl);
done:
	free(line);
	free(rs.r);
	if (rc) {
		jf_pypylog_clock_placement_free(pl);
		return -1;
	}
	*out = pl;
	return 0;
}

int jf_pypylog_place_marks(const struct jf_pypylog *log, const char *clock_reads_path,
			   struct jf_pypylog_clock_placement **out, struct jf_error *err)
{
	FILE *f = fopen(clock_reads_path, "r");
	int rc;

	*out = NULL;
	if (!f)
		return jf_fail(err, "%s: %m", clock_reads_path);
	rc = jf_pypylog_place_marks_stream(log, f, clock_reads_path, out, err);
	fclose(f);
	return rc;
}

void jf_pypylog_clock_placement_free(struct jf_pypylog_clock_placement *p)
{
	if (!p)
		return;
	free(p->at);
	free(p->tids);
	free(p);
}
