/* jitflow's report of a CPython JIT recording against pystats (cpython_check.h).
 * The module's POINT ids say what they count: uop << 32 | index for a stencil's first
 * instruction, EXIT_POINT | uop << 32 | index << 8 | n for a guard's jump to its exit. */
#include "cpython_check.h"
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_POINT (1ull << 63)
#define MAX_UOPS 1024

struct uop_counts {
	char name[64];
	uint64_t py_exec, py_miss, jf_exec, jf_miss;
	int in_pystats, in_jitflow;
	int kinds;                  /* the report's guard kinds that list it */
};

struct table {
	struct uop_counts rows[MAX_UOPS];
	size_t n;
	/* pystats' totals: executors made (optimizer successes), executors entered (traces
	 * executed: from the interpreter and through side exits), uops executed */
	uint64_t py_made, py_entered, py_uops;
};

static struct uop_counts *row(struct table *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	if (t->n == MAX_UOPS)
		fail_msg("more than %d uops", MAX_UOPS);
	memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
	snprintf(t->rows[t->n].name, sizeof(t->rows[0].name), "%s", name);
	return &t->rows[t->n++];
}

/* "uops[NAME].execution_count : N" and "uops[NAME].specialization.miss : N" lines. */
static void read_pystats(const char *path, struct table *t)
{
	char *text = jf_test_read_file(path, NULL), *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64], what[64];
		unsigned long long v;
		struct uop_counts *u;

		if (sscanf(line, "Optimization optimizer successes: %llu", &v) == 1)
			t->py_made = v;
		if (sscanf(line, "Optimization traces executed: %llu", &v) == 1)
			t->py_entered = v;
		if (sscanf(line, "Optimization uops executed: %llu", &v) == 1)
			t->py_uops = v;
		if (sscanf(line, "uops[%63[^]]].%63s : %llu", name, what, &v) != 3)
			continue;
		u = row(t, name);
		u->in_pystats = 1;
		if (!strcmp(what, "execution_count"))
			u->py_exec = v;
		else if (!strcmp(what, "specialization.miss"))
			u->py_miss = v;
	}
	free(text);
}

/* The uop names by id, from the report's ops (the module names every uop it knows). */
static const char *op_name(const cJSON *report, unsigned kind)
{
	const cJSON *op;

	cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(report, "ops")) {
		if ((unsigned)jf_test_num(op, "kind") == kind)
			return cJSON_GetObjectItemCaseSensitive(op, "name")->valuestring;
	}
	return NULL;
}

static void read_report(const cJSON *report, struct table *t, char names[][64], size_t nnames)
{
	const cJSON *executor, *point, *region;
	int exits;

	cJSON_ArrayForEach(executor, cJSON_GetObjectItemCaseSensitive(
				     cJSON_GetObjectItemCaseSensitive(report, "cpython"), "executors")) {
		for (exits = 0; exits < 2; exits++)
			cJSON_ArrayForEach(point, cJSON_GetObjectItemCaseSensitive(
						  executor, exits ? "guard_exits" : "stencils")) {
				const char *id = cJSON_GetObjectItemCaseSensitive(point, "point")->valuestring;
				uint64_t passes = (uint64_t)jf_test_num(point, exits ? "exits" : "entries");
				/* the uop from the POINT's id, not from the report's own reading of it */
				uint64_t point_id = strtoull(id, NULL, 10);
				unsigned uop = (unsigned)((point_id >> 32) & 0x7fffffff);
				struct uop_counts *u;

				if (!(point_id & EXIT_POINT) != !exits)
					fail_msg("point %s listed as %s", id, exits ? "a guard exit" : "a stencil");

				if ((uop >= nnames || !names[uop][0]) && !passes)
					continue; /* never ran: no instructions, so no name in "ops" */
				if (uop >= nnames || !names[uop][0])
					fail_msg("point %s: uop %u has no name in the report", id, uop);
				u = row(t, names[uop]);
				u->in_jitflow = 1;
				if (exits)
					u->jf_miss += passes;
				else
					u->jf_exec += passes;
			}
	}
	/* Cold exits are trampolines (no POINTs listed): each one's entries are its
	 * _COLD_EXIT's executions. */
	cJSON_ArrayForEach(region, cJSON_GetObjectItemCaseSensitive(report, "regions")) {
		const char *name = cJSON_GetObjectItemCaseSensitive(region, "name")->valuestring;

		if (!strncmp(name, "cold exit ", 10)) {
			struct uop_counts *u = row(t, "_COLD_EXIT");

			u->in_jitflow = 1;
			u->jf_exec += (uint64_t)jf_test_num(region, "entries");
		}
	}
}

static uint64_t exec_of(struct table *t, const char *name)
{
	return row(t, name)->jf_exec;
}

/* Executors made (jitflow: trace regions named "executor ..."), entered (every entry
 * runs _START_EXECUTOR, or _COLD_EXIT for a cold exit), uops executed (every stencil
 * entry) and the exits of all GUARD records' branches (all misses), against pystats. */
