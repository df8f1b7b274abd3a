/* The report as one self-contained HTML file: no network, no fonts, no external scripts;
 * inline SVG charts and a few lines of plain JavaScript to sort tables. It is also
 * well-formed XML (scripts in CDATA, only numeric character references), so any XML
 * parser can check it. Everything drawn is aggregated (iterations and time grouped into at
 * most a few hundred columns, code listed per pc-map entry), so big traces stay fast to
 * open. The numbers are the result's, printed as plain integers like the text report. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/emitter.h"
#include "jitflow/report.h"
#include "report_phases.h"
#include "report_views.h"
#include "runtime.h"

#define COLUMNS 200        /* most columns of a time or iteration chart */
#define GUARD_CHARTS 12    /* guards drawn over time */
#define LISTED_TRACES 20   /* traces with a code listing */

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char style[] =
	"body{font-family:sans-serif;margin:0 24px 40px 24px;color:#222;max-width:1300px}"
	"h1{font-size:22px;margin:12px 0 4px}h2{font-size:17px;margin:26px 0 8px;"
	"border-bottom:1px solid #ddd}"
	".notes{position:sticky;top:0;background:#fff8e1;border:1px solid #e0c060;"
	"padding:6px 10px;font-size:13px;z-index:2}"
	".notes.bad{background:#fdecea;border-color:#d9534f}"
	"table{border-collapse:collapse;font-size:13px;margin:4px 0}"
	"th,td{border:1px solid #ddd;padding:2px 7px;text-align:right}"
	"th{background:#f2f2f2;cursor:pointer;user-select:none}"
	"td.l,th.l{text-align:left}tr:hover td{background:#f7f7ff}"
	".na{color:#8a6d3b;font-style:italic}"
	"pre{margin:0;font-size:12px;text-align:left}"
	"details{margin:6px 0}summary{cursor:pointer;font-weight:bold}"
	".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;"
	"vertical-align:middle}";

/* Sorting: a click on a header sorts by that column (numbers by data-v or text). */
static const char script[] =
	"document.querySelectorAll('table.sortable').forEach(function(t){\n"
	" t.querySelectorAll('th').forEach(function(th,col){\n"
	"  th.addEventListener('click',function(){\n"
	"   var body=t.tBodies[0],rows=Array.prototype.slice.call(body.rows);\n"
	"   var down=th.getAttribute('data-dir')!=='d';th.setAttribute('data-dir',down?'d':'a');\n"
	"   rows.sort(function(a,b){var x=a.cells[col],y=b.cells[col];\n"
	"    var p=x.getAttribute('data-v'),q=y.getAttribute('data-v');\n"
	"    var c=(p!==null&&q!==null)?(parseFloat(p)-parseFloat(q)):\n"
	"     x.textContent.localeCompare(y.textContent);return down?-c:c;});\n"
	"   rows.forEach(function(r){body.appendChild(r);});});});});\n";

static void text(FILE *out, const char *s)
{
	jf_views_xml(out, s);
}

