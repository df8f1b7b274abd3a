/* PyPy's description (runtime.h), for results whose zone records came from a PYPYLOG:
 * loops by number and name, bridges by the guard they hang off (guard descrs in hex as
 * PyPy prints them, bridge ids in decimal as jit-backend-counts writes them), labels by
 * TargetToken, and the counts PyPy's own counters keep (entry N, TargetToken(T),
 * bridge B), counted from the trace. */
#include <inttypes.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/json_out.h"
#include "runtime.h"

/* The passes of trace t's point of kind k (the first one), 0 if it has none. */
static uint64_t point_passes(const struct jf_analysis_result *r, uint64_t trace, uint32_t kind,
			     int *found)
{
	size_t i;

	for (i = 0; i < r->npoints; i++) {
		if (r->points[i].trace_id == trace && r->points[i].kind == kind) {
			*found = 1;
			return r->points[i].passes;
		}
	}
	*found = 0;
	return 0;
}

static void json_guards(FILE *out, const struct jf_analysis_result *r,
			const struct jf_trace_result *t)
{
	size_t j;

	fprintf(out, ",\"guards\":[");
	for (j = t->guard_first; j < t->guard_first + t->guard_count; j++) {
		const struct jf_guard_result *g = &r->guards[j];

		fprintf(out, "%s{\"id\":\"0x%" PRIx64 "\",\"kind\":", j > t->guard_first ? "," : "",
			g->guard_id);
		jf_json_string(out, g->kind);
		fprintf(out, ",\"exits\":%" PRIu64 ",\"passes\":%" PRIu64, g->exits, g->passes);
		if (g->has_bridge)
			fprintf(out, ",\"bridge\":\"%" PRIu64 "\",\"exits_before_bridge\":%" PRIu64,
				g->bridge_id, g->exits_before_bridge);
		fputc('}', out);
	}
	fputc(']', out);
}

static void pypy_json(FILE *out, const struct jf_analysis_result *r)
{
	size_t i, j;
	int pass, first = 1, found;

	if (!r->npoints)
		return;
	fprintf(out, ",\"pypy\":{");
	for (pass = 0; pass < 2; pass++) {
		uint32_t kind = pass ? JF_REGION_BRIDGE : JF_REGION_TRACE;

		fprintf(out, "%s\"%s\":[", pass ? "," : "", pass ? "bridges" : "loops");
		first = 1;
		for (i = 0; i < r->ntraces; i++) {
			const struct jf_trace_result *t = &r->traces[i];
			uint64_t entries;

			if (t->kind != kind)
				continue;
			entries = point_passes(r, t->trace_id, pass ? JF_POINT_BRIDGE : JF_POINT_ENTRY,
					       &found);
			if (pass)
				fprintf(out, "%s{\"id\":\"%" PRIu64 "\",\"kind\":\"bridge\","
					"\"parent_guard\":\"0x%" PRIx64 "\",\"parent\":%" PRIu64,
					first ? "" : ",", t->trace_id, t->parent_guard, t->parent_trace);
			else
				fprintf(out, "%s{\"id\":%" PRIu64 ",\"kind\":\"loop\"", first ? "" : ",",
					t->trace_id);
			fprintf(out, ",\"name\":");
			jf_json_string(out, t->name);
			if (found)
				fprintf(out, ",\"entries\":%" PRIu64, entries);
			else
				fprintf(out, ",\"entries\":null");
			fprintf(out, ",\"instructions\":%" PRIu64 ",\"labels\":[", t->insns);
			for (j = 0, found = 0; j < r->npoints; j++) {
				const struct jf_point_result *p = &r->points[j];

				if (p->trace_id != t->trace_id || p->kind != JF_POINT_LABEL)
					continue;
				fprintf(out, "%s{\"token\":\"%" PRIu64 "\",\"passes\":%" PRIu64 "}",
					found++ ? "," : "", p->point_id, p->passes);
			}
			fputc(']', out);
			json_guards(out, r, t);
			fputc('}', out);
			first = 0;
		}
		fputc(']', out);
	}
	fputc('}', out);
}

