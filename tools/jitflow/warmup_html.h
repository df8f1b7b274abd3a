/* The warm-up report as one self-contained HTML page: per execution its series, the
 * segments' means and the changepoints marked, with the events at each on hover. */
#ifndef JITFLOW_WARMUP_HTML_H
#define JITFLOW_WARMUP_HTML_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* benchmarks: a warm-up report's "warmup_benchmarks". */
void jf_warmup_html(FILE *out, const cJSON *benchmarks, const char *metric);

#endif
