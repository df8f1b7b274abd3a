/* Records in sequence order. The emitter buffers records per thread, so a file holds runs
 * of records in seq order (a thread's buffer), interleaved out of order with other
 * threads' runs. At open the file's record prefixes are walked once to cut it into runs
 * (a new run begins where seq goes back); jf_zone_next then merges the runs by seq with a
 * heap. Memory: one entry per run, i.e. per out-of-order buffer flush, not per record; a
 * file written by one thread is one run. perf's records (CODE_LOAD, CODE_MOVE) go with
 * the extension record after them; records after the last extension record of the file
 * (CODE_CLOSE) come last; a file without extension records is read in file order. */
#include <inttypes.h>
#include <stdlib.h>

#include "zone_internal.h"

/* The prefix of the record at off: 1 = read, 0 = no whole record there (*why set). */
static int prefix_at(const struct jf_zone_reader *r, size_t off, uint32_t *id, uint32_t *size,
		     uint64_t *seq, int *is_ext)
{
	struct jf_cursor c = { r->file.data + off, r->file.size - off, r->header.swapped, 1 };

	*id = jf_cur_u32(&c);
	*size = jf_cur_u32(&c);
	(void)jf_cur_u64(&c);
	if (!c.ok || *size < JF_JITDUMP_PREFIX_SIZE || *size > r->file.size - off)
		return 0;
	*is_ext = *id > JF_ZONE_ID_BASE && *id <= JF_ZONE_ID_LAST &&
		  *size >= JF_JITDUMP_PREFIX_SIZE + JF_ZONE_EXT_PREFIX_SIZE;
	*seq = *is_ext ? jf_cur_u64(&c) : 0;
	return 1;
}

/* The seq of the first extension record at or after the run's position (UINT64_MAX: none,
 * only perf's records are left). */
static void set_key(const struct jf_zone_reader *r, struct jf_zone_run *run)
{
	size_t off = run->pos;

	run->key = UINT64_MAX;
	while (off < run->end) {
		uint32_t id, size;
		uint64_t seq;
		int ext;

		if (!prefix_at(r, off, &id, &size, &seq, &ext))
			return;
		if (ext) {
			run->key = seq;
			return;
		}
		off += size;
	}
}

static int before(const struct jf_zone_run *a, const struct jf_zone_run *b)
{
	return a->key != b->key ? a->key < b->key : a->start < b->start;
}

static void sift_down(struct jf_zone_reader *r, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct jf_zone_run t;

		if (l < r->nruns && before(&r->runs[l], &r->runs[m]))
			m = l;
		if (l + 1 < r->nruns && before(&r->runs[l + 1], &r->runs[m]))
			m = l + 1;
		if (m == i)
			return;
		t = r->runs[i];
		r->runs[i] = r->runs[m];
		r->runs[m] = t;
		i = m;
	}
}

static int add_run(struct jf_zone_reader *r, size_t start, size_t end, struct jf_error *err)
{
	struct jf_zone_run *v;

	if (start >= end)
		return 0;
	if (r->nruns == JF_ZONE_MAX_RUNS)
		return jf_fail(err, "%s: offset %zu: more than %d runs of records out of sequence "
			       "order (threads' buffers); the file is damaged or its writer "
			       "flushed far too often", r->name, start, JF_ZONE_MAX_RUNS);
	if (r->nruns == r->runs_cap) {
		size_t cap = r->runs_cap ? r->runs_cap * 2 : 4;

		v = realloc(r->runs, cap * sizeof(*v));
		if (!v)
			return jf_fail(err, "%s: out of memory ordering records", r->name);
		r->runs = v;
		r->runs_cap = cap;
	}
	r->runs[r->nruns++] = (struct jf_zone_run){ start, end, start, 0 };
	return 0;
}

int jf_zone_order_scan(struct jf_zone_reader *r, struct jf_error *err)
{
	size_t off = r->pos, run_start = off, after_last_ext = off, i;
	uint64_t prev_seq = 0;

	while (off < r->file.size) {
		uint32_t id, size;
		uint64_t seq;
		int ext;

		if (!prefix_at(r, off, &id, &size, &seq, &ext)) {
			/* Reported (by jf_zone_next's own checks) after every whole record. */
			break;
		}
		if (ext) {
			if (seq < prev_seq) {
				/* A run ends with its last extension record; perf's records after
				 * it lead up to the next one. */
				if (add_run(r, run_start, after_last_ext, err))
					return -1;
				run_start = after_last_ext;
			}
			prev_seq = seq;
			after_last_ext = off + size;
		}
		off += size;
	}
	r->scan_end = off;
	if (add_run(r, run_start, off, err))
		return -1;
	r->stats.runs = r->nruns;
	for (i = 0; i < r->nruns; i++)
		set_key(r, &r->runs[i]);
	for (i = r->nruns / 2; i-- > 0;)
		sift_down(r, i);
	return 0;
}

size_t jf_zone_order_next(struct jf_zone_reader *r)
{
	return r->nruns ? r->runs[0].pos : r->scan_end;
}

void jf_zone_order_advance(struct jf_zone_reader *r, size_t size, int was_ext)
{
	struct jf_zone_run *run = &r->runs[0];

	run->pos += size;
	if (run->pos >= run->end) {
		r->runs[0] = r->runs[--r->nruns];
	} else if (was_ext) {
		set_key(r, run);
	} else {
		return; /* same key: perf's records run on to their extension record */
	}
	sift_down(r, 0);
}

/* Each extension record's seq against the one before: duplicates and gaps are counted,
 * and the first of each located, never silently merged or skipped. */
void jf_zone_order_check(struct jf_zone_reader *r, const struct jf_zone_record *rec)
{
	struct jf_zone_stats *s = &r->stats;

	if (rec->seq == r->last_seq) {
		if (!s->seq_duplicates++)
			s->first_duplicate_offset = rec->offset;
	} else if (rec->seq > r->last_seq + 1) {
		if (!s->seq_gaps++) {
			s->first_gap_offset = rec->offset;
			s->first_gap_after = r->last_seq;
		}
		s->seq_missing += rec->seq - r->last_seq - 1;
	}
	r->last_seq = rec->seq;
}
