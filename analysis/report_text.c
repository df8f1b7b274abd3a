/* Text reports, sized for a terminal: a summary, then the top traces and guards, then the
 * retrace candidates. Numbers are exact counts; percentages are of the whole run. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/report.h"
#include "report_phases.h"
#include "report_views.h"
#include "runtime.h"

static size_t top_of(const struct jf_report_meta *m)
{
	return m && m->top ? m->top : 10;
}

/* Why no zone records took effect, from what the inputs held. */
static const char *why_no_zone_records(const struct jf_report_meta *m)
{
	if (m && m->zone_files_known && m->zone_files == 0)
		return "no zone file was found, so nothing describes the jitted code";
	if (m && m->zone_files_known && m->zone_ext_files > 0)
		return "the zone files' records never took effect: the code that announces them "
		       "was not decoded; see the problems above";
	return "the runtime wrote no zone records, only jitdump";
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

const char *jf_report_time_unit(const struct jf_analysis_result *r)
{
	if (!r->has_time)
		return "no timing";
	if (r->time_is_synthetic)
		return "synthetic instruction-count clock";
	return r->time_is_ns ? "ns" : "timestamp ticks";
}

static uint64_t split_total_insns(const struct jf_split_result *s)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < JF_SPLIT_COUNT; i++)
		n += s->insns[i];
	return n;
}

static uint64_t split_total_time(const struct jf_split_result *s)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < JF_SPLIT_COUNT; i++)
		n += s->time[i];
	return n;
}

static void split_table(FILE *out, const struct jf_split_result *s, int has_time)
{
	uint64_t insns = split_total_insns(s), time = split_total_time(s);
	int i;

	fprintf(out, "  %-14s %15s %7s", "", "instructions", "%");
	if (has_time)
		fprintf(out, " %15s %7s", "time", "%");
	fputc('\n', out);
	for (i = 0; i < JF_SPLIT_COUNT; i++) {
		/* shown when there is any: most recordings have no unknown code, and only
		 * runtimes linked with the emitter have instrumentation */
		if ((i == JF_SPLIT_UNKNOWN || i == JF_SPLIT_INSTRUMENTATION) && !s->insns[i])
			continue;
		fprintf(out, "  %-14s %15" PRIu64 " %6.1f%%", jf_split_class_name(i), s->insns[i],
			pct(s->insns[i], insns));
		if (has_time)
			fprintf(out, " %15" PRIu64 " %6.1f%%", s->time[i], pct(s->time[i], time));
		fputc('\n', out);
	}
}

static void transitions(FILE *out, const struct jf_split_result *s)
{
	fprintf(out, "  transitions: interpreter->jitted %" PRIu64 ", jitted->interpreter %" PRIu64
		" (%" PRIu64 " through guard exits), trace->trace %" PRIu64 ",\n"
		"               into native %" PRIu64 ", back from native %" PRIu64 "\n",
		s->transitions[JF_SPLIT_INTERPRETER][JF_SPLIT_JITTED],
		s->transitions[JF_SPLIT_JITTED][JF_SPLIT_INTERPRETER], s->guard_exits,
		s->trace_to_trace,
		s->transitions[JF_SPLIT_INTERPRETER][JF_SPLIT_NATIVE] +
			s->transitions[JF_SPLIT_JITTED][JF_SPLIT_NATIVE],
		s->transitions[JF_SPLIT_NATIVE][JF_SPLIT_INTERPRETER] +
			s->transitions[JF_SPLIT_NATIVE][JF_SPLIT_JITTED]);
	if (s->insns[JF_SPLIT_INSTRUMENTATION]) {
		uint64_t calls = 0;
		int i;

		for (i = 0; i < JF_SPLIT_COUNT; i++)
			if (i != JF_SPLIT_INSTRUMENTATION)
				calls += s->transitions[i][JF_SPLIT_INSTRUMENTATION];
		fprintf(out, "               into instrumentation (the zone emitter) %" PRIu64 "\n",
			calls);
	}
}

