/* LuaJIT's description (runtime.h), for results whose zone records declare
 * JF_RUNTIME_LUAJIT, as tools/runtimes/luajit/jitflow.lua does: root and side traces by LuaJIT's trace number,
 * a side trace by its parent's exit ("exit 3 of trace 1"), each exit's branch taken split
 * into exits that reached LuaJIT's exit handler (the interpreter) before its side trace
 * was attached, those that went on to the side trace, and those that still reached the
 * interpreter after; link types; and the trace events (recordings started and aborted,
 * flushes) as the runtime wrote them. Trace ids are the module's: the trace number plus
 * 2^32 times the flushes before the trace was compiled. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/json_out.h"
#include "jitflow/zone.h"
#include "report_phases.h"
#include "runtime.h"

#define FLUSH_SHIFT 32

/* "3", or "f1:3" for trace 3 compiled after the first flush. */
static const char *trace_name(char *buf, size_t size, uint64_t id)
{
	if (id >> FLUSH_SHIFT)
		snprintf(buf, size, "f%" PRIu64 ":%" PRIu64, id >> FLUSH_SHIFT,
			 id & (uint64_t)0xffffffffu);
	else
		snprintf(buf, size, "%" PRIu64, id);
	return buf;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* Where an exit's branch went: to the interpreter before its side trace was attached
 * (all of them when it has none), to the side trace, to the interpreter after. */
struct exit_split {
	uint64_t interp_before, to_side, interp_after;
};

static struct exit_split split_exits(const struct jf_guard_result *g)
{
	struct exit_split s;

	s.to_side = g->to_bridge;
	if (g->has_bridge) {
		s.interp_before = g->exits_before_bridge;
		s.interp_after = g->exits - g->exits_before_bridge - g->to_bridge;
	} else {
		s.interp_before = g->exits - g->to_bridge;
		s.interp_after = 0;
	}
	return s;
}

static uint64_t compiled(const struct jf_analysis_result *r, uint32_t kind)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < r->ntraces; i++)
		n += r->traces[i].kind == kind;
	return n;
}

/* The module describes LuaJIT's interpreter (the VM's code, found from its dispatch
 * table); in a recording without that range (the module could not find it, and says why
 * on stderr, or predates it), the split cannot tell the interpreter from luajit's other
 * native code. */
static const char *not_told_apart(const struct jf_analysis_result *r)
{
	if (r->total.insns[JF_SPLIT_INTERPRETER])
		return NULL;
	return "LuaJIT's interpreter (no interpreter range in the zone records) and the rest "
	       "of its native code: counted as native";
}

static void luajit_events(FILE *out, const struct jf_analysis_result *r)
{
	const char *apart = not_told_apart(r);

	fprintf(out, "LuaJIT: %" PRIu64 " traces compiled (%" PRIu64 " root, %" PRIu64 " side), "
		"%" PRIu64 " recordings started, %" PRIu64 " aborted, %" PRIu64 " flushes\n",
		compiled(r, JF_REGION_TRACE) + compiled(r, JF_REGION_BRIDGE),
		compiled(r, JF_REGION_TRACE), compiled(r, JF_REGION_BRIDGE), r->trace_starts,
		r->trace_aborts, r->trace_flushes);
	if (apart)
		fprintf(out, "  Not told apart: %s\n", apart);
}

static void link_text(char *buf, size_t size, const struct jf_trace_result *t)
{
	char to[32];

	if (t->link == JF_LINK_TRACE && t->link_trace)
		snprintf(buf, size, "trace %s", trace_name(to, sizeof(to), t->link_trace));
	else
		snprintf(buf, size, "%s", jf_zone_trace_link_name(t->link));
}

/* The traces LuaJIT compiled: recordings that never became code (aborted) are only in
 * the trace-making table. */
static size_t compiled_traces(const struct jf_analysis_result *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->ntraces; i++)
		n += !jf_report_trace_never_compiled(&r->traces[i]);
	return n;
}

static void luajit_traces(FILE *out, const struct jf_analysis_result *r, size_t top)
{
	size_t *idx, i, shown, ncompiled = compiled_traces(r);
	size_t n = ncompiled < top ? ncompiled : top;

	luajit_events(out, r);
	if (!ncompiled) {
		fprintf(out, "Traces: none\n");
		return;
	}
	idx = jf_runtime_rank_traces(r);
	if (!idx)
		return;
	fprintf(out, "Traces (top %zu of %zu by instructions; side traces as parent/exit)\n", n,
		ncompiled);
	fprintf(out, "  %6s %-4s %8s %-14s %8s %10s %9s %12s %6s  %s\n", "trace", "kind", "parent",
		"link", "entries", "iterations", "exits", "instructions", "%", "name");
	for (i = 0, shown = 0; i < r->ntraces && shown < n; i++) {
		const struct jf_trace_result *t = &r->traces[idx[i]];
		char id[32], parent[48], p[32], link[48];

		if (jf_report_trace_never_compiled(t))
			continue;
		shown++;
		if (t->kind == JF_REGION_BRIDGE)
			snprintf(parent, sizeof(parent), "%s/%" PRIu64,
				 trace_name(p, sizeof(p), t->parent_trace), t->parent_guard);
		else
			snprintf(parent, sizeof(parent), "-");
		link_text(link, sizeof(link), t);
		fprintf(out, "  %6s %-4s %8s %-14s %8" PRIu64 " %10" PRIu64 " %9" PRIu64 " %12" PRIu64
			" %5.1f%%  %s\n", trace_name(id, sizeof(id), t->trace_id),
			t->kind == JF_REGION_BRIDGE ? "side" : "root", parent, link, t->entries,
			t->iterations, t->exits, t->insns, pct(t->insns, r->insns), t->name);
	}
	free(idx);
}

