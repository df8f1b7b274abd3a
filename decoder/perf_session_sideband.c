/* Sideband in time order, and the flows it turns into.
 *
 * perf writes the records of several per-CPU ring buffers in rounds, each ended by a
 * FINISHED_ROUND record; inside a round and across one round boundary records are not in
 * time order. perf's own rule (util/ordered-events.c) is that at the end of round n every
 * record with a time up to the largest time seen by the end of round n-1 can go out. The
 * same rule is used here over a heap of (time, file order, offset) entries: records are
 * re-read from the mapping when delivered, so the heap holds 24 bytes a record and only for
 * the records of about two rounds. A round larger than REORDER_MAX records is delivered in
 * pieces (counted in reorder_overflows) rather than growing without bound. */
#include "perf_session_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REORDER_MAX = 1 << 16 };

static int entry_less(const struct sb_entry *a, const struct sb_entry *b)
{
	return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static int heap_push(struct session *s, struct sb_entry e)
{
	size_t i;

	if (s->nheap == s->cap_heap) {
		size_t cap = s->cap_heap ? s->cap_heap * 2 : 64;
		struct sb_entry *h = realloc(s->heap, cap * sizeof(*h));

		if (!h)
			return -1;
		s->heap = h;
		s->cap_heap = cap;
	}
	i = s->nheap++;
	while (i > 0 && entry_less(&e, &s->heap[(i - 1) / 2])) {
		s->heap[i] = s->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	s->heap[i] = e;
	return 0;
}

static void heap_pop(struct session *s)
{
	struct sb_entry last = s->heap[--s->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= s->nheap)
			break;
		if (c + 1 < s->nheap && entry_less(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!entry_less(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nheap)
		s->heap[i] = last;
}

static int is_sideband(uint32_t type)
{
	return type != JF_PERF_RECORD_AUXTRACE && type != JF_PERF_RECORD_FINISHED_ROUND &&
	       type != JF_PERF_RECORD_HEADER_ATTR && type != JF_PERF_RECORD_HEADER_FEATURE;
}

int jf_sb_fill(struct session *s)
{
	while (jf_sb_needs_fill(s)) {
		struct jf_perf_record rec;
		struct jf_error err;
		struct jf_perf_cursor at = s->sb_cur;
		struct sb_entry e;
		int rc;

		if (s->nheap >= REORDER_MAX) {
			s->reorder_overflows++;
			return 0;
		}
		rc = jf_perf_data_next(s->data, &s->sb_cur, &rec, &err);
		if (rc == 0) {
			s->sb_eof = 1;
			s->flush_limit = UINT64_MAX;
			break;
		}
		if (rc < 0 && s->sb_cur.pos == at.pos) {
			/* Framing is broken: nothing after this can be read. */
			s->fatal = err;
			s->failed = 1;
			s->sb_eof = 1;
			s->flush_limit = UINT64_MAX;
			break;
		}
		if (rc > 0 && rec.type == JF_PERF_RECORD_FINISHED_ROUND) {
			s->flush_limit = s->next_flush;
			s->next_flush = s->round_max;
			continue;
		}
		if (rc > 0 && !is_sideband(rec.type))
			continue;
		if (s->timeless)
			e.key = at.pos;
		else if (rc > 0 && (rec.sid.present & JF_PERF_SID_TIME))
			e.key = rec.sid.time;
		else
			e.key = s->sb_last_key; /* untimed records stay where they are */
		s->sb_last_key = e.key;
		if (e.key > s->round_max)
			s->round_max = e.key;
		e.seq = s->seq++;
		e.offset = at.pos;
		if (heap_push(s, e) < 0) {
			jf_fail(&s->fatal, "%s: out of memory", jf_perf_data_path(s->data));
			s->failed = 1;
			return -1;
		}
		if (s->timeless)
			s->flush_limit = UINT64_MAX;
	}
	return 0;
}

static struct jf_flow *out_flow(struct session *s, const struct jf_perf_record *rec,
				uint16_t kind, uint32_t source)
{
	struct jf_flow *f;

	if (s->nout >= OUT_MAX)
		return NULL;
	f = &s->out[s->nout++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->source = source;
	f->offset = rec->offset;
	f->flags = JF_FLOW_IP_SUPPRESSED;
	if (!s->timeless && (rec->sid.present & JF_PERF_SID_TIME)) {
		f->time = rec->sid.time;
		f->flags |= JF_FLOW_HAS_TIME;
	}
	return f;
}

static uint32_t source_for(const struct jf_perf_record *rec, const struct queue *q)
{
	if (q)
		return q->source;
	return (rec->sid.present & JF_PERF_SID_CPU) ? rec->sid.cpu : 0;
}

/* Thread context: the queue running (pid, tid) now, and a flow saying so. */
static void set_context(struct session *s, const struct jf_perf_record *rec, int32_t pid,
			int32_t tid)
{
	int has_cpu = (rec->sid.present & JF_PERF_SID_CPU) != 0;
	struct queue *q = jf_session_queue_for(s, tid, rec->sid.cpu, has_cpu);
	struct jf_flow *f;

	if (q) {
		q->pid = pid;
		q->tid = tid;
	}
	f = out_flow(s, rec, JF_FLOW_CONTEXT, source_for(rec, q));
	if (!f)
		return;
	f->u.context.pid = pid;
	f->u.context.tid = tid;
	f->u.context.cpu = has_cpu ? (int32_t)rec->sid.cpu : (q ? (int32_t)q->cpu : -1);
}

static void lost(struct session *s, const struct jf_perf_record *rec, uint32_t reason)
{
	int has_cpu = (rec->sid.present & JF_PERF_SID_CPU) != 0;
	int32_t tid = (rec->sid.present & JF_PERF_SID_TID) ? rec->sid.tid : -1;
	struct queue *q = jf_session_queue_for(s, tid, rec->sid.cpu, has_cpu);
	struct jf_flow *f = out_flow(s, rec, JF_FLOW_LOST, source_for(rec, q));

	if (f)
		f->u.lost.reason = reason;
}

static void container_error(struct session *s, uint64_t offset, const struct jf_error *err)
{
	struct jf_flow *f;
	struct jf_perf_record none;

	memset(&none, 0, sizeof(none));
	none.offset = offset;
	f = out_flow(s, &none, JF_FLOW_ERROR, 0);
	if (!f)
		return;
	f->u.error.code = 0;
	f->u.error.phase = JF_PHASE_CONTAINER;
	/* The flow holds the tail of the message (what was expected); the offset is in
	 * f->offset. */
	{
		const char *m = strstr(err->msg, ": offset ");
		const char *tail = m ? strchr(m + 9, ':') : NULL;

		const char *text = tail ? tail + 2 : err->msg;
		size_t n = strlen(text);

		/* Cut to the flow's fixed text size (the full message went to the caller). */
		if (n >= sizeof(f->u.error.text))
			n = sizeof(f->u.error.text) - 1;
		memcpy(f->u.error.text, text, n);
		f->u.error.text[n] = 0;
	}
}

void jf_sb_deliver(struct session *s)
{
	struct sb_entry e = s->heap[0];
	struct jf_perf_cursor cur = { e.offset };
	struct jf_perf_record rec;
	struct jf_error err;

	heap_pop(s);
	if (jf_perf_data_next(s->data, &cur, &rec, &err) <= 0) {
		container_error(s, e.offset, &err);
		return;
	}
	if (!jf_perf_record_known(rec.type)) {
		s->unknown_records++;
		return;
	}
	if (s->hooks.on_record)
		s->hooks.on_record(s->hooks.ctx, &rec);
	if (jf_perf_record_maps_code(rec.type) && s->map_records_left)
		s->map_records_left--;
	switch (rec.type) {
	case JF_PERF_RECORD_COMM:
		set_context(s, &rec, rec.u.comm.pid, rec.u.comm.tid);
		break;
	case JF_PERF_RECORD_ITRACE_START:
		set_context(s, &rec, rec.u.itrace_start.pid, rec.u.itrace_start.tid);
		break;
	case JF_PERF_RECORD_SWITCH:
		if (!rec.u.cswitch.out && (rec.sid.present & JF_PERF_SID_TID))
			set_context(s, &rec, rec.sid.pid, rec.sid.tid);
		break;
	case JF_PERF_RECORD_SWITCH_CPU_WIDE:
		/* Switch-out names the next task; switch-in is the incoming task itself. */
		if (rec.u.cswitch.out)
			set_context(s, &rec, rec.u.cswitch.next_prev_pid,
				    rec.u.cswitch.next_prev_tid);
		break;
	case JF_PERF_RECORD_AUX:
		if (rec.u.aux.flags & JF_PERF_AUX_FLAG_TRUNCATED)
			lost(s, &rec, JF_LOST_AUX_TRUNCATED);
		if (rec.u.aux.flags & JF_PERF_AUX_FLAG_COLLISION)
			lost(s, &rec, JF_LOST_AUX_COLLISION);
		break;
	case JF_PERF_RECORD_LOST:
	case JF_PERF_RECORD_LOST_SAMPLES:
		lost(s, &rec, JF_LOST_RECORDS);
		break;
	default:
		break;
	}
}
