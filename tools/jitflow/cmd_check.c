/* jitflow check: compare a report with a baseline and fail on regressions, the building
 * block of trace-based regression tests for JIT teams.
 *
 * A regression is: a guard failing more often (failure rate up by more than the
 * tolerance), a trace's share of all instructions down by more than the share tolerance,
 * a trace of the baseline gone, or the jitted share of the run down by more than the share
 * tolerance. Guards and traces are matched by the runtime's ids. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "commands.h"
#include "jitflow/error.h"

struct check {
	double tolerance, share_tolerance;
	int json;
	int regressions, compared_guards, compared_traces;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: jitflow check REPORT.json --baseline BASE.json [--tolerance X]\n"
		"       [--share-tolerance Y] [--json]\n\n"
		"Compare two `jitflow report --json` results of the same program and exit 1 when\n"
		"it regressed: a guard's failure rate rose by more than X (default 0.02, i.e. two\n"
		"percentage points), a trace's share of all instructions, or the jitted share of\n"
		"the run, fell by more than Y (default 0.05), or a trace of the baseline is gone.\n"
		"Exit 0 when nothing regressed, 2 for bad usage or unreadable reports.\n");
}

static cJSON *load(const char *path, struct jf_error *err)
{
	cJSON *doc = jf_cli_load_json(path, "a jitflow report --json", err);

	if (doc && !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "traces"))) {
		jf_fail(err, "%s: not a jitflow report (expected a \"traces\" array)", path);
		cJSON_Delete(doc);
		doc = NULL;
	}
	return doc;
}

static double number(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static const cJSON *find_by_id(const cJSON *array, double id)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, array) {
		if (number(item, "id") == id)
			return item;
	}
	return NULL;
}

static void regression(struct check *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void regression(struct check *c, const char *fmt, ...)
{
	va_list ap;

	c->regressions++;
	if (c->json)
		return;
	printf("REGRESSION: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static double jitted_share(const cJSON *doc)
{
	const cJSON *total = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(doc, "split"), "total");
	const cJSON *insns = cJSON_GetObjectItemCaseSensitive(total, "instructions"), *v;
	double sum = 0;

	cJSON_ArrayForEach(v, insns) {
		if (cJSON_IsNumber(v))
			sum += v->valuedouble;
	}
	return sum > 0 ? number(insns, "jitted") / sum : 0.0;
}

static void compare(struct check *c, const cJSON *now, const cJSON *base)
{
	const cJSON *bt, *traces = cJSON_GetObjectItemCaseSensitive(now, "traces");
	double js_now = jitted_share(now), js_base = jitted_share(base);

	cJSON_ArrayForEach(bt, cJSON_GetObjectItemCaseSensitive(base, "traces")) {
		double id = number(bt, "id");
		const cJSON *t = find_by_id(traces, id), *bg;

		if (!t) {
			regression(c, "trace %.0f of the baseline is gone", id);
			continue;
		}
		c->compared_traces++;
		if (number(t, "share") < number(bt, "share") - c->share_tolerance)
			regression(c, "trace %.0f: share of instructions %.4f, baseline %.4f "
				      "(tolerance %.4f)", id, number(t, "share"), number(bt, "share"),
				   c->share_tolerance);
		cJSON_ArrayForEach(bg, cJSON_GetObjectItemCaseSensitive(bt, "guards")) {
			double gid = number(bg, "id");
			const cJSON *g = find_by_id(cJSON_GetObjectItemCaseSensitive(t, "guards"), gid);

			if (!g)
				continue;
			c->compared_guards++;
			if (number(g, "failure_rate") > number(bg, "failure_rate") + c->tolerance)
				regression(c, "trace %.0f guard %.0f: failure rate %.4f, baseline %.4f "
					      "(tolerance %.4f)", id, gid, number(g, "failure_rate"),
					   number(bg, "failure_rate"), c->tolerance);
		}
	}
	if (js_now < js_base - c->share_tolerance)
		regression(c, "jitted share of instructions %.4f, baseline %.4f (tolerance %.4f)",
			   js_now, js_base, c->share_tolerance);
}

static int parse_double(const char *opt, const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || *out < 0) {
		fprintf(stderr, "jitflow check: %s: expected a non-negative number, got '%s'\n", opt, s);
		return -1;
	}
	return 0;
}

int jf_cmd_check(int argc, char **argv)
{
	struct check c = { .tolerance = 0.02, .share_tolerance = 0.05 };
	const char *report = NULL, *baseline = NULL;
	struct jf_error err = { "" };
	cJSON *now = NULL, *base = NULL;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return JF_EXIT_OK;
		} else if (!strcmp(a, "--json")) {
			c.json = 1;
		} else if ((!strcmp(a, "--baseline") || !strcmp(a, "--tolerance") ||
			    !strcmp(a, "--share-tolerance")) && i + 1 < argc) {
			if (!strcmp(a, "--baseline"))
				baseline = argv[++i];
			else if (parse_double(a, argv[++i], !strcmp(a, "--tolerance") ?
					      &c.tolerance : &c.share_tolerance) < 0)
				return JF_EXIT_USAGE;
		} else if (a[0] != '-' && !report) {
			report = a;
		} else {
			fprintf(stderr, "jitflow check: unknown or incomplete option '%s' (see --help)\n", a);
			return JF_EXIT_USAGE;
		}
	}
	if (!report || !baseline) {
		fprintf(stderr, "jitflow check: need REPORT.json and --baseline BASE.json (see --help)\n");
		return JF_EXIT_USAGE;
	}
	now = load(report, &err);
	base = now ? load(baseline, &err) : NULL;
	if (!now || !base) {
		fprintf(stderr, "jitflow check: %s\n", err.msg);
		cJSON_Delete(now);
		return JF_EXIT_USAGE;
	}
	compare(&c, now, base);
	if (c.json)
		printf("{\"regressions\":%d,\"traces_compared\":%d,\"guards_compared\":%d}\n",
		       c.regressions, c.compared_traces, c.compared_guards);
	else if (!c.regressions)
		printf("no regressions (%d traces and %d guards compared)\n", c.compared_traces,
		       c.compared_guards);
	cJSON_Delete(now);
	cJSON_Delete(base);
	return c.regressions ? JF_EXIT_FAIL : JF_EXIT_OK;
}
