/* A real jitdump file from V8 (traces/node-jitdump): `jitflow zone dump` must print exactly
 * the checked listings, and every CODE_LOAD must agree with the perf map V8 wrote in the
 * same process (an independent account of the same code objects). The perf map reader is
 * checked on the same file and on malformed lines. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/perf_map.h"
#include "jitflow/zone.h"

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static void check_listing(const char *args, const char *expected_file)
{
	char cmd[4096], path[2048];
	char *out = NULL, *expected;

	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' zone dump traces/node-jitdump/jit-node.dump %s",
		 jf_test_source_dir(), jf_test_cli(), args);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	snprintf(path, sizeof(path), "%s/traces/node-jitdump/%s", jf_test_source_dir(),
		 expected_file);
	expected = read_text(path);
	if (strcmp(out, expected)) {
		size_t i = 0;

		while (out[i] && out[i] == expected[i])
			i++;
		fail_msg("output differs from %s at byte %zu: got '%.60s', expected '%.60s'",
			 expected_file, i, out + i, expected + i);
	}
	free(out);
	free(expected);
}

static void test_dump_text_and_json(void **state)
{
	check_listing("", "expected-dump.txt");
	check_listing("--json", "expected-dump.jsonl");
}

struct map_entry { uint64_t start, size; char *name; };

static void test_code_loads_agree_with_v8_perf_map(void **state)
{
	char path[2048];
	struct jf_perf_map_reader *pm;
	struct jf_perf_map_entry pe;
	struct jf_zone_reader *zr;
	struct jf_zone_record rec;
	struct jf_error err;
	struct map_entry *map = NULL;
	size_t n = 0, i, loads = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/traces/node-jitdump/perf-node.map", jf_test_source_dir());
	assert_int_equal(jf_perf_map_open(&pm, path, &err), 0);
	while ((rc = jf_perf_map_next(pm, &pe, &err)) == 1) {
		map = realloc(map, (n + 1) * sizeof(*map));
		map[n].start = pe.start;
		map[n].size = pe.size;
		map[n].name = strdup(pe.name);
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 167); /* 150 + 12 + 5 lines */
	assert_int_equal(map[0].start, 0x18c4000); /* "18c4000 300 Builtin:Deopt..." */
	assert_int_equal(map[0].size, 0x300);
	assert_string_equal(map[0].name, "Builtin:DeoptimizationEntry_Eager");
	jf_perf_map_close(pm);

	snprintf(path, sizeof(path), "%s/traces/node-jitdump/jit-node.dump", jf_test_source_dir());
	assert_int_equal(jf_zone_reader_open(&zr, path, &err), 0);
	while ((rc = jf_zone_next(zr, &rec, &err)) == 1) {
		if (rec.id != JF_JITDUMP_CODE_LOAD)
			continue;
		loads++;
		for (i = 0; i < n; i++)
			if (map[i].start == rec.u.code_load.addr)
				break;
		if (i == n)
			fail_msg("CODE_LOAD at 0x%lx is not in V8's perf map",
				 (unsigned long)rec.u.code_load.addr);
		assert_int_equal(map[i].size, rec.u.code_load.size);
		assert_string_equal(map[i].name, rec.u.code_load.name);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(loads, 12);
	assert_int_equal(jf_zone_reader_stats(zr)->unwinding_skipped, 12);
	jf_zone_reader_close(zr);
	for (i = 0; i < n; i++)
		free(map[i].name);
	free(map);
}

static void test_perf_map_bad_lines(void **state)
{
	static const char text[] = "1000 10 ok\n\nzz 10 bad\n2000 20\n0x3000 0x30 with spaces ok\r\n"
				   "ffffffffffffffff 2 wraps\n";
	struct jf_perf_map_reader *pm;
	struct jf_perf_map_entry e;
	struct jf_error err;

	assert_int_equal(jf_perf_map_open_memory(&pm, text, sizeof(text) - 1, "x.map", &err), 0);
	assert_int_equal(jf_perf_map_next(pm, &e, &err), 1);
	assert_string_equal(e.name, "ok");
	assert_int_equal(jf_perf_map_next(pm, &e, &err), -1);
	assert_string_equal(err.msg, "x.map:3 (offset 12): expected 'START SIZE NAME' with START "
				     "and SIZE in hex");
	assert_int_equal(jf_perf_map_next(pm, &e, &err), -1); /* no name */
	assert_int_equal(jf_perf_map_next(pm, &e, &err), 1);
	assert_int_equal(e.start, 0x3000);
	assert_int_equal(e.size, 0x30);
	assert_string_equal(e.name, "with spaces ok");
	assert_int_equal(jf_perf_map_next(pm, &e, &err), -1);
	assert_non_null(strstr(err.msg, "x.map:6 (offset 58): range 0xffffffffffffffff + 0x2 "
					"wraps"));
	assert_int_equal(jf_perf_map_next(pm, &e, &err), 0);
	jf_perf_map_close(pm);
}

static void test_cli_errors(void **state)
{
	char cmd[2048];
	char *out = NULL;

	snprintf(cmd, sizeof(cmd), "'%s' zone dump /nonexistent.dump 2>&1", jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 1);
	assert_non_null(strstr(out, "jitflow zone dump: /nonexistent.dump"));
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' zone dump --help", jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "usage: jitflow zone dump FILE [--json]"));
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' zone 2>&1", jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 2);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_text_and_json),
		cmocka_unit_test(test_code_loads_agree_with_v8_perf_map),
		cmocka_unit_test(test_perf_map_bad_lines),
		cmocka_unit_test(test_cli_errors),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
