/* Running a decode through the analysis, for report, guards, split and bytecodes. */
#ifndef JITFLOW_CLI_ANALYSIS_H
#define JITFLOW_CLI_ANALYSIS_H

#include <stdio.h>

#include "jitflow/report.h"

/* Prints the text form of one view. */
typedef void (*jf_cli_view_fn)(FILE *out, const struct jf_analysis_result *r,
			       const struct jf_report_meta *m);

/* Parse the inputs (a recording folder, a perf.data file, or the decode inputs) and
 * --json, --csv TABLE, --top N, --tolerance X; decode; analyse; print with view (or as
 * JSON or CSV). `what` is a paragraph for --help. Returns the exit status. */
int jf_cli_analysis_main(const char *cmd, const char *what, jf_cli_view_fn view, int argc,
			 char **argv);

#endif