static void num_cell(FILE *out, uint64_t v)
{
	fprintf(out, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", v, v);
}

static void pct_cell(FILE *out, double v)
{
	fprintf(out, "<td data-v=\"%.4f\">%.2f%%</td>", v, v);
}

static void legend(FILE *out)
{
	int i;

	fprintf(out, "<div class=\"key\">");
	for (i = 0; i < JF_SPLIT_COUNT; i++)
		fprintf(out, "<span style=\"background:%s\"></span>%s", jf_views_split_colour(i),
			jf_split_class_name(i));
	fprintf(out, "</div>\n");
}

static void bands_legend(FILE *out, const struct jf_report_bands *b)
{
	int i;

	fprintf(out, "<div class=\"key\">");
	for (i = 0; i < b->n; i++)
		fprintf(out, "<span style=\"background:%s\"></span>%s", b->colour[i], b->name[i]);
	fprintf(out, "</div>\n");
}

/* ---- notes that stay visible -------------------------------------------------------- */

static void notes(FILE *out, const struct jf_analysis_result *r)
{
	const char *apart = jf_runtime_not_told_apart(jf_runtime_of(r), r);
	int bad = r->decode_errors || r->lost_events || r->overflows;

	fprintf(out, "<div class=\"notes%s\" id=\"notes\"><b>Decode:</b> %" PRIu64 " errors, %"
		PRIu64 " overflows, %" PRIu64 " bytes lost in %" PRIu64 " gaps, %" PRIu64
		" blocks outside any known code.", bad ? " bad" : "", r->decode_errors,
		r->overflows, r->lost_bytes, r->lost_events, r->image_misses);
	if (!r->has_time)
		fprintf(out, " <b>Not available:</b> time (the trace has no timing packets; "
			"charts use instruction counts).");
	else if (r->time_is_synthetic)
		fprintf(out, " <b>Note:</b> time comes from a synthetic instruction-count clock "
			"(emulated recording), not from hardware.");
	if (!r->has_zone_records)
		fprintf(out, " <b>Not available:</b> trace kinds, guards, bridges (no zone "
			"records came with the trace: the runtime wrote only jitdump, or none).");
	else if (!r->has_pc_maps)
		fprintf(out, " <b>Not available:</b> bytecode ranges (no pc maps).");
	if (apart) {
		fprintf(out, " <b>Not told apart:</b> ");
		text(out, apart);
		fputc('.', out);
	}
	fprintf(out, "</div>\n");
}

/* ---- the split ------------------------------------------------------------------------ */

static void stacked_bar(FILE *out, double x, double y, double w, double h,
			const uint64_t v[JF_SPLIT_COUNT], const char *what)
{
	uint64_t total = 0;
	double at = x;
	int i;

	for (i = 0; i < JF_SPLIT_COUNT; i++)
		total += v[i];
	if (!total)
		return;
	for (i = 0; i < JF_SPLIT_COUNT; i++) {
		double part = w * (double)v[i] / (double)total;

		if (!v[i])
			continue;
		fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\">"
			"<title>%s: %s %" PRIu64 " (%.1f%%)</title></rect>", at, y, part, h,
			jf_views_split_colour(i), what, jf_split_class_name(i), v[i],
			pct(v[i], total));
		at += part;
	}
}

static void split_rows(FILE *out, const struct jf_split_result *s, const char *who,
		       const struct jf_analysis_result *r)
{
	uint64_t insns = 0, time = 0;
	int i;

	for (i = 0; i < JF_SPLIT_COUNT; i++) {
		insns += s->insns[i];
		time += s->time[i];
	}
	for (i = 0; i < JF_SPLIT_COUNT; i++) {
		fprintf(out, "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td>", who,
			jf_split_class_name(i));
		num_cell(out, s->insns[i]);
		pct_cell(out, pct(s->insns[i], insns));
		if (r->has_time) {
			num_cell(out, s->time[i]);
			pct_cell(out, pct(s->time[i], time));
		}
		fprintf(out, "</tr>\n");
	}
}

static uint64_t split_insns(const struct jf_split_result *s)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < JF_SPLIT_COUNT; i++)
		n += s->insns[i];
	return n;
}

static void split_section(FILE *out, const struct jf_analysis_result *r)
{
	size_t i, n = 1, empty = 0, row;
	int bars = r->has_time ? 2 : 1;
	double h;
	char who[64];

	/* Threads (trace sources) where nothing was decoded are named, not drawn. */
	for (i = 0; r->nthreads > 1 && i < r->nthreads; i++) {
		if (split_insns(&r->threads[i]))
			n++;
		else
			empty++;
	}
	h = 22.0 * (double)n * bars + 30;
	fprintf(out, "<h2 id=\"split\">Interpreter / jitted / native split</h2>\n");
	legend(out);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1100\" height=\"%.0f\" "
		"font-size=\"12\">", h);
	for (i = 0, row = 0; i < (r->nthreads > 1 ? r->nthreads + 1 : 1); i++) {
		const struct jf_split_result *s = i == 0 ? &r->total : &r->threads[i - 1];
		double y = 10 + 22.0 * (double)row * bars;

		if (i > 0 && !split_insns(s))
			continue;
		row++;
		if (i == 0)
			snprintf(who, sizeof(who), "all threads");
		else
			jf_views_thread_label(who, sizeof(who), s->tid);
		fprintf(out, "<text x=\"0\" y=\"%.1f\">%s, instructions</text>", y + 13, who);
		stacked_bar(out, 200, y, 880, 16, s->insns, who);
		if (r->has_time) {
			fprintf(out, "<text x=\"0\" y=\"%.1f\">%s, time</text>", y + 35, who);
			stacked_bar(out, 200, y + 22, 880, 16, s->time, who);
		}
	}
	fprintf(out, "</svg>\n<table class=\"sortable\"><thead><tr><th class=\"l\">thread</th>"
		"<th class=\"l\">class</th><th>instructions</th><th>%%</th>%s</tr></thead><tbody>\n",
		r->has_time ? "<th>time</th><th>%</th>" : "");
	split_rows(out, &r->total, "all", r);
	for (i = 0; r->nthreads > 1 && i < r->nthreads; i++) {
		if (!split_insns(&r->threads[i]))
			continue;
		jf_views_thread_label(who, sizeof(who), r->threads[i].tid);
		split_rows(out, &r->threads[i], who, r);
	}
	fprintf(out, "</tbody></table>\n");
	if (empty) {
		fprintf(out, "<p class=\"na\">No instructions decoded on %zu of %zu threads or trace "
			"sources:", empty, r->nthreads);
		for (i = 0; i < r->nthreads; i++) {
			if (split_insns(&r->threads[i]))
				continue;
			jf_views_thread_label(who, sizeof(who), r->threads[i].tid);
			fprintf(out, " %s;", who);
		}
		fprintf(out, " they are not drawn.</p>\n");
	}
	fprintf(out, "<p>Transitions (all threads): interpreter&#8594;jitted %"
		PRIu64 ", jitted&#8594;interpreter %" PRIu64 " (%" PRIu64 " through %ss), "
		"trace&#8594;trace %" PRIu64 ".</p>\n",
		r->total.transitions[JF_SPLIT_INTERPRETER][JF_SPLIT_JITTED],
		r->total.transitions[JF_SPLIT_JITTED][JF_SPLIT_INTERPRETER], r->total.guard_exits,
		jf_runtime_of(r)->guard_exit, r->total.trace_to_trace);
}

