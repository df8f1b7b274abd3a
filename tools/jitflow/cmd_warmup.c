/* jitflow warmup and merge: warm-up across process executions, Krun-style.
 *
 * Each input is one execution's `jitflow report --json` (or a folder holding it as
 * report.json), or a warm-up report of earlier executions. Per execution: the series of
 * one cost per iteration the runtime marked, its changepoints (PELT, jitflow/changepoints.h),
 * the class, and at each changepoint how the jitted share moved between the segments; then
 * the verdict across executions.
 *
 * Executions are independent, and the report lists them sorted by name (the input's
 * folder), with the verdict a function of their classes alone: a warm-up report of warm-up
 * reports (`jitflow merge`) is therefore byte for byte the report of all their executions,
 * in any grouping and order, which lets batch engines run the matrix in pieces. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_json.h"
#include "commands.h"
#include "jitflow/changepoints.h"
#include "jitflow/error.h"
#include "warmup_events.h"
#include "warmup_execution.h"
#include "warmup_html.h"

struct warmup_options {
	const char *metric;            /* "instructions" or "time" */
	struct jf_changepoint_options cp;
	double tolerance;
	int json;
	const char *html;              /* --html FILE, or NULL */
};

static void usage(FILE *out, const char *cmd)
{
	fprintf(out,
		"usage: jitflow %s [--json] [--html FILE] [--metric=instructions|time]\n"
		"       [--penalty P] [--tolerance X] INPUT...\n\n"
		"Warm-up across process executions (Barrett et al., \"Virtual Machine Warmup\n"
		"Blows Hot and Cold\"). INPUT is one execution's `jitflow report --json`, a\n"
		"folder holding it as report.json, or a warm-up report (--json) of earlier\n"
		"executions. Per execution: the cost of each iteration the runtime marked\n"
		"but the last, which runs on to the end of the recording (--metric, default\n"
		"instructions; time is the trace's clock), changepoints in\n"
		"its mean found by PELT with penalty P (default 15 log n), the class (flat,\n"
		"warmup, slowdown, no steady state; segments within X of the last one, default\n"
		"0.05, count as equal to it) and at each changepoint the jitted share before\n"
		"and after and, when the execution's folder holds its `jitflow timeline` as\n"
		"timeline.json, the code compiled and freed and the bridges attached in the\n"
		"iterations either side of it and the guards whose exits per iteration\n"
		"changed between the segments; then per benchmark (the folder holding the executions' folders, as\n"
		"DIR of `jitflow record --executions N -o DIR`) the verdict across its\n"
		"executions (consistent, good inconsistent, bad inconsistent). Executions are\n"
		"listed by name, so `jitflow merge` of warm-up reports equals the report over\n"
		"all their executions. --html FILE also writes a page with each execution's\n"
		"series, the segments' means and the changepoints marked (the events on\n"
		"hover). docs/warmup.md states the method.\n",
		cmd);
}

static double number(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

/* The class an entry names; -1 for none. */
static int class_of(const cJSON *e)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "class");
	int c;

	for (c = JF_EXEC_FLAT; c <= JF_EXEC_NO_STEADY_STATE; c++) {
		if (cJSON_IsString(v) && !strcmp(v->valuestring, jf_exec_class_name(c)))
			return c;
	}
	return -1;
}

/* An execution of a warm-up report read back: what the verdict and the listing need. */
static int valid_execution(const cJSON *e)
{
	return cJSON_IsObject(e) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(e, "name")) &&
	       cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "iterations")) &&
	       class_of(e) >= 0;
}

/* The name of an execution: the folder of its report. */
static char *execution_name(const char *path)
{
	size_t len = strlen(path);
	struct stat st;

	while (len > 1 && path[len - 1] == '/')
		len--;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return strndup(path, len);
	if (len > 12 && !strncmp(path + len - 12, "/report.json", 12))
		return strndup(path, len - 12);
	return strndup(path, len);
}

/* The benchmark of an execution: the folder holding its own (DIR of DIR/exec-N, as
 * `jitflow record --executions` writes them). */
static char *benchmark_of(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash ? strndup(name, (size_t)(slash - name)) : strdup(".");
}