static void compare_totals(const cJSON *report, struct table *t, const char *dir, FILE *out)
{
	const cJSON *trace;
	uint64_t made = 0, entered, uops = 0, guard_exits = 0, misses = 0;
	size_t i;

	cJSON_ArrayForEach(trace, cJSON_GetObjectItemCaseSensitive(report, "traces")) {
		const cJSON *guard;

		if (!strncmp(jf_test_str(trace, "name"), "executor ", 9))
			made++;
		cJSON_ArrayForEach(guard, cJSON_GetObjectItemCaseSensitive(trace, "guards"))
			guard_exits += (uint64_t)jf_test_num(guard, "exits");
	}
	entered = exec_of(t, "_START_EXECUTOR") + exec_of(t, "_COLD_EXIT");
	for (i = 0; i < t->n; i++) {
		uops += t->rows[i].jf_exec;
		misses += t->rows[i].py_miss;
	}
	if (out)
		fprintf(out, "| executors made (optimizer successes) | %llu | %llu | | |\n"
			"| executors entered (traces executed) | %llu | %llu | | |\n"
			"| uops executed | %llu | %llu | | |\n"
			"| guard exits (GUARD records' branches) | | | %llu | %llu |\n",
			(unsigned long long)t->py_made, (unsigned long long)made,
			(unsigned long long)t->py_entered, (unsigned long long)entered,
			(unsigned long long)t->py_uops, (unsigned long long)uops,
			(unsigned long long)misses, (unsigned long long)guard_exits);
	if (guard_exits != misses)
		fail_msg("%s: the guards' branches exited %llu times, pystats counts %llu misses",
			 dir, (unsigned long long)guard_exits, (unsigned long long)misses);
	if (made != t->py_made || entered != t->py_entered || uops != t->py_uops)
		fail_msg("%s: executors made %llu, entered %llu, uops %llu; pystats %llu, %llu, %llu",
			 dir, (unsigned long long)made, (unsigned long long)entered,
			 (unsigned long long)uops, (unsigned long long)t->py_made,
			 (unsigned long long)t->py_entered, (unsigned long long)t->py_uops);
}

/* The uop names CPython gives these guards and the kind the report must say for each:
 * what each one checks, read from CPython's bytecodes.c. */
static const struct {
	const char *uop, *kind;
} known_kinds[] = {
	{ "_GUARD_TYPE_VERSION", "type version" },
	{ "_GUARD_NOT_EXHAUSTED_RANGE", "iterator not exhausted" },
	{ "_GUARD_NOT_EXHAUSTED_LIST", "iterator not exhausted" },
	{ "_GUARD_IS_TRUE_POP", "truth (is true, false, none)" },
	{ "_GUARD_IS_FALSE_POP", "truth (is true, false, none)" },
	{ "_GUARD_NOS_INT", "operand type" },
	{ "_GUARD_BOTH_INT", "operand type" },
	{ "_GUARD_GLOBALS_VERSION", "dict version (globals, builtins, module)" },
	{ "_CHECK_VALIDITY", "executor valid (invalidated, eval breaker)" },
};

/* The report's guard kinds: each kind's exits equal pystats' misses of the uops it lists,
 * every uop pystats saw miss is in exactly one kind, and the uops of known_kinds are in
 * theirs. */
static void compare_guard_kinds(const cJSON *report, struct table *t, const char *dir, FILE *out)
{
	const cJSON *kind, *uop;
	size_t i, k;

	if (out)
		fprintf(out, "| guard kind | pystats miss | jitflow exits |\n|---|---:|---:|\n");
	cJSON_ArrayForEach(kind, cJSON_GetObjectItemCaseSensitive(
				 cJSON_GetObjectItemCaseSensitive(report, "cpython"), "guard_kinds")) {
		const char *name = jf_test_str(kind, "kind");
		uint64_t misses = 0, exits = (uint64_t)jf_test_num(kind, "exits");

		cJSON_ArrayForEach(uop, cJSON_GetObjectItemCaseSensitive(kind, "uops")) {
			struct uop_counts *u = row(t, uop->valuestring);

			misses += u->py_miss;
			u->kinds++;
			for (k = 0; k < sizeof(known_kinds) / sizeof(known_kinds[0]); k++)
				if (!strcmp(known_kinds[k].uop, u->name) && strcmp(known_kinds[k].kind, name))
					fail_msg("%s: %s is said to check \"%s\", not \"%s\"", dir, u->name,
						 name, known_kinds[k].kind);
		}
		if (out)
			fprintf(out, "| %s | %llu | %llu |\n", name, (unsigned long long)misses,
				(unsigned long long)exits);
		if (misses != exits)
			fail_msg("%s: guard kind \"%s\": %llu exits, pystats counts %llu misses of its uops",
				 dir, name, (unsigned long long)exits, (unsigned long long)misses);
	}
	for (i = 0; i < t->n; i++)
		if ((t->rows[i].py_miss && t->rows[i].kinds != 1) || t->rows[i].kinds > 1)
			fail_msg("%s: %s is in %d guard kinds", dir, t->rows[i].name, t->rows[i].kinds);
}

