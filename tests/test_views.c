/* The views of `jitflow report` and `jitflow timeline`, checked against the JSON report of
 * the same input, which they must agree with exactly:
 *   --folded   the counts of each thread and of each code class sum to the JSON report's
 *              instructions of that thread and of that class, and all to its total;
 *   --svg      well-formed XML (Python's parser), self-contained;
 *   --html     well-formed XML, self-contained, and every number of the report's summary,
 *              split, traces and guards is in a cell of the page;
 *   timeline   read by a reader of this test's own against the trace-event format (JSON
 *              object format: traceEvents, ph X/i/C/M with their fields, ts and dur in
 *              microseconds): per split class, the spans' durations add up to the JSON
 *              report's time split (its instruction split when the trace has no timing),
 *              spans of a thread never overlap, and the guard-exit instants count every
 *              guard exit.
 * Inputs: the minivm recording in traces/ (zone records, pc maps, timing), the LuaJIT one
 * (its own words: exits, side traces) and a CoreSight snapshot from ../shared (no zone
 * records, no timing, several threads). Every view of the LuaJIT recording speaks LuaJIT's
 * words (as its -jv/-jdump and the design notes name things), minivm's the generic ones. */
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct input {
	const char *name;
	char args[1100];
};

static cJSON *json_report(const struct input *in)
{
	char cmd[4096], *out;
	cJSON *doc;

	snprintf(cmd, sizeof(cmd), "'%s' report %s --json", jf_test_cli(), in->args);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	doc = cJSON_Parse(out);
	free(out);
	if (!doc)
		fail_msg("%s: the JSON report does not parse", in->name);
	return doc;
}

static uint64_t num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v))
		fail_msg("no number \"%s\"", key);
	return (uint64_t)v->valuedouble;
}

/* Sums of the folded lines whose frame `depth` equals `frame` (NULL: all lines). */
static uint64_t folded_sum(const char *folded, int depth, const char *frame)
{
	const char *line = folded;
	uint64_t sum = 0;

	while (*line) {
		const char *end = strchr(line, '\n'), *space, *p;
		char f[256];
		int d;
		size_t n;

		if (!end)
			fail_msg("folded output does not end in a newline");
		for (space = end; space > line && space[-1] != ' '; space--)
			;
		if (space == line)
			fail_msg("folded line without a count: %.*s", (int)(end - line), line);
		/* frame number `depth` of the line */
		for (p = line, d = 0; d < depth && p < space; p++)
			if (*p == ';')
				d++;
		n = strcspn(p, ";");
		if (p + n > space - 1)
			n = (size_t)(space - 1 - p);
		snprintf(f, sizeof(f), "%.*s", (int)n, p);
		if (!frame || !strcmp(f, frame))
			sum += strtoull(space, NULL, 10);
		line = end + 1;
	}
	return sum;
}

static void check_folded(const struct input *in)
{
	cJSON *report = json_report(in);
	const cJSON *total = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(report, "split"), "total");
	const cJSON *threads = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(report, "split"), "threads");
	const cJSON *c, *t;
	char cmd[4096], *folded;
	uint64_t insns = num(cJSON_GetObjectItemCaseSensitive(report, "summary"), "instructions");

	snprintf(cmd, sizeof(cmd), "'%s' report %s --folded", jf_test_cli(), in->args);
	assert_int_equal(jf_test_run(cmd, &folded), 0);
	assert_true(insns > 0);
	if (folded_sum(folded, 0, NULL) != insns)
		fail_msg("%s: folded stacks sum to %llu, the report counts %llu instructions",
			 in->name, (unsigned long long)folded_sum(folded, 0, NULL),
			 (unsigned long long)insns);
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(total, "instructions_by_class")) {
		uint64_t got = folded_sum(folded, 1, c->string);

		if (got != (uint64_t)c->valuedouble)
			fail_msg("%s: class %s: folded %llu, report %llu", in->name, c->string,
				 (unsigned long long)got, (unsigned long long)c->valuedouble);
	}
	cJSON_ArrayForEach(t, threads) {
		char frame[64];
		int tid = (int)cJSON_GetObjectItemCaseSensitive(t, "tid")->valuedouble;
		uint64_t want = 0;

		cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(t, "instructions"))
			want += (uint64_t)c->valuedouble;
		if (tid < 0)
			snprintf(frame, sizeof(frame), "trace source %d", -1 - tid);
		else
			snprintf(frame, sizeof(frame), "thread %d", tid);
		if (folded_sum(folded, 0, frame) != want)
			fail_msg("%s: %s: folded %llu, report %llu", in->name, frame,
				 (unsigned long long)folded_sum(folded, 0, frame),
				 (unsigned long long)want);
	}
	free(folded);
	cJSON_Delete(report);
}

