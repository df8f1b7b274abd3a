/* Reports of an analysis result: a terminal summary, focused views, JSON and CSV.
 * The JSON schema is documented in docs/analysis.md. */
#ifndef JITFLOW_REPORT_H
#define JITFLOW_REPORT_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdio.h>

#include "jitflow/analysis.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_report_meta {
	const char *source;         /* what was decoded, e.g. the perf.data path */
	uint64_t trace_bytes;
	size_t top;                 /* rows per table in text reports (0 = 10) */
	/* What the inputs held, so that notes say what is missing rather than guess (when
	 * zone_files_known): zone files read, and how many of them hold jitflow's records. */
	int zone_files_known;
	uint64_t zone_files, zone_ext_files;
	/* Blocks a recorder saw run with bytes a thread had not run there before
	 * (JF_PATCH_OBSERVED records): those that changed the code the image held, those
	 * that brought code no record had described yet, and those the image already held. */
	uint64_t observed_changed, observed_before_record, observed_same;
	const char *notes[8];       /* further facts about the inputs, one sentence each */
	size_t nnotes;
};

void jf_report_summary(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_traces(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_guards(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_split(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_bytecodes(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_retrace(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
/* The VM phases per thread (nothing when the runtime told none), and what making each
 * trace cost beside what it ran afterwards (nothing without tracing or compiling). */
void jf_report_phases(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_trace_making(FILE *out, const struct jf_analysis_result *r,
			    const struct jf_report_meta *m);
void jf_report_iterations(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
/* What the inputs could not tell: said, not invented. */
void jf_report_unavailable(FILE *out, const struct jf_analysis_result *r,
			   const struct jf_report_meta *m);

/* The whole result as one JSON object. */
void jf_report_json(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);

/* One table as CSV with a header line: traces, guards, split, bytecodes, ops, regions,
 * iterations. Returns -1 for an unknown table. */
int jf_report_csv(FILE *out, const struct jf_analysis_result *r, const char *table);
extern const char jf_report_csv_tables[]; /* "traces, guards, ..." for help texts */

/* Views (docs/views.md). Folded stacks `thread;class;region;bytecode-range count`, counts
 * in instructions summing to r->insns; returns -1 when out of memory. */
int jf_report_folded(FILE *out, const struct jf_analysis_result *r);
/* The flame graph of the folded stacks as a standalone SVG file. */
void jf_report_flame_svg(FILE *out, const struct jf_analysis_result *r);
/* The whole report as one self-contained HTML file (no network; inline SVG, a little
 * JavaScript to sort tables). */
void jf_report_html(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
struct jf_stack_names;
/* The same, with a flame graph of the call stacks when r has them (native frames named
 * through names). */
void jf_report_html_named(FILE *out, const struct jf_analysis_result *r,
			  const struct jf_report_meta *m, const struct jf_stack_names *names);
/* The timeline as Chrome trace-event JSON; spans merged below `resolution` clock units
 * (0: the analysis's bucket width). */
void jf_report_timeline(FILE *out, const struct jf_analysis_result *r,
			const struct jf_report_meta *m, uint64_t resolution);
struct jf_stack_names;
/* The same, with a call-stack track per thread when r has call stacks (nested B/E events
 * on process 3, joined below resolution), native frames named through names. */
void jf_report_timeline_named(FILE *out, const struct jf_analysis_result *r,
			      const struct jf_report_meta *m, uint64_t resolution,
			      const struct jf_stack_names *names);

/* The call-stack tracks of r (one per thread) as an SVG picture width px wide: each
 * thread's frames over the trace's clock (instructions where it has none), callers above
 * callees, joined below a pixel's worth of the clock. -1 when out of memory. */
int jf_report_timeline_svg(FILE *out, const struct jf_analysis_result *r,
			   const struct jf_report_meta *m, const struct jf_stack_names *names,
			   int width);

/* Call stacks (jitflow/call_stacks.h). Jitted frames are named by the result's regions,
 * native ones by native_name (e.g. the ELF symbol containing the address; NULL, or a NULL
 * answer: the address in hex). */
struct jf_stack_names {
	const char *(*native_name)(void *ctx, uint64_t addr);
	void *ctx;
};
/* The hottest stacks by instructions, with what the reconstruction could not follow. */
void jf_report_call_stacks(FILE *out, const struct jf_analysis_result *r,
			   const struct jf_report_meta *m, const struct jf_stack_names *names);
/* `thread N;bottom frame;...;top frame insns`, one line per stack that ran instructions;
 * the counts sum to r->call_stacks.insns. -1 when out of memory. */
int jf_report_call_stacks_folded(FILE *out, const struct jf_analysis_result *r,
				 const struct jf_stack_names *names);
/* The stacks that ran instructions as an SVG flame graph width px wide (a frame's width:
 * the instructions run with it on the stack). -1 when out of memory. */
int jf_report_call_stacks_svg(FILE *out, const struct jf_analysis_result *r,
			      const struct jf_report_meta *m, const struct jf_stack_names *names,
			      int width);
/* Every stack, its frames bottom first, and the counts and notes, as one JSON object. */
int jf_report_call_stacks_json(FILE *out, const struct jf_analysis_result *r,
			       const struct jf_report_meta *m, const struct jf_stack_names *names);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