/* Executor chains: _EXIT_TRACE runs the executor its exit points to, a cold exit or
 * another executor, so the runs of _EXIT_TRACE that were no cold exit's entry went
 * straight into another executor; _DYNAMIC_EXIT may chain too (into the executor at its
 * target, if any). The report's chains between described executors add up to that. */
static void compare_chains(const cJSON *report, struct table *t, const char *dir, FILE *out)
{
	const cJSON *cpython = cJSON_GetObjectItemCaseSensitive(report, "cpython"), *chain;
	uint64_t chained = (uint64_t)jf_test_num(cpython, "chained"), sum = 0;
	uint64_t exit_trace = row(t, "_EXIT_TRACE")->py_exec, cold = row(t, "_COLD_EXIT")->py_exec;
	uint64_t dynamic = row(t, "_DYNAMIC_EXIT")->py_exec, least = exit_trace - cold;

	cJSON_ArrayForEach(chain, cJSON_GetObjectItemCaseSensitive(cpython, "chains")) {
		const cJSON *e;
		int from = 0, to = 0;

		sum += (uint64_t)jf_test_num(chain, "count");
		cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(cpython, "executors")) {
			from |= jf_test_num(e, "id") == jf_test_num(chain, "from");
			to |= jf_test_num(e, "id") == jf_test_num(chain, "to");
		}
		if (!from || !to)
			fail_msg("%s: a chain %.0f -> %.0f names no executor of the report", dir,
				 jf_test_num(chain, "from"), jf_test_num(chain, "to"));
	}
	if (out)
		fprintf(out, "| executor chains (_EXIT_TRACE - _COLD_EXIT, + up to _DYNAMIC_EXIT) | "
			"%llu..%llu | %llu |\n", (unsigned long long)least,
			(unsigned long long)(least + dynamic), (unsigned long long)chained);
	if (sum != chained)
		fail_msg("%s: the chains add up to %llu, the report says %llu", dir,
			 (unsigned long long)sum, (unsigned long long)chained);
	if (cold > exit_trace || chained < least || chained > least + dynamic)
		fail_msg("%s: %llu executor chains; pystats: _EXIT_TRACE %llu, _COLD_EXIT %llu, "
			 "_DYNAMIC_EXIT %llu", dir, (unsigned long long)chained,
			 (unsigned long long)exit_trace, (unsigned long long)cold,
			 (unsigned long long)dynamic);
}

int jf_test_cpython_matches_pystats(const char *dir, const char *pystats_path, FILE *out)
{
	static struct table t;
	static char names[1024][64];
	char cmd[4096];
	cJSON *report;
	const cJSON *summary;
	size_t i, compared = 0, differ = 0;
	unsigned k;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	summary = cJSON_GetObjectItemCaseSensitive(report, "summary");
	if (jf_test_num(summary, "decode_errors") != 0 || jf_test_num(summary, "lost_bytes") != 0)
		fail_msg("%s: %.0f decode errors, %.0f bytes lost", dir,
			 jf_test_num(summary, "decode_errors"), jf_test_num(summary, "lost_bytes"));
	memset(names, 0, sizeof(names));
	for (k = 0; k < 1024; k++) {
		const char *n = op_name(report, k);

		if (n)
			snprintf(names[k], sizeof(names[k]), "%s", n);
	}
	memset(&t, 0, sizeof(t));
	read_pystats(pystats_path, &t);
	read_report(report, &t, names, 1024);
	if (out)
		fprintf(out, "| uop | pystats execution_count | jitflow entries | pystats miss | "
			"jitflow exits |\n|---|---:|---:|---:|---:|\n");
	for (i = 0; i < t.n; i++) {
		const struct uop_counts *u = &t.rows[i];

		if (!u->py_exec && !u->jf_exec && !u->py_miss && !u->jf_miss)
			continue;
		compared++;
		if (out)
			fprintf(out, "| %s | %llu | %llu | %llu | %llu |\n", u->name,
				(unsigned long long)u->py_exec, (unsigned long long)u->jf_exec,
				(unsigned long long)u->py_miss, (unsigned long long)u->jf_miss);
		if (u->py_exec != u->jf_exec || u->py_miss != u->jf_miss) {
			fprintf(stderr, "%s: pystats %llu executions %llu misses, jitflow %llu "
				"entries %llu exits\n", u->name, (unsigned long long)u->py_exec,
				(unsigned long long)u->py_miss, (unsigned long long)u->jf_exec,
				(unsigned long long)u->jf_miss);
			differ++;
		}
	}
	compare_totals(report, &t, dir, out);
	compare_guard_kinds(report, &t, dir, out);
	compare_chains(report, &t, dir, out);
	cJSON_Delete(report);
	for (i = 0, k = 0; i < t.n; i++)
		k += t.rows[i].py_miss > 0;
	if (!k)
		fail_msg("%s: no guard exited: the program does not exercise exits", dir);
	if (differ)
		fail_msg("%s: %zu of %zu uops differ from pystats (%s)", dir, differ, compared,
			 pystats_path);
	if (!compared)
		fail_msg("%s: no uop ran in JIT code", dir);
	return (int)compared;
}
