/* HotSpot's per-thread split (hotspot_threads.c): per Java thread, the instructions and
 * time in the interpreter, in nmethods by tier, in adapters and stubs, in libjvm's C++ (the
 * VM), in native libraries, in garbage collection. The HotSpot description
 * (runtime_hotspot.c) gives nmethods their region group by tier and prints the tables. */
#ifndef JITFLOW_HOTSPOT_THREADS_H
#define JITFLOW_HOTSPOT_THREADS_H

#include <stdint.h>
#include <stdio.h>

#include "jitflow/analysis.h"

/* Region groups (jf_split_result.insns_by_group) of nmethods, by tier. */
enum jf_hotspot_group {
	JF_HOTSPOT_GROUP_NONE = 0,
	JF_HOTSPOT_GROUP_NATIVE_WRAPPER,  /* level 0 */
	JF_HOTSPOT_GROUP_C1,              /* levels 1-3 */
	JF_HOTSPOT_GROUP_C2,              /* level 4 */
	JF_HOTSPOT_GROUP_UNKNOWN_LEVEL,   /* a JVM whose tables lack the level */
};

/* The per-thread table: text (with time where the trace has it), and the JSON member
 * ",\"threads\":[...]" of the hotspot object. */
void jf_hotspot_threads_text(FILE *out, const struct jf_analysis_result *r);
void jf_hotspot_threads_json(FILE *out, const struct jf_analysis_result *r);

#endif