/* Iterations as stacked columns (groups of iterations when there are many). */
static void iterations_section(FILE *out, const struct jf_analysis_result *r)
{
	size_t per, cols, c, i;
	uint64_t max = 0;
	struct jf_iteration_result it;
	struct jf_report_bands bands;

	jf_report_iteration_bands(r, &bands);
	fprintf(out, "<h2 id=\"iterations\">Iterations</h2>\n");
	if (!r->niterations) {
		fprintf(out, "<p class=\"na\">Not available: the runtime marked no iterations.</p>\n");
		return;
	}
	per = (r->niterations + COLUMNS - 1) / COLUMNS;
	cols = (r->niterations + per - 1) / per;
	for (c = 0; c < cols; c++) {
		uint64_t sum = 0;

		for (i = c * per; i < (c + 1) * per && i < r->niterations; i++) {
			jf_analysis_iteration(r, i, &it);
			sum += it.insns;
		}
		if (sum > max)
			max = sum;
	}
	fprintf(out, "<p>%zu iterations; warm-up class: <b>%s</b>", r->niterations,
		jf_warmup_name(r->warmup));
	if ((r->warmup == JF_WARMUP_FLAT || r->warmup == JF_WARMUP_WARMUP ||
	     r->warmup == JF_WARMUP_SLOWDOWN) && jf_analysis_iteration(r, r->steady_from, &it) == 0)
		fprintf(out, ", steady from iteration %" PRIu64, it.index);
	fprintf(out, ". Instructions per iteration%s, by class%s.</p>\n",
		per > 1 ? " (summed over groups of iterations)" : "",
		jf_report_has_phases(r) ? " and VM phase (interpreting: the interpreter outside "
					  "every phase)" : "");
	bands_legend(out, &bands);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1100\" height=\"230\" "
		"font-size=\"11\"><line x1=\"40\" y1=\"200\" x2=\"1090\" y2=\"200\" stroke=\"#888\"/>");
	for (c = 0; c < cols; c++) {
		uint64_t v[JF_REPORT_BANDS_MAX] = { 0 }, one[JF_REPORT_BANDS_MAX], sum = 0;
		double x = 40 + 1050.0 * (double)c / (double)cols, w = 1050.0 / (double)cols, y = 200;
		int k;

		uint64_t first_index = 0, last_index = 0;

		for (i = c * per; i < (c + 1) * per && i < r->niterations; i++) {
			jf_analysis_iteration(r, i, &it);
			if (i == c * per)
				first_index = it.index;
			last_index = it.index;
			jf_report_band_values(&bands, &it, one);
			for (k = 0; k < bands.n; k++)
				v[k] += one[k];
		}
		for (k = 0; k < bands.n; k++)
			sum += v[k];
		for (k = 0; k < bands.n; k++) {
			double h = max ? 190.0 * (double)v[k] / (double)max : 0;

			if (!v[k])
				continue;
			y -= h;
			fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				"fill=\"%s\"><title>iterations %" PRIu64 "-%" PRIu64 ": %s %" PRIu64
				" of %" PRIu64 " instructions</title></rect>", x, y,
				w > 1.5 ? w - 0.5 : w, h, bands.colour[k],
				first_index, last_index, bands.name[k], v[k], sum);
		}
		if ((r->warmup == JF_WARMUP_WARMUP || r->warmup == JF_WARMUP_SLOWDOWN ||
		     r->warmup == JF_WARMUP_FLAT) && r->steady_from >= c * per &&
		    r->steady_from < (c + 1) * per)
			fprintf(out, "<line x1=\"%.2f\" y1=\"5\" x2=\"%.2f\" y2=\"200\" stroke=\"#000\" "
				"stroke-dasharray=\"4 3\"/><text x=\"%.2f\" y=\"14\">steady</text>",
				x, x, x + 3);
	}
	{
		struct jf_iteration_result last;

		jf_analysis_iteration(r, 0, &it);
		jf_analysis_iteration(r, r->niterations - 1, &last);
		fprintf(out, "<text x=\"40\" y=\"216\">iteration %" PRIu64 "</text><text x=\"1090\" "
			"y=\"216\" text-anchor=\"end\">iteration %" PRIu64 "</text><text x=\"0\" "
			"y=\"12\">%" PRIu64 "</text></svg>\n", it.index, last.index, max);
	}
}