static const char *not_told_apart(const struct jf_analysis_result *r)
{
	/* With PyPy's timed log sections as phases, the pypy binary's code outside every
	 * phase is its interpreter and the rest of its runtime ("other" in the phase table);
	 * PyPy 7.3.11 logs no section around leaving compiled code (no jit-blackhole). */
	if (r->phases_told)
		return "PyPy's interpreter and the rest of its runtime outside the VM phases (one "
		       "binary: the phase table's \"other\"); leaving compiled code (no section "
		       "in PyPy's log: inside \"other\"); the JIT's assembler helpers count as "
		       "trampolines";
	return "PyPy's interpreter and the rest of its native code (both are the pypy binary: "
	       "counted as native); the JIT's assembler helpers count as trampolines";
}

static int pypy_text(FILE *out, const struct jf_analysis_result *r)
{
	size_t i, j;
	int found;

	if (!r->npoints)
		return 0;
	fprintf(out, "PyPy loops and bridges (counts as PyPy's jit-backend-counts names them, "
		     "counted from the trace)\n");
	for (i = 0; i < r->ntraces; i++) {
		const struct jf_trace_result *t = &r->traces[i];
		int bridge = t->kind == JF_REGION_BRIDGE;
		uint64_t entries = point_passes(r, t->trace_id, bridge ? JF_POINT_BRIDGE : JF_POINT_ENTRY,
						&found);
		uint64_t exits = 0;

		if (t->kind != JF_REGION_TRACE && !bridge)
			continue;
		if (bridge)
			fprintf(out, "  bridge %" PRIu64 " out of Guard 0x%" PRIx64 " (of %s%" PRIu64 ")",
				t->trace_id, t->parent_guard,
				t->parent_trace > UINT32_MAX ? "bridge " : "loop ", t->parent_trace);
		else
			fprintf(out, "  %s", t->name);
		if (found)
			fprintf(out, ": entries %" PRIu64, entries);
		fprintf(out, ", %" PRIu64 " instructions\n", t->insns);
		for (j = 0; j < r->npoints; j++) {
			const struct jf_point_result *p = &r->points[j];

			if (p->trace_id == t->trace_id && p->kind == JF_POINT_LABEL)
				fprintf(out, "      TargetToken(%" PRIu64 "): passes %" PRIu64 "\n",
					p->point_id, p->passes);
		}
		for (j = t->guard_first; j < t->guard_first + t->guard_count; j++)
			exits += r->guards[j].exits;
		for (j = t->guard_first; j < t->guard_first + t->guard_count; j++) {
			const struct jf_guard_result *g = &r->guards[j];

			if (!g->exits)
				continue;
			fprintf(out, "      %-22s 0x%" PRIx64 ": exits %" PRIu64 ", passes %" PRIu64,
				g->kind[0] ? g->kind : "guard", g->guard_id, g->exits, g->passes);
			if (g->has_bridge)
				fprintf(out, ", bridge %" PRIu64 " after %" PRIu64 " exits", g->bridge_id,
					g->exits_before_bridge);
			fputc('\n', out);
		}
		fprintf(out, "      guards: %u, exits %" PRIu64 " (guards that never failed not "
			     "listed)\n", t->guard_count, exits);
	}
	fprintf(out, "  Not told apart: %s\n", not_told_apart(r));
	return 1;
}

static void guard_id(char *buf, size_t size, uint64_t id)
{
	snprintf(buf, size, "0x%" PRIx64, id);
}

const struct jf_runtime_desc jf_runtime_pypy = {
	.name = "PyPy",
	.kind_names = {
		[JF_REGION_TRACE] = "loop",
		[JF_REGION_BRIDGE] = "bridge",
	},
	.class_names = {
		[JF_CLASS_TRACE] = "loop",
	},
	.trace = "loop",
	.bridge = "bridge",
	.bridges = "bridges",
	.guard = "guard",
	.guards = "guards",
	.guard_exit = "guard exit",
	.guard_id = guard_id,
	.not_told_apart = not_told_apart,
	.text_section = pypy_text,
	.json_section = pypy_json,
};
