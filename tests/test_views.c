/* The views of `jitflow report` and `jitflow timeline`, checked against the JSON report of
 * the same input, which they must agree with exactly:
 *   --folded   the counts of each thread and of each code class sum to the JSON report's
 *              instructions of that thread and of that class, and all to its total;
 *   --svg      well-formed XML (Python's parser), self-contained.
 * Inputs: the minivm recording in traces/ (zone records, pc maps, timing) and a CoreSight
 * snapshot from ../shared (no zone records, no timing, several threads). */
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct input {
	const char *name;
	char args[1024];
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_minivm),
		cmocka_unit_test(test_folded_coresight),
		cmocka_unit_test(test_svg),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
