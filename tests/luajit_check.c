/* Comparing jitflow's report of a LuaJIT recording with LuaJIT's own events (see
 * luajit_check.h). The module numbers traces after the k-th flush as number + k * 2^32. */
#include "luajit_check.h"
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH_STRIDE 4294967296.0
#define MAX_ROWS 512

struct texit_row {
	double trace, exit, count, after;
};

struct trace_row {
	double trace, parent, exit, link;
	char linktype[32];
};

struct loop_row {
	double trace, index;
};

struct luajit_events {
	struct texit_row texits[MAX_ROWS];
	struct trace_row traces[MAX_ROWS];
	struct loop_row loops[MAX_ROWS];
	size_t ntexits, ntraces, nloops;
	double starts, aborts, flushes;
};

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v))
		fail_msg("missing number \"%s\"", key);
	return v->valuedouble;
}

/* A trace id or null (-1). */
static double id_or_null(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsNull(v))
		return -1;
	return num(o, key);
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v))
		fail_msg("missing string \"%s\"", key);
	return v->valuestring;
}

static void read_events(const char *path, struct luajit_events *ev)
{
	char *text = jf_test_read_file(path, NULL), *line, *save = NULL;

	memset(ev, 0, sizeof(*ev));
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long f, t, p, e, c, a;
		char word[32];

		if (sscanf(line, "trace %llu %llu %llu %llu %31s %llu", &f, &t, &p, &e, word, &a) == 6) {
			struct trace_row *r = &ev->traces[ev->ntraces++];

			assert_true(ev->ntraces < MAX_ROWS);
			r->trace = (double)t + (double)f * FLUSH_STRIDE;
			r->parent = p ? (double)p + (double)f * FLUSH_STRIDE : -1;
			r->exit = p ? (double)e : -1;
			r->link = a ? (double)a + (double)f * FLUSH_STRIDE : -1;
			snprintf(r->linktype, sizeof(r->linktype), "%s", word);
		} else if (sscanf(line, "loop %llu %llu %llu", &f, &t, &c) == 3) {
			struct loop_row *r = &ev->loops[ev->nloops++];

			assert_true(ev->nloops < MAX_ROWS);
			r->trace = (double)t + (double)f * FLUSH_STRIDE;
			r->index = (double)c;
		} else if (sscanf(line, "event %31s %llu", word, &c) == 2) {
			if (!strcmp(word, "start"))
				ev->starts = (double)c;
			else if (!strcmp(word, "abort"))
				ev->aborts = (double)c;
			else if (!strcmp(word, "flush"))
				ev->flushes = (double)c;
		} else if (sscanf(line, "%llu %llu %llu %llu %llu", &f, &t, &e, &c, &a) == 5) {
			struct texit_row *r = &ev->texits[ev->ntexits++];

			assert_true(ev->ntexits < MAX_ROWS);
			r->trace = (double)t + (double)f * FLUSH_STRIDE;
			r->exit = (double)e;
			r->count = (double)c;
			r->after = (double)a;
		} else {
			fail_msg("%s: bad line '%s'", path, line);
		}
	}
	free(text);
}

static const cJSON *find_trace(const cJSON *traces, double id)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, traces) {
		if (num(t, "id") == id)
			return t;
	}
	return NULL;
}

static const cJSON *find_exit(const cJSON *traces, double trace, double exit)
{
	const cJSON *t = find_trace(traces, trace), *g;

	if (!t)
		return NULL;
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(t, "guards")) {
		if (num(g, "id") == exit)
			return g;
	}
	return NULL;
}

/* Every trace LuaJIT compiled, as LuaJIT described it. */
static void check_traces(const struct luajit_events *ev, const cJSON *traces, const char *name)
{
	size_t i;

	if ((size_t)cJSON_GetArraySize(traces) != ev->ntraces)
		fail_msg("%s: %d traces in the report, LuaJIT compiled %zu", name,
			 cJSON_GetArraySize(traces), ev->ntraces);
	for (i = 0; i < ev->ntraces; i++) {
		const struct trace_row *w = &ev->traces[i];
		const cJSON *t = find_trace(traces, w->trace);

		if (!t)
			fail_msg("%s: LuaJIT compiled trace %.0f; the report has no such trace", name,
				 w->trace);
		assert_string_equal(str(t, "kind"), w->parent < 0 ? "root" : "side");
		assert_true(id_or_null(t, "parent_trace") == w->parent);
		assert_true(id_or_null(t, "parent_exit") == w->exit);
		assert_string_equal(str(t, "link"), w->linktype);
		if (!strcmp(w->linktype, "root"))
			assert_true(id_or_null(t, "link_trace") == w->link);
	}
}

