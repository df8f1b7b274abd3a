/* The timeline in Chrome's trace-event JSON format (what Perfetto's UI and chrome://tracing
 * open): one track per thread (process 1) with complete ("X") events for what ran, instant ("i")
 * events for guard exits, the code's life (compiled, freed, bridge attached) and iteration
 * marks on a track of their own (process 2), and counters ("C") of the jitted share.
 *
 * Spans come from the analysis's buckets (jitflow/views.h): windows of `resolution` clock
 * units; in each, what ran is laid out from the window's start in order of first
 * appearance, each for the clock it took, so the spans of a class add up exactly to the
 * split's time (or instructions, on the instruction clock). Neighbouring spans of the
 * same activity join. Times are microseconds in the format; one clock unit is written as
 * one nanosecond (docs/views.md). With call stacks, each thread also has a call-stack track
 * (process 3, report_timeline_stacks.c). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/json_out.h"
#include "jitflow/report.h"
#include "report_phases.h"
#include "report_timeline_stacks.h"
#include "report_views.h"
#include "runtime.h"

/* A clock value as microseconds with one unit = 1 ns, exactly (no rounding). */
static void us(FILE *out, uint64_t units)
{
	fprintf(out, "%" PRIu64 ".%03" PRIu64, units / 1000, units % 1000);
}

static void activity_name(char *buf, size_t size, const struct jf_runtime_desc *rt,
			  const struct jf_activity *a)
{
	char id[32];

	if (a->cls == JF_CLASS_TRACE && a->trace_id)
		snprintf(buf, size, "%s %s", rt->trace, jf_runtime_trace_id(rt, id, sizeof(id), a->trace_id));
	else if (a->cls == JF_CLASS_BRIDGE && a->trace_id)
		snprintf(buf, size, "%s %s", rt->bridge, jf_runtime_trace_id(rt, id, sizeof(id), a->trace_id));
	else if (a->name[0])
		snprintf(buf, size, "%s", a->name);
	else
		snprintf(buf, size, "%s", jf_code_class_name(a->cls));
}

struct span {
	int open;
	uint32_t act;
	uint64_t start, end;
};

struct writer {
	FILE *out;
	const struct jf_analysis_result *r;
	const struct jf_runtime_desc *rt;  /* its words */
	uint64_t origin;
	int first;
	size_t spans, instants;
	double last_end;          /* the previous span's end as a viewer computes it */
	size_t iteration_row;     /* the iteration row after the last mark's */
};

static void begin_event(struct writer *w)
{
	fputs(w->first ? "\n" : ",\n", w->out);
	w->first = 0;
}

