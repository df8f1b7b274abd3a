/* VM phases: the brackets a runtime writes around its own work (PHASE_BEGIN / PHASE_END
 * events, arg = enum jf_vm_phase), per writing thread. Between them everything the thread
 * runs counts to the innermost open phase (flow.c reads it from the thread state), except
 * the emitter's code, which stays instrumentation. A span also belongs to the trace being
 * made when it began (from that trace's TRACE_START or COMPILE_BEGIN to its TRACE_ABORT
 * or COMPILE_END), which is what that trace cost to make.
 *
 * Brackets that do not close are counted and located, never guessed at: an END with no
 * open BEGIN of its phase is ignored; an END that closes a BEGIN below the innermost one
 * closes the ones above it too, each counted as unclosed; BEGINs still open when the trace
 * ends are counted by the result. */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

_Static_assert((int)JF_VM_PHASE_SLOTS == (int)JF_PHASE_COUNT, "the analysis's arrays by phase");

enum jf_code_class jf_phase_class(int p)
{
	switch (p) {
	case JF_PHASE_TRACING: return JF_CLASS_TRACING;
	case JF_PHASE_COMPILING: return JF_CLASS_COMPILING;
	case JF_PHASE_GC: return JF_CLASS_GC;
	case JF_PHASE_EXIT_HANDLING: return JF_CLASS_EXIT_HANDLING;
	default: return JF_CLASS_UNKNOWN;
	}
}

const char *jf_phase_name(int p)
{
	switch (p) {
	case JF_PHASE_TRACING: return "tracing";
	case JF_PHASE_COMPILING: return "compiling";
	case JF_PHASE_GC: return "gc";
	case JF_PHASE_EXIT_HANDLING: return "exit handling";
	default: return "unknown";
	}
}

const char *jf_phase_problem_name(enum jf_phase_problem_kind k)
{
	switch (k) {
	case JF_PHASE_UNMATCHED_END: return "end without begin";
	case JF_PHASE_UNCLOSED: return "begin without end";
	case JF_PHASE_TOO_DEEP: return "nested too deep";
	default: return "unknown";
	}
}

static struct phase_thread *phase_thread(struct jf_analysis *a, int32_t tid, int create)
{
	size_t i;

	for (i = 0; i < a->nphase_threads; i++)
		if (a->phase_threads[i].tid == tid)
			return &a->phase_threads[i];
	if (!create || jf_grow((void **)&a->phase_threads, &a->phase_threads_cap,
			       a->nphase_threads, sizeof(*a->phase_threads)) < 0)
		return NULL;
	a->phase_threads[i].tid = tid;
	a->nphase_threads++;
	return &a->phase_threads[i];
}

void jf_phase_sync_thread(struct jf_analysis *a, struct thread_state *t)
{
	struct phase_thread *p = phase_thread(a, t->tid, 0);
	uint32_t idx;

	t->phase_class = 0;
	t->phase_trace = -1;
	if (!p || !p->depth)
		return;
	t->phase_class = (uint8_t)jf_phase_class(p->open[p->depth - 1].phase);
	if (p->open[p->depth - 1].trace_id &&
	    jf_index_map_get(&a->trace_by_id, p->open[p->depth - 1].trace_id, &idx))
		t->phase_trace = (int32_t)idx;
}

/* Count a problem of span s, and keep its site while there is room. */
static void add_problem(uint64_t *count, struct jf_phase_problem *sites, size_t *nsites,
			uint16_t kind, const struct phase_span *s, int32_t tid)
{
	struct jf_phase_problem *p;

	++*count;
	if (*nsites >= JF_PHASE_PROBLEMS_MAX)
		return;
	p = &sites[(*nsites)++];
	p->kind = kind;
	p->phase = s->phase;
	p->tid = tid;
	p->record_offset = s->record_offset;
	p->insn = s->insn;
	p->time = s->time;
	p->has_time = s->has_time;
}

static void problem(struct jf_analysis *a, uint16_t kind, const struct phase_span *s, int32_t tid)
{
	add_problem(&a->phase_problem_count, a->phase_problems, &a->nphase_problems, kind, s, tid);
}

/* Where rec took effect: its offset, the flow position, the thread's clock. */
static struct phase_span here(struct jf_analysis *a, const struct jf_zone_record *rec,
			      struct thread_state *t, int replayed)
{
	struct phase_span s;

	memset(&s, 0, sizeof(s));
	s.phase = (uint8_t)rec->u.event.arg;
	s.replayed = (uint8_t)replayed;
	s.record_offset = rec->offset;
	s.insn = a->insns;
	if (t && t->has_time) {
		s.has_time = 1;
		s.time = t->last_time;
	}
	return s;
}

