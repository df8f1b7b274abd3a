/* The VM phases in reports: per thread, where the time went among interpreting (the
 * interpreter's code outside every phase), the phases the runtime bracketed, jitted code
 * and the rest; what each trace cost to make beside what it ran afterwards; the brackets
 * that did not close. Printed only where the runtime told phases (PHASE_BEGIN records),
 * so reports of runtimes that tell none stay as they were. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "jitflow/report.h"
#include "report_phases.h"
#include "report_views.h"
#include "runtime.h"

/* The rows of the phase table: interpreting, each phase, then what is left. */
static const enum jf_code_class phase_rows[] = {
	JF_CLASS_INTERPRETER, JF_CLASS_TRACING, JF_CLASS_COMPILING, JF_CLASS_GC,
	JF_CLASS_EXIT_HANDLING,
};
enum { NPHASE_ROWS = sizeof(phase_rows) / sizeof(phase_rows[0]) };

/* The phase whose class c is (0: none). */
static int p_of(enum jf_code_class c)
{
	int p;

	for (p = 1; p < JF_PHASE_COUNT; p++)
		if (jf_phase_class((enum jf_vm_phase)p) == c)
			return p;
	return 0;
}

static const char *row_name(enum jf_code_class c)
{
	return c == JF_CLASS_INTERPRETER ? "interpreting" : jf_code_class_name(c);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

int jf_report_has_phases(const struct jf_analysis_result *r)
{
	return r->phases_told != 0 || r->phase_problem_count != 0;
}

/* "tracing, compiling": the phases the runtime told, in words. */
static void told(FILE *out, uint32_t phases)
{
	int p, n = 0;

	for (p = 1; p < JF_PHASE_COUNT; p++)
		if (phases & (1u << p))
			fprintf(out, "%s%s", n++ ? ", " : "", jf_phase_name((enum jf_vm_phase)p));
	if (!n)
		fprintf(out, "none");
}

static void table_row(FILE *out, const char *name, const char *spans, uint64_t insns,
		      uint64_t all_insns, uint64_t time, uint64_t all_time, int has_time)
{
	fprintf(out, "  %-18s %8s %15" PRIu64 " %6.1f%%", name, spans, insns, pct(insns, all_insns));
	if (has_time)
		fprintf(out, " %15" PRIu64 " %6.1f%%", time, pct(time, all_time));
	fputc('\n', out);
}

/* Interpreting, the phases told, jitted code, the emitter's, and the rest (native code
 * outside every phase, unknown code): together every instruction and all the time. */
static void phase_table(FILE *out, const struct jf_split_result *s, uint32_t told,
			int has_time)
{
	uint64_t insns = 0, time = 0, rest_insns, rest_time, shown_insns = 0, shown_time = 0;
	size_t i;
	int c;
	char spans[24];

	for (c = 0; c < JF_CLASS_COUNT; c++) {
		insns += s->by_class[c];
		time += s->time_by_class[c];
	}
	fprintf(out, "  %-18s %8s %15s %7s", "", "spans", "instructions", "%");
	if (has_time)
		fprintf(out, " %15s %7s", "time", "%");
	fputc('\n', out);
	for (i = 0; i < NPHASE_ROWS; i++) {
		enum jf_code_class c = phase_rows[i];
		int p = p_of(c);

		/* a phase the runtime did not tell has a row only where its class was told
		 * by code (LuaJIT's exit handler, an INTERP_RANGE of kind deopt; GC from
		 * collector entries), and no spans */
		if (p && !(told & (1u << p)) && !s->by_class[c])
			continue;
		snprintf(spans, sizeof(spans), "%s", p ? "-" : "");
		if (p && (told & (1u << p)))
			snprintf(spans, sizeof(spans), "%" PRIu64, s->phase_spans[p]);
		shown_insns += s->by_class[c];
		shown_time += s->time_by_class[c];
		table_row(out, row_name(c), spans, s->by_class[c], insns, s->time_by_class[c], time,
			  has_time);
	}
	table_row(out, "jitted", "", s->insns[JF_SPLIT_JITTED], insns, s->time[JF_SPLIT_JITTED],
		  time, has_time);
	table_row(out, "instrumentation", "", s->insns[JF_SPLIT_INSTRUMENTATION], insns,
		  s->time[JF_SPLIT_INSTRUMENTATION], time, has_time);
	rest_insns = insns - shown_insns - s->insns[JF_SPLIT_JITTED] -
		     s->insns[JF_SPLIT_INSTRUMENTATION];
	rest_time = time - shown_time - s->time[JF_SPLIT_JITTED] - s->time[JF_SPLIT_INSTRUMENTATION];
	table_row(out, "other", "", rest_insns, insns, rest_time, time, has_time);
}

static void problems(FILE *out, const struct jf_analysis_result *r)
{
	size_t i;

	if (!r->phase_problem_count)
		return;
	fprintf(out, "  brackets that do not close: %" PRIu64 " (first %zu):\n",
		r->phase_problem_count, r->nphase_problems);
	for (i = 0; i < r->nphase_problems; i++) {
		const struct jf_phase_problem *p = &r->phase_problems[i];

		fprintf(out, "    %s: %s, thread %d, zone record at offset 0x%" PRIx64
			", after instruction %" PRIu64, jf_phase_problem_name(p->kind),
			jf_phase_name((enum jf_vm_phase)p->phase), p->tid, p->record_offset, p->insn);
		if (p->has_time)
			fprintf(out, ", time %" PRIu64, p->time);
		fputc('\n', out);
	}
}

void jf_report_phases(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	size_t i;

	(void)m;
	if (!jf_report_has_phases(r))
		return;
	fprintf(out, "VM phases (told by the runtime: ");
	told(out, r->phases_told);
	fprintf(out, "; interpreting is the interpreter outside every phase)\n");
	phase_table(out, &r->total, r->phases_told, r->has_time);
	if (r->nthreads > 1) {
		for (i = 0; i < r->nthreads; i++) {
			jf_report_thread_heading(out, &r->threads[i]);
			phase_table(out, &r->threads[i], r->phases_told, r->has_time);
		}
	}
	problems(out, r);
}

static uint64_t making(const struct jf_trace_result *t)
{
	return t->tracing_insns + t->compiling_insns;
}

static int by_making(const void *x, const void *y)
{
	const struct jf_trace_result *p = *(const struct jf_trace_result *const *)x;
	const struct jf_trace_result *q = *(const struct jf_trace_result *const *)y;

	if (making(p) != making(q))
		return making(p) < making(q) ? 1 : -1;
	return p->trace_id < q->trace_id ? -1 : p->trace_id > q->trace_id;
}

void jf_report_trace_making(FILE *out, const struct jf_analysis_result *r,
			    const struct jf_report_meta *m)
{
	const struct jf_trace_result **rows;
	size_t i, n = 0, top = m && m->top ? m->top : 10;
	char id[32];

	if (!(r->phases_told & ((1u << JF_PHASE_TRACING) | (1u << JF_PHASE_COMPILING))))
		return;
	rows = malloc((r->ntraces ? r->ntraces : 1) * sizeof(*rows));
	if (!rows)
		return;
	for (i = 0; i < r->ntraces; i++)
		if (making(&r->traces[i]))
			rows[n++] = &r->traces[i];
	qsort(rows, n, sizeof(*rows), by_making);
	fprintf(out, "Making the traces (top %zu of %zu by tracing + compiling instructions; "
		"then what each ran)\n", n < top ? n : top, n);
	fprintf(out, "  %10s %14s %14s", "trace", "tracing", "compiling");
	if (r->has_time)
		fprintf(out, " %12s %12s", "trace time", "compile time");
	fprintf(out, " %14s %10s\n", "ran insns", "entries");
	for (i = 0; i < n && i < top; i++) {
		const struct jf_trace_result *t = rows[i];

		jf_runtime_trace_id(jf_runtime_of(r), id, sizeof(id), t->trace_id);
		fprintf(out, "  %10s %14" PRIu64 " %14" PRIu64, id, t->tracing_insns,
			t->compiling_insns);
		if (r->has_time)
			fprintf(out, " %12" PRIu64 " %12" PRIu64, t->tracing_time, t->compiling_time);
		fprintf(out, " %14" PRIu64 " %10" PRIu64 "%s\n", t->insns, t->entries,
			t->kind ? "" : "  (never compiled)");
	}
	free(rows);
}

int jf_report_trace_never_compiled(const struct jf_trace_result *t)
{
	return !t->kind && !t->insns && !t->entries;
}

/* ,"phases":{...} for a split (a thread or the total). */
static void json_split_phases(FILE *out, const struct jf_split_result *s)
{
	size_t i;
	int p;

	fprintf(out, "{\"tid\":%d,\"instructions\":{", s->tid);
	for (i = 0; i < NPHASE_ROWS; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", row_name(phase_rows[i]),
			s->by_class[phase_rows[i]]);
	fprintf(out, ",\"jitted\":%" PRIu64 "},\"time\":{", s->insns[JF_SPLIT_JITTED]);
	for (i = 0; i < NPHASE_ROWS; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", row_name(phase_rows[i]),
			s->time_by_class[phase_rows[i]]);
	fprintf(out, ",\"jitted\":%" PRIu64 "},\"spans\":{", s->time[JF_SPLIT_JITTED]);
	for (p = 1; p < JF_PHASE_COUNT; p++)
		fprintf(out, "%s\"%s\":%" PRIu64, p > 1 ? "," : "", jf_code_class_name(jf_phase_class(p)),
			s->phase_spans[p]);
	fprintf(out, "}}");
}

void jf_report_json_phases(FILE *out, const struct jf_analysis_result *r)
{
	size_t i;
	int p, n = 0;

	if (!jf_report_has_phases(r))
		return;
	fprintf(out, ",\"phases\":{\"told\":[");
	for (p = 1; p < JF_PHASE_COUNT; p++)
		if (r->phases_told & (1u << p))
			fprintf(out, "%s\"%s\"", n++ ? "," : "", jf_code_class_name(jf_phase_class(p)));
	fprintf(out, "],\"total\":");
	json_split_phases(out, &r->total);
	fprintf(out, ",\"threads\":[");
	for (i = 0; i < r->nthreads; i++) {
		if (i)
			fputc(',', out);
		json_split_phases(out, &r->threads[i]);
	}
	fprintf(out, "],\"bracket_problem_count\":%" PRIu64 ",\"bracket_problems\":[",
		r->phase_problem_count);
	for (i = 0; i < r->nphase_problems; i++) {
		const struct jf_phase_problem *q = &r->phase_problems[i];

		fprintf(out, "%s{\"what\":\"%s\",\"phase\":\"%s\",\"tid\":%d,\"record_offset\":%" PRIu64
			",\"instruction\":%" PRIu64, i ? "," : "", jf_phase_problem_name(q->kind),
			jf_code_class_name(jf_phase_class(q->phase)), q->tid, q->record_offset, q->insn);
		if (q->has_time)
			fprintf(out, ",\"time\":%" PRIu64, q->time);
		fputc('}', out);
	}
	fprintf(out, "],\"uncompiled_traces\":[");
	for (i = 0, n = 0; i < r->ntraces; i++) {
		if (!jf_report_trace_never_compiled(&r->traces[i]))
			continue;
		fprintf(out, "%s{\"id\":%" PRIu64, n++ ? "," : "", r->traces[i].trace_id);
		jf_report_json_trace_making(out, r, &r->traces[i]);
		fputc('}', out);
	}
	fprintf(out, "]}");
}

void jf_report_json_trace_making(FILE *out, const struct jf_analysis_result *r,
				 const struct jf_trace_result *t)
{
	if (!jf_report_has_phases(r))
		return;
	fprintf(out, ",\"tracing\":{\"instructions\":%" PRIu64 ",\"time\":%" PRIu64
		"},\"compiling\":{\"instructions\":%" PRIu64 ",\"time\":%" PRIu64 "}",
		t->tracing_insns, t->tracing_time, t->compiling_insns, t->compiling_time);
}

void jf_report_json_iteration_phases(FILE *out, const struct jf_analysis_result *r,
				     const struct jf_iteration_result *it)
{
	size_t i;

	if (!jf_report_has_phases(r))
		return;
	fprintf(out, ",\"phases\":{");
	for (i = 0; i < NPHASE_ROWS; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : "", row_name(phase_rows[i]),
			it->insns_by_class[phase_rows[i]]);
	fprintf(out, ",\"jitted\":%" PRIu64 "}", it->insns_by_split[JF_SPLIT_JITTED]);
}

static void add_band(struct jf_report_bands *b, const char *name, const char *colour, int cls)
{
	b->name[b->n] = name;
	b->colour[b->n] = colour;
	b->code_class[b->n++] = cls;
}

void jf_report_iteration_bands(const struct jf_analysis_result *r, struct jf_report_bands *b)
{
	size_t i;
	int k;

	b->n = 0;
	if (!jf_report_has_phases(r)) {
		for (k = 0; k < JF_SPLIT_COUNT; k++)
			add_band(b, jf_split_class_name(k), jf_views_split_colour(k), -1 - k);
		return;
	}
	for (i = 0; i < NPHASE_ROWS; i++) {
		int p = p_of(phase_rows[i]);

		if (!p || (r->phases_told & (1u << p)))
			add_band(b, row_name(phase_rows[i]), jf_views_class_colour(phase_rows[i]),
				 phase_rows[i]);
	}
	add_band(b, "jitted", jf_views_split_colour(JF_SPLIT_JITTED), -1 - JF_SPLIT_JITTED);
	add_band(b, "instrumentation", jf_views_split_colour(JF_SPLIT_INSTRUMENTATION),
		 -1 - JF_SPLIT_INSTRUMENTATION);
	add_band(b, "other", jf_views_split_colour(JF_SPLIT_NATIVE), JF_CLASS_COUNT);
}

void jf_report_band_values(const struct jf_report_bands *b, const struct jf_iteration_result *it,
			   uint64_t v[JF_REPORT_BANDS_MAX])
{
	uint64_t shown = 0;
	int k;

	for (k = 0; k < b->n; k++) {
		int c = b->code_class[k];

		v[k] = c < 0 ? it->insns_by_split[-1 - c] :
		       c < JF_CLASS_COUNT ? it->insns_by_class[c] : 0;
		shown += v[k];
	}
	for (k = 0; k < b->n; k++)
		if (b->code_class[k] == JF_CLASS_COUNT)
			v[k] = it->insns > shown ? it->insns - shown : 0;
}

void jf_report_html_phases(FILE *out, const struct jf_analysis_result *r,
			   const struct jf_report_meta *m)
{
	char *text = NULL;
	size_t size = 0;
	FILE *mem;

	if (!jf_report_has_phases(r))
		return;
	fprintf(out, "<h2 id=\"phases\">VM phases</h2>\n");
	mem = open_memstream(&text, &size);
	if (!mem) {
		fprintf(out, "<p class=\"na\">Not available: out of memory.</p>\n");
		return;
	}
	jf_report_phases(mem, r, m);
	fputc('\n', mem);
	jf_report_trace_making(mem, r, m);
	if (fclose(mem) == 0 && text) {
		fprintf(out, "<pre>");
		jf_views_xml(out, text);
		fprintf(out, "</pre>\n");
	}
	free(text);
}