void jf_report_thread_heading(FILE *out, const struct jf_split_result *s)
{
	if (s->name[0])
		fprintf(out, "Thread %d \"%s\"\n", s->tid, s->name);
	else
		fprintf(out, "Thread %d\n", s->tid);
}

void jf_report_split(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	size_t i;

	fprintf(out, "Time split (all threads; time: %s)\n", jf_report_time_unit(r));
	split_table(out, &r->total, r->has_time);
	transitions(out, &r->total);
	if (r->nthreads > 1) {
		for (i = 0; i < r->nthreads; i++) {
			jf_report_thread_heading(out, &r->threads[i]);
			split_table(out, &r->threads[i], r->has_time);
			transitions(out, &r->threads[i]);
		}
	}
}

/* Indexes of rows sorted by a key, largest first. */
static size_t *rank(size_t n, const void *rows, size_t size, size_t key_offset)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), i, j;

	if (!idx)
		return NULL;
	for (i = 0; i < n; i++)
		idx[i] = i;
	for (i = 1; i < n; i++) { /* insertion sort keeps ties in id order */
		size_t x = idx[i];
		uint64_t kx = *(const uint64_t *)((const char *)rows + x * size + key_offset);

		for (j = i; j > 0; j--) {
			uint64_t kj = *(const uint64_t *)((const char *)rows + idx[j - 1] * size + key_offset);

			if (kj >= kx)
				break;
			idx[j] = idx[j - 1];
		}
		idx[j] = x;
	}
	return idx;
}

void jf_report_traces(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	size_t *idx, i, n, compiled = 0;

	if (rt->text_traces) {
		rt->text_traces(out, r, top_of(m));
		return;
	}
	/* Recordings that never became code are in the trace-making table only (they rank
	 * last, with no instructions). */
	for (i = 0; i < r->ntraces; i++)
		compiled += !jf_report_trace_never_compiled(&r->traces[i]);
	n = compiled < top_of(m) ? compiled : top_of(m);
	if (!compiled) {
		if (r->has_zone_records)
			fprintf(out, "Traces: none\n");
		else
			fprintf(out, "Traces: none (%s)\n", why_no_zone_records(m));
		return;
	}
	idx = rank(r->ntraces, r->traces, sizeof(*r->traces),
		   offsetof(struct jf_trace_result, insns));
	if (!idx)
		return;
	fprintf(out, "Traces (top %zu of %zu by instructions)\n", n, compiled);
	fprintf(out, "  %6s %-8s %10s %11s %10s %9s %14s %7s  %s\n", "id", "kind", "entries",
		"iterations", "iter/entry", "exits", "instructions", "%", "name");
	for (i = 0; i < n; i++) {
		const struct jf_trace_result *t = &r->traces[idx[i]];

		fprintf(out, "  %6" PRIu64 " %-8s %10" PRIu64 " %11" PRIu64 " %10.1f %9" PRIu64
			" %14" PRIu64 " %6.1f%%  %s", t->trace_id, jf_runtime_kind(rt, t), t->entries,
			t->iterations, t->entries ? (double)t->iterations / (double)t->entries : 0.0,
			t->exits, t->insns, pct(t->insns, r->insns), t->name);
		if (t->kind == JF_REGION_BRIDGE)
			fprintf(out, " (on trace %" PRIu64 " guard %" PRIu64 ")", t->parent_trace,
				t->parent_guard);
		fputc('\n', out);
	}
	free(idx);
}