static int begin(struct jf_analysis *a, struct phase_thread *p, struct phase_span s,
		 int32_t tid)
{
	if (p->depth == JF_PHASE_DEPTH) {
		if (!s.replayed)
			problem(a, JF_PHASE_TOO_DEEP, &s, tid);
		return 0;
	}
	s.trace_id = p->making;
	/* The trace's row is made here, not at its TRACE_START: without phases, traces
	 * that were never compiled stay out of the tables. */
	if (s.trace_id && jf_trace_index(a, s.trace_id) < 0)
		return -1;
	p->open[p->depth++] = s;
	if (!s.replayed) {
		struct thread_state *t = jf_thread(a, tid);

		if (!t)
			return -1;
		t->split.phase_spans[s.phase]++;
		a->phases_told |= 1u << s.phase;
	}
	return 0;
}

static void end(struct jf_analysis *a, struct phase_thread *p, const struct phase_span *s,
		int32_t tid)
{
	uint32_t d = p->depth;

	while (d > 0 && p->open[d - 1].phase != s->phase)
		d--;
	if (!d) {
		if (!s->replayed)
			problem(a, JF_PHASE_UNMATCHED_END, s, tid);
		return;
	}
	/* Spans above the one closed never closed themselves. */
	while (p->depth > d) {
		p->depth--;
		if (!s->replayed)
			problem(a, JF_PHASE_UNCLOSED, &p->open[p->depth], tid);
	}
	p->depth--;
}

int jf_phase_event(struct jf_analysis *a, const struct jf_zone_record *rec, int replayed)
{
	uint32_t kind = rec->u.event.kind;
	int32_t tid = (int32_t)rec->tid;
	struct phase_thread *p;
	struct thread_state *t;

	if (kind == JF_EVENT_PHASE_BEGIN || kind == JF_EVENT_PHASE_END) {
		/* Unknown phases are not this version's to count. */
		if (rec->u.event.arg == 0 || rec->u.event.arg >= JF_PHASE_COUNT)
			return 0;
	} else if (kind != JF_EVENT_TRACE_START && kind != JF_EVENT_TRACE_ABORT &&
		   kind != JF_EVENT_COMPILE_BEGIN && kind != JF_EVENT_COMPILE_END) {
		return 0;
	}
	p = phase_thread(a, tid, 1);
	if (!p)
		return -1;
	t = jf_existing_thread(a, tid);
	switch (kind) {
	case JF_EVENT_PHASE_BEGIN:
		if (begin(a, p, here(a, rec, t, replayed), tid) < 0)
			return -1;
		t = jf_existing_thread(a, tid); /* begin may have added it */
		break;
	case JF_EVENT_PHASE_END: {
		struct phase_span s = here(a, rec, t, replayed);

		end(a, p, &s, tid);
		break;
	}
	case JF_EVENT_TRACE_START:
	case JF_EVENT_COMPILE_BEGIN:
		p->making = rec->u.event.arg;
		/* A span opened just before the runtime said which trace it makes. */
		if (p->making && p->depth && !p->open[p->depth - 1].trace_id) {
			p->open[p->depth - 1].trace_id = p->making;
			if (jf_trace_index(a, p->making) < 0)
				return -1;
		}
		break;
	default: /* TRACE_ABORT, COMPILE_END */
		if (p->making == rec->u.event.arg)
			p->making = 0;
		break;
	}
	if (t)
		jf_phase_sync_thread(a, t);
	return 0;
}

int jf_phase_merge(struct jf_analysis *a, const struct jf_analysis *later)
{
	size_t i, j;

	for (i = 0; i < later->nphase_problems && a->nphase_problems < JF_PHASE_PROBLEMS_MAX; i++) {
		a->phase_problems[a->nphase_problems] = later->phase_problems[i];
		a->phase_problems[a->nphase_problems++].insn += a->insns;
	}
	a->phase_problem_count += later->phase_problem_count;
	a->phases_told |= later->phases_told;
	/* The later part replayed the records before it, so its brackets at the end are
	 * those of the whole; a replayed span is the earlier part's, where it began. */
	for (i = 0; i < later->nphase_threads; i++) {
		const struct phase_thread *lp = &later->phase_threads[i];
		struct phase_thread *ap = phase_thread(a, lp->tid, 1);
		struct phase_thread merged = *lp;

		if (!ap)
			return -1;
		for (j = 0; j < merged.depth; j++) {
			if (merged.open[j].replayed && j < ap->depth)
				merged.open[j] = ap->open[j];
			else
				merged.open[j].insn += a->insns;
		}
		*ap = merged;
	}
	return 0;
}

void jf_phase_result(const struct jf_analysis *a, struct jf_analysis_result *r)
{
	size_t i;
	uint32_t d;

	r->phases_told = a->phases_told;
	r->phase_problem_count = a->phase_problem_count;
	r->nphase_problems = a->nphase_problems;
	memcpy(r->phase_problems, a->phase_problems, sizeof(r->phase_problems));
	for (i = 0; i < a->nphase_threads; i++) {
		const struct phase_thread *p = &a->phase_threads[i];

		for (d = 0; d < p->depth; d++)
			add_problem(&r->phase_problem_count, r->phase_problems, &r->nphase_problems,
				    JF_PHASE_UNCLOSED, &p->open[d], p->tid);
	}
}

void jf_phase_free(struct jf_analysis *a)
{
	free(a->phase_threads);
}
