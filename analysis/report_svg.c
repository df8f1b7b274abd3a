/* The flame graph drawn as SVG from the folded stacks: all threads at the bottom, then
 * thread, code class, region and bytecode range above; widths are instruction counts.
 * Frames too narrow to see are left out (and counted in the footer); each frame's
 * <title> gives its name, count and share. */
#include <inttypes.h>
#include <stdint.h>
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
	case JF_CLASS_TRACING: return "#de2d26";
	case JF_CLASS_COMPILING: return "#756bb1";
	case JF_CLASS_EXIT_HANDLING: return "#fc9272";
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

/* For each row, how many bottom frames it shares with the row before (rows in frame order:
 * a run of rows shares a frame when each shares it with the one before); NULL when out of
 * memory. */
static int *shared_frames(const struct jf_flame_rows *rows)
{
	int *shared = malloc((rows->n ? rows->n : 1) * sizeof(*shared));
	char a[160], b[160];
	size_t i;
	int d;

	if (!shared)
		return NULL;
	for (i = 0; i < rows->n; i++) {
		for (d = 0; i && d < rows->depth; d++) {
			rows->frame(rows->ctx, i - 1, d, a, sizeof(a));
			rows->frame(rows->ctx, i, d, b, sizeof(b));
			if (strcmp(a, b))
				break;
		}
		shared[i] = i ? d : 0;
	}
	return shared;
}

void jf_views_flame_rows_svg(FILE *out, const struct jf_flame_rows *rows, int width,
			     const char *title, const char *subtitle)
{
	int height = TOP + (rows->depth + 1) * FRAME_H + FOOT, depth;
	uint64_t total = 0, hidden = 0;
	int *shared = shared_frames(rows);
	char name[160];
	double scale;
	size_t i;

	if (!shared)
		return;
	for (i = 0; i < rows->n; i++)
		total += rows->count(rows->ctx, i);
	scale = total ? (double)(width - 20) / (double)total : 0;
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"monospace\" font-size=\"11\">\n",
		width, height, width, height);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
		"<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">");
	jf_views_xml(out, title);
	fprintf(out, "</text>\n<text x=\"10\" y=\"36\">");
	jf_views_xml(out, subtitle);
	fprintf(out, "</text>\n");
	if (!total) {
		fprintf(out, "<text x=\"10\" y=\"%d\">Not available: no instructions were decoded"
			"</text>\n</svg>\n", TOP + 20);
		free(shared);
		return;
	}
	frame(out, 10, 0, (double)total * scale, height, "#e0e0e0", "all", total, total);
	/* Rows come in frame order: a frame is a run of rows whose frames up to its depth
	 * are the same. */
	for (depth = 0; depth < rows->depth; depth++) {
		uint64_t x = 0;

		i = 0;
		while (i < rows->n) {
			uint64_t run = rows->count(rows->ctx, i), start = x;
			size_t j = i + 1;

			rows->frame(rows->ctx, i, depth, name, sizeof(name));
			for (; j < rows->n && shared[j] > depth; j++)
				run += rows->count(rows->ctx, j);
			x += run;
			i = j;
			if (!run || !name[0])
				continue;
			if ((double)run * scale < 0.3) {
				hidden++;
				continue;
			}
			frame(out, 10 + (double)start * scale, depth + 1, (double)run * scale, height,
			      rows->colour(rows->ctx, i - 1, depth), name, run, total);
		}
	}
	fprintf(out, "<text x=\"10\" y=\"%d\">Counts are exact instruction counts (not samples); "
		"%" PRIu64 " frames narrower than 0.3 px not drawn. Hover a frame for its "
		"numbers.</text>\n</svg>\n", height - 12, hidden);
	free(shared);
}

/* The views' stacks as flame rows: the frames of the two rows asked last are kept (the
 * drawing compares a run's first row with the next). */
struct class_rows {
	const struct jf_runtime_desc *rt;
	const struct jf_stack_result **v;
	size_t row[2];
	char frames[2][JF_VIEWS_DEPTH][128];
	int older;
};

static void class_frame(void *ctx, size_t i, int depth, char *buf, size_t size)
{
	struct class_rows *c = ctx;
	int k = c->row[0] == i ? 0 : c->row[1] == i ? 1 : -1;

	if (k < 0) {
		k = c->older;
		c->older = !k;
		jf_views_stack_frames(c->rt, c->v[i], c->frames[k]);
		c->row[k] = i;
	}
	snprintf(buf, size, "%s", c->frames[k][depth]);
}

static uint64_t class_count(void *ctx, size_t i)
{
	return ((struct class_rows *)ctx)->v[i]->insns;
}

static const char *class_colour(void *ctx, size_t i, int depth)
{
	return depth == 0 ? "#d9d9d9" : jf_views_class_colour(((struct class_rows *)ctx)->v[i]->cls);
}

void jf_views_flame_svg(FILE *out, const struct jf_analysis_result *r, int width)
{
	struct class_rows c = { jf_runtime_of(r), jf_views_sorted_stacks(r), { SIZE_MAX, SIZE_MAX },
				{ { "" } }, 0 };
	struct jf_flame_rows rows = { r->nstacks, JF_VIEWS_DEPTH, &c, class_frame, class_count,
				      class_colour };
	char subtitle[192];

	if (!c.v)
		return;
	snprintf(subtitle, sizeof(subtitle), "%" PRIu64 " instructions in %zu threads%s", r->insns,
		 r->nthreads, r->has_zone_records ? (r->has_pc_maps ? "" :
			"; no pc maps: no bytecode ranges") :
		 "; no zone records: regions are jitdump names or mapped files, no bytecode ranges");
	jf_views_flame_rows_svg(out, &rows, width, "Flame graph: instructions per thread, class, "
				"region, bytecode range", subtitle);
	free(c.v);
}

void jf_report_flame_svg(FILE *out, const struct jf_analysis_result *r)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	jf_views_flame_svg(out, r, 1200);
}
