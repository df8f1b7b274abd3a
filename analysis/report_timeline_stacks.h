/* The timeline's call-stack track of one thread (report_timeline_stacks.c). */
#ifndef JITFLOW_REPORT_TIMELINE_STACKS_H
#define JITFLOW_REPORT_TIMELINE_STACKS_H

#include <stdint.h>
#include <stdio.h>

#include "jitflow/analysis.h"

struct jf_stack_names;

/* Thread track tr's frames as B/E events on process 3 (times from origin), its spans joined
 * below resolution; *first: no event written yet (the separator). Returns the events. */
size_t jf_timeline_stack_track(FILE *out, const struct jf_analysis_result *r,
			       const struct jf_stack_names *names, const struct jf_stack_track *tr,
			       uint64_t origin, uint64_t resolution, int *first);

#endif
