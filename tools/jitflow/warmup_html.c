/* The warm-up report as HTML: an SVG chart per execution, no script, no outside file.
 * x: the series' points (iterations, or bins of them), y: the cost from 0 to the largest
 * point; segment means as horizontal lines, changepoints as vertical ones whose tooltip
 * lists the events there. */
#include <string.h>

#include "warmup_html.h"

#define WIDTH 900.0
#define HEIGHT 180.0

static double number(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static void escaped(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else
			fputc(*s, out);
	}
}

static const char *text(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static void tooltip(FILE *out, const cJSON *cp)
{
	static const char *const kinds[] = { "compiled", "freed", "bridges_attached" };
	const cJSON *events = cJSON_GetObjectItemCaseSensitive(cp, "events"), *v;
	size_t k;

	fprintf(out, "iteration %.0f: %.0f -&gt; %.0f", number(cp, "iteration"),
		number(cp, "mean_before"), number(cp, "mean_after"));
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(cp, "phases_moved")) {
		fputs("\n", out);
		escaped(out, text(v, "phase"));
		fprintf(out, " %.1f%% -&gt; %.1f%%", 100 * number(v, "share_before"),
			100 * number(v, "share_after"));
	}
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(events, kinds[k])) {
			if (!cJSON_IsString(v))
				continue;
			fputc('\n', out);
			if (k < 2)
				fputs(k ? "freed code " : "compiled ", out);
			escaped(out, v->valuestring);
		}
	}
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(events, "guards")) {
		fputs("\nguard ", out);
		escaped(out, text(v, "guard"));
		fprintf(out, " exits per iteration %g -&gt; %g", number(v, "exits_per_iteration_before"),
			number(v, "exits_per_iteration_after"));
	}
}

static void chart(FILE *out, const cJSON *e)
{
	const cJSON *series = cJSON_GetObjectItemCaseSensitive(e, "series"), *v, *seg, *cp;
	const cJSON *segs = cJSON_GetObjectItemCaseSensitive(e, "segments");
	int n = cJSON_GetArraySize(series), i = 0;
	double top = 1, bin = number(e, "bin") > 1 ? number(e, "bin") : 1;
	double first = number(cJSON_GetArrayItem(segs, 0), "from"), dx;

	cJSON_ArrayForEach(v, series) {
		if (cJSON_IsNumber(v) && v->valuedouble > top)
			top = v->valuedouble;
	}
	dx = WIDTH / (n > 1 ? n - 1 : 1);
	fprintf(out, "<svg width=\"%.0f\" height=\"%.0f\" viewBox=\"-5 -5 %.0f %.0f\">\n"
		"<polyline class=\"series\" points=\"", WIDTH + 10, HEIGHT + 10, WIDTH + 10,
		HEIGHT + 10);
	cJSON_ArrayForEach(v, series) {
		fprintf(out, "%s%.1f,%.1f", i ? " " : "", i * dx,
			HEIGHT - (cJSON_IsNumber(v) ? v->valuedouble : 0) / top * HEIGHT);
		i++;
	}
	fputs("\"/>\n", out);
	cJSON_ArrayForEach(seg, segs) {
		double y = HEIGHT - number(seg, "mean") / top * HEIGHT;

		fprintf(out, "<line class=\"mean\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
			(number(seg, "from") - first) / bin * dx,
			(number(seg, "to") - first) / bin * dx, y, y);
	}
	cJSON_ArrayForEach(cp, cJSON_GetObjectItemCaseSensitive(e, "changepoints")) {
		double x = (number(cp, "iteration") - first) / bin * dx;

		fprintf(out, "<line class=\"cp\" x1=\"%.1f\" x2=\"%.1f\" y1=\"0\" y2=\"%.0f\">"
			"<title>", x, x, HEIGHT);
		tooltip(out, cp);
		fputs("</title></line>\n", out);
	}
	fputs("</svg>\n", out);
}

void jf_warmup_html(FILE *out, const cJSON *benchmarks, const char *metric)
{
	const cJSON *b, *e;

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>jitflow warm-up"
	      "</title>\n<style>body{font-family:sans-serif;margin:1em 2em}"
	      "svg{background:#fafafa;border:1px solid #ddd}"
	      ".series{fill:none;stroke:#36c;stroke-width:1}"
	      ".mean{stroke:#2a2;stroke-width:2}"
	      ".cp{stroke:#d33;stroke-width:3;stroke-dasharray:4 3}"
	      "</style></head><body>\n<h1>Warm-up across executions</h1>\n", out);
	fprintf(out, "<p>Cost per iteration: %s. Green: the segments' means; red dashed: "
		"changepoints (hover for the events there).</p>\n", metric);
	cJSON_ArrayForEach(b, benchmarks) {
		fputs("<h2>", out);
		escaped(out, text(b, "name"));
		fputs(": ", out);
		escaped(out, text(b, "verdict"));
		fputs("</h2>\n", out);
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(b, "executions")) {
			fputs("<h3>", out);
			escaped(out, text(e, "name"));
			fprintf(out, ": %s, %.0f iterations</h3>\n", text(e, "class"),
				number(e, "iterations"));
			chart(out, e);
		}
	}
	fputs("</body></html>\n", out);
}
