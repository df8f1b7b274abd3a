/* Scheduling a cs_etm perf.data's records by time (see perf_cs_order.h). */
#include "perf_cs_order.h"

#include "jitflow/perf_cs_etm.h"

#include <stdlib.h>
#include <string.h>

/* Buffers placed by an AUX record's time go after all sideband of that time. */
#define AFTER_SIDEBAND (1ull << 62)

/* What an AUX record says about the ring: where, when, whose. */
struct aux_note {
	uint64_t time, offset, size;
	uint32_t cpu, flags;
	int32_t tid;
	int has_cpu;
};

/* An AUXTRACE buffer waiting to be placed. */
struct buffer_note {
	size_t item;              /* its index in the schedule */
	uint64_t offset, size;    /* aux offset and size */
	uint32_t cpu;
	int32_t tid;
};

static int push(void **v, size_t *n, size_t *cap, size_t elem, const void *x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *p = realloc(*v, c * elem);

		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	memcpy((char *)*v + *n * elem, x, elem);
	(*n)++;
	return 0;
}

static int item_cmp(const void *a, const void *b)
{
	const struct cs_item *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Whether the AUX record describes (part of) the buffer's data. perf's AUXTRACE cpu is
 * -1 in per-thread mode, where the thread tells rings apart. */
static int describes(const struct aux_note *a, const struct buffer_note *b)
{
	if (b->cpu != UINT32_MAX ? !a->has_cpu || a->cpu != b->cpu : a->tid != b->tid)
		return 0;
	return a->offset < b->offset + b->size && b->offset < a->offset + a->size;
}

static void place_buffers(struct cs_schedule *s, const struct aux_note *aux, size_t naux,
			  const struct buffer_note *bufs, size_t nbufs)
{
	size_t i, j;

	for (i = 0; i < nbufs; i++) {
		struct cs_item *it = &s->items[bufs[i].item];
		uint64_t due = 0;
		uint32_t flags = 0;
		int found = 0;

		for (j = 0; j < naux; j++) {
			if (!describes(&aux[j], &bufs[i]))
				continue;
			if (!found || aux[j].time > due)
				due = aux[j].time;
			flags |= aux[j].flags;
			found = 1;
		}
		if (!found)
			continue; /* keeps its place in the file, and the flags of the AUX before */
		it->key = due;
		it->seq = AFTER_SIDEBAND + it->seq;
		it->aux_flags = flags;
	}
}

int jf_cs_schedule_build(const struct jf_perf_data *d, struct cs_schedule *s,
			 struct jf_error *err)
{
	struct aux_note *aux = NULL;
	struct buffer_note *bufs = NULL;
	size_t naux = 0, cap_aux = 0, nbufs = 0, cap_bufs = 0;
	struct jf_perf_cursor cur;
	struct jf_perf_record rec;
	uint64_t last_key = 0;
	uint32_t last_flags = 0;
	int timed = 0, rc = 0;

	memset(s, 0, sizeof(*s));
	jf_perf_data_begin(d, &cur);
	for (;;) {
		uint64_t at = cur.pos;
		struct cs_item it;
		int r = jf_perf_data_next(d, &cur, &rec, &s->err);

		if (r == 0)
			break;
		if (r < 0) {
			s->failed = 1; /* the records before it still decode */
			break;
		}
		memset(&it, 0, sizeof(it));
		it.offset = at;
		it.seq = s->n;
		if (rec.type == JF_PERF_RECORD_FINISHED_ROUND ||
		    rec.type == JF_PERF_RECORD_HEADER_ATTR ||
		    rec.type == JF_PERF_RECORD_HEADER_FEATURE ||
		    rec.type == JF_PERF_RECORD_AUXTRACE_INFO)
			continue;
		if (rec.type != JF_PERF_RECORD_AUXTRACE && (rec.sid.present & JF_PERF_SID_TIME))
			last_key = rec.sid.time;
		it.key = last_key;
		if (rec.type == JF_PERF_RECORD_AUX) {
			struct aux_note a;

			memset(&a, 0, sizeof(a));
			a.time = rec.sid.time;
			a.offset = rec.u.aux.aux_offset;
			a.size = rec.u.aux.aux_size;
			a.flags = (uint32_t)rec.u.aux.flags;
			a.cpu = rec.sid.cpu;
			a.has_cpu = (rec.sid.present & JF_PERF_SID_CPU) != 0;
			a.tid = (rec.sid.present & JF_PERF_SID_TID) ? rec.sid.tid : -1;
			timed |= (rec.sid.present & JF_PERF_SID_TIME) != 0;
			last_flags = a.flags;
			if (push((void **)&aux, &naux, &cap_aux, sizeof(a), &a) < 0)
				goto oom;
		}
		if (rec.type == JF_PERF_RECORD_AUXTRACE) {
			struct buffer_note b;

			b.item = s->n;
			b.offset = rec.u.auxtrace.offset;
			b.size = rec.u.auxtrace.size;
			b.cpu = rec.u.auxtrace.cpu;
			b.tid = (int32_t)rec.u.auxtrace.tid;
			it.is_buffer = 1;
			it.aux_flags = last_flags;
			if (push((void **)&bufs, &nbufs, &cap_bufs, sizeof(b), &b) < 0)
				goto oom;
		}
		if (push((void **)&s->items, &s->n, &s->cap, sizeof(it), &it) < 0)
			goto oom;
	}
	/* Without times, file order is all there is. */
	if (timed)
		place_buffers(s, aux, naux, bufs, nbufs);
	if (s->n)
		qsort(s->items, s->n, sizeof(*s->items), item_cmp);
	goto done;
oom:
	rc = jf_fail(err, "%s: out of memory", jf_perf_data_path(d));
	jf_cs_schedule_free(s);
done:
	free(aux);
	free(bufs);
	return rc;
}

void jf_cs_schedule_free(struct cs_schedule *s)
{
	free(s->items);
	s->items = NULL;
	s->n = s->cap = 0;
}
