/* The call-stack tracks as an SVG picture (`jitflow timeline --svg FILE`): per thread, the
 * frames it ran in over the trace's clock (instructions where the trace has no time),
 * callers above callees, as magic-trace draws its timeline. Spans are joined below one
 * pixel's worth of the clock, so the picture's size is bounded by its width and the
 * threads' depth, not by the trace's length. Each frame's <title> gives its name and how
 * long it stayed open. */
#include <inttypes.h>
#include <string.h>

#include "jitflow/report.h"
#include "report_views.h"

#define ROW_H 16
#define TOP 48
#define THREAD_H 18
#define GAP 10
#define FOOT 24
#define LEFT 10
#define CHAR_W 6.6

struct picture {
	FILE *out;
	const struct jf_analysis_result *r;
	const struct jf_stack_names *names;
	uint64_t t0;
	double scale;
	double y;           /* the top of the thread's first frame row */
	uint32_t depth;     /* rows the thread's frames take (the first pass's answer) */
	size_t frames;
};

static void no_begin(void *ctx, uint32_t depth, uint32_t row, uint64_t at)
{
	(void)ctx, (void)depth, (void)row, (void)at;
}

static void measure(void *ctx, uint32_t depth, uint32_t row, uint64_t start, uint64_t at)
{
	struct picture *p = ctx;

	(void)row, (void)start, (void)at;
	if (depth + 1 > p->depth)
		p->depth = depth + 1;
}

static void draw(void *ctx, uint32_t depth, uint32_t row, uint64_t start, uint64_t at)
{
	struct picture *p = ctx;
	double x = LEFT + (double)(start - p->t0) * p->scale;
	double w = (double)(at - start) * p->scale, y = p->y + depth * ROW_H;
	size_t fit = w > 4 ? (size_t)((w - 4) / CHAR_W) : 0;
	char name[160];
	const char *fill = "#bdbdbd";

	if (row == JF_NO_STACK) {
		snprintf(name, sizeof(name), "[stacks sharing no frame]");
	} else {
		jf_views_call_stack_frame(name, sizeof(name), p->r, &p->r->call_stacks.stacks[row],
					  p->names);
		fill = jf_views_call_stack_colour(&p->r->call_stacks.stacks[row]);
	}
	fprintf(p->out, "<g><title>");
	jf_views_xml(p->out, name);
	fprintf(p->out, " (%" PRIu64 " to %" PRIu64 ")</title><rect x=\"%.1f\" y=\"%.1f\" "
		"width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", start - p->t0, at - p->t0, x, y,
		w > 0.3 ? w : 0.3, ROW_H - 1, fill);
	if (fit >= 3) {
		if (strlen(name) > fit)
			strcpy(name + fit - 2, "..");
		fprintf(p->out, "<text x=\"%.1f\" y=\"%.1f\">", x + 2, y + ROW_H - 4);
		jf_views_xml(p->out, name);
		fprintf(p->out, "</text>");
	}
	fprintf(p->out, "</g>\n");
	p->frames++;
}

static const struct jf_stack_series *series_of(const struct jf_analysis_result *r, size_t i)
{
	return r->has_time ? &r->call_stacks.tracks[i].by_time : &r->call_stacks.tracks[i].by_insns;
}

int jf_report_timeline_svg(FILE *out, const struct jf_analysis_result *r,
			   const struct jf_report_meta *m, const struct jf_stack_names *names,
			   int width)
{
	const struct jf_call_stacks_result *cs = &r->call_stacks;
	struct picture p = { out, r, names, UINT64_MAX, 0, 0, 0, 0 };
	struct jf_stack_frame_ops sizes = { no_begin, measure, &p }, frames = { no_begin, draw, &p };
	uint32_t depth[64] = { 0 };
	uint64_t t1 = 0, resolution;
	size_t i, shown = cs->ntracks < 64 ? cs->ntracks : 64;
	int height = TOP + FOOT;

	for (i = 0; i < shown; i++) {
		const struct jf_stack_series *s = series_of(r, i);

		if (!s->nspans)
			continue;
		if (s->spans[0].start < p.t0)
			p.t0 = s->spans[0].start;
		if (s->spans[s->nspans - 1].end > t1)
			t1 = s->spans[s->nspans - 1].end;
	}
	if (p.t0 >= t1)
		p.t0 = t1 = 0;
	resolution = (t1 - p.t0) / (uint64_t)(width - 2 * LEFT) + 1;
	p.scale = t1 > p.t0 ? (double)(width - 2 * LEFT) / (double)(t1 - p.t0) : 0;
	for (i = 0; i < shown; i++) {
		p.depth = 0;
		if (jf_stack_track_frames(r, &cs->tracks[i], resolution, &sizes) < 0)
			return -1;
		depth[i] = p.depth;
		height += THREAD_H + (int)p.depth * ROW_H + GAP;
	}
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
		"<text x=\"%d\" y=\"20\" font-size=\"15\" font-weight=\"bold\">Call stacks over "
		"time: ", width, height, width, height, LEFT);
	jf_views_xml(out, m && m->source ? m->source : "jitflow");
	fprintf(out, "</text>\n<text x=\"%d\" y=\"36\">%" PRIu64 " %s from the first frame on, "
		"callers above callees, spans under %" PRIu64 " joined (one pixel)%s</text>\n",
		LEFT, t1 - p.t0, r->has_time ? "clock units" : "instructions", resolution,
		r->has_time && r->time_is_synthetic ? "; synthetic clock (instruction counts)" : "");
	p.y = TOP;
	for (i = 0; i < shown; i++) {
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-weight=\"bold\">thread %d</text>\n",
			LEFT, p.y + THREAD_H - 5, cs->tracks[i].tid);
		p.y += THREAD_H;
		if (jf_stack_track_frames(r, &cs->tracks[i], resolution, &frames) < 0)
			return -1;
		p.y += depth[i] * ROW_H + GAP;
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\">%zu frames drawn; %zu of %zu threads shown"
		"</text>\n</svg>\n", LEFT, height - 8, p.frames, shown, cs->ntracks);
	return 0;
}
