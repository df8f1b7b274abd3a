/* The real Intel PT captures in ../shared/traces/intel-pt, decoded by `jitflow decode`,
 * against libipt's reference decoder (ptxed --block-decoder --no-inst): the same
 * instruction address lines, in the same order, and an error at every trace offset (and
 * IP) where the reference reports one. Skipped when ../shared is absent. */
#include "reference_lines.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Split text into the lines of one kind: instruction addresses or error reports. */
static void select_lines(char *text, int errors, struct lines *out)
{
	char *save = NULL, *line;

	out->v = NULL;
	out->n = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int is_error = line[0] == '[' && strstr(line, " error: ");

		if (errors ? !is_error : line[0] == '[')
			continue;
		jf_lines_add(out, line);
	}
}

static void check_capture(const char *name, const char *base)
{
	const char *dir = jf_test_shared_traces();
	char cmd[2048];
	char *got, *want, *got2, *want2;
	struct lines ga, wa, ge, we;

	snprintf(cmd, sizeof(cmd), "'%s' decode --raw '%s/intel-pt/%s/data:%s' --pt '%s/intel-pt/%s/trace'",
		 jf_test_cli(), dir, name, base, dir, name);
	assert_int_equal(jf_test_run(cmd, &got), 0);
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s/intel-pt/%s/expected-ptxed.txt.gz'", dir, name);
	assert_int_equal(jf_test_run(cmd, &want), 0);
	got2 = strdup(got);
	want2 = strdup(want);

	select_lines(got, 0, &ga);
	select_lines(want, 0, &wa);
	assert_true(wa.n > 100000); /* the reference really is the full decode */
	jf_lines_compare("instruction", &ga, &wa);

	select_lines(got2, 1, &ge);
	select_lines(want2, 1, &we);
	jf_lines_compare("error", &ge, &we);
	printf("%s: %zu instructions and %zu errors, all as the reference\n", name, ga.n, ge.n);

	free(ga.v); free(wa.v); free(ge.v); free(we.v);
	free(got); free(want); free(got2); free(want2);
}

static void test_foo(void **state) { check_capture("foo", "0x7ffff7819000"); }
static void test_unzip(void **state) { check_capture("Unzip", "0x400000"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foo),
		cmocka_unit_test(test_unzip),
	};

	if (!jf_test_shared_traces())
		return JF_TEST_SKIP;
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
