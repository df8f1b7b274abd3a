/* The VM phases' parts of the JSON report (report_phases.c), written only where the
 * runtime told phases, so that other reports keep their form. */
#ifndef JITFLOW_REPORT_PHASES_H
#define JITFLOW_REPORT_PHASES_H

#include <stdio.h>

#include "jitflow/analysis.h"
#include "jitflow/report.h"

/* Whether r has phases to report (told, or brackets that did not close). */
int jf_report_has_phases(const struct jf_analysis_result *r);
/* A trace row that only phases made: a recording that was aborted or never compiled. */
int jf_report_trace_never_compiled(const struct jf_trace_result *t);
/* ,"phases":{...}: the phases told, per thread and in total, the brackets that did not close,
 * and what the recordings that never became code cost. */
void jf_report_json_phases(FILE *out, const struct jf_analysis_result *r);
/* ,"tracing":{...},"compiling":{...} of a trace object: what making t cost. */
void jf_report_json_trace_making(FILE *out, const struct jf_analysis_result *r,
				 const struct jf_trace_result *t);
/* ,"phases":{...} of an iteration object: its instructions per phase. */
void jf_report_json_iteration_phases(FILE *out, const struct jf_analysis_result *r,
				     const struct jf_iteration_result *it);

/* The phase and trace-making tables as a section of the HTML report (nothing without
 * phases). */
void jf_report_html_phases(FILE *out, const struct jf_analysis_result *r,
			   const struct jf_report_meta *m);

/* The bands an iteration's instructions are drawn and listed in: with phases,
 * interpreting, each phase told, jitted, instrumentation and the rest; without, the split
 * classes. */
enum { JF_REPORT_BANDS_MAX = 10 };
struct jf_report_bands {
	int n;
	const char *name[JF_REPORT_BANDS_MAX], *colour[JF_REPORT_BANDS_MAX];
	int code_class[JF_REPORT_BANDS_MAX]; /* the class, or -1 - split class, or
	                                      * JF_CLASS_COUNT for the rest */
};
void jf_report_iteration_bands(const struct jf_analysis_result *r, struct jf_report_bands *b);
/* v[k]: the instructions of iteration `it` in band k (they add up to it->insns). */
void jf_report_band_values(const struct jf_report_bands *b, const struct jf_iteration_result *it,
			   uint64_t v[JF_REPORT_BANDS_MAX]);

#endif
