/* `jitflow decode|stat --cs-snapshot DIR`: the synthetic snapshot (see cs_synthetic.c)
 * lists exactly the instructions and ranges the program executes; the shared Thumb-2
 * capture (TC2) lists every instruction of every range, sizes from capstone. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cs_synthetic.h"

static char snap[512];

static void write_snapshot(void)
{
	char cmd[600];

	snprintf(snap, sizeof(snap), "%s/cli", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", snap);
	assert_int_equal(system(cmd), 0);
	cs_syn_write_snapshot(snap);
}

/* The lines of out that start with prefix, concatenated. */
static char *lines_starting(const char *out, const char *prefix)
{
	char *res = calloc(1, strlen(out) + 1);
	const char *p = out;

	assert_non_null(res);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);

		if (!strncmp(p, prefix, strlen(prefix)))
			strncat(res, p, len);
		p += len;
	}
	return res;
}

static void test_jsonl_ranges(void **state)
{
	/* Version A runs: mov, (subs, b.ne) x3, ret; then from 0x10000 again: mov, subs,
	 * b.ne taken, subs, b.ne not taken. */
	static const char want[] =
		"{\"kind\":\"range\",\"source\":16,\"start\":\"0x10000\",\"end\":\"0x1000c\",\"insns\":3}\n"
		"{\"kind\":\"range\",\"source\":16,\"start\":\"0x10004\",\"end\":\"0x1000c\",\"insns\":2}\n"
		"{\"kind\":\"range\",\"source\":16,\"start\":\"0x10004\",\"end\":\"0x1000c\",\"insns\":2}\n"
		"{\"kind\":\"range\",\"source\":16,\"start\":\"0x1000c\",\"end\":\"0x10010\",\"insns\":1}\n"
		"{\"kind\":\"range\",\"source\":16,\"start\":\"0x10000\",\"end\":\"0x1000c\",\"insns\":3}\n"
		"{\"kind\":\"range\",\"source\":16,\"start\":\"0x10004\",\"end\":\"0x1000c\",\"insns\":2}\n";
	char cmd[1024], *out, *ranges;

	snprintf(cmd, sizeof(cmd), "'%s' decode --cs-snapshot '%s' --format=jsonl", jf_test_cli(),
		 snap);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	ranges = lines_starting(out, "{\"kind\":\"range\"");
	assert_string_equal(ranges, want);
	/* Everything else is JSON lines of other kinds. */
	assert_non_null(strstr(out, "{\"kind\":\"event\",\"event\":\"enabled\""));
	free(ranges);
	free(out);
}

static void test_text_lists_instructions(void **state)
{
	static const char want[] =
		"0000000000010000\n0000000000010004\n0000000000010008\n"
		"0000000000010004\n0000000000010008\n"
		"0000000000010004\n0000000000010008\n"
		"000000000001000c\n"
		"0000000000010000\n0000000000010004\n0000000000010008\n"
		"0000000000010004\n0000000000010008\n";
	char cmd[1024], *out, *insns;

	snprintf(cmd, sizeof(cmd), "'%s' decode --cs-snapshot '%s'", jf_test_cli(), snap);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	insns = lines_starting(out, "0000");
	assert_string_equal(insns, want);
	assert_non_null(strstr(out, "[enabled]"));
	free(insns);
	free(out);
}

static void test_stat(void **state)
{
	char cmd[1024], *out;

	snprintf(cmd, sizeof(cmd), "'%s' stat --cs-snapshot '%s'", jf_test_cli(), snap);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "instructions    13\n"));
	assert_non_null(strstr(out, "blocks          6\n"));
	free(out);
}

static void test_errors_and_help(void **state)
{
	char cmd[1024], *out;

	snprintf(cmd, sizeof(cmd), "'%s' decode --help", jf_test_cli());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "--cs-snapshot"));
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' decode --cs-snapshot '%s/absent' 2>&1", jf_test_cli(),
		 jf_test_tmpdir());
	assert_true(jf_test_run(cmd, &out) != 0);
	assert_non_null(strstr(out, "absent/snapshot.ini: cannot open"));
	assert_int_equal(strchr(out, '\n') - out + 1, (long)strlen(out)); /* one line */
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' decode --cs-snapshot '%s' --pt x 2>&1", jf_test_cli(), snap);
	assert_true(jf_test_run(cmd, &out) != 0);
	free(out);
}

static void test_thumb_listing(void **state)
{
	const char *shared = jf_test_shared_traces();
	char cmd[2048], *out;
	unsigned long long listed = 0, insns = 0;
	const char *p;

	if (!shared)
		skip();
	snprintf(cmd, sizeof(cmd), "'%s' decode --cs-snapshot '%s/coresight/TC2' | "
		 "grep -c '^[0-9a-f]\\{16\\}$'; '%s' decode --cs-snapshot '%s/coresight/TC2' | "
		 "grep -c 'reconstruct error'; '%s' stat --cs-snapshot '%s/coresight/TC2'",
		 jf_test_cli(), shared, jf_test_cli(), shared, jf_test_cli(), shared);
	jf_test_run(cmd, &out);
	assert_int_equal(sscanf(out, "%llu", &listed), 1);
	p = strstr(out, "\n0\n"); /* no reconstruct errors */
	assert_non_null(p);
	p = strstr(out, "instructions");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "instructions %llu", &insns), 1);
	/* 26171 instructions in 18177 ranges, as trc_pkt_lister counts them (num_i). */
	assert_int_equal(insns, 26171);
	assert_int_equal(listed, insns);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jsonl_ranges),
		cmocka_unit_test(test_text_lists_instructions),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_errors_and_help),
		cmocka_unit_test(test_thumb_listing),
	};

	write_snapshot();
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