/* No reference that would make a browser fetch anything. */
static void assert_self_contained(const char *name, const char *text)
{
	const char *p = text;

	while ((p = strstr(p, "http"))) {
		/* The SVG namespace is a name, never fetched. */
		if (strncmp(p, "http://www.w3.org/2000/svg\"", 27))
			fail_msg("%s: an external reference: %.60s", name, p);
		p++;
	}
	if (strstr(text, " src=") || strstr(text, "<link") || strstr(text, "@import") ||
	    strstr(text, "url("))
		fail_msg("%s: loads something from outside the file", name);
}

static void assert_well_formed_xml(const char *path)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, xml.etree.ElementTree as E; "
		 "E.parse(sys.argv[1])' '%s'", path);
	if (jf_test_run(cmd, NULL) != 0)
		fail_msg("%s is not well-formed XML", path);
}

static void check_svg(const struct input *in)
{
	char cmd[4096], path[1024], *svg;

	snprintf(path, sizeof(path), "%s/flame.svg", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "'%s' report %s --svg '%s'", jf_test_cli(), in->args, path);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	assert_well_formed_xml(path);
	svg = jf_test_read_file(path, NULL);
	assert_self_contained(in->name, svg);
	assert_non_null(strstr(svg, "<rect"));
	free(svg);
}