/* ---- guard exits over time ---------------------------------------------------------- */

static const struct jf_timeline_series *clock_series(const struct jf_analysis_result *r, size_t i)
{
	return r->has_time ? &r->timeline.threads[i].by_time : &r->timeline.threads[i].by_insns;
}

static void guards_over_time(FILE *out, const struct jf_analysis_result *r)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	char tid[32], gid[32], head[48];
	const struct jf_timeline_result *tl = &r->timeline;
	uint64_t lo = UINT64_MAX, hi = 0, span;
	size_t *order, i, j, shown = 0;

	fprintf(out, "<h2 id=\"guards-over-time\">%ss over time</h2>\n",
		jf_runtime_heading(head, sizeof(head), rt->guard_exit));
	if (!r->nguards) {
		fprintf(out, "<p class=\"na\">Not available: no %s are described (the runtime "
			"wrote no zone records with %s).</p>\n", rt->guards, rt->guards);
		return;
	}
	for (i = 0; i < tl->nthreads; i++) {
		const struct jf_timeline_series *s = clock_series(r, i);

		if (!s->nentries)
			continue;
		if (s->entries[0].bucket * s->width < lo)
			lo = s->entries[0].bucket * s->width;
		if ((s->entries[s->nentries - 1].bucket + 1) * s->width > hi)
			hi = (s->entries[s->nentries - 1].bucket + 1) * s->width;
	}
	if (lo >= hi) {
		fprintf(out, "<p class=\"na\">Not available: nothing ran on the clock.</p>\n");
		return;
	}
	span = hi - lo;
	fprintf(out, "<p>Exits of each %s (the %d with most exits) in %d columns over the run, "
		"on the %s; the dashed line is where its %s attached.</p>\n", rt->guard,
		GUARD_CHARTS, COLUMNS, r->has_time ? "trace's clock" : "instruction count (no timing)",
		rt->bridge);
	order = malloc(r->nguards * sizeof(*order));
	if (!order)
		return;
	for (i = 0; i < r->nguards; i++)
		order[i] = i;
	for (i = 1; i < r->nguards; i++) { /* by exits, largest first */
		size_t x = order[i];

		for (j = i; j > 0 && r->guards[order[j - 1]].exits < r->guards[x].exits; j--)
			order[j] = order[j - 1];
		order[j] = x;
	}
	for (i = 0; i < r->nguards && shown < GUARD_CHARTS; i++) {
		const struct jf_guard_result *g = &r->guards[order[i]];
		uint64_t col[COLUMNS] = { 0 }, max = 0;
		size_t t, k;

		if (!g->exits)
			break;
		shown++;
		for (t = 0; t < tl->nthreads; t++) {
			const struct jf_timeline_series *s = clock_series(r, t);

			for (k = 0; k < s->nentries; k++) {
				const struct jf_bucket_entry *e = &s->entries[k];
				uint64_t c;

				if (e->what != ((uint32_t)order[i] | JF_BUCKET_GUARD))
					continue;
				c = (uint64_t)((long double)(e->bucket * s->width - lo) * COLUMNS / span);
				col[c < COLUMNS ? c : COLUMNS - 1] += e->amount;
			}
		}
		for (k = 0; k < COLUMNS; k++)
			if (col[k] > max)
				max = col[k];
		fprintf(out, "<div>%s %s/%s: %" PRIu64 " exits, resume pc %u", rt->guard,
			jf_runtime_trace_id(rt, tid, sizeof(tid), g->trace_id),
			jf_runtime_guard_id(rt, gid, sizeof(gid), g->guard_id), g->exits, g->resume_pc);
		if (g->has_bridge)
			fprintf(out, ", %s %s after %" PRIu64 " exits", rt->bridge,
				jf_runtime_trace_id(rt, tid, sizeof(tid), g->bridge_id),
				g->exits_before_bridge);
		fprintf(out, "</div>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1100\" "
			"height=\"46\"><rect x=\"0\" y=\"0\" width=\"1100\" height=\"42\" fill=\"#f6f6f6\"/>");
		for (k = 0; k < COLUMNS; k++) {
			double h = max ? 40.0 * (double)col[k] / (double)max : 0;

			if (col[k])
				fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
					"fill=\"#d9534f\"><title>%" PRIu64 " exits</title></rect>",
					1100.0 * (double)k / COLUMNS, 42 - h, 1100.0 / COLUMNS - 0.5, h,
					col[k]);
		}
		for (k = 0; g->has_bridge && k < tl->nevents; k++) {
			const struct jf_timeline_event *e = &tl->events[k];
			uint64_t at = r->has_time ? e->time : e->insn_pos;
			double x;

			if (e->kind != JF_TL_BRIDGE || e->parent_trace != g->trace_id ||
			    e->parent_guard != g->guard_id || (r->has_time && !e->has_time))
				continue;
			x = at <= lo ? 0 : 1100.0 * (double)(at - lo) / (double)span;
			fprintf(out, "<line x1=\"%.1f\" y1=\"0\" x2=\"%.1f\" y2=\"42\" stroke=\"#000\" "
				"stroke-dasharray=\"3 2\"><title>%s %s attached</title></line>",
				x, x, rt->bridge, jf_runtime_trace_id(rt, tid, sizeof(tid), e->id));
		}
		fprintf(out, "</svg>\n");
	}
	free(order);
}

