/* Report sections shared between the text and JSON reports. */
#ifndef JITFLOW_REPORT_INTERNAL_H
#define JITFLOW_REPORT_INTERNAL_H

#include <stdio.h>

#include "jitflow/report.h"

/* report_pypy.c: nothing unless the result has counted points (PyPy inputs). */
void jf_report_pypy(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m);
void jf_report_pypy_json(FILE *out, const struct jf_analysis_result *r);

/* report_luajit.c: LuaJIT's words, for results whose records declare JF_RUNTIME_LUAJIT. */
int jf_report_is_luajit(const struct jf_analysis_result *r);
void jf_report_luajit_events(FILE *out, const struct jf_analysis_result *r);
void jf_report_luajit_traces(FILE *out, const struct jf_analysis_result *r, size_t top);
void jf_report_luajit_exits(FILE *out, const struct jf_analysis_result *r, size_t top);
void jf_report_luajit_json(FILE *out, const struct jf_analysis_result *r); /* nothing else */

#endif