static void luajit_exits(FILE *out, const struct jf_analysis_result *r, size_t top)
{
	size_t *idx, i, n = r->nguards < top ? r->nguards : top;

	if (!r->nguards) {
		fprintf(out, "Exits: none described\n");
		return;
	}
	idx = jf_runtime_rank_guards(r);
	if (!idx)
		return;
	fprintf(out, "Exits (top %zu of %zu by exits taken: to LuaJIT's exit handler (the "
		     "interpreter) before the side trace was attached, to it, and after)\n", n,
		r->nguards);
	fprintf(out, "  %6s %4s %9s %9s %8s %13s %8s %12s  %s\n", "trace", "exit", "exits",
		"passes", "fail %", "interp before", "to side", "interp after", "side trace");
	for (i = 0; i < n; i++) {
		const struct jf_guard_result *g = &r->guards[idx[i]];
		struct exit_split s = split_exits(g);
		char id[32], side[32];

		fprintf(out, "  %6s %4" PRIu64 " %9" PRIu64 " %9" PRIu64 " %7.2f%% %13" PRIu64,
			trace_name(id, sizeof(id), g->trace_id), g->guard_id, g->exits, g->passes,
			pct(g->exits, g->exits + g->passes), s.interp_before);
		if (g->has_bridge)
			fprintf(out, " %8" PRIu64 " %12" PRIu64 "  trace %s", s.to_side,
				s.interp_after, trace_name(side, sizeof(side), g->bridge_id));
		else
			fprintf(out, " %8s %12s  -", "-", "-");
		if (g->unresolved)
			fprintf(out, "  [%" PRIu64 " with unknown direction]", g->unresolved);
		fputc('\n', out);
	}
	free(idx);
}

static void json_trace_id(FILE *out, const char *key, uint64_t id, int present)
{
	if (present)
		fprintf(out, ",\"%s\":%" PRIu64, key, id);
	else
		fprintf(out, ",\"%s\":null", key);
}

static void json_exits(FILE *out, const struct jf_analysis_result *r,
		       const struct jf_trace_result *t)
{
	size_t j;

	fprintf(out, ",\"guards\":[");
	for (j = t->guard_first; j < t->guard_first + t->guard_count; j++) {
		const struct jf_guard_result *g = &r->guards[j];
		struct exit_split s = split_exits(g);

		fprintf(out, "%s{\"id\":%" PRIu64 ",\"exits\":%" PRIu64 ",\"to_interpreter\":%" PRIu64
			",\"to_interpreter_before_side_trace\":%" PRIu64 ",\"to_side_trace\":%" PRIu64
			",\"to_interpreter_after_side_trace\":%" PRIu64 ",\"passes\":%" PRIu64,
			j > t->guard_first ? "," : "", g->guard_id, g->exits,
			s.interp_before + s.interp_after, s.interp_before, s.to_side, s.interp_after,
			g->passes);
		json_trace_id(out, "side_trace", g->bridge_id, g->has_bridge);
		fputc('}', out);
	}
	fputc(']', out);
}

static void luajit_json(FILE *out, const struct jf_analysis_result *r)
{
	size_t i, shown;

	fprintf(out, ",\"luajit\":{\"trace_starts\":%" PRIu64 ",\"trace_aborts\":%" PRIu64
		",\"flushes\":%" PRIu64 ",\"traces\":[", r->trace_starts, r->trace_aborts,
		r->trace_flushes);
	for (i = 0, shown = 0; i < r->ntraces; i++) {
		const struct jf_trace_result *t = &r->traces[i];
		int side = t->kind == JF_REGION_BRIDGE;

		if (jf_report_trace_never_compiled(t))
			continue;
		fprintf(out, "%s{\"id\":%" PRIu64 ",\"number\":%" PRIu64 ",\"flush\":%" PRIu64
			",\"kind\":\"%s\"", shown++ ? "," : "", t->trace_id, t->trace_id & (uint64_t)0xffffffffu,
			t->trace_id >> FLUSH_SHIFT, side ? "side" : "root");
		json_trace_id(out, "parent_trace", t->parent_trace, side);
		json_trace_id(out, "parent_exit", t->parent_guard, side);
		fprintf(out, ",\"link\":\"%s\"", jf_zone_trace_link_name(t->link));
		json_trace_id(out, "link_trace", t->link_trace, t->link == JF_LINK_TRACE);
		fprintf(out, ",\"name\":");
		jf_json_string(out, t->name);
		fprintf(out, ",\"entries\":%" PRIu64 ",\"iterations\":%" PRIu64 ",\"exits\":%" PRIu64
			",\"instructions\":%" PRIu64, t->entries, t->iterations, t->exits, t->insns);
		json_exits(out, r, t);
		fputc('}', out);
	}
	fprintf(out, "]}");
}

static void trace_id(char *buf, size_t size, uint64_t id)
{
	trace_name(buf, size, id);
}

const struct jf_runtime_desc jf_runtime_luajit = {
	.name = "LuaJIT",
	.kind_names = {
		[JF_REGION_TRACE] = "root",
		[JF_REGION_BRIDGE] = "side",
	},
	.class_names = {
		[JF_CLASS_BRIDGE] = "side trace",
	},
	.trace = "trace",
	.bridge = "side trace",
	.bridges = "side traces",
	.guard = "exit",
	.guards = "exits",
	.guard_exit = "exit",
	.trace_id = trace_id,
	.not_told_apart = not_told_apart,
	.text_traces = luajit_traces,
	.text_guards = luajit_exits,
	.json_section = luajit_json,
};
