/* The CPython module's stencil table reader (tools/runtimes/cpython/stencil_table.c) on
 * tests/data/cpython/stencils_small.h, a jit_stencils.h in CPython 3.13's form whose
 * sizes the test knows, and on that file cut short and damaged: every cut or damaged
 * input gives a table or an error naming the line and what was expected, never a wrong
 * size. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stencil_table.h"

static char *small(size_t *len)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/tests/data/cpython/stencils_small.h", jf_test_source_dir());
	return jf_test_read_file(path, len);
}

static void test_sizes(void **state)
{
	struct cpython_stencil_table t;
	char err[256];
	size_t len;
	char *text = small(&len);
	const struct cpython_stencil *s;

	(void)state;
	assert_int_equal(cpython_stencil_table_parse(text, len, &t, err, sizeof(err)), 0);
	assert_int_equal(t.trampoline.code_size, 24);
	assert_int_equal(t.trampoline.data_size, 8);
	assert_int_equal(t.count, 5);
	assert_non_null(s = cpython_stencil_find(&t, "_COLD_EXIT"));
	assert_int_equal(s->code_size, 208);
	assert_int_equal(s->data_size, 64);
	assert_non_null(s = cpython_stencil_find(&t, "_GUARD_IS_FALSE_POP"));
	assert_int_equal(s->code_size, 0);
	assert_non_null(s = cpython_stencil_find(&t, "_START_EXECUTOR"));
	assert_int_equal(s->code_size, 32);
	assert_null(cpython_stencil_find(&t, "_BINARY_OP"));
	cpython_stencil_table_free(&t);
	free(text);
}

/* Every prefix of the file: the table is complete or refused with a located error. */
static void test_truncated(void **state)
{
	size_t len, cut, ok = 0;
	char *text = small(&len);

	(void)state;
	for (cut = 0; cut < len; cut++) {
		struct cpython_stencil_table t;
		char err[256];

		if (cpython_stencil_table_parse(text, cut, &t, err, sizeof(err)) == 0) {
			/* only a cut after the table's last entry may parse: then it is whole */
			assert_int_equal(t.count, 5);
			cpython_stencil_table_free(&t);
			ok++;
		} else {
			assert_memory_equal(err, "jit_stencils.h line ", 20);
			assert_int_equal(t.count, 0);
		}
	}
	assert_true(ok > 0 && ok < 4);
	free(text);
}

static void expect_error(const char *text, const char *message_part)
{
	struct cpython_stencil_table t;
	char err[256];

	assert_int_equal(cpython_stencil_table_parse(text, strlen(text), &t, err, sizeof(err)), -1);
	if (!strstr(err, message_part))
		fail_msg("error \"%s\" does not say \"%s\"", err, message_part);
}

static void test_corrupt(void **state)
{
	static const char tramp[] = "static const StencilGroup trampoline = {emit_trampoline, 24, 8};\n";
	static const char head[] = "static const StencilGroup stencil_groups[MAX_UOP_ID + 1] = {\n";
	char buf[1024];

	(void)state;
	expect_error("", "no 'static const StencilGroup trampoline'");
	expect_error("static const StencilGroup trampoline = {emit_trampoline, x, 8};\n",
		     "line 1: expected '{emit_trampoline");
	snprintf(buf, sizeof(buf), "%s%s    [_A] = {emit__B, 1, 2},\n};\n", tramp, head);
	expect_error(buf, "line 3: expected '{emit_UOP, CODE_SIZE, DATA_SIZE}' for the same uop");
	snprintf(buf, sizeof(buf), "%s%s    [_A] = {emit__A, 1, 99999999999},\n};\n", tramp, head);
	expect_error(buf, "line 3");
	snprintf(buf, sizeof(buf), "%s%s    garbage\n};\n", tramp, head);
	expect_error(buf, "line 3: expected '[UOP]");
	snprintf(buf, sizeof(buf), "%s%s    [_A] = {emit__A, 1, 2},\n", tramp, head);
	expect_error(buf, "not closed");
	snprintf(buf, sizeof(buf), "%s%s};\n", tramp, head);
	expect_error(buf, "no stencil_groups entries");
	snprintf(buf, sizeof(buf), "%s%s%s    [_A] = {emit__A, 1, 2},\n};\n", tramp, tramp, head);
	expect_error(buf, "line 2: a second trampoline");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
