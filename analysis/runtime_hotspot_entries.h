/* HotSpot's description, the part that counts where control enters nmethods other than
 * at their start (runtime_hotspot_entries.c): OSR entries, deoptimizations by the nmethod
 * whose frame was deoptimized, and nmethods seen made not entrant. */
#ifndef JITFLOW_RUNTIME_HOTSPOT_ENTRIES_H
#define JITFLOW_RUNTIME_HOTSPOT_ENTRIES_H

#include <stdint.h>
#include <stdio.h>

#include "jitflow/analysis.h"

/* Entries into an OSR nmethod at its OSR entry (0 for other nmethods). */
uint64_t jf_hotspot_osr_entries(const struct jf_analysis_result *r, uint64_t compile_id);

/* Text tables (nothing for a table without rows) and JSON members (",\"osr_entries\":..."). */
void jf_hotspot_entries_text(FILE *out, const struct jf_analysis_result *r);
void jf_hotspot_entries_json(FILE *out, const struct jf_analysis_result *r);

#endif