/* Every exit: to the interpreter as LuaJIT counted, before and after its side trace. */
static int check_exits(const struct luajit_events *ev, const cJSON *traces, const char *name)
{
	const cJSON *t, *g;
	size_t i;
	int sides_entered = 0;

	for (i = 0; i < ev->ntexits; i++) {
		if (!find_exit(traces, ev->texits[i].trace, ev->texits[i].exit))
			fail_msg("%s: LuaJIT counted %.0f exits of trace %.0f exit %.0f; the report "
				 "has no such exit", name, ev->texits[i].count, ev->texits[i].trace,
				 ev->texits[i].exit);
	}
	cJSON_ArrayForEach(t, traces) {
		cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(t, "guards")) {
			double want = 0, after = 0;

			for (i = 0; i < ev->ntexits; i++) {
				if (ev->texits[i].trace == num(t, "id") &&
				    ev->texits[i].exit == num(g, "id")) {
					want = ev->texits[i].count;
					after = ev->texits[i].after;
				}
			}
			if (num(g, "to_interpreter") != want ||
			    num(g, "to_interpreter_after_side_trace") != after)
				fail_msg("%s: trace %.0f exit %.0f: %.0f exits to the interpreter (%.0f "
					 "after its side trace), LuaJIT counted %.0f (%.0f)", name,
					 num(t, "id"), num(g, "id"), num(g, "to_interpreter"),
					 num(g, "to_interpreter_after_side_trace"), want, after);
			assert_true(num(g, "exits") == num(g, "to_interpreter_before_side_trace") +
				    num(g, "to_side_trace") + num(g, "to_interpreter_after_side_trace"));
		}
		if (!strcmp(str(t, "kind"), "side")) {
			g = find_exit(traces, num(t, "parent_trace"), num(t, "parent_exit"));
			assert_non_null(g);
			assert_true(id_or_null(g, "side_trace") == num(t, "id"));
			if (num(t, "entries") != num(g, "to_side_trace"))
				fail_msg("%s: side trace %.0f entered %.0f times, its parent exit went "
					 "to it %.0f times", name, num(t, "id"), num(t, "entries"),
					 num(g, "to_side_trace"));
			sides_entered += num(t, "entries") > 0;
		}
	}
	return sides_entered;
}

int jf_test_luajit_json_matches(const cJSON *report, const char *texit_path, const char *name)
{
	static struct luajit_events ev;
	const cJSON *summary, *lj, *traces;

	read_events(texit_path, &ev);
	summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
	assert_int_equal(num(summary, "decode_errors"), 0);
	assert_int_equal(num(summary, "lost_bytes"), 0);
	lj = cJSON_GetObjectItemCaseSensitive(report, "luajit");
	if (!lj)
		fail_msg("%s: the report has no \"luajit\" section", name);
	if (num(lj, "trace_starts") != ev.starts || num(lj, "trace_aborts") != ev.aborts ||
	    num(lj, "flushes") != ev.flushes)
		fail_msg("%s: %.0f recordings started, %.0f aborted, %.0f flushes; LuaJIT's trace "
			 "events say %.0f, %.0f, %.0f", name, num(lj, "trace_starts"),
			 num(lj, "trace_aborts"), num(lj, "flushes"), ev.starts, ev.aborts, ev.flushes);
	traces = cJSON_GetObjectItemCaseSensitive(lj, "traces");
	check_traces(&ev, traces, name);
	return check_exits(&ev, traces, name);
}

int jf_test_luajit_report_matches(const char *dir, const char *texit_path, const char *name)
{
	char cmd[4096];
	cJSON *report;
	int sides_entered;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	sides_entered = jf_test_luajit_json_matches(report, texit_path, name);
	cJSON_Delete(report);
	return sides_entered;
}

double jf_test_luajit_texits(const char *texit_path)
{
	static struct luajit_events ev;
	double n = 0;
	size_t i;

	read_events(texit_path, &ev);
	for (i = 0; i < ev.ntexits; i++)
		n += ev.texits[i].count;
	return n;
}

double jf_test_luajit_recorded_index(const char *texit_path, double trace)
{
	static struct luajit_events ev;
	size_t i;

	read_events(texit_path, &ev);
	for (i = 0; i < ev.nloops; i++) {
		if (ev.loops[i].trace == trace)
			return ev.loops[i].index;
	}
	fail_msg("%s: no loop variable for trace %.0f", texit_path, trace);
	return -1;
}
