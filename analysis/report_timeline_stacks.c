/* The call-stack tracks of the timeline (report_timeline.c): per thread, on a process of
 * their own, the frames of its stacks as nested begin ("B") and end ("E") events, as
 * magic-trace draws them. The spans of the analysis's tracks (call_stack_spans.h) are
 * joined again below the timeline's resolution, so a long trace stays a file a viewer
 * opens; a frame stays open across spans whose stacks share it. */
#include <inttypes.h>
#include <stdlib.h>

#include "call_stack_spans.h"
#include "jitflow/json_out.h"
#include "jitflow/report.h"
#include "report_timeline_stacks.h"
#include "report_views.h"

#define SEVERAL UINT32_MAX  /* a span of stacks that share no frame, joined */

struct stack_writer {
	FILE *out;
	const struct jf_analysis_result *r;
	const struct jf_stack_names *names;
	int32_t tid;
	uint64_t origin;
	int *first;
	uint32_t open[JF_CALL_STACKS_DEPTH_MAX + 2];  /* the frames open, bottom first */
	uint32_t depth;
	size_t events;
};

static void event(struct stack_writer *w, char ph, uint32_t row, uint64_t at)
{
	char name[160];
	uint64_t t = at > w->origin ? at - w->origin : 0;

	if (row == SEVERAL)
		snprintf(name, sizeof(name), "[stacks sharing no frame]");
	else
		jf_views_call_stack_frame(name, sizeof(name), w->r, &w->r->call_stacks.stacks[row],
					  w->names);
	fputs(*w->first ? "\n" : ",\n", w->out);
	*w->first = 0;
	fprintf(w->out, "{\"ph\":\"%c\",\"pid\":3,\"tid\":%d,\"name\":", ph, w->tid);
	jf_json_string(w->out, name);
	fprintf(w->out, ",\"cat\":\"stack\",\"ts\":%" PRIu64 ".%03" PRIu64 "}", t / 1000, t % 1000);
	w->events++;
}

static void close_to(struct stack_writer *w, uint32_t depth, uint64_t at)
{
	while (w->depth > depth)
		event(w, 'E', w->open[--w->depth], at);
}

/* The thread ran on span s's stack; the span before ended at prev_end (where, if s does
 * not start there, every open frame ends). */
static void span(struct stack_writer *w, const struct jf_stack_span *s, uint64_t prev_end)
{
	uint32_t rows[JF_CALL_STACKS_DEPTH_MAX + 2], n, k = 0;

	if (s->stack == SEVERAL) {
		rows[0] = SEVERAL;
		n = 1;
	} else {
		n = jf_views_call_stack_rows(&w->r->call_stacks, s->stack, rows);
	}
	if (prev_end != s->start) {
		close_to(w, 0, prev_end);
	} else {
		while (k < n && k < w->depth && w->open[k] == rows[k])
			k++;
		close_to(w, k, s->start);
	}
	for (; w->depth < n; w->depth++) {
		w->open[w->depth] = rows[w->depth];
		event(w, 'B', rows[w->depth], s->start);
	}
}

size_t jf_timeline_stack_track(FILE *out, const struct jf_analysis_result *r,
			       const struct jf_stack_names *names, const struct jf_stack_track *tr,
			       uint64_t origin, uint64_t resolution, int *first)
{
	const struct jf_stack_series *s = r->has_time ? &tr->by_time : &tr->by_insns;
	struct jf_stack_span_builder b = { NULL, 0, 0, 0 };
	struct stack_writer *w = calloc(1, sizeof(*w));
	uint64_t prev_end = 0;
	size_t i, events;

	if (!w)
		return 0;
	w->out = out;
	w->r = r;
	w->names = names;
	w->tid = tr->tid;
	w->origin = origin;
	w->first = first;
	b.resolution = resolution > s->resolution ? resolution : s->resolution;
	for (i = 0; i < s->nspans; i++)
		if (jf_stack_spans_add(&b, r->call_stacks.stacks, s->spans[i].start, s->spans[i].end,
				       s->spans[i].stack) < 0)
			break;
	for (i = 0; i < b.n; i++) {
		span(w, &b.v[i], i ? prev_end : b.v[i].start);
		prev_end = b.v[i].end;
	}
	close_to(w, 0, prev_end);
	events = w->events;
	free(b.v);
	free(w);
	return events;
}
