/* Shared by the view writers (report_folded.c, report_svg.c, report_timeline.c,
 * report_html.c): stack frames as text, class colours, XML escaping. */
#ifndef JITFLOW_REPORT_VIEWS_H
#define JITFLOW_REPORT_VIEWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jitflow/analysis.h"

struct jf_report_meta;

#define JF_VIEWS_DEPTH 4 /* thread, class, region, bytecode range */

/* name with ';' and control characters replaced (folded-stack frame syntax). */
void jf_views_frame_text(char *buf, size_t size, const char *name);
/* A thread's name in views: "thread TID", or "trace source N" for a source no context
 * record named. */
void jf_views_thread_label(char *buf, size_t size, int32_t tid);
/* The frames of a stack in the words of runtime rt; frames[3] is "" when the code has no
 * bytecode range. */
struct jf_runtime_desc;
void jf_views_stack_frames(const struct jf_runtime_desc *rt, const struct jf_stack_result *s,
			   char frames[JF_VIEWS_DEPTH][128]);
/* Pointers to r's stacks in frame order (free() the array); NULL when out of memory. */
const struct jf_stack_result **jf_views_sorted_stacks(const struct jf_analysis_result *r);

/* "Thread TID" or 'Thread TID "name"', a line heading a thread's table in text reports. */
void jf_report_thread_heading(FILE *out, const struct jf_split_result *s);

/* A fill colour for a code class, and one for a split class. */
const char *jf_views_class_colour(int code_class);
const char *jf_views_split_colour(int split_class);
/* s with & < > " ' escaped for XML text and attributes. */
void jf_views_xml(FILE *out, const char *s);

/* Stacks to draw as a flame graph: n rows in frame order (rows sharing their bottom frames
 * next to each other), each of up to depth frames and a count. */
struct jf_flame_rows {
	size_t n;
	int depth;
	void *ctx;
	/* Frame d of row i into buf, bottom first; "" above the row's top. */
	void (*frame)(void *ctx, size_t i, int d, char *buf, size_t size);
	uint64_t (*count)(void *ctx, size_t i);
	/* The fill of frame d of row i (the last row of the frame's run). */
	const char *(*colour)(void *ctx, size_t i, int d);
};
/* rows as an <svg> element (with its xmlns, no XML declaration), width px wide, under
 * title and subtitle; frames narrower than 0.3 px are counted, not drawn. */
void jf_views_flame_rows_svg(FILE *out, const struct jf_flame_rows *rows, int width,
			     const char *title, const char *subtitle);
/* The flame graph as an <svg> element (with its xmlns, no XML declaration), width px wide. */
void jf_views_flame_svg(FILE *out, const struct jf_analysis_result *r, int width);

/* Frame s of the call stacks named (report_stacks.c): a jitted region by the result's
 * regions, a guest function by its code object, native code through names. */
struct jf_stack_names;
void jf_views_call_stack_frame(char *buf, size_t size, const struct jf_analysis_result *r,
			       const struct jf_call_stack *s, const struct jf_stack_names *names);
/* The fill of frame f in pictures of call stacks: native green, jitted orange, guest light
 * orange, others grey. */
const char *jf_views_call_stack_colour(const struct jf_call_stack *f);
/* The rows of call stack `row`, bottom first, into rows[]; returns how many. */
uint32_t jf_views_call_stack_rows(const struct jf_call_stacks_result *cs, uint32_t row,
				  uint32_t rows[JF_CALL_STACKS_DEPTH_MAX + 2]);

/* A thread's call-stack track as frames (call_stack_frames.c): begin when frame `row`
 * (JF_STACK_SPANS_SEVERAL: stacks that share no frame, joined) opens at `depth` (0: the
 * bottom), end when it closes, inner frames first; its spans joined below resolution
 * (never finer than the track's own). -1 when out of memory (the frames given so far
 * closed). */
struct jf_stack_frame_ops {
	void (*begin)(void *ctx, uint32_t depth, uint32_t row, uint64_t at);
	void (*end)(void *ctx, uint32_t depth, uint32_t row, uint64_t start, uint64_t at);
	void *ctx;
};
int jf_stack_track_frames(const struct jf_analysis_result *r, const struct jf_stack_track *tr,
			  uint64_t resolution, const struct jf_stack_frame_ops *ops);

/* The flame graph of the call stacks as an <svg> element (no XML declaration). -1 when out
 * of memory. */
int jf_views_call_stacks_svg(FILE *out, const struct jf_analysis_result *r,
			     const struct jf_report_meta *m, const struct jf_stack_names *names,
			     int width);

/* The unit of the result's time: ns, timestamp ticks, the synthetic clock, or none. */
const char *jf_report_time_unit(const struct jf_analysis_result *r);

#endif
