/* One description per runtime: the words every report writer (text, JSON, HTML, CSV,
 * timeline) uses for what a runtime compiles, and the sections only that runtime has.
 *
 * The zone records say which runtime wrote them (a JF_EVENT_RUNTIME record); the writers
 * ask jf_runtime_of(result) and never test for a runtime themselves. Adding a runtime means
 * writing its zone source in imagemap/ and one runtime_NAME.c here that fills this
 * structure, then naming it in runtime.c (docs/analysis.md, "Adding a runtime"). */
#ifndef JITFLOW_RUNTIME_H
#define JITFLOW_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jitflow/analysis.h"
#include "jitflow/emitter.h"

#define JF_RUNTIME_KINDS (JF_REGION_FUNCTION + 1) /* enum jf_region_kind */

struct jf_runtime_desc {
	const char *name;            /* "PyPy"; "" for the generic words */
	/* A trace's kind in tables, by enum jf_region_kind (NULL: "trace"); trace_kind, when
	 * set, answers instead (a method JIT's tier or OSR is in the trace, not its kind). */
	const char *kind_names[JF_RUNTIME_KINDS];
	const char *(*trace_kind)(const struct jf_trace_result *t);
	/* A code class in flame graph frames, by enum jf_code_class (NULL: jitflow's name). */
	const char *class_names[JF_CLASS_COUNT];
	/* A trace and a bridge named by their id ("trace 3", "side trace 5"); bridges in a
	 * sentence; a guard and guards ("exit", "uncommon trap"): lower case, writers make
	 * headings of them. */
	const char *trace, *bridge, *bridges, *guard, *guards;
	/* One leaving through a guard ("guard exit"; LuaJIT: "exit"); plural with an "s". */
	const char *guard_exit;
	/* Ids as the runtime writes them (NULL: decimal): LuaJIT's trace "f1:3" after a flush,
	 * PyPy's guard descrs in hex. */
	void (*trace_id)(char *buf, size_t size, uint64_t id);
	void (*guard_id)(char *buf, size_t size, uint64_t id);
	/* What the split cannot tell apart in this result (NULL or a function returning NULL:
	 * nothing), as one sentence. */
	const char *(*not_told_apart)(const struct jf_analysis_result *r);
	/* The text report's traces and guards tables in the runtime's own form (NULL: the
	 * generic ones), top rows of each. */
	void (*text_traces)(FILE *out, const struct jf_analysis_result *r, size_t top);
	void (*text_guards)(FILE *out, const struct jf_analysis_result *r, size_t top);
	/* Tables of its own: a text section after the traces (returns 0 when it printed
	 * nothing), a member of the JSON report's object (",\"name\":{...}"). */
	int (*text_section)(FILE *out, const struct jf_analysis_result *r);
	void (*json_section)(FILE *out, const struct jf_analysis_result *r);
	/* The group (< JF_REGION_GROUPS; 0: none) of a region the runtime describes, by its
	 * kind and name, counted apart per thread (jf_split_result.insns_by_group); NULL: all
	 * 0. Asked once, when the region is described. */
	uint8_t (*region_group)(uint32_t kind, const char *name);
};

extern const struct jf_runtime_desc jf_runtime_generic; /* minivm, and runtimes not described */
extern const struct jf_runtime_desc jf_runtime_pypy;
extern const struct jf_runtime_desc jf_runtime_luajit;
extern const struct jf_runtime_desc jf_runtime_hotspot;
extern const struct jf_runtime_desc jf_runtime_cpython;

/* The description of runtime (enum jf_runtime), the generic one when none. */
const struct jf_runtime_desc *jf_runtime_by_id(uint32_t runtime);
/* The group of a region runtime describes (jf_runtime_desc.region_group). */
uint8_t jf_runtime_region_group(uint32_t runtime, uint32_t kind, const char *name);

/* The description of the runtime whose records made r. */
const struct jf_runtime_desc *jf_runtime_of(const struct jf_analysis_result *r);

/* Words and ids through the description's defaults. */
const char *jf_runtime_kind(const struct jf_runtime_desc *rt, const struct jf_trace_result *t);
const char *jf_runtime_class(const struct jf_runtime_desc *rt, enum jf_code_class cls);
const char *jf_runtime_trace_id(const struct jf_runtime_desc *rt, char *buf, size_t size, uint64_t id);
const char *jf_runtime_guard_id(const struct jf_runtime_desc *rt, char *buf, size_t size, uint64_t id);
/* word with its first letter in upper case, for headings. */
const char *jf_runtime_heading(char *buf, size_t size, const char *word);
/* Indexes of n rows ordered by key (n values), largest first, ties in table order;
 * malloc'd, NULL when out of memory. */
size_t *jf_runtime_order_by(size_t n, const uint64_t *key);
/* r's traces so ordered by instructions. */
size_t *jf_runtime_rank_traces(const struct jf_analysis_result *r);
/* r's guards so ordered by exits. */
size_t *jf_runtime_rank_guards(const struct jf_analysis_result *r);
/* The sentence of what r's split cannot tell apart, or NULL. */
const char *jf_runtime_not_told_apart(const struct jf_runtime_desc *rt,
				      const struct jf_analysis_result *r);

#endif
