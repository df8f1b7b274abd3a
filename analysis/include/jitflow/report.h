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
};

void jf_report_summary(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_traces(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_guards(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_split(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_bytecodes(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_retrace(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_iterations(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
/* What the inputs could not tell: said, not invented. */
void jf_report_unavailable(FILE *out, const struct jf_analysis_result *r);

/* The whole result as one JSON object. */
void jf_report_json(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);

/* One table as CSV with a header line: traces, guards, split, bytecodes, ops, regions,
 * iterations. Returns -1 for an unknown table. */
int jf_report_csv(FILE *out, const struct jf_analysis_result *r, const char *table);
extern const char jf_report_csv_tables[]; /* "traces, guards, ..." for help texts */

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