void jf_report_guards(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	size_t *idx, i, n = r->nguards < top_of(m) ? r->nguards : top_of(m);
	int kinds;

	if (rt->text_guards) {
		rt->text_guards(out, r, top_of(m));
		return;
	}
	if (!r->nguards) {
		fprintf(out, "Guards: none described\n");
		return;
	}
	idx = rank(r->nguards, r->guards, sizeof(*r->guards),
		   offsetof(struct jf_guard_result, exits));
	if (!idx)
		return;
	fprintf(out, "Guards (top %zu of %zu by exits)\n", n, r->nguards);
	/* the kind column only for runtimes that name their guards (PyPy) */
	for (i = 0; i < r->nguards && !r->guards[i].kind[0]; i++)
		;
	kinds = i < r->nguards;
	fprintf(out, "  %13s ", "trace/guard");
	if (kinds)
		fprintf(out, "%-20s ", "kind");
	fprintf(out, "%10s %10s %12s %9s %9s  %s\n", "exits", "to interp", "passes", "fail %",
		"resume pc", "bridge");
	for (i = 0; i < n; i++) {
		const struct jf_guard_result *g = &r->guards[idx[i]];
		uint64_t runs = g->exits + g->passes;
		char id[32];

		snprintf(id, sizeof(id), "%" PRIu64 "/%" PRIu64, g->trace_id, g->guard_id);
		fprintf(out, "  %13s ", id);
		if (kinds)
			fprintf(out, "%-20s ", g->kind[0] ? g->kind : "-");
		fprintf(out, "%10" PRIu64 " %10" PRIu64 " %12" PRIu64 " %8.2f%% %9u  ", g->exits,
			g->exits - g->to_bridge, g->passes, pct(g->exits, runs), g->resume_pc);
		if (g->has_bridge)
			fprintf(out, "bridge %" PRIu64 " after %" PRIu64 " exits (%" PRIu64 " since)",
				g->bridge_id, g->exits_before_bridge, g->exits - g->exits_before_bridge);
		else
			fputc('-', out);
		if (g->unresolved)
			fprintf(out, "  [%" PRIu64 " with unknown direction]", g->unresolved);
		fputc('\n', out);
	}
	free(idx);
}

void jf_report_retrace(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	size_t i;

	if (!r->nretrace) {
		fprintf(out, "Retrace candidates: none (every %s's common path stays in it)\n",
			rt->trace);
		return;
	}
	fprintf(out, "Retrace candidates (the recorded path is not the common one)\n");
	for (i = 0; i < r->nretrace && i < top_of(m); i++) {
		const struct jf_retrace_candidate *c = &r->retrace[i];
		char trace[32], guard[32];

		fprintf(out, "  %s %s: %.0f%% of iterations leave through %s %s", rt->trace,
			jf_runtime_trace_id(rt, trace, sizeof(trace), c->trace_id),
			100 * c->top_guard_share, rt->guard,
			jf_runtime_guard_id(rt, guard, sizeof(guard), c->top_guard));
		/* none: say nothing (CPython's side executors are chained, not bridges) */
		if (c->bridge_share > 0)
			fprintf(out, ", %.0f%% of its instructions run in %s", 100 * c->bridge_share,
				rt->bridges);
		fputc('\n', out);
	}
}

void jf_report_bytecodes(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	size_t i = 0, j;

	if (!r->nbytecodes) {
		fprintf(out, "Bytecode ranges: none (no pc maps in the zone records)\n");
		return;
	}
	fprintf(out, "Bytecode ranges per region (instructions, %% of the region's pc-mapped code)\n");
	while (i < r->nbytecodes) {
		uint64_t key = r->bytecodes[i].region_key, total = 0;

		for (j = i; j < r->nbytecodes && r->bytecodes[j].region_key == key; j++)
			total += r->bytecodes[j].insns;
		if (r->bytecodes[i].code_name[0] && JF_BYTECODE_REGION_OF(key))
			fprintf(out, "  %s  %s:%u  (%" PRIu64 " instructions in %s %" PRIu64 ")\n",
				r->bytecodes[i].code_name, r->bytecodes[i].code_file,
				r->bytecodes[i].code_line, total, jf_runtime_of(r)->trace,
				(uint64_t)JF_BYTECODE_REGION_OF(key));
		else if (r->bytecodes[i].code_name[0])
			fprintf(out, "  %s  %s:%u  (%" PRIu64 " instructions, all traces)\n",
				r->bytecodes[i].code_name, r->bytecodes[i].code_file,
				r->bytecodes[i].code_line, total);
		else
			fprintf(out, "  trace/region %" PRIu64 "  (%" PRIu64 " instructions)\n", key,
				total);
		for (; i < j; i++) {
			const struct jf_bytecode_result *b = &r->bytecodes[i];

			fprintf(out, "    %5u->%-5u %6.1f%%  %" PRIu64 "\n", b->pc_from, b->pc_to,
				pct(b->insns, total), b->insns);
		}
	}
	if (r->nops) {
		uint64_t total = 0;

		for (i = 0; i < r->nops; i++)
			total += r->ops[i].insns;
		fprintf(out, "Ops / stencils across all traces\n");
		for (i = 0; i < r->nops && i < top_of(m) * 2; i++)
			fprintf(out, "  %-24s %12" PRIu64 " %6.1f%%\n",
				r->ops[i].name[0] ? r->ops[i].name : "(unnamed)", r->ops[i].insns,
				pct(r->ops[i].insns, total));
	}
}

