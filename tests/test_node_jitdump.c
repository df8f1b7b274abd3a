/* A real jitdump-only runtime: Node (V8) with --perf-prof, recorded by `jitflow record`.
 * V8 writes only perf's jitdump records, and buffers them, so some functions run before
 * their record is written. Every instruction QEMU executed must decode (the recorder's own
 * count, from QEMU's log, is the oracle), with no error and nothing lost, attributed to
 * jitted regions by V8's names, and add's code entered once per call the program makes.
 * A missing node fails. Takes a few minutes:
 * V8 starts up with about half a billion instructions. */
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* V8's jitdump name of add's baseline code ('^' marks Sparkplug's): "JS:^add
 * /dir/tiny.js:1:13" from Node 20 (V8 11), "Function:^add /dir/tiny.js:1" from Debian 12's
 * Node 18 (V8 10.2). */
static int is_baseline_add(const char *name)
{
	return (!strncmp(name, "JS:^add ", 8) || !strncmp(name, "Function:^add ", 14)) &&
	       strstr(name, "/tiny.js:1");
}

static void test_every_instruction_of_node(void **state)
{
	const char *tmp = jf_test_tmpdir();
	char cmd[4096], js[512];
	cJSON *manifest, *stat, *report;
	const cJSON *r;
	double jitted = 0;
	int named = 0, add_regions = 0;
	static const char program[] = "function add(a, b) { return a + b; }\n"
				      "let s = 0;\nfor (let i = 0; i < 20000; i++) s = add(s, i);\n"
				      "console.log(s);\n";

	snprintf(js, sizeof(js), "%s/tiny.js", tmp);
	jf_test_write_file(js, program, strlen(program));
	/* --no-opt: no optimizing compiler to inline add into the loop; --always-sparkplug:
	 * every function gets its baseline code before its first call, so every call of add
	 * enters add's own code (interpreted calls would run V8's shared bytecode handlers). */
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' record -o rec -- node --perf-prof --no-opt "
		 "--always-sparkplug tiny.js > node.out", tmp, jf_test_cli());
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	/* The program's own answer under the recorder: the sum of 0..19999. */
	snprintf(cmd, sizeof(cmd), "%s/node.out", tmp);
	{
		char *text = jf_test_read_file(cmd, NULL);

		assert_string_equal(text, "199990000\n");
		free(text);
	}

	snprintf(cmd, sizeof(cmd), "%s/rec/manifest.json", tmp);
	{
		char *text = jf_test_read_file(cmd, NULL);

		manifest = cJSON_Parse(text);
		free(text);
		assert_non_null(manifest);
	}
	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s/rec' --json", jf_test_cli(), tmp);
	stat = jf_test_run_json(cmd);
	assert_true(jf_test_num(manifest, "instructions") > 1e8);
	assert_int_equal(jf_test_num(stat, "instructions"), jf_test_num(manifest, "instructions"));
	assert_int_equal(jf_test_num(stat, "errors"), 0);
	assert_int_equal(jf_test_num(stat, "lost_bytes"), 0);

	snprintf(cmd, sizeof(cmd), "'%s' report '%s/rec' --json", jf_test_cli(), tmp);
	report = jf_test_run_json(cmd);
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(report, "regions")) {
		const char *name = cJSON_GetObjectItemCaseSensitive(r, "name")->valuestring;

		/* The program's loop calls add 20000 times: V8's baseline code of add, named
		 * by V8 in its jitdump, is entered exactly that often. */
		if (is_baseline_add(name)) {
			add_regions++;
			if (jf_test_num(r, "entries") != 20000)
				fail_msg("node: %s entered %.0f times; the program calls add 20000 "
					 "times", name, jf_test_num(r, "entries"));
		}
		jitted += jf_test_num(r, "instructions");
		if (jf_test_num(r, "instructions") > 0 && (!strncmp(name, "JS:", 3) ||
						   !strncmp(name, "Function:", 9) ||
						   !strncmp(name, "Builtin:", 8) ||
						   !strncmp(name, "BytecodeHandler:", 16)))
			named++;
	}
	if (add_regions != 1)
		fail_msg("node: %d regions named as V8 names add's baseline code (JS:^add or "
			 "Function:^add at tiny.js:1); one was due", add_regions);
	/* V8's own names on the code that ran, and every jitted instruction attributed. */
	assert_true(named > 100);
	assert_int_equal(jitted, jf_test_num(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(report, "split"), "total"), "instructions"), "jitted"));
	printf("node: %.0f instructions decoded, as QEMU ran them; %.0f in %d named jitted "
	       "regions\n", jf_test_num(stat, "instructions"), jitted, named);
	cJSON_Delete(manifest);
	cJSON_Delete(stat);
	cJSON_Delete(report);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_instruction_of_node),
	};

	jf_test_require_tools("node --version", "node (nodejs)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
