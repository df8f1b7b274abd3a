/* PyPy's counters against jitflow's report (pypy_counts.h). */
#include "pypy_counts.h"

#include "json_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* jitflow's count for one line of jit-backend-counts, or -1 when it has none. A
 * TargetToken id is a Python object's address, which PyPy reuses once a loop is freed:
 * the nth line of one token (from 0) is the nth label with it, loops in number order
 * (PyPy writes them so) and then bridges. */
static double jitflow_count(const cJSON *pypy, char kind, const char *id, int nth)
{
	const cJSON *t, *l;
	const cJSON *loops = cJSON_GetObjectItemCaseSensitive(pypy, "loops");
	const cJSON *bridges = cJSON_GetObjectItemCaseSensitive(pypy, "bridges");

	if (kind == 'e') {
		cJSON_ArrayForEach(t, loops)
			if (jf_test_num(t, "id") == strtod(id, NULL))
				return jf_test_num(t, "entries");
	} else if (kind == 'b') {
		cJSON_ArrayForEach(t, bridges)
			if (!strcmp(jf_test_str(t, "id"), id))
				return jf_test_num(t, "entries");
	} else {
		int pass;

		for (pass = 0; pass < 2; pass++)
			cJSON_ArrayForEach(t, (pass ? bridges : loops))
				cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(t, "labels"))
					if (!strcmp(jf_test_str(l, "token"), id) && !nth--)
						return jf_test_num(l, "passes");
	}
	return -1;
}

/* Each bridge is entered exactly when its guard exits after the bridge was attached. */
void jf_test_pypy_bridges_match_guards(const cJSON *pypy)
{
	const cJSON *b, *t, *g;
	int pass;

	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(pypy, "bridges")) {
		int found = 0;

		for (pass = 0; pass < 2; pass++)
			cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(pypy, pass ? "bridges" :
									       "loops"))
				cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(t, "guards")) {
					if (strcmp(jf_test_str(g, "id"), jf_test_str(b, "parent_guard")))
						continue;
					found = 1;
					assert_int_equal(jf_test_num(g, "exits") - jf_test_num(g, "exits_before_bridge"),
							 jf_test_num(b, "entries"));
				}
		assert_true(found);
	}
}

int jf_test_pypy_counts_match(const cJSON *pypy, const char *path)
{
	char line[512], seen[1024][64];
	int in_counts = 0, compared = 0, nseen = 0;
	FILE *counts = fopen(path, "r");

	if (!counts)
		fail_msg("%s: cannot open", path);
	while (fgets(line, sizeof(line), counts)) {
		char id[64];
		unsigned long long n;
		double got;
		char kind = 0;

		if (strstr(line, "{jit-backend-counts"))
			in_counts = 1;
		else if (strstr(line, "jit-backend-counts}"))
			in_counts = 0;
		if (!in_counts)
			continue;
		if (sscanf(line, "entry %63[0-9]:%llu", id, &n) == 2)
			kind = 'e';
		else if (sscanf(line, "TargetToken(%63[0-9]):%llu", id, &n) == 2)
			kind = 'l';
		else if (sscanf(line, "bridge %63[0-9]:%llu", id, &n) == 2)
			kind = 'b';
		if (!kind)
			continue;
		if (kind == 'l') {
			int i, nth = 0;

			for (i = 0; i < nseen; i++)
				nth += !strcmp(seen[i], id);
			assert_true(nseen < 1024);
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", id);
			got = jitflow_count(pypy, kind, id, nth);
		} else {
			got = jitflow_count(pypy, kind, id, 0);
		}
		if (got != (double)n)
			fail_msg("%s: PyPy counts %s %s:%llu, jitflow %.0f", path, kind == 'e' ? "entry" :
				 kind == 'l' ? "TargetToken" : "bridge", id, n, got);
		compared++;
	}
	fclose(counts);
	return compared;
}

int jf_test_pypy_filtered_recording_matches(const char *dir, const char *counts_path)
{
	char cmd[4096], path[4096];
	cJSON *manifest, *stat, *report;
	const cJSON *pypy;
	int compared;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	manifest = jf_test_json_file(path);
	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s' --json", jf_test_cli(), dir);
	stat = jf_test_run_json(cmd);
	assert_int_equal(jf_test_num(stat, "instructions"),
			 jf_test_num(cJSON_GetObjectItemCaseSensitive(manifest, "filter"),
				     "traced_instructions"));
	assert_int_equal(jf_test_num(stat, "errors"), 0);
	assert_int_equal(jf_test_num(stat, "lost_bytes"), 0);

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	pypy = cJSON_GetObjectItemCaseSensitive(report, "pypy");
	assert_non_null(pypy);
	compared = jf_test_pypy_counts_match(pypy, counts_path);
	jf_test_pypy_bridges_match_guards(pypy);
	cJSON_Delete(manifest);
	cJSON_Delete(stat);
	cJSON_Delete(report);
	return compared;
}
