/* A runtime that writes only perf's jitdump (no jitflow records): the recorder's JIT test
 * program runs version A of a function (2 instructions) RUNS_A = 100 times, then writes
 * version B (3 instructions) at the same address and runs it RUNS_B = 50 times
 * (tests/programs/jit.c). Its zone file, stripped of jitflow's extension records, still
 * tells jitflow which code was where and when: the report's jitted regions hold exactly
 * 200 and 150 instructions, by the names the runtime gave them. */
#include "test_support.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RUNS_A = 100, RUNS_B = 50 };

/* Copy a jitdump file keeping only perf's own records (ids below 5), as a runtime that
 * knows nothing of jitflow would have written it. */
static void strip_extensions(const char *from, const char *to)
{
	char *data = jf_test_read_file(from, NULL); /* the test's own, well-formed file */
	uint32_t header_size, off;
	FILE *out;

	memcpy(&header_size, data + 8, 4);
	out = fopen(to, "wb");
	assert_non_null(out);
	fwrite(data, 1, header_size, out);
	for (off = header_size;;) {
		uint32_t id, size;

		memcpy(&id, data + off, 4);
		memcpy(&size, data + off + 4, 4);
		if (size < 16)
			break;
		if (id < 5)
			fwrite(data + off, 1, size, out);
		off += size;
		if (!data[off] && !data[off + 4])
			break;
	}
	fclose(out);
	free(data);
}

static void test_regions_by_name_are_exact(void **state)
{
	const char *tmp = jf_test_tmpdir(), *prog = getenv("JITFLOW_JIT_PROGRAM");
	char rec[512], only[512], cmd[4096], path[1024], *out;
	cJSON *report;
	const cJSON *r;
	struct dirent *e;
	DIR *d;
	uint64_t a = 0, b = 0;

	assert_non_null(prog);
	snprintf(rec, sizeof(rec), "%s/rec", tmp);
	snprintf(only, sizeof(only), "%s/jitdump-only", tmp);
	snprintf(cmd, sizeof(cmd), "cd '%s' && JITFLOW_ZONE_DIR='%s' '%s' record -o '%s' -- '%s' > /dev/null"
		 " && mkdir -p '%s' && cp '%s/perf.data' '%s/manifest.json' '%s/'",
		 tmp, tmp, jf_test_cli(), rec, prog, only, rec, rec, only);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	d = opendir(rec);
	assert_non_null(d);
	while ((e = readdir(d))) {
		char to[1024];

		if (strncmp(e->d_name, "jit-", 4) || !strstr(e->d_name, ".dump"))
			continue; /* only zone files (not the recorder's jit-code.txt) */
		snprintf(path, sizeof(path), "%s/%s", rec, e->d_name);
		snprintf(to, sizeof(to), "%s/%s", only, e->d_name);
		strip_extensions(path, to);
	}
	closedir(d);

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), only);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	report = cJSON_Parse(out);
	free(out);
	assert_non_null(report);
	assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(report, "summary"), "zone_records")));
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(report, "regions")) {
		const char *name = cJSON_GetObjectItemCaseSensitive(r, "name")->valuestring;
		uint64_t n = (uint64_t)cJSON_GetObjectItemCaseSensitive(r, "instructions")->valuedouble;

		if (!strcmp(name, "version A"))
			a += n;
		else if (!strcmp(name, "version B"))
			b += n;
	}
	assert_int_equal(a, RUNS_A * 2);
	assert_int_equal(b, RUNS_B * 3);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(report, "summary"), "decode_errors")->valuedouble, 0);
	cJSON_Delete(report);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regions_by_name_are_exact),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
