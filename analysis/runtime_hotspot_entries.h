/* HotSpot's description, the part that counts where control enters nmethods other than
 * at their start (runtime_hotspot_entries.c): calls at the verified entry, OSR entries, deoptimizations by the nmethod
 * whose frame was deoptimized, and nmethods seen made not entrant. */
#ifndef JITFLOW_RUNTIME_HOTSPOT_ENTRIES_H
#define JITFLOW_RUNTIME_HOTSPOT_ENTRIES_H

#include <stdint.h>
#include <stdio.h>

#include "jitflow/analysis.h"

/* The calls that entered nmethod t: runs of its verified entry that went on into its
 * body, or, for an OSR nmethod, entries at its OSR entry. */
uint64_t jf_hotspot_nmethod_entries(const struct jf_analysis_result *r,
				    const struct jf_trace_result *t);

/* Text tables (nothing for a table without rows) and JSON members (",\"osr_entries\":..."). */
void jf_hotspot_entries_text(FILE *out, const struct jf_analysis_result *r);
void jf_hotspot_entries_json(FILE *out, const struct jf_analysis_result *r);

#endif
