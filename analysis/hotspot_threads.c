/* HotSpot's per-thread split, from each thread's counts by code class and by region group
 * (hotspot_threads.h): the interpreter is the template interpreter's code (its codelets),
 * C1, C2, native wrappers and nmethods of unknown level are the nmethods' groups, adapters
 * and stubs every other code the agent describes (I2C/C2I adapters, UncommonTrapBlob and
 * DeoptimizationBlob, the runtime and vtable stubs), VM the runtime's native code (libjvm,
 * the launcher) outside collections, native the libraries and the kernel, GC everything a
 * thread ran inside a collection. */
#include "hotspot_threads.h"

#include <inttypes.h>
#include <string.h>

#include "jitflow/json_out.h"

enum column {
	COL_INTERPRETER, COL_C1, COL_C2, COL_NATIVE_WRAPPER, COL_UNKNOWN_LEVEL, COL_STUBS,
	COL_VM, COL_NATIVE, COL_GC, COL_INSTRUMENTATION, COL_UNKNOWN, COL_COUNT,
};

static const char *const col_titles[COL_COUNT] = {
	"interpreter", "C1", "C2", "wrappers", "level?", "stubs", "VM", "native", "GC",
	"instrument", "unknown",
};
static const char *const col_keys[COL_COUNT] = {
	"interpreter", "c1", "c2", "native_wrapper", "unknown_level", "stubs", "vm", "native",
	"gc", "instrumentation", "unknown",
};

/* Columns shown whether or not anything ran there (the others only when something did). */
static int always_shown(int c)
{
	return c != COL_NATIVE_WRAPPER && c != COL_UNKNOWN_LEVEL;
}

/* One thread's split in the table's columns, of instructions or (time) of time. */
static void columns(const struct jf_split_result *s, int time, uint64_t col[COL_COUNT])
{
	const uint64_t *cls = time ? s->time_by_class : s->by_class;
	const uint64_t *grp = time ? s->time_by_group : s->insns_by_group;
	uint64_t nmethods = grp[JF_HOTSPOT_GROUP_NATIVE_WRAPPER] + grp[JF_HOTSPOT_GROUP_C1] +
			    grp[JF_HOTSPOT_GROUP_C2] + grp[JF_HOTSPOT_GROUP_UNKNOWN_LEVEL];
	uint64_t trace = cls[JF_CLASS_TRACE];

	col[COL_INTERPRETER] = cls[JF_CLASS_INTERPRETER];
	col[COL_C1] = grp[JF_HOTSPOT_GROUP_C1];
	col[COL_C2] = grp[JF_HOTSPOT_GROUP_C2];
	col[COL_NATIVE_WRAPPER] = grp[JF_HOTSPOT_GROUP_NATIVE_WRAPPER];
	col[COL_UNKNOWN_LEVEL] = grp[JF_HOTSPOT_GROUP_UNKNOWN_LEVEL];
	/* Compiled code the agent described but not as an nmethod is a stub. */
	col[COL_STUBS] = (trace > nmethods ? trace - nmethods : 0) + cls[JF_CLASS_BRIDGE] +
			 cls[JF_CLASS_EXIT_STUB] + cls[JF_CLASS_TRAMPOLINE] +
			 cls[JF_CLASS_INLINE_CACHE] + cls[JF_CLASS_STENCIL] + cls[JF_CLASS_JITTED];
	col[COL_VM] = cls[JF_CLASS_RUNTIME];
	col[COL_NATIVE] = cls[JF_CLASS_NATIVE] + cls[JF_CLASS_KERNEL];
	col[COL_GC] = cls[JF_CLASS_GC];
	col[COL_INSTRUMENTATION] = cls[JF_CLASS_INSTRUMENTATION];
	col[COL_UNKNOWN] = cls[JF_CLASS_UNKNOWN];
}

static const char *time_unit(const struct jf_analysis_result *r)
{
	if (r->time_is_synthetic)
		return "synthetic instruction-count clock";
	return r->time_is_ns ? "ns" : "timestamp ticks";
}

static void text_table(FILE *out, const struct jf_analysis_result *r, int time)
{
	int shown[COL_COUNT], c;
	size_t i;

	for (c = 0; c < COL_COUNT; c++) {
		shown[c] = always_shown(c);
		for (i = 0; i < r->nthreads && !shown[c]; i++) {
			uint64_t col[COL_COUNT];

			columns(&r->threads[i], 0, col);
			shown[c] = col[c] != 0;
		}
	}
	if (time)
		fprintf(out, "  time (%s)\n", time_unit(r));
	fprintf(out, "  %-30s", "thread");
	for (c = 0; c < COL_COUNT; c++)
		if (shown[c])
			fprintf(out, " %12s", col_titles[c]);
	fprintf(out, "%s\n", time ? "" : "  collections");
	for (i = 0; i < r->nthreads; i++) {
		const struct jf_split_result *s = &r->threads[i];
		uint64_t col[COL_COUNT];
		char name[64];

		snprintf(name, sizeof(name), "%" PRId32 "%s%.22s%s", s->tid, s->name[0] ? " \"" : "",
			 s->name, s->name[0] ? "\"" : "");
		columns(s, time, col);
		fprintf(out, "  %-30s", name);
		for (c = 0; c < COL_COUNT; c++)
			if (shown[c])
				fprintf(out, " %12" PRIu64, col[c]);
		if (!time)
			fprintf(out, "  %11" PRIu64, s->collections);
		fputc('\n', out);
	}
}

void jf_hotspot_threads_text(FILE *out, const struct jf_analysis_result *r)
{
	if (!r->nthreads)
		return;
	fprintf(out, "Java threads: instructions in the interpreter, nmethods by tier (level?: "
		"unknown level), adapters and stubs, libjvm's C++ (VM), native libraries and "
		"the kernel, garbage collection (GC, from a call into a collection until it "
		"returns), the agent (instrument); collections: calls into a collection\n");
	text_table(out, r, 0);
	if (r->has_time)
		text_table(out, r, 1);
}

static void json_columns(FILE *out, const char *key, const uint64_t col[COL_COUNT])
{
	int c;

	fprintf(out, ",\"%s\":{", key);
	for (c = 0; c < COL_COUNT; c++)
		fprintf(out, "%s\"%s\":%" PRIu64, c ? "," : "", col_keys[c], col[c]);
	fputc('}', out);
}

void jf_hotspot_threads_json(FILE *out, const struct jf_analysis_result *r)
{
	size_t i;

	fprintf(out, ",\"threads\":[");
	for (i = 0; i < r->nthreads; i++) {
		const struct jf_split_result *s = &r->threads[i];
		uint64_t col[COL_COUNT];

		fprintf(out, "%s{\"tid\":%" PRId32 ",\"name\":", i ? "," : "", s->tid);
		jf_json_string(out, s->name);
		columns(s, 0, col);
		json_columns(out, "instructions", col);
		if (r->has_time) {
			columns(s, 1, col);
			json_columns(out, "time", col);
		}
		fprintf(out, ",\"collections\":%" PRIu64 "}", s->collections);
	}
	fputc(']', out);
}