void jf_report_iterations(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	size_t i;
	struct jf_iteration_result row;
	const struct jf_iteration_result *it = &row;
	struct jf_report_bands bands;
	uint64_t v[JF_REPORT_BANDS_MAX];
	int k;

	if (!r->niterations) {
		fprintf(out, "Iterations: none marked (the runtime wrote no iteration events)\n");
		return;
	}
	fprintf(out, "Iterations: %zu, %s", r->niterations, jf_warmup_name(r->warmup));
	if ((r->warmup == JF_WARMUP_WARMUP || r->warmup == JF_WARMUP_SLOWDOWN ||
	     r->warmup == JF_WARMUP_FLAT) && jf_analysis_iteration(r, r->steady_from, &row) == 0)
		fprintf(out, " (steady from iteration %" PRIu64 ")", row.index);
	fputc('\n', out);
	jf_report_iteration_bands(r, &bands);
	fprintf(out, "  %9s %14s %14s", "iteration", "instructions", r->has_time ? "time" : "");
	if (jf_report_has_phases(r))
		for (k = 0; k < bands.n; k++) /* the bands' shares, in their order */
			fprintf(out, " %9.9s %%", bands.name[k]);
	else
		fprintf(out, " %9s", "jitted %");
	fputc('\n', out);
	for (i = 0; i < r->niterations; i++) {
		if (r->niterations > 2 * top_of(m) && i == top_of(m)) {
			fprintf(out, "  ...\n");
			i = r->niterations - top_of(m);
		}
		jf_analysis_iteration(r, i, &row);
		fprintf(out, "  %9" PRIu64 " %14" PRIu64 " %14" PRIu64, it->index, it->insns, it->time);
		if (jf_report_has_phases(r)) {
			jf_report_band_values(&bands, it, v);
			for (k = 0; k < bands.n; k++)
				fprintf(out, " %10.1f%%", pct(v[k], it->insns));
		} else {
			fprintf(out, " %8.1f%%", pct(it->insns_by_split[JF_SPLIT_JITTED], it->insns));
		}
		fputc('\n', out);
	}
}

void jf_report_unavailable(FILE *out, const struct jf_analysis_result *r,
			   const struct jf_report_meta *m)
{
	size_t i;

	if (!r->has_zone_records)
		fprintf(out, "Not available: trace kinds, guards, bridges (%s)\n",
			why_no_zone_records(m));
	if (r->has_zone_records && !r->has_pc_maps)
		fprintf(out, "Not available: bytecode ranges (no pc maps)\n");
	if (!r->has_time)
		fprintf(out, "Not available: time (the trace has no timing packets)\n");
	else if (r->time_is_synthetic)
		fprintf(out, "Note: time comes from a synthetic instruction-count clock (emulated "
			     "recording), not from hardware\n");
	for (i = 0; m && i < m->nnotes; i++)
		fprintf(out, "Note: %s\n", m->notes[i]);
}

