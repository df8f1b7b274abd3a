/* The VM phases of a LuaJIT recording against LuaJIT's own events and a -joff program's
 * semantics (luajit_phases_check.h). */
#include "luajit_phases_check.h"
#include "json_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long jf_test_occurrences(const char *text, const char *word)
{
	long n = 0;

	for (text = strstr(text, word); text; text = strstr(text + 1, word))
		n++;
	return n;
}

long jf_test_luajit_trace_events(const char *texit_path, const char *what)
{
	char *text = jf_test_read_file(texit_path, NULL), *line, *save = NULL, word[32];
	long n = 0, c;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "event %31s %ld", word, &c) == 2 && (!what || !strcmp(word, what)))
			n += c;
	}
	free(text);
	return n;
}

void jf_test_luajit_tracing_matches(const char *dump, const cJSON *report,
				    const char *texit_path, const char *name)
{
	const cJSON *phases = cJSON_GetObjectItemCaseSensitive(report, "phases"), *t;
	const cJSON *total = cJSON_GetObjectItemCaseSensitive(phases, "total");
	double spans = jf_test_num(cJSON_GetObjectItemCaseSensitive(total, "spans"), "tracing");
	double exit_handling = jf_test_num(cJSON_GetObjectItemCaseSensitive(total,
						"instructions"), "exit handling");
	long starts = jf_test_luajit_trace_events(texit_path, "start");
	long ends = jf_test_luajit_trace_events(texit_path, "stop") +
		    jf_test_luajit_trace_events(texit_path, "abort");
	long begins = jf_test_occurrences(dump, "kind=\"phase-begin\" arg=1\n");
	long closes = jf_test_occurrences(dump, "kind=\"phase-end\" arg=1\n");

	if (begins != starts || closes != ends || starts == 0)
		fail_msg("%s: %ld tracing phases opened and %ld closed for LuaJIT's %ld trace starts "
			 "and %ld stops and aborts", name, begins, closes, starts, ends);
	if (jf_test_occurrences(dump, "kind=\"phase-") != begins + closes)
		fail_msg("%s: phase events other than tracing", name);
	if (spans != (double)starts || exit_handling <= 0)
		fail_msg("%s: %.0f tracing spans in the report for %ld trace starts, %.0f "
			 "instructions of exit handling", name, spans, starts, exit_handling);
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(report, "traces")) {
		if (jf_test_num(cJSON_GetObjectItemCaseSensitive(t, "tracing"), "instructions") <= 0)
			fail_msg("%s: trace %.0f compiled without tracing instructions", name,
				 jf_test_num(t, "id"));
	}
	printf("%s: %ld tracing phases for %ld trace starts, closed by %ld stops and aborts\n",
	       name, begins, starts, closes);
}

/* The zone file holds the interpreter's range and no phase event (nothing is traced). */
static void no_phase_events(const char *dir)
{
	char cmd[4096], *out;

	snprintf(cmd, sizeof(cmd), "'%s' zone dump '%s'/jit-*.dump", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	if (jf_test_occurrences(out, "kind=\"phase-") ||
	    !jf_test_occurrences(out, "kind=\"eval-loop\""))
		fail_msg("-joff: %ld phase events, %ld interpreter ranges",
			 jf_test_occurrences(out, "kind=\"phase-"),
			 jf_test_occurrences(out, "kind=\"eval-loop\""));
	free(out);
}

/* One trip's cost c from the runs before the last (which goes on to the program's end):
 * each costs the one before plus 1000 trips (the nearest whole number; the emitter's
 * iteration mark moves a few instructions between runs). */
static double trip_cost(const cJSON *report, long runs)
{
	const cJSON *it;
	double prev = -1, c = 0;
	long n = 0;

	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(report, "iterations")) {
		double insns = jf_test_num(it, "instructions"), step;

		if (++n == runs)
			break;
		if (prev >= 0) {
			step = (insns - prev) / 1000.0;
			if (c == 0)
				c = (double)(long)(step + 0.5);
			if (step < c - 0.1 || step > c + 0.1)
				fail_msg("run %ld costs %.0f instructions more than the one before, "
					 "not 1000 trips of %.0f", n, insns - prev, c);
		}
		prev = insns;
	}
	assert_int_equal(n, runs);
	return c;
}

void jf_test_luajit_interpreter_only(const char *dir, long runs, long trips)
{
	char cmd[4096];
	cJSON *report;
	const cJSON *total, *insns, *by_class;
	double interp, c, loop;

	no_phase_events(dir);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	c = trip_cost(report, runs);
	total = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(report, "split"),
						 "total");
	insns = cJSON_GetObjectItemCaseSensitive(total, "instructions");
	interp = jf_test_num(insns, "interpreter");
	loop = c * (double)trips;
	by_class = cJSON_GetObjectItemCaseSensitive(total, "instructions_by_class");
	/* (the report leaves out a phase's class that has no instructions) */
	if (cJSON_GetObjectItemCaseSensitive(by_class, "tracing") ||
	    cJSON_GetObjectItemCaseSensitive(by_class, "exit handling") ||
	    cJSON_GetObjectItemCaseSensitive(report, "phases"))
		fail_msg("-joff: instructions tracing or in exit handling, or phases");
	if (jf_test_num(insns, "jitted") != 0 || jf_test_num(insns, "unknown") != 0 ||
	    jf_test_num(insns, "native") <= 0)
		fail_msg("-joff: %.0f jitted, %.0f unknown, %.0f native instructions",
			 jf_test_num(insns, "jitted"), jf_test_num(insns, "unknown"),
			 jf_test_num(insns, "native"));
	if (c < 2 || interp < loop || interp > loop * 1.1)
		fail_msg("-joff: %.0f interpreter instructions for %ld trips of %.0f", interp,
			 trips, c);
	assert_int_equal(jf_test_num(cJSON_GetObjectItemCaseSensitive(report, "luajit"),
				     "trace_starts"), 0);
	printf("interpreter only: %ld trips of %.0f instructions = %.0f of the interpreter's "
	       "%.0f\n", trips, c, loop, interp);
	cJSON_Delete(report);
}
