/* A thread's call-stack track as frames that open and close over its clock
 * (report_views.h), for the pictures of it: the timeline's nested events and its SVG. The
 * spans of the analysis's track (call_stack_spans.h) are joined again below the resolution
 * asked for, so that a long trace stays a picture of bounded size; a frame stays open
 * across spans whose stacks share it. */
#include <stdlib.h>

#include "call_stack_spans.h"
#include "report_views.h"

struct walk {
	const struct jf_analysis_result *r;
	const struct jf_stack_frame_ops *ops;
	uint32_t open[JF_CALL_STACKS_DEPTH_MAX + 2];  /* the frames open, bottom first */
	uint64_t since[JF_CALL_STACKS_DEPTH_MAX + 2]; /* ... and when each opened */
	uint32_t depth;
};

static void close_to(struct walk *w, uint32_t depth, uint64_t at)
{
	while (w->depth > depth) {
		w->depth--;
		w->ops->end(w->ops->ctx, w->depth, w->open[w->depth], w->since[w->depth], at);
	}
}

/* The thread ran on span s's stack; the span before ended at prev_end (where, if s does
 * not start there, every open frame ends). */
static void span(struct walk *w, const struct jf_stack_span *s, uint64_t prev_end)
{
	uint32_t rows[JF_CALL_STACKS_DEPTH_MAX + 2], n, k = 0;

	if (s->stack == JF_STACK_SPANS_SEVERAL) {
		rows[0] = JF_STACK_SPANS_SEVERAL;
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
		w->since[w->depth] = s->start;
		w->ops->begin(w->ops->ctx, w->depth, rows[w->depth], s->start);
	}
}

int jf_stack_track_frames(const struct jf_analysis_result *r, const struct jf_stack_track *tr,
			  uint64_t resolution, const struct jf_stack_frame_ops *ops)
{
	const struct jf_stack_series *s = r->has_time ? &tr->by_time : &tr->by_insns;
	struct jf_stack_span_builder b = { NULL, 0, 0, 0 };
	struct walk *w = calloc(1, sizeof(*w));
	uint64_t prev_end = 0;
	size_t i;
	int rc = 0;

	if (!w)
		return -1;
	w->r = r;
	w->ops = ops;
	b.resolution = resolution > s->resolution ? resolution : s->resolution;
	for (i = 0; i < s->nspans; i++)
		if (jf_stack_spans_add(&b, r->call_stacks.stacks, s->spans[i].start, s->spans[i].end,
				       s->spans[i].stack) < 0) {
			rc = -1;
			break;
		}
	for (i = 0; i < b.n; i++) {
		span(w, &b.v[i], i ? prev_end : b.v[i].start);
		prev_end = b.v[i].end;
	}
	close_to(w, 0, prev_end);
	free(b.v);
	free(w);
	return rc;
}