/* Where the first problems were: every count above is located here, up to a few. */
static void report_problems(FILE *out, const struct jf_analysis_result *r)
{
	uint64_t total = r->decode_errors + r->lost_events + r->overflows;
	size_t i;

	if (!r->nproblems)
		return;
	fprintf(out, "  where (first %zu of %" PRIu64 "):\n", r->nproblems, total);
	for (i = 0; i < r->nproblems; i++) {
		const struct jf_problem_site *p = &r->problems[i];

		if (p->kind == JF_FLOW_LOST && p->code == JF_LOST_FILE_CUT)
			fprintf(out, "    %s %s: the file ends at offset 0x%" PRIx64,
				jf_problem_kind_name(p), jf_problem_what(p), p->offset);
		else if (p->kind == JF_FLOW_ERROR && p->code == JF_PHASE_CONTAINER)
			fprintf(out, "    %s (%s) at file offset 0x%" PRIx64, jf_problem_kind_name(p),
				jf_problem_what(p), p->offset);
		else
			fprintf(out, "    %s (%s) at offset 0x%" PRIx64 " of stream %u",
				jf_problem_kind_name(p), jf_problem_what(p), p->offset, p->source);
		if (p->has_ip)
			fprintf(out, ", ip 0x%" PRIx64, p->ip);
		if (p->has_time)
			fprintf(out, ", time %" PRIu64, p->time);
		if (p->kind == JF_FLOW_LOST)
			fprintf(out, ", %" PRIu64 " bytes", p->bytes);
		if (p->text[0])
			fprintf(out, ": %s", p->text);
		fputc('\n', out);
	}
}

void jf_report_summary(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	size_t i;

	fprintf(out, "jitflow report: %s\n", m && m->source ? m->source : "(trace)");
	fprintf(out, "  threads %zu, instructions %" PRIu64 ", blocks %" PRIu64, r->nthreads,
		r->insns, r->blocks);
	if (m && m->trace_bytes)
		fprintf(out, ", trace bytes %" PRIu64, m->trace_bytes);
	fputc('\n', out);
	fprintf(out, "  decode errors %" PRIu64 ", overflows %" PRIu64 ", data lost %" PRIu64
		" bytes in %" PRIu64 " gaps, blocks outside any known code %" PRIu64 "\n",
		r->decode_errors, r->overflows, r->lost_bytes, r->lost_events, r->image_misses);
	report_problems(out, r);
	fputc('\n', out);
	jf_report_split(out, r, m);
	fputc('\n', out);
	if (jf_report_has_phases(r)) {
		jf_report_phases(out, r, m);
		fputc('\n', out);
	}
	jf_report_traces(out, r, m);
	fputc('\n', out);
	if (r->phases_told & ((1u << JF_PHASE_TRACING) | (1u << JF_PHASE_COMPILING))) {
		jf_report_trace_making(out, r, m);
		fputc('\n', out);
	}
	if (jf_runtime_of(r)->text_section && jf_runtime_of(r)->text_section(out, r))
		fputc('\n', out);
	jf_report_guards(out, r, m);
	fputc('\n', out);
	jf_report_retrace(out, r, m);
	if (r->niterations) {
		fputc('\n', out);
		fprintf(out, "Iterations: %zu, %s\n", r->niterations, jf_warmup_name(r->warmup));
	}
	if (!r->ntraces && r->nregions) {
		size_t *idx = rank(r->nregions, r->regions, sizeof(*r->regions),
				   offsetof(struct jf_region_result, insns));

		fprintf(out, "\nJitted regions (top %zu of %zu by instructions)\n", top_of(m),
			r->nregions);
		for (i = 0; idx && i < r->nregions && i < top_of(m); i++)
			fprintf(out, "  %14" PRIu64 " %6.1f%%  %s\n", r->regions[idx[i]].insns,
				pct(r->regions[idx[i]].insns, r->insns), r->regions[idx[i]].name);
		free(idx);
	}
	fputc('\n', out);
	jf_report_unavailable(out, r, m);
}