/* ---- tables --------------------------------------------------------------------------- */

static void traces_table(FILE *out, const struct jf_analysis_result *r)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	char tid[32], gid[32];
	size_t i;

	fprintf(out, "<h2 id=\"traces\">Traces</h2>\n");
	if (!r->ntraces) {
		fprintf(out, "<p class=\"na\">Not available: no traces (the trace came with no zone "
			"records: a runtime that writes only jitdump, or none).</p>\n");
		return;
	}
	fprintf(out, "<table class=\"sortable\" id=\"traces-table\"><thead><tr><th>id</th>"
		"<th class=\"l\">kind</th><th>entries</th><th>iterations</th><th>iter/entry</th>"
		"<th>exits</th><th>instructions</th><th>%%</th>%s<th class=\"l\">name</th></tr>"
		"</thead><tbody>\n", r->has_time ? "<th>time</th>" : "");
	for (i = 0; i < r->ntraces; i++) {
		const struct jf_trace_result *t = &r->traces[i];

		fprintf(out, "<tr>");
		num_cell(out, t->trace_id);
		fprintf(out, "<td class=\"l\">%s</td>", jf_runtime_kind(rt, t));
		num_cell(out, t->entries);
		num_cell(out, t->iterations);
		fprintf(out, "<td data-v=\"%.3f\">%.1f</td>",
			t->entries ? (double)t->iterations / (double)t->entries : 0.0,
			t->entries ? (double)t->iterations / (double)t->entries : 0.0);
		num_cell(out, t->exits);
		num_cell(out, t->insns);
		pct_cell(out, pct(t->insns, r->insns));
		if (r->has_time)
			num_cell(out, t->time);
		fprintf(out, "<td class=\"l\">");
		text(out, t->name);
		if (t->kind == JF_REGION_BRIDGE)
			fprintf(out, " (on trace %s %s %s)",
				jf_runtime_trace_id(rt, tid, sizeof(tid), t->parent_trace), rt->guard,
				jf_runtime_guard_id(rt, gid, sizeof(gid), t->parent_guard));
		fprintf(out, "</td></tr>\n");
	}
	fprintf(out, "</tbody></table>\n");
}

