/* HotSpot's compiled methods with the methods that ran in them (inlined ones too) and
 * their bytecode ranges, from the agent's per-nmethod pc maps (hotspot_methods.c); the
 * HotSpot description's text and JSON sections (runtime_hotspot.c) print them. */
#ifndef JITFLOW_HOTSPOT_METHODS_H
#define JITFLOW_HOTSPOT_METHODS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jitflow/analysis.h"

#define JF_HOTSPOT_MAX_FRAMES 32

struct jf_hotspot_frame {           /* a method that ran in an nmethod */
	size_t first, count;            /* its bytecode rows: r->bytecodes[first ...] */
	uint64_t insns;
	int inlined;                    /* not the nmethod's own method */
};

struct jf_hotspot_method {          /* an nmethod with bytecode rows */
	const struct jf_trace_result *trace;
	struct jf_hotspot_frame frames[JF_HOTSPOT_MAX_FRAMES];
	size_t nframes, frames_left_out; /* methods beyond JF_HOTSPOT_MAX_FRAMES */
	uint64_t mapped;                /* instructions of its frames */
};

/* The nmethods of r with bytecode rows, in compile id order (malloc'd *out, *n of them);
 * -1 without memory. */
int jf_hotspot_methods(const struct jf_analysis_result *r, struct jf_hotspot_method **out,
		       size_t *n);
/* The text table of the top nmethods by instructions and the JSON array
 * (",\"compiled_methods\":[...]"); tier names an nmethod's tier. */
void jf_hotspot_methods_text(FILE *out, const struct jf_analysis_result *r, size_t top,
			     const char *(*tier)(const struct jf_trace_result *));
void jf_hotspot_methods_json(FILE *out, const struct jf_analysis_result *r,
			     const char *(*tier)(const struct jf_trace_result *));

#endif
