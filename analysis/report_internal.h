/* Report sections shared between the text and JSON reports. */
#ifndef JITFLOW_REPORT_INTERNAL_H
#define JITFLOW_REPORT_INTERNAL_H

#include <stdio.h>

#include "jitflow/report.h"

/* report_pypy.c: nothing unless the result has counted points (PyPy inputs). */
void jf_report_pypy(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_pypy_json(FILE *out, const struct jf_analysis_result *r);

#endif
