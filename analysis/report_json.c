/* The result as one JSON object (schema: docs/analysis.md). Trace and guard ids are the
 * runtime's own. */
#include <inttypes.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/json_out.h"
#include "jitflow/report.h"
#include "report_phases.h"
#include "runtime.h"

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case JF_REGION_TRACE: return "loop";
	case JF_REGION_BRIDGE: return "bridge";
	case JF_REGION_FUNCTION: return "function";
	case JF_REGION_EXIT_STUB: return "exit-stub";
	case JF_REGION_TRAMPOLINE: return "trampoline";
	case JF_REGION_INLINE_CACHE: return "inline-cache";
	case JF_REGION_STENCIL: return "stencil";
	case JF_REGION_INTERPRETER: return "interpreter";
	default: return "jitted";
	}
}

static void split(FILE *out, const struct jf_split_result *s)
{
	int i, j;

	fprintf(out, "{\"tid\":%d,", s->tid);
	if (s->name[0]) {
		fprintf(out, "\"name\":");
		jf_json_string(out, s->name);
		fputc(',', out);
	}
	fprintf(out, "\"instructions\":{");
	for (i = 0; i < JF_SPLIT_COUNT; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", jf_split_class_name(i), s->insns[i]);
	fprintf(out, "},\"time\":{");
	for (i = 0; i < JF_SPLIT_COUNT; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", jf_split_class_name(i), s->time[i]);
	fprintf(out, "},\"instructions_by_class\":{");
	for (i = 0; i < JF_CLASS_COUNT; i++) {
		/* the phases' classes only where a runtime told phases */
		if (i >= JF_CLASS_TRACING && !s->by_class[i])
			continue;
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", jf_code_class_name(i), s->by_class[i]);
	}
	fprintf(out, "},\"transitions\":[");
	for (i = 0, j = 0; i < JF_SPLIT_COUNT * JF_SPLIT_COUNT; i++) {
		int from = i / JF_SPLIT_COUNT, to = i % JF_SPLIT_COUNT;

		if (!s->transitions[from][to])
			continue;
		fprintf(out, "%s{\"from\":\"%s\",\"to\":\"%s\",\"count\":%" PRIu64 "}", j++ ? "," : "",
			jf_split_class_name(from), jf_split_class_name(to), s->transitions[from][to]);
	}
	fprintf(out, "],\"trace_to_trace\":%" PRIu64 ",\"guard_exits\":%" PRIu64 "}",
		s->trace_to_trace, s->guard_exits);
}

static void guard(FILE *out, const struct jf_guard_result *g)
{
	uint64_t runs = g->exits + g->passes;

	fprintf(out, "{\"id\":%" PRIu64 ",\"exits\":%" PRIu64 ",\"to_interpreter\":%" PRIu64
		",\"to_bridge\":%" PRIu64 ",\"passes\":%" PRIu64
		",\"unresolved\":%" PRIu64 ",\"failure_rate\":%.6f,\"branch\":\"0x%" PRIx64
		"\",\"stub\":\"0x%" PRIx64 "\",\"resume_pc\":%u,\"code_object\":%" PRIu64,
		g->guard_id, g->exits, g->exits - g->to_bridge, g->to_bridge, g->passes, g->unresolved,
		runs ? (double)g->exits / (double)runs : 0.0, g->branch_addr, g->stub_addr,
		g->resume_pc, g->code_object);
	if (g->kind[0]) {
		fprintf(out, ",\"kind\":");
		jf_json_string(out, g->kind);
	}
	if (g->has_bridge)
		fprintf(out, ",\"bridge\":%" PRIu64 ",\"exits_before_bridge\":%" PRIu64
			",\"exits_after_bridge\":%" PRIu64, g->bridge_id, g->exits_before_bridge,
			g->exits - g->exits_before_bridge);
	else
		fprintf(out, ",\"bridge\":null");
	fputc('}', out);
}

static void problems(FILE *out, const struct jf_analysis_result *r)
{
	size_t i;

	fprintf(out, ",\"problems\":[");
	for (i = 0; i < r->nproblems; i++) {
		const struct jf_problem_site *p = &r->problems[i];

		fprintf(out, "%s{\"kind\":\"%s\",\"what\":\"%s\",\"source\":%u,\"offset\":%" PRIu64,
			i ? "," : "", jf_problem_kind_name(p), jf_problem_what(p), p->source,
			p->offset);
		if (p->has_ip)
			fprintf(out, ",\"ip\":\"0x%" PRIx64 "\"", p->ip);
		if (p->has_time)
			fprintf(out, ",\"time\":%" PRIu64, p->time);
		if (p->kind == JF_FLOW_LOST)
			fprintf(out, ",\"bytes\":%" PRIu64, p->bytes);
		if (p->text[0]) {
			fprintf(out, ",\"text\":");
			jf_json_string(out, p->text);
		}
		fputc('}', out);
	}
	fputc(']', out);
}

void jf_report_json(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	size_t i, j, shown;
	struct jf_iteration_result it;

	fprintf(out, "{\"jitflow_report\":1,\"source\":");
	jf_json_string(out, m && m->source ? m->source : "");
	fprintf(out, ",\"time_unit\":\"%s\",\"time_synthetic\":%s",
		!r->has_time ? "none" : r->time_is_ns ? "ns" : "ticks",
		r->time_is_synthetic ? "true" : "false");
	fprintf(out, ",\"summary\":{\"instructions\":%" PRIu64 ",\"blocks\":%" PRIu64
		",\"threads\":%zu,\"trace_bytes\":%" PRIu64 ",\"decode_errors\":%" PRIu64
		",\"overflows\":%" PRIu64 ",\"lost_bytes\":%" PRIu64 ",\"lost_events\":%" PRIu64
		",\"unknown_code_blocks\":%" PRIu64 ",\"zone_records\":%s,\"pc_maps\":%s}",
		r->insns, r->blocks, r->nthreads, m ? m->trace_bytes : 0, r->decode_errors,
		r->overflows, r->lost_bytes, r->lost_events, r->image_misses,
		r->has_zone_records ? "true" : "false", r->has_pc_maps ? "true" : "false");

	problems(out, r);
	if (m && (m->observed_changed || m->observed_before_record || m->observed_same))
		fprintf(out, ",\"observed_code\":{\"changed\":%" PRIu64 ",\"before_record\":%" PRIu64
			",\"unchanged\":%" PRIu64 "}", m->observed_changed,
			m->observed_before_record, m->observed_same);
	fprintf(out, ",\"notes\":[");
	for (i = 0; m && i < m->nnotes; i++) {
		if (i)
			fputc(',', out);
		jf_json_string(out, m->notes[i]);
	}
	fputc(']', out);
	fprintf(out, ",\"split\":{\"total\":");
	split(out, &r->total);
	fprintf(out, ",\"threads\":[");
	for (i = 0; i < r->nthreads; i++) {
		if (i)
			fputc(',', out);
		split(out, &r->threads[i]);
	}
	fprintf(out, "]}");
	jf_report_json_phases(out, r);

	fprintf(out, ",\"traces\":[");
	for (i = 0, shown = 0; i < r->ntraces; i++) {
		const struct jf_trace_result *t = &r->traces[i];

		/* recordings that never became code are in "phases" */
		if (jf_report_trace_never_compiled(t))
			continue;
		fprintf(out, "%s{\"id\":%" PRIu64 ",\"kind\":\"%s\",\"name\":", shown++ ? "," : "",
			t->trace_id, kind_name(t->kind));
		jf_json_string(out, t->name);
		fprintf(out, ",\"parent_trace\":%" PRIu64 ",\"parent_guard\":%" PRIu64
			",\"entries\":%" PRIu64 ",\"iterations\":%" PRIu64
			",\"mean_iterations_per_entry\":%.3f,\"instructions\":%" PRIu64
			",\"time\":%" PRIu64 ",\"exits\":%" PRIu64 ",\"share\":%.6f",
			t->parent_trace, t->parent_guard, t->entries, t->iterations,
			t->entries ? (double)t->iterations / (double)t->entries : 0.0, t->insns,
			t->time, t->exits, r->insns ? (double)t->insns / (double)r->insns : 0.0);
		jf_report_json_trace_making(out, r, t);
		fprintf(out, ",\"guards\":[");
		for (j = t->guard_first; j < t->guard_first + t->guard_count; j++) {
			if (j > t->guard_first)
				fputc(',', out);
			guard(out, &r->guards[j]);
		}
		fprintf(out, "]}");
	}
	fprintf(out, "]");

	fprintf(out, ",\"regions\":[");
	for (i = 0; i < r->nregions; i++) {
		fprintf(out, "%s{\"name\":", i ? "," : "");
		jf_json_string(out, r->regions[i].name);
		fprintf(out, ",\"addr\":\"0x%" PRIx64 "\",\"size\":%" PRIu64 ",\"kind\":\"%s\","
			"\"instructions\":%" PRIu64 ",\"entries\":%" PRIu64 "}", r->regions[i].addr,
			r->regions[i].size, kind_name(r->regions[i].kind), r->regions[i].insns,
			r->regions[i].entries);
	}
	fprintf(out, "],\"bytecodes\":[");
	for (i = 0; i < r->nbytecodes; i++) {
		const struct jf_bytecode_result *b = &r->bytecodes[i];

		fprintf(out, "%s{\"region\":%" PRIu64 ",\"pc_from\":%u,\"pc_to\":%u,"
			"\"instructions\":%" PRIu64, i ? "," : "", b->region_key, b->pc_from,
			b->pc_to, b->insns);
		if (b->code_name[0]) {
			fprintf(out, ",\"code_object\":{\"name\":");
			jf_json_string(out, b->code_name);
			fprintf(out, ",\"file\":");
			jf_json_string(out, b->code_file);
			fprintf(out, ",\"line\":%u}", b->code_line);
		}
		fputc('}', out);
	}
	fprintf(out, "],\"ops\":[");
	for (i = 0; i < r->nops; i++) {
		fprintf(out, "%s{\"kind\":%u,\"name\":", i ? "," : "", r->ops[i].op_kind);
		jf_json_string(out, r->ops[i].name);
		fprintf(out, ",\"instructions\":%" PRIu64 "}", r->ops[i].insns);
	}
	fprintf(out, "],\"iterations\":[");
	for (i = 0; i < r->niterations; i++) {
		jf_analysis_iteration(r, i, &it);
		fprintf(out, "%s{\"index\":%" PRIu64 ",\"instructions\":%" PRIu64 ",\"time\":%" PRIu64
			",\"jitted_instructions\":%" PRIu64, i ? "," : "", it.index, it.insns,
			it.time, it.insns_by_split[JF_SPLIT_JITTED]);
		jf_report_json_iteration_phases(out, r, &it);
		fputc('}', out);
	}
	fprintf(out, "],\"warmup\":{\"class\":\"%s\",\"steady_from\":", jf_warmup_name(r->warmup));
	if ((r->warmup == JF_WARMUP_FLAT || r->warmup == JF_WARMUP_WARMUP ||
	     r->warmup == JF_WARMUP_SLOWDOWN) && jf_analysis_iteration(r, r->steady_from, &it) == 0)
		fprintf(out, "%" PRIu64 "}", it.index);
	else
		fprintf(out, "null}");
	fprintf(out, ",\"retrace_candidates\":[");
	for (i = 0; i < r->nretrace; i++)
		fprintf(out, "%s{\"trace\":%" PRIu64 ",\"score\":%.4f,\"top_guard\":%" PRIu64
			",\"top_guard_share\":%.4f,\"bridge_share\":%.4f}", i ? "," : "",
			r->retrace[i].trace_id, r->retrace[i].score, r->retrace[i].top_guard,
			r->retrace[i].top_guard_share, r->retrace[i].bridge_share);
	fprintf(out, "]");
	if (jf_runtime_of(r)->json_section)
		jf_runtime_of(r)->json_section(out, r);
	fprintf(out, "}\n");
}
