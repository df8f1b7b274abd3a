/* Comparing jitflow's report with a runtime's counters (see report_check.h). */
#include "report_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *parse_file(const char *path)
{
	char *text = jf_test_read_file(path, NULL);
	cJSON *doc;

	doc = cJSON_Parse(text);
	free(text);
	if (!doc)
		fail_msg("%s: not JSON", path);
	return doc;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v))
		fail_msg("missing number \"%s\"", key);
	return v->valuedouble;
}

static const cJSON *by_id(const cJSON *array, double id)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, array) {
		if (num(x, "id") == id)
			return x;
	}
	return NULL;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v))
		fail_msg("missing string \"%s\"", key);
	return v->valuestring;
}

static const cJSON *array(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* The other way round: every trace and guard the report holds is one the runtime had, of
 * the same kind, so that a trace made up by the decode, or exits charged to a guard the
 * runtime never compiled, cannot pass. */
static void report_holds_only_the_runtimes(const cJSON *report, const cJSON *truth,
					   const char *name)
{
	const cJSON *mine, *mg;

	cJSON_ArrayForEach(mine, array(report, "traces")) {
		const cJSON *t = by_id(array(truth, "traces"), num(mine, "id"));

		if (!t)
			fail_msg("%s: the report's trace %.0f (%s, %.0f entries) is not one the "
				 "runtime had", name, num(mine, "id"), str(mine, "kind"),
				 num(mine, "entries"));
		if (strcmp(str(mine, "kind"), str(t, "kind")))
			fail_msg("%s: trace %.0f is a %s in the report, a %s in the runtime", name,
				 num(mine, "id"), str(mine, "kind"), str(t, "kind"));
		cJSON_ArrayForEach(mg, array(mine, "guards")) {
			if (!by_id(array(t, "guards"), num(mg, "id")))
				fail_msg("%s: the report's guard %.0f of trace %.0f (%.0f exits) is not "
					 "one the runtime had", name, num(mg, "id"), num(mine, "id"),
					 num(mg, "exits"));
		}
	}
}

/* The VM phases the runtime counted itself ("phases" in its counters: spans per phase)
 * are the report's; and no instruction is in two classes: the classes, phases among them,
 * add up to every instruction. */
static void phases_match(const cJSON *report, const cJSON *truth, const char *name)
{
	const cJSON *told = cJSON_GetObjectItemCaseSensitive(truth, "phases"), *p, *c;
	const cJSON *spans = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(report, "phases"), "total"), "spans");
	double sum = 0;

	if (!told)
		return; /* counters of a minivm that told no phases */
	cJSON_ArrayForEach(p, told) {
		const cJSON *mine = cJSON_GetObjectItemCaseSensitive(spans, p->string);

		if (!mine || mine->valuedouble != p->valuedouble)
			fail_msg("%s: %.0f %s spans in the report, the runtime counted %.0f", name,
				 mine ? mine->valuedouble : -1, p->string, p->valuedouble);
	}
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(report, "split"),
						 "total"), "instructions_by_class"))
		sum += c->valuedouble;
	if (sum != num(cJSON_GetObjectItemCaseSensitive(report, "summary"), "instructions"))
		fail_msg("%s: the classes add up to %.0f instructions, not every one", name, sum);
}

int jf_test_report_matches_counters(const char *dir, const char *counters, const char *name)
{
	char inputs[2048];

	snprintf(inputs, sizeof(inputs), "'%s'", dir);
	return jf_test_report_inputs_match_counters(inputs, counters, name, NULL);
}

int jf_test_report_inputs_match_counters(const char *inputs, const char *counters,
					 const char *name, uint64_t *instructions)
{
	char cmd[4096], *out;
	cJSON *truth, *report, *summary;
	const cJSON *t;
	int traces = 0, guards = 0;
	double reached;

	snprintf(cmd, sizeof(cmd), "'%s' report %s --json", jf_test_cli(), inputs);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	report = cJSON_Parse(out);
	free(out);
	assert_non_null(report);
	truth = parse_file(counters);

	summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
	assert_int_equal(num(summary, "decode_errors"), 0);
	assert_int_equal(num(summary, "lost_bytes"), 0);
	if (instructions)
		*instructions = (uint64_t)num(summary, "instructions");
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(truth, "traces")) {
		const cJSON *mine = by_id(cJSON_GetObjectItemCaseSensitive(report, "traces"),
					  num(t, "id"));
		const cJSON *g;

		if (!mine)
			fail_msg("%s: trace %.0f of the runtime is not in the report", name, num(t, "id"));
		if (num(mine, "entries") != num(t, "entries") ||
		    num(mine, "iterations") != num(t, "iterations"))
			fail_msg("%s: trace %.0f: entries %.0f iterations %.0f, the runtime counted "
				 "%.0f and %.0f", name, num(t, "id"), num(mine, "entries"),
				 num(mine, "iterations"), num(t, "entries"), num(t, "iterations"));
		traces++;
		/* Each entry of a bridge is an exit of its guard that went on to it. */
		if (cJSON_GetObjectItemCaseSensitive(t, "parent_trace")) {
			const cJSON *parent = by_id(cJSON_GetObjectItemCaseSensitive(report, "traces"),
						    num(t, "parent_trace"));
			const cJSON *pg = parent ? by_id(cJSON_GetObjectItemCaseSensitive(parent,
									       "guards"),
							 num(t, "parent_guard")) : NULL;

			if (!pg || num(pg, "to_bridge") != num(t, "entries"))
				fail_msg("%s: bridge %.0f: its guard went to it %.0f times, the runtime "
					 "counted %.0f entries", name, num(t, "id"),
					 pg ? num(pg, "to_bridge") : -1, num(t, "entries"));
		}
		/* A minivm trace is straight-line code from its header (a bridge's: its entry)
		 * with its guards in the order of their ids, so every iteration reaches a guard
		 * unless a guard before it exited: the guard held (passes) as many times as the
		 * iterations left after the exits of the guards up to it. */
		reached = num(t, "iterations");
		cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(t, "guards")) {
			const cJSON *mg = by_id(cJSON_GetObjectItemCaseSensitive(mine, "guards"),
						num(g, "id"));
			double exits = mg ? num(mg, "exits") : 0, passes = mg ? num(mg, "passes") : 0;

			if (exits != num(g, "exits"))
				fail_msg("%s: trace %.0f guard %.0f: %.0f exits, the runtime counted %.0f",
					 name, num(t, "id"), num(g, "id"), exits, num(g, "exits"));
			reached -= num(g, "exits");
			if (passes != reached)
				fail_msg("%s: trace %.0f guard %.0f: %.0f passes, the runtime's iterations "
					 "less the exits up to this guard are %.0f", name, num(t, "id"),
					 num(g, "id"), passes, reached);
			guards++;
		}
	}
	assert_true(traces > 0);
	report_holds_only_the_runtimes(report, truth, name);
	phases_match(report, truth, name);
	printf("%s: %d traces and %d guards (exits and passes) exactly as the runtime counted\n",
	       name, traces, guards);
	cJSON_Delete(truth);
	cJSON_Delete(report);
	return guards;
}