static void flush_span(struct writer *w, int32_t tid, struct span *s)
{
	const struct jf_activity *a;
	char name[160];

	if (!s->open || s->end <= s->start)
		return;
	a = &w->r->timeline.activities[s->act];
	activity_name(name, sizeof(name), w->rt, a);
	begin_event(w);
	fprintf(w->out, "{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":", tid);
	jf_json_string(w->out, name);
	fprintf(w->out, ",\"cat\":\"%s\",\"ts\":", jf_split_class_name(jf_split_of(a->cls)));
	{
		/* Viewers add ts and dur as doubles: where that puts the previous span's end a
		 * hair after this start, they would nest this span inside it. Such a start is
		 * written as that end (17 digits, read back exactly), which is the same
		 * nanosecond. */
		char ts[32], dur[32];
		double start;

		snprintf(ts, sizeof(ts), "%" PRIu64 ".%03" PRIu64, (s->start - w->origin) / 1000,
			 (s->start - w->origin) % 1000);
		snprintf(dur, sizeof(dur), "%" PRIu64 ".%03" PRIu64, (s->end - s->start) / 1000,
			 (s->end - s->start) % 1000);
		start = strtod(ts, NULL);
		if (start < w->last_end && w->last_end - start < 0.0001) {
			start = w->last_end;
			snprintf(ts, sizeof(ts), "%.17g", start);
		}
		w->last_end = start + strtod(dur, NULL);
		fprintf(w->out, "%s,\"dur\":%s", ts, dur);
	}
	fprintf(w->out, ",\"args\":{\"class\":\"%s\"}}", jf_code_class_name(a->cls));
	s->open = 0;
	w->spans++;
}

static void guard_exit(struct writer *w, int32_t tid, uint64_t at, uint32_t g, uint64_t n)
{
	const struct jf_guard_result *gr = &w->r->guards[g];
	char name[96], trace[32], guard[32];

	snprintf(name, sizeof(name), "%s %s/%s", w->rt->guard_exit,
		 jf_runtime_trace_id(w->rt, trace, sizeof(trace), gr->trace_id),
		 jf_runtime_guard_id(w->rt, guard, sizeof(guard), gr->guard_id));
	begin_event(w);
	fprintf(w->out, "{\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%d,\"name\":", tid);
	jf_json_string(w->out, name);
	fprintf(w->out, ",\"cat\":\"guard\",\"ts\":");
	us(w->out, at - w->origin);
	fprintf(w->out, ",\"args\":{\"trace\":%" PRIu64 ",\"guard\":%" PRIu64 ",\"resume_pc\":%u,"
		"\"exits\":%" PRIu64 "}}", gr->trace_id, gr->guard_id, gr->resume_pc, n);
	w->instants++;
}

/* One thread's track: windows of `res` units over its buckets. */
static void thread_track(struct writer *w, int32_t tid, const struct jf_timeline_series *s,
			 uint64_t res)
{
	struct span cur = { 0 };
	size_t i = 0;
	double last_share = -1;

	w->last_end = 0;
	while (i < s->nentries) {
		uint64_t win = s->entries[i].bucket * s->width / res * res, cursor = win;
		uint64_t jitted = 0, all = 0;
		size_t j, k;

		/* Entries of this window: [i, j). */
		for (j = i; j < s->nentries && s->entries[j].bucket * s->width / res * res == win; j++)
			;
		/* Activities in first-appearance order, each summed over the window. */
		for (k = i; k < j; k++) {
			const struct jf_bucket_entry *e = &s->entries[k];
			uint64_t amount = 0;
			size_t m;

			if (e->what & JF_BUCKET_GUARD)
				continue;
			for (m = i; m < k && s->entries[m].what != e->what; m++)
				;
			if (m < k)
				continue; /* counted at its first appearance */
			for (m = k; m < j; m++)
				if (s->entries[m].what == e->what)
					amount += s->entries[m].amount;
			all += amount;
			if (jf_split_of(w->r->timeline.activities[e->what].cls) == JF_SPLIT_JITTED)
				jitted += amount;
			if (cur.open && cur.end > cursor)
				cursor = cur.end; /* never overlap the span before */
			if (cur.open && (cur.act != e->what || cur.end != cursor))
				flush_span(w, tid, &cur);
			if (!cur.open) {
				cur.open = 1;
				cur.act = e->what;
				cur.start = cursor;
				cur.end = cursor;
			}
			cur.end += amount;
			cursor = cur.end;
		}
		/* Guard exits of the window, by guard, at the window's start. */
		for (k = i; k < j; k++) {
			const struct jf_bucket_entry *e = &s->entries[k];
			uint64_t n = 0;
			size_t m;

			if (!(e->what & JF_BUCKET_GUARD))
				continue;
			for (m = i; m < k && s->entries[m].what != e->what; m++)
				;
			if (m < k)
				continue;
			for (m = k; m < j; m++)
				if (s->entries[m].what == e->what)
					n += s->entries[m].amount;
			guard_exit(w, tid, win, e->what & ~JF_BUCKET_GUARD, n);
		}
		/* The counter where it changes (to a hundredth of a percent). */
		if (all && (uint64_t)(10000.0 * (double)jitted / (double)all) != (uint64_t)(100 * last_share)) {
			last_share = 100.0 * (double)jitted / (double)all;
			begin_event(w);
			fprintf(w->out, "{\"ph\":\"C\",\"pid\":1,\"tid\":%d,\"name\":\"jitted share, "
				"thread %d\",\"ts\":", tid, tid);
			us(w->out, win - w->origin);
			fprintf(w->out, ",\"args\":{\"jitted %%\":%.2f}}",
				100.0 * (double)jitted / (double)all);
		}
		i = j;
	}
	flush_span(w, tid, &cur);
}

/* The phases of the iteration whose mark this is: its row is found from where the last
 * mark's was (marks and rows are both in order; a few marks may have been dropped). */
static void iteration_phases(struct writer *w, uint64_t index)
{
	struct jf_iteration_result it;
	size_t i;

	if (!jf_report_has_phases(w->r))
		return;
	for (i = w->iteration_row; i < w->r->niterations && i < w->iteration_row + 64; i++) {
		if (jf_analysis_iteration(w->r, i, &it) == 0 && it.index == index) {
			jf_report_json_iteration_phases(w->out, w->r, &it);
			w->iteration_row = i + 1;
			return;
		}
	}
}

static void code_event(struct writer *w, const struct jf_timeline_event *e, int on_time)
{
	uint64_t at = on_time ? e->time : e->insn_pos;
	char name[160], id[32], parent[32], guard[32];

	switch (e->kind) {
	case JF_TL_COMPILE:
		/* Stubs, trampolines and caches come with their trace: not events of their own. */
		if (e->region_kind && e->region_kind != JF_REGION_TRACE &&
		    e->region_kind != JF_REGION_BRIDGE && e->region_kind != JF_REGION_FUNCTION)
			return;
		if (e->id)
			snprintf(name, sizeof(name), "compiled %s", e->name);
		else
			snprintf(name, sizeof(name), "code loaded: %s", e->name);
		break;
	case JF_TL_FREE:
		snprintf(name, sizeof(name), "code freed at 0x%" PRIx64, e->id);
		break;
	case JF_TL_BRIDGE:
		snprintf(name, sizeof(name), "%s %s attached to %s %s/%s", w->rt->bridge,
			 jf_runtime_trace_id(w->rt, id, sizeof(id), e->id), w->rt->guard,
			 jf_runtime_trace_id(w->rt, parent, sizeof(parent), e->parent_trace),
			 jf_runtime_guard_id(w->rt, guard, sizeof(guard), e->parent_guard));
		break;
	case JF_TL_ITERATION:
		snprintf(name, sizeof(name), "iteration %" PRIu64, e->arg);
		break;
	default:
		return;
	}
	begin_event(w);
	fprintf(w->out, "{\"ph\":\"i\",\"s\":\"p\",\"pid\":2,\"tid\":1,\"name\":");
	jf_json_string(w->out, name);
	fprintf(w->out, ",\"cat\":\"%s\",\"ts\":", e->kind == JF_TL_ITERATION ? "iteration" : "code");
	us(w->out, at < w->origin ? 0 : at - w->origin);
	fprintf(w->out, ",\"args\":{\"id\":%" PRIu64 ",\"instructions_before\":%" PRIu64,
		e->id, e->insn_pos);
	if (e->kind == JF_TL_ITERATION)
		iteration_phases(w, e->arg);
	fprintf(w->out, "}}");
	w->instants++;
}

/* The name of thread tid's track on process pid: "PREFIXthread N" (or trace source N). */
static void thread_name(struct writer *w, int pid, int32_t tid, const char *prefix)
{
	begin_event(w);
	fprintf(w->out, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":"
		"{\"name\":\"%s", pid, tid, prefix);
	if (tid < 0)
		fprintf(w->out, "trace source %d\"}}", -1 - tid);
	else
		fprintf(w->out, "thread %d\"}}", tid);
}

static const struct jf_timeline_series *series(const struct jf_analysis_result *r, size_t i)
{
	return r->has_time ? &r->timeline.threads[i].by_time : &r->timeline.threads[i].by_insns;
}

void jf_report_timeline(FILE *out, const struct jf_analysis_result *r,
			const struct jf_report_meta *m, uint64_t resolution)
{
	jf_report_timeline_named(out, r, m, resolution, NULL);
}

void jf_report_timeline_named(FILE *out, const struct jf_analysis_result *r,
			      const struct jf_report_meta *m, uint64_t resolution,
			      const struct jf_stack_names *names)
{
	const struct jf_timeline_result *tl = &r->timeline;
	struct writer w = { out, r, jf_runtime_of(r), UINT64_MAX, 1, 0, 0, 0, 0 };
	uint64_t width = 1, skipped = 0;
	/* Call-stack tracks are spans of their own, not buckets: they join below the
	 * resolution asked for (by default the buckets' width), not below that width. */
	uint64_t stack_resolution = resolution;
	size_t i, stack_events = 0;
	int on_time = r->has_time;

	for (i = 0; i < tl->nthreads; i++) {
		const struct jf_timeline_series *s = series(r, i);

		if (s->nentries && s->entries[0].bucket * s->width < w.origin)
			w.origin = s->entries[0].bucket * s->width;
		if (s->width > width)
			width = s->width;
	}
	if (w.origin == UINT64_MAX)
		w.origin = 0;
	/* Windows are whole buckets of the coarsest series. */
	if (resolution < width)
		resolution = width;
	resolution = (resolution + width - 1) / width * width;
	if (!stack_resolution)
		stack_resolution = resolution;

	fprintf(out, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"jitflow_timeline\":1,\"source\":");
	jf_json_string(out, m && m->source ? m->source : "");
	fprintf(out, ",\"clock\":\"%s\",\"synthetic_time\":%s,\"clock_origin\":%" PRIu64
		",\"resolution\":%" PRIu64 ",\"note\":", !on_time ? "instructions" :
		r->time_is_ns ? "ns" : "ticks", r->time_is_synthetic ? "true" : "false", w.origin,
		resolution);
	jf_json_string(out, !on_time ?
		"The trace has no timing: the time axis counts instructions (1 ns = 1 instruction "
		"analysed, all threads)." : r->time_is_synthetic ?
		"Time comes from a synthetic instruction-count clock (emulated recording), not "
		"from hardware; 1 ns on the axis = 1 unit of it." : r->time_is_ns ?
		"Time from the trace's clock, in ns." :
		"Time from the trace's timestamps, in ticks (1 ns on the axis = 1 tick).");
	fprintf(out, ",\"not_available\":[");
	{
		int n = 0;

		if (!r->has_zone_records)
			fprintf(out, "%s\"trace kinds, guards, bridges, guard exits (no zone records)\"",
				n++ ? "," : "");
		if (!r->has_iterations)
			fprintf(out, "%s\"iteration markers (the runtime wrote none)\"", n++ ? "," : "");
		if (!on_time)
			fprintf(out, "%s\"time (no timing packets)\"", n++ ? "," : "");
		for (i = 0; on_time && i < tl->nthreads; i++) {
			const struct jf_timeline_thread *t = &tl->threads[i];

			if (!t->by_time.nentries && t->by_insns.nentries)
				fprintf(out, "%s\"time of thread or trace source %d (no timestamps on "
					"it: no spans)\"", n++ ? "," : "", t->tid);
		}
	}
	fprintf(out, "]");
	if (jf_runtime_not_told_apart(w.rt, r)) {
		fprintf(out, ",\"not_told_apart\":");
		jf_json_string(out, jf_runtime_not_told_apart(w.rt, r));
	}
	fprintf(out, ",\"decode_errors\":%" PRIu64 ",\"lost_bytes\":%" PRIu64
		",\"events_dropped\":%" PRIu64 "},\n\"traceEvents\":[", r->decode_errors,
		r->lost_bytes, tl->events_dropped);

	begin_event(&w);
	fprintf(out, "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":");
	jf_json_string(out, m && m->source ? m->source : "jitflow");
	fprintf(out, "}}");
	begin_event(&w);
	fprintf(out, "{\"ph\":\"M\",\"pid\":2,\"tid\":1,\"name\":\"process_name\",\"args\":"
		"{\"name\":\"code events (zone records)\"}}");
	for (i = 0; i < tl->nthreads; i++) {
		int32_t tid = tl->threads[i].tid;

		thread_name(&w, 1, tid, "");
		thread_track(&w, tid, series(r, i), resolution);
	}
	if (r->call_stacks.ntracks) {
		begin_event(&w);
		fprintf(out, "{\"ph\":\"M\",\"pid\":3,\"tid\":0,\"name\":\"process_name\","
			"\"args\":{\"name\":\"call stacks\"}}");
	}
	for (i = 0; i < r->call_stacks.ntracks; i++) {
		int32_t tid = r->call_stacks.tracks[i].tid;

		thread_name(&w, 3, tid, "stacks of ");
		stack_events += jf_timeline_stack_track(out, r, names, &r->call_stacks.tracks[i],
							w.origin, stack_resolution, &w.first);
	}
	for (i = 0; i < tl->nevents; i++) {
		if (on_time && !tl->events[i].has_time) {
			skipped++;
			continue;
		}
		code_event(&w, &tl->events[i], on_time);
	}
	fprintf(out, "\n],\"jitflow_summary\":{\"spans\":%zu,\"instant_events\":%zu,"
		"\"stack_events\":%zu,\"code_events_before_any_timestamp\":%" PRIu64 "}}\n",
		w.spans, w.instants, stack_events, skipped);
}
