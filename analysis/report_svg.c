/* The flame graph drawn as SVG from the folded stacks: all threads at the bottom, then
 * thread, code class, region and bytecode range above; widths are instruction counts.
 * Frames too narrow to see are left out (and counted in the footer); each frame's
 * <title> gives its name, count and share. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/report.h"
#include "report_views.h"
#include "runtime.h"

#define FRAME_H 18
#define TOP 44
#define FOOT 36
#define CHAR_W 6.6

const char *jf_views_class_colour(int c)
{
	switch (c) {
	case JF_CLASS_INTERPRETER: return "#6baed6";
	case JF_CLASS_TRACE: return "#fd8d3c";
	case JF_CLASS_BRIDGE: return "#e6550d";
	case JF_CLASS_EXIT_STUB: return "#fdae6b";
	case JF_CLASS_TRAMPOLINE: case JF_CLASS_INLINE_CACHE: return "#fdd0a2";
	case JF_CLASS_STENCIL: case JF_CLASS_JITTED: return "#f16913";
	case JF_CLASS_RUNTIME: return "#74c476";
	case JF_CLASS_NATIVE: return "#a1d99b";
	case JF_CLASS_KERNEL: return "#c7e9c0";
	case JF_CLASS_INSTRUMENTATION: return "#9e9ac8";
	case JF_CLASS_GC: return "#31a354";
	default: return "#bdbdbd";
	}
}

const char *jf_views_split_colour(int s)
{
	switch (s) {
	case JF_SPLIT_INTERPRETER: return "#6baed6";
	case JF_SPLIT_JITTED: return "#fd8d3c";
	case JF_SPLIT_NATIVE: return "#74c476";
	case JF_SPLIT_INSTRUMENTATION: return "#9e9ac8";
	default: return "#bdbdbd";
	}
}

void jf_views_xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			if ((unsigned char)*s >= 0x20 || *s == '\n' || *s == '\t')
				fputc(*s, out);
		}
	}
}

static void frame(FILE *out, double x, int depth, double w, int height, const char *fill,
		  const char *name, uint64_t count, uint64_t total)
{
	double y = height - FOOT - (depth + 1) * FRAME_H;
	size_t fit = (size_t)((w - 4) / CHAR_W);

	fprintf(out, "<g><title>");
	jf_views_xml(out, name);
	fprintf(out, " (%" PRIu64 " instructions, %.2f%%)</title>", count,
		total ? 100.0 * (double)count / (double)total : 0.0);
	fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
		"rx=\"2\"/>", x, y, w > 0.5 ? w - 0.5 : w, FRAME_H - 1, fill);
	if (fit >= 3) {
		char label[160];

		snprintf(label, sizeof(label), "%s", name);
		if (strlen(label) > fit)
			strcpy(label + fit - 2, "..");
		fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_H - 5);
		jf_views_xml(out, label);
		fprintf(out, "</text>");
	}
	fprintf(out, "</g>\n");
}

void jf_views_flame_svg(FILE *out, const struct jf_analysis_result *r, int width)
{
	const struct jf_runtime_desc *rt = jf_runtime_of(r);
	const struct jf_stack_result **v = jf_views_sorted_stacks(r);
	int height = TOP + (JF_VIEWS_DEPTH + 1) * FRAME_H + FOOT, depth;
	uint64_t total = 0, hidden = 0;
	double scale;
	size_t i;

	if (!v)
		return;
	for (i = 0; i < r->nstacks; i++)
		total += v[i]->insns;
	scale = total ? (double)(width - 20) / (double)total : 0;
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n",
		width, height, width, height);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
		"<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">Flame graph: "
		"instructions per thread, class, region, bytecode range</text>\n");
	fprintf(out, "<text x=\"10\" y=\"36\">%" PRIu64 " instructions in %zu threads%s</text>\n",
		r->insns, r->nthreads, r->has_zone_records ? (r->has_pc_maps ? "" :
			"; no pc maps: no bytecode ranges") :
		"; no zone records: regions are jitdump names or mapped files, no bytecode ranges");
	if (!total) {
		fprintf(out, "<text x=\"10\" y=\"%d\">Not available: no instructions were decoded"
			"</text>\n</svg>\n", TOP + 20);
		free(v);
		return;
	}
	frame(out, 10, 0, (double)total * scale, height, "#e0e0e0", "all", total, total);
	for (depth = 0; depth < JF_VIEWS_DEPTH; depth++) {
		uint64_t x = 0;

		i = 0;
		while (i < r->nstacks) {
			char first[JF_VIEWS_DEPTH][128], other[JF_VIEWS_DEPTH][128];
			uint64_t run = 0, start = x;
			size_t j = i;
			int d;

			jf_views_stack_frames(rt, v[i], first);
			for (; j < r->nstacks; j++) {
				jf_views_stack_frames(rt, v[j], other);
				for (d = 0; d <= depth && !strcmp(first[d], other[d]); d++)
					;
				if (d <= depth)
					break;
				run += v[j]->insns;
			}
			x += run;
			i = j;
			if (!run || !first[depth][0])
				continue;
			if ((double)run * scale < 0.3) {
				hidden++;
				continue;
			}
			frame(out, 10 + (double)start * scale, depth + 1, (double)run * scale, height,
			      depth == 0 ? "#d9d9d9" : jf_views_class_colour(v[i - 1]->cls),
			      first[depth], run, total);
		}
	}
	fprintf(out, "<text x=\"10\" y=\"%d\">Counts are exact instruction counts (not samples); "
		"%" PRIu64 " frames narrower than 0.3 px not drawn. Hover a frame for its "
		"numbers.</text>\n</svg>\n", height - 12, hidden);
	free(v);
}

void jf_report_flame_svg(FILE *out, const struct jf_analysis_result *r)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	jf_views_flame_svg(out, r, 1200);
}