/* Adds the executions of one input to `all`. */
static int add_input(cJSON *all, const char *arg, const struct warmup_options *o,
		     struct jf_error *err)
{
	char path[4096], *name = execution_name(arg);
	struct stat st;
	cJSON *doc, *benchmarks, *b, *execs, *rows, *e;
	int n_benchmark = 0;

	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(path, sizeof(path), "%s/report.json", arg);
	else
		snprintf(path, sizeof(path), "%s", arg);
	doc = jf_cli_load_json(path, "a jitflow report --json or a warm-up report", err);
	if (!doc) {
		free(name);
		return -1;
	}
	benchmarks = cJSON_GetObjectItemCaseSensitive(doc, "warmup_benchmarks");
	rows = cJSON_GetObjectItemCaseSensitive(doc, "iterations");
	if (cJSON_IsArray(benchmarks)) {
		cJSON_ArrayForEach(b, benchmarks) {
			execs = cJSON_GetObjectItemCaseSensitive(b, "executions");
			while (cJSON_IsArray(execs) && (e = cJSON_DetachItemFromArray(execs, 0))) {
				cJSON_AddItemToArray(all, e);
				if (!valid_execution(e)) {
					jf_fail(err, "%s: benchmark %d: an execution without a \"name\" "
						"string, an \"iterations\" number and a known \"class\"",
						path, n_benchmark);
					cJSON_Delete(doc);
					free(name);
					return -1;
				}
			}
			n_benchmark++;
		}
	} else if (cJSON_IsArray(rows)) {
		e = jf_warmup_execution(name, rows, o->metric, &o->cp, o->tolerance, err);
		snprintf(path, sizeof(path), "%s/timeline.json", name);
		if (e && stat(path, &st) == 0 && jf_warmup_add_events(e, path, err) < 0) {
			cJSON_Delete(e);
			e = NULL;
		}
		if (!e) {
			cJSON_Delete(doc);
			free(name);
			return -1;
		}
		cJSON_AddItemToArray(all, e);
	} else {
		jf_fail(err, "%s: expected a jitflow report --json (an \"iterations\" array) or a "
			"warm-up report (a \"warmup_benchmarks\" array)", path);
		cJSON_Delete(doc);
		free(name);
		return -1;
	}
	cJSON_Delete(doc);
	free(name);
	return 0;
}

static const char *string_of(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static const char *name_of(const cJSON *e)
{
	return string_of(e, "name");
}

static const char *name_of_guard(const cJSON *g)
{
	return string_of(g, "guard");
}

/* By benchmark, then by execution, numbers in names by value (exec-2 before exec-10). */
static int by_name(const void *a, const void *b)
{
	const char *x = name_of(*(cJSON *const *)a), *y = name_of(*(cJSON *const *)b);
	char *bx = benchmark_of(x), *by = benchmark_of(y);
	int c = strverscmp(bx, by);

	free(bx);
	free(by);
	return c ? c : strverscmp(x, y);
}


static void print_names(FILE *out, const cJSON *events, const char *key, const char *prefix)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(events, key)) {
		if (cJSON_IsString(v))
			fprintf(out, "; %s%s", prefix, v->valuestring);
	}
}

/* One line per changepoint: the means and jitted shares either side, then its events. */
static void print_changepoint(FILE *out, const cJSON *cp)
{
	const cJSON *events = cJSON_GetObjectItemCaseSensitive(cp, "events"), *g;

	fprintf(out, "    at iteration %.0f: %.0f -> %.0f, jitted %.1f%% -> %.1f%%",
		number(cp, "iteration"), number(cp, "mean_before"), number(cp, "mean_after"),
		100 * number(cp, "jitted_share_before"), 100 * number(cp, "jitted_share_after"));
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(cp, "phases_moved")) {
		if (strcmp(string_of(g, "phase"), "jitted")) /* (the jitted share is above) */
			fprintf(out, ", %s %.1f%% -> %.1f%%", string_of(g, "phase"),
				100 * number(g, "share_before"), 100 * number(g, "share_after"));
	}
	if (!events) {
		fprintf(out, " (no timeline.json: events unknown)\n");
		return;
	}
	print_names(out, events, "compiled", "compiled ");
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(events, "freed")))
		fprintf(out, "; freed %d code regions",
			cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(events, "freed")));
	print_names(out, events, "bridges_attached", "");
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(events, "guards"))
		fprintf(out, "; guard %s exits per iteration %g -> %g", name_of_guard(g),
			number(g, "exits_per_iteration_before"),
			number(g, "exits_per_iteration_after"));
	fputc('\n', out);
}

static void print_text(FILE *out, const cJSON *benchmarks, const char *metric)
{
	const cJSON *b, *e, *cp;

	cJSON_ArrayForEach(b, benchmarks) {
		fprintf(out, "benchmark %s: %s\n", name_of(b), string_of(b, "verdict"));
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(b, "executions")) {
			fprintf(out, "  %s: %s, %.0f iterations, %d changepoints (mean %s per "
				"iteration)\n", name_of(e),
				string_of(e, "class"), number(e, "iterations"),
				cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(e, "changepoints")),
				metric);
			cJSON_ArrayForEach(cp, cJSON_GetObjectItemCaseSensitive(e, "changepoints"))
				print_changepoint(out, cp);
		}
	}
}