static void guards_table(FILE *out, const struct jf_analysis_result *r)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	char head[48];
	size_t i;

	fprintf(out, "<h2 id=\"guards\">%s</h2>\n", jf_runtime_heading(head, sizeof(head), rt->guards));
	if (!r->nguards) {
		fprintf(out, "<p class=\"na\">Not available: no %s are described.</p>\n", rt->guards);
		return;
	}
	fprintf(out, "<table class=\"sortable\" id=\"guards-table\"><thead><tr><th>trace</th>"
		"<th>%s</th><th>exits</th><th>passes</th><th>fail %%</th><th>unresolved</th>"
		"<th>resume pc</th><th>%s</th><th>exits before %s</th></tr></thead><tbody>\n",
		rt->guard, rt->bridge, rt->bridge);
	for (i = 0; i < r->nguards; i++) {
		const struct jf_guard_result *g = &r->guards[i];

		fprintf(out, "<tr>");
		num_cell(out, g->trace_id);
		num_cell(out, g->guard_id);
		num_cell(out, g->exits);
		num_cell(out, g->passes);
		pct_cell(out, pct(g->exits, g->exits + g->passes));
		num_cell(out, g->unresolved);
		num_cell(out, g->resume_pc);
		if (g->has_bridge) {
			num_cell(out, g->bridge_id);
			num_cell(out, g->exits_before_bridge);
		} else {
			fprintf(out, "<td data-v=\"-1\">-</td><td data-v=\"-1\">-</td>");
		}
		fprintf(out, "</tr>\n");
	}
	fprintf(out, "</tbody></table>\n");
}

static void retrace_section(FILE *out, const struct jf_analysis_result *r)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	char tid[32], gid[32];
	size_t i, j;

	fprintf(out, "<h2 id=\"retrace\">Retrace candidates</h2>\n");
	if (!r->has_zone_records) {
		fprintf(out, "<p class=\"na\">Not available: no traces or guards (no zone records)."
			"</p>\n");
		return;
	}
	if (!r->nretrace) {
		fprintf(out, "<p>None: every %s's common path stays in it (no %s takes "
			"more than half of its iterations, no %s run more than half of its "
			"instructions).</p>\n", rt->trace, rt->guard, rt->bridges);
		return;
	}
	fprintf(out, "<ul>\n");
	for (i = 0; i < r->nretrace; i++) {
		const struct jf_retrace_candidate *c = &r->retrace[i];
		const struct jf_trace_result *t = NULL;

		for (j = 0; j < r->ntraces; j++)
			if (r->traces[j].trace_id == c->trace_id)
				t = &r->traces[j];
		fprintf(out, "<li>%s %s: %.1f%% of its iterations leave through %s %s, %.1f%% "
			"of its instructions (with its %s') run in %s", rt->trace,
			jf_runtime_trace_id(rt, tid, sizeof(tid), c->trace_id), 100 * c->top_guard_share,
			rt->guard, jf_runtime_guard_id(rt, gid, sizeof(gid), c->top_guard),
			100 * c->bridge_share, rt->bridges, rt->bridges);
		if (t)
			fprintf(out, " (%" PRIu64 " iterations, %" PRIu64 " exits)", t->iterations,
				t->exits);
		fprintf(out, "</li>\n");
	}
	fprintf(out, "</ul>\n");
}

static void regions_table(FILE *out, const struct jf_analysis_result *r)
{
	size_t i;

	if (!r->nregions)
		return;
	fprintf(out, "<h2 id=\"regions\">Jitted regions</h2>\n<table class=\"sortable\">"
		"<thead><tr><th class=\"l\">name</th><th class=\"l\">address</th><th>size</th>"
		"<th>entries</th><th>instructions</th><th>%%</th></tr></thead><tbody>\n");
	for (i = 0; i < r->nregions; i++) {
		const struct jf_region_result *g = &r->regions[i];

		if (!g->insns && !g->entries)
			continue;
		fprintf(out, "<tr><td class=\"l\">");
		text(out, g->name);
		fprintf(out, "</td><td class=\"l\">0x%" PRIx64 "</td>", g->addr);
		num_cell(out, g->size);
		num_cell(out, g->entries);
		num_cell(out, g->insns);
		pct_cell(out, pct(g->insns, r->insns));
		fprintf(out, "</tr>\n");
	}
	fprintf(out, "</tbody></table>\n<p>Regions that never ran are left out.</p>\n");
}

/* ---- per trace: bytecode heat strip and annotated code ---------------------------- */