static const cJSON *item(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static int split_index(const char *cat)
{
	static const char *const names[] = { "interpreter", "jitted", "native",
					      "instrumentation", "unknown" };
	int i;

	for (i = 0; i < 5; i++)
		if (!strcmp(cat, names[i]))
			return i;
	fail_msg("span of unknown category '%s'", cat);
	return -1;
}

struct span_at { double ts, dur; int tid; };

static int by_thread_time(const void *x, const void *y)
{
	const struct span_at *p = x, *q = y;

	if (p->tid != q->tid)
		return p->tid < q->tid ? -1 : 1;
	return p->ts < q->ts ? -1 : p->ts > q->ts;
}

static void check_timeline(const struct input *in)
{
	cJSON *report = json_report(in), *tl;
	const cJSON *e, *t, *g, *events;
	const char *unit = item(report, "time_unit")->valuestring;
	int timed = strcmp(unit, "none") != 0;
	char cmd[4096], path[1024], *text;
	uint64_t spans[5] = { 0 }, exits = 0, want_exits = 0;
	struct span_at *at;
	size_t nat = 0, i;
	static const char *const split[] = { "interpreter", "jitted", "native",
					      "instrumentation", "unknown" };

	snprintf(path, sizeof(path), "%s/timeline.json", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "'%s' timeline %s -o '%s'", jf_test_cli(), in->args, path);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	text = jf_test_read_file(path, NULL);
	tl = cJSON_Parse(text);
	free(text);
	if (!tl || !cJSON_IsObject(tl))
		fail_msg("%s: the timeline is not a JSON object", in->name);
	events = item(tl, "traceEvents");
	assert_true(cJSON_IsArray(events));
	assert_true(cJSON_IsString(item(tl, "displayTimeUnit")));
	assert_string_equal(item(item(tl, "otherData"), "clock")->valuestring,
			    timed ? unit : "instructions");
	at = calloc((size_t)cJSON_GetArraySize(events) + 1, sizeof(*at));
	assert_non_null(at);
	cJSON_ArrayForEach(e, events) {
		const cJSON *ph = item(e, "ph");

		assert_true(cJSON_IsString(ph) && strlen(ph->valuestring) == 1);
		assert_true(cJSON_IsNumber(item(e, "pid")) && cJSON_IsNumber(item(e, "tid")));
		assert_true(cJSON_IsString(item(e, "name")));
		switch (ph->valuestring[0]) {
		case 'X':
			assert_true(cJSON_IsNumber(item(e, "ts")) && cJSON_IsNumber(item(e, "dur")));
			assert_true(item(e, "ts")->valuedouble >= 0 && item(e, "dur")->valuedouble > 0);
			/* microseconds with three decimals: units of the clock, exactly */
			spans[split_index(item(e, "cat")->valuestring)] +=
				(uint64_t)(item(e, "dur")->valuedouble * 1000 + 0.5);
			at[nat].ts = item(e, "ts")->valuedouble;
			at[nat].dur = item(e, "dur")->valuedouble;
			at[nat].tid = (int)item(e, "tid")->valuedouble;
			nat++;
			break;
		case 'i':
			assert_true(cJSON_IsNumber(item(e, "ts")));
			assert_true(cJSON_IsString(item(e, "s")) &&
				    strchr("gpt", item(e, "s")->valuestring[0]));
			if (!strcmp(item(e, "cat")->valuestring, "guard"))
				exits += (uint64_t)item(item(e, "args"), "exits")->valuedouble;
			break;
		case 'C':
			assert_true(cJSON_IsNumber(item(e, "ts")));
			cJSON_ArrayForEach(t, item(e, "args"))
				assert_true(cJSON_IsNumber(t));
			break;
		case 'M':
			assert_true(!strcmp(item(e, "name")->valuestring, "process_name") ||
				    !strcmp(item(e, "name")->valuestring, "thread_name"));
			assert_true(cJSON_IsString(item(item(e, "args"), "name")));
			break;
		default:
			fail_msg("%s: event of phase '%s'", in->name, ph->valuestring);
		}
	}
	for (i = 0; i < 5; i++) {
		const cJSON *total = item(item(report, "split"), "total");
		uint64_t want = (uint64_t)item(item(total, timed ? "time" : "instructions"),
					       split[i])->valuedouble;

		if (spans[i] != want)
			fail_msg("%s: %s spans last %llu, the report's split says %llu", in->name,
				 split[i], (unsigned long long)spans[i], (unsigned long long)want);
	}
	/* As viewers compute it (doubles): a span ending a hair after the next begins would
	 * be drawn as that span's parent. */
	qsort(at, nat, sizeof(*at), by_thread_time);
	for (i = 1; i < nat; i++)
		if (at[i].tid == at[i - 1].tid && at[i - 1].ts + at[i - 1].dur > at[i].ts)
			fail_msg("%s: spans overlap on thread %d at %f", in->name, at[i].tid, at[i].ts);
	cJSON_ArrayForEach(t, item(report, "traces"))
		cJSON_ArrayForEach(g, item(t, "guards"))
			want_exits += num(g, "exits");
	assert_int_equal(exits, want_exits);
	free(at);
	cJSON_Delete(tl);
	cJSON_Delete(report);
}

static void assert_cell(const char *name, const char *html, const char *what, uint64_t v)
{
	char cell[64];

	snprintf(cell, sizeof(cell), ">%llu<", (unsigned long long)v);
	if (!strstr(html, cell))
		fail_msg("%s: the HTML report lacks %s = %llu", name, what, (unsigned long long)v);
}

/* The colour the split key gives a class ("" when the key lacks it). */
static void key_colour(const char *html, const char *cls, char *colour, size_t size)
{
	char tail[64];
	const char *p = html, *end;

	snprintf(tail, sizeof(tail), "\"></span>%s<", cls);
	colour[0] = 0;
	while ((end = strstr(p, tail))) {
		const char *start = end;

		while (start > html && start[-1] != ':')
			start--;
		if ((size_t)(end - start) < size) {
			memcpy(colour, start, (size_t)(end - start));
			colour[end - start] = 0;
			return;
		}
		p = end + 1;
	}
}

/* Each class of the split has a colour of its own in the key, so a chart tells them
 * apart. */
static void assert_key_colours_distinct(const char *name, const char *html)
{
	static const char *const classes[] = { "interpreter", "jitted", "native",
					       "instrumentation", "unknown" };
	char colour[5][32];
	size_t i, j;

	for (i = 0; i < 5; i++) {
		key_colour(html, classes[i], colour[i], sizeof(colour[i]));
		if (!colour[i][0])
			fail_msg("%s: the split key has no colour for %s", name, classes[i]);
		for (j = 0; j < i; j++)
			if (!strcmp(colour[i], colour[j]))
				fail_msg("%s: %s and %s share the colour %s in the split key", name,
					 classes[j], classes[i], colour[i]);
	}
}

static void check_html(const struct input *in)
{
	cJSON *report = json_report(in);
	const cJSON *t, *g, *c;
	char cmd[4096], path[1024], *html;

	snprintf(path, sizeof(path), "%s/report.html", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "'%s' report %s --html '%s'", jf_test_cli(), in->args, path);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	assert_well_formed_xml(path);
	html = jf_test_read_file(path, NULL);
	assert_self_contained(in->name, html);
	assert_cell(in->name, html, "instructions", num(item(report, "summary"), "instructions"));
	assert_cell(in->name, html, "blocks", num(item(report, "summary"), "blocks"));
	cJSON_ArrayForEach(c, item(item(item(report, "split"), "total"), "instructions"))
		assert_cell(in->name, html, c->string, (uint64_t)c->valuedouble);
	cJSON_ArrayForEach(t, item(report, "traces")) {
		assert_cell(in->name, html, "trace entries", num(t, "entries"));
		assert_cell(in->name, html, "trace iterations", num(t, "iterations"));
		assert_cell(in->name, html, "trace exits", num(t, "exits"));
		assert_cell(in->name, html, "trace instructions", num(t, "instructions"));
		cJSON_ArrayForEach(g, item(t, "guards")) {
			assert_cell(in->name, html, "guard exits", num(g, "exits"));
			assert_cell(in->name, html, "guard passes", num(g, "passes"));
		}
	}
	if (!strstr(html, "Decode:</b> "))
		fail_msg("%s: the decode errors and losses are not said", in->name);
	assert_key_colours_distinct(in->name, html);
	free(html);
	cJSON_Delete(report);
}

static int minivm(struct input *in)
{
	in->name = "minivm-bridge";
	snprintf(in->args, sizeof(in->args), "'%s/traces/minivm-bridge'", jf_test_source_dir());
	return 1;
}

static int coresight(struct input *in)
{
	const char *shared = jf_test_shared_traces();

	if (!shared)
		return 0;
	in->name = "juno_r1_1";
	snprintf(in->args, sizeof(in->args), "--cs-snapshot '%s/coresight/juno_r1_1'", shared);
	return 1;
}

/* The LuaJIT recording, unpacked into the temporary folder. */
static int luajit(struct input *in)
{
	char dir[1024], cmd[4096];

	snprintf(dir, sizeof(dir), "%s/luajit-side-trace", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && tar -xJf "
		 "'%s/traces/luajit-side-trace/recording.tar.xz' -C '%s'", dir,
		 jf_test_source_dir(), dir);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	in->name = "luajit-side-trace";
	snprintf(in->args, sizeof(in->args), "'%s'", dir);
	return 1;
}

static void test_folded_minivm(void **state)
{
	struct input in;

	minivm(&in);
	check_folded(&in);
}

static void test_folded_coresight(void **state)
{
	struct input in;

	if (!coresight(&in))
		skip();
	check_folded(&in);
}

static void test_svg(void **state)
{
	struct input in;

	minivm(&in);
	check_svg(&in);
	if (coresight(&in))
		check_svg(&in);
}

static void test_timeline(void **state)
{
	struct input in;

	minivm(&in);
	check_timeline(&in);
	luajit(&in);
	check_timeline(&in);
	if (coresight(&in))
		check_timeline(&in);
}

static void test_html(void **state)
{
	struct input in;

	minivm(&in);
	check_html(&in);
	luajit(&in);
	check_html(&in);
	if (coresight(&in))
		check_html(&in);
}

static char *output(const struct input *in, const char *args)
{
	char cmd[8192], *out;

	snprintf(cmd, sizeof(cmd), "'%s' %s", jf_test_cli(), args);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	return out;
}

static void assert_says(const struct input *in, const char *what, const char *text,
			const char *words)
{
	if (!strstr(text, words))
		fail_msg("%s: the %s does not say \"%s\"", in->name, what, words);
}

static void test_runtime_words(void **state)
{
	struct input in;
	char args[4096], path[1024], *out;

	(void)state;
	luajit(&in);
	snprintf(args, sizeof(args), "report %s --csv guards", in.args);
	out = output(&in, args);
	assert_says(&in, "guards CSV", out, "trace,exit,exits,passes,unresolved,branch,stub,"
		    "resume_pc,side_trace,exits_before_side_trace,to_interpreter,to_side_trace\n");
	free(out);
	snprintf(path, sizeof(path), "%s/words.html", jf_test_tmpdir());
	snprintf(args, sizeof(args), "report %s --html '%s'", in.args, path);
	free(output(&in, args));
	out = jf_test_read_file(path, NULL);
	assert_says(&in, "HTML report", out, "<h2 id=\"guards\">Exits</h2>");
	assert_says(&in, "HTML report", out, "<h2 id=\"guards-over-time\">Exits over time</h2>");
	assert_says(&in, "HTML report", out, "<td class=\"l\">side</td>");
	assert_says(&in, "HTML report", out, "<b>Not told apart:</b> LuaJIT&#39;s interpreter");
	free(out);
	snprintf(path, sizeof(path), "%s/words.json", jf_test_tmpdir());
	snprintf(args, sizeof(args), "timeline %s -o '%s'", in.args, path);
	free(output(&in, args));
	out = jf_test_read_file(path, NULL);
	assert_says(&in, "timeline", out, "\"name\":\"exit 1/");
	assert_says(&in, "timeline", out, "\"name\":\"side trace ");
	if (strstr(out, "\"name\":\"guard exit"))
		fail_msg("%s: the timeline names LuaJIT's exits guard exits", in.name);
	free(out);

	minivm(&in);
	snprintf(args, sizeof(args), "report %s --csv guards", in.args);
	out = output(&in, args);
	assert_says(&in, "guards CSV", out, "trace,guard,exits,passes,unresolved,branch,stub,"
		    "resume_pc,bridge,exits_before_bridge,to_interpreter,to_bridge\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_minivm),
		cmocka_unit_test(test_folded_coresight),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_timeline),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_runtime_words),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