/* The sorted executions, grouped by benchmark, each group with its verdict. */
static cJSON *group(cJSON **items, size_t n)
{
	cJSON *benchmarks = cJSON_CreateArray();
	enum jf_exec_class *classes = calloc(n ? n : 1, sizeof(*classes));
	size_t i = 0, j;

	while (classes && i < n) {
		char *name = benchmark_of(name_of(items[i]));
		cJSON *b = cJSON_CreateObject(), *execs;

		for (j = i; j < n; j++) {
			char *other = benchmark_of(name_of(items[j]));
			int same = !strcmp(name, other);

			free(other);
			if (!same)
				break;
			classes[j - i] = (enum jf_exec_class)class_of(items[j]);
		}
		cJSON_AddStringToObject(b, "name", name);
		cJSON_AddStringToObject(b, "verdict", jf_exec_verdict(classes, j - i));
		execs = cJSON_AddArrayToObject(b, "executions");
		for (; i < j; i++)
			cJSON_AddItemToArray(execs, items[i]);
		cJSON_AddItemToArray(benchmarks, b);
		free(name);
	}
	free(classes);
	return benchmarks;
}

static int warmup_main(const char *cmd, int json, int argc, char **argv)
{
	struct warmup_options o = { .metric = "instructions", .tolerance = 0.05, .json = json };
	struct jf_error err = { { 0 } };
	cJSON *all = cJSON_CreateArray(), *report, *benchmarks, **items;
	size_t n, i;
	int a, inputs = 0;
	char *text;

	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			usage(stdout, cmd);
			cJSON_Delete(all);
			return JF_EXIT_OK;
		} else if (!strcmp(argv[a], "--json")) {
			o.json = 1;
		} else if (!strncmp(argv[a], "--metric=", 9) &&
			   (!strcmp(argv[a] + 9, "instructions") || !strcmp(argv[a] + 9, "time"))) {
			o.metric = argv[a] + 9;
		} else if (!strcmp(argv[a], "--html") && a + 1 < argc) {
			o.html = argv[++a];
		} else if (!strcmp(argv[a], "--penalty") && a + 1 < argc) {
			o.cp.penalty = atof(argv[++a]);
		} else if (!strcmp(argv[a], "--tolerance") && a + 1 < argc) {
			o.tolerance = atof(argv[++a]);
		} else if (argv[a][0] == '-') {
			usage(stderr, cmd);
			cJSON_Delete(all);
			return JF_EXIT_USAGE;
		} else {
			if (add_input(all, argv[a], &o, &err) < 0) {
				fprintf(stderr, "jitflow %s: %s\n", cmd, err.msg);
				cJSON_Delete(all);
				return JF_EXIT_FAIL;
			}
			inputs++;
		}
	}
	if (!inputs) {
		usage(stderr, cmd);
		cJSON_Delete(all);
		return JF_EXIT_USAGE;
	}
	n = (size_t)cJSON_GetArraySize(all);
	items = calloc(n ? n : 1, sizeof(*items));
	for (i = 0; items && i < n; i++)
		items[i] = cJSON_DetachItemFromArray(all, 0);
	cJSON_Delete(all);
	if (!items) {
		fprintf(stderr, "jitflow %s: out of memory\n", cmd);
		return JF_EXIT_FAIL;
	}
	qsort(items, n, sizeof(*items), by_name);
	benchmarks = group(items, n);
	free(items);
	if (o.html) {
		FILE *f = fopen(o.html, "w");

		if (f)
			jf_warmup_html(f, benchmarks, o.metric);
		if (!f || fclose(f) != 0) {
			fprintf(stderr, "jitflow %s: cannot write %s: %m\n", cmd, o.html);
			cJSON_Delete(benchmarks);
			return JF_EXIT_FAIL;
		}
	}
	if (o.json) {
		report = cJSON_CreateObject();
		cJSON_AddItemToObject(report, "warmup_benchmarks", benchmarks);
		text = cJSON_PrintUnformatted(report);
		printf("%s\n", text);
		free(text);
		cJSON_Delete(report);
	} else {
		print_text(stdout, benchmarks, o.metric);
		cJSON_Delete(benchmarks);
	}
	return JF_EXIT_OK;
}

int jf_cmd_warmup(int argc, char **argv)
{
	return warmup_main("warmup", 0, argc, argv);
}

int jf_cmd_merge(int argc, char **argv)
{
	return warmup_main("merge", 1, argc, argv);
}