static const char *op_name(const struct jf_analysis_result *r, uint16_t kind)
{
	size_t i;

	for (i = 0; i < r->nops; i++)
		if (r->ops[i].op_kind == kind && r->ops[i].name[0])
			return r->ops[i].name;
	return "";
}

/* Heat: white to red by share of the hottest range. */
static void heat_colour(char *buf, size_t size, uint64_t v, uint64_t max)
{
	int k = max ? (int)(200.0 * (double)v / (double)max) : 0;

	snprintf(buf, size, "rgb(255,%d,%d)", 240 - k, 230 - k > 0 ? 230 - k : 0);
}

static void heat_strip(FILE *out, const struct jf_analysis_result *r, uint64_t key)
{
	size_t i, first = r->nbytecodes, n = 0;
	uint64_t max = 0, total = 0;
	double x = 0;

	for (i = 0; i < r->nbytecodes; i++) {
		if (r->bytecodes[i].region_key != key)
			continue;
		if (first == r->nbytecodes)
			first = i;
		n++;
		total += r->bytecodes[i].insns;
		if (r->bytecodes[i].insns > max)
			max = r->bytecodes[i].insns;
	}
	if (!n) {
		fprintf(out, "<p class=\"na\">Not available: no pc map for this code.</p>\n");
		return;
	}
	fprintf(out, "<p>Bytecode ranges, equal widths in pc order, coloured by instructions "
		"(%" PRIu64 " in pc-mapped code):</p>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"1100\" height=\"40\" font-size=\"10\">", total);
	for (i = first; i < first + n; i++) {
		const struct jf_bytecode_result *b = &r->bytecodes[i];
		double w = 1100.0 / (double)n;
		char fill[32];

		heat_colour(fill, sizeof(fill), b->insns, max);
		fprintf(out, "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"24\" fill=\"%s\" "
			"stroke=\"#ccc\"><title>pc %u-&gt;%u: %" PRIu64 " instructions (%.1f%%)</title>"
			"</rect>", x, w, fill, b->pc_from, b->pc_to, b->insns, pct(b->insns, total));
		if (w > 30)
			fprintf(out, "<text x=\"%.2f\" y=\"36\">%u</text>", x + 2, b->pc_from);
		x += w;
	}
	fprintf(out, "</svg>\n");
}

/* One row per pc-map entry (consecutive instructions of the same range and op), its
 * instructions in one <pre>: no element per instruction. */
static void listing(FILE *out, const struct jf_analysis_result *r, uint64_t key)
{
	size_t i = 0, n = 0;

	while (i < r->ncode_lines && r->code_lines[i].region_key < key)
		i++;
	if (i == r->ncode_lines || r->code_lines[i].region_key != key)
		return;
	fprintf(out, "<table><thead><tr><th class=\"l\">bytecode</th><th class=\"l\">op</th>"
		"<th>instructions</th><th class=\"l\">address  executed  disassembly</th></tr>"
		"</thead><tbody>\n");
	while (i < r->ncode_lines && r->code_lines[i].region_key == key) {
		const struct jf_code_line *l = &r->code_lines[i];
		size_t j = i;
		uint64_t sum = 0;

		while (j < r->ncode_lines && r->code_lines[j].region_key == key &&
		       r->code_lines[j].pc_from == l->pc_from && r->code_lines[j].pc_to == l->pc_to &&
		       r->code_lines[j].op_kind == l->op_kind)
			sum += r->code_lines[j++].insns;
		fprintf(out, "<tr><td class=\"l\">%u-&gt;%u</td><td class=\"l\">", l->pc_from,
			l->pc_to);
		text(out, op_name(r, l->op_kind));
		fprintf(out, "</td>");
		num_cell(out, sum);
		fprintf(out, "<td class=\"l\"><pre>");
		for (; i < j; i++) {
			fprintf(out, "%s%" PRIx64 " %10" PRIu64 "  ", i > (size_t)(l - r->code_lines) ?
				"\n" : "", r->code_lines[i].addr, r->code_lines[i].insns);
			text(out, r->code_lines[i].text[0] ? r->code_lines[i].text : "(bytes not readable)");
		}
		fprintf(out, "</pre></td></tr>\n");
		n++;
	}
	fprintf(out, "</tbody></table>\n");
}

