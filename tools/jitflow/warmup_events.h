/* What happened at each changepoint of an execution, from its timeline (`jitflow timeline`):
 * code compiled, freed and bridges attached in the last iteration of the segment before and
 * the first of the segment after,
 * and the guards whose exits per iteration differ between the segments. */
#ifndef JITFLOW_WARMUP_EVENTS_H
#define JITFLOW_WARMUP_EVENTS_H

#include <cjson/cJSON.h>

#include "jitflow/error.h"

/* Adds "events" to each changepoint of `execution` (a warm-up report's entry with its
 * "segments" and "changepoints") from the timeline file at path. Returns 0, or -1 with err
 * set when the file is not a jitflow timeline. */
int jf_warmup_add_events(cJSON *execution, const char *timeline_path, struct jf_error *err);

#endif
