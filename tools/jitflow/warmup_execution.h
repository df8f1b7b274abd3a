/* One execution of a warm-up report (jitflow warmup): from the "iterations" rows of its
 * `jitflow report --json`, the series, its changepoints (jitflow/changepoints.h), its class,
 * per segment and changepoint the means and jitted shares, and the series itself. */
#ifndef JITFLOW_WARMUP_EXECUTION_H
#define JITFLOW_WARMUP_EXECUTION_H

#include <cjson/cJSON.h>

#include "jitflow/changepoints.h"
#include "jitflow/error.h"

/* The execution's entry, named `name`: the series is the rows' `metric` ("instructions" or
 * "time") but the last row's; segments within `tolerance` of the last are equivalent to it.
 * NULL with err set when there are fewer than two rows or memory ran out. */
cJSON *jf_warmup_execution(const char *name, const cJSON *rows, const char *metric,
			   const struct jf_changepoint_options *opt, double tolerance,
			   struct jf_error *err);

#endif