static void code_section(FILE *out, const struct jf_analysis_result *r)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	size_t *order, i, j;

	fprintf(out, "<h2 id=\"code\">Inside the traces: bytecode ranges and code</h2>\n");
	if (!r->ntraces) {
		fprintf(out, "<p class=\"na\">Not available: no traces (no zone records).</p>\n");
		return;
	}
	if (!r->has_pc_maps)
		fprintf(out, "<p class=\"na\">Not available: bytecode ranges and pc-mapped code "
			"(the runtime wrote no pc maps).</p>\n");
	order = malloc(r->ntraces * sizeof(*order));
	if (!order)
		return;
	for (i = 0; i < r->ntraces; i++)
		order[i] = i;
	for (i = 1; i < r->ntraces; i++) { /* by instructions, largest first */
		size_t x = order[i];

		for (j = i; j > 0 && r->traces[order[j - 1]].insns < r->traces[x].insns; j--)
			order[j] = order[j - 1];
		order[j] = x;
	}
	fprintf(out, "<p>Per trace (the %d with most instructions): instructions per bytecode "
		"range, then its code as it ran, in the style of perf annotate: address, times "
		"executed, disassembly (capstone), grouped by pc-map entry.</p>\n", LISTED_TRACES);
	for (i = 0; i < r->ntraces && i < LISTED_TRACES; i++) {
		const struct jf_trace_result *t = &r->traces[order[i]];

		fprintf(out, "<details%s><summary>%s %" PRIu64 ": %" PRIu64 " instructions, ",
			i == 0 ? " open=\"open\"" : "", jf_runtime_kind(rt, t), t->trace_id, t->insns);
		text(out, t->name);
		fprintf(out, "</summary>\n");
		if (r->has_pc_maps) {
			heat_strip(out, r, t->trace_id);
			listing(out, r, t->trace_id);
		}
		fprintf(out, "</details>\n");
	}
	free(order);
}

void jf_report_html(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m)
{
	jf_report_html_named(out, r, m, NULL);
}

void jf_report_html_named(FILE *out, const struct jf_analysis_result *r,
			  const struct jf_report_meta *m, const struct jf_stack_names *names)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	const char *source = m && m->source ? m->source : "(trace)";

	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
		"<title>jitflow report: ");
	text(out, source);
	fprintf(out, "</title><style>%s</style></head><body>\n", style);
	notes(out, r);
	fprintf(out, "<h1>jitflow report: ");
	text(out, source);
	fprintf(out, "</h1>\n<table id=\"summary\"><tbody>"
		"<tr><td class=\"l\">threads</td><td>%zu</td></tr>"
		"<tr><td class=\"l\">instructions</td><td id=\"instructions\">%" PRIu64 "</td></tr>"
		"<tr><td class=\"l\">blocks</td><td>%" PRIu64 "</td></tr>"
		"<tr><td class=\"l\">trace bytes</td><td>%" PRIu64 "</td></tr>"
		"<tr><td class=\"l\">time</td><td>%s</td></tr>"
		"<tr><td class=\"l\">traces, %s</td><td>%zu, %zu</td></tr>"
		"</tbody></table>\n", r->nthreads, r->insns, r->blocks, m ? m->trace_bytes : 0,
		!r->has_time ? "not available" : r->time_is_synthetic ?
		"synthetic instruction-count clock" : r->time_is_ns ? "ns" : "timestamp ticks",
		rt->guards, r->ntraces, r->nguards);
	fprintf(out, "<p><a href=\"#split\">split</a> &#183; <a href=\"#iterations\">iterations"
		"</a> &#183; <a href=\"#guards-over-time\">%ss over time</a> &#183; "
		"<a href=\"#traces\">traces</a> &#183; <a href=\"#guards\">%s</a> &#183; "
		"<a href=\"#retrace\">retrace candidates</a> &#183; <a href=\"#code\">code</a> "
		"&#183; <a href=\"#flame\">flame graph</a></p>\n", rt->guard_exit, rt->guards);
	split_section(out, r);
	jf_report_html_phases(out, r, m);
	iterations_section(out, r);
	guards_over_time(out, r);
	traces_table(out, r);
	guards_table(out, r);
	retrace_section(out, r);
	regions_table(out, r);
	code_section(out, r);
	fprintf(out, "<h2 id=\"flame\">Flame graph</h2>\n");
	jf_views_flame_svg(out, r, 1100);
	if (r->call_stacks.nstacks) {
		fprintf(out, "<h2 id=\"call-stacks\">Flame graph of call stacks</h2>\n");
		if (jf_views_call_stacks_svg(out, r, m, names, 1100) < 0)
			fprintf(out, "<p>Not available: out of memory drawing the call stacks.</p>\n");
	}
	fprintf(out, "<script>//<![CDATA[\n%s//]]></script>\n</body></html>\n", script);
}
