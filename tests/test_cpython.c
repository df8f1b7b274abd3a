/* CPython 3.13's copy-and-patch JIT through jitflow's module (tools/runtimes/cpython),
 * checked against CPython's own pystats: the programs of tests/cpython run under
 * `jitflow record` (which puts the module on PYTHONPATH by itself) with `-X pystats` of
 * the cached --enable-pystats JIT build that tools/runtimes/cpython/build.sh makes; the
 * report of the recording must give, for every uop that ran in JIT code, pystats'
 * execution_count as the entries into its stencils and pystats' miss as the exits of its
 * guards (cpython_check.c), with no decode error and no data lost, and at least one guard
 * exited. The comparison table is printed (ctest -V shows it).
 * Skipped when the cached build does not exist (it takes 20+ minutes to make, so
 * tools/setup.sh does not): JITFLOW_CPYTHON_CACHE or
 * ${XDG_CACHE_HOME:-$HOME/.cache}/jitflow/cpython-3.13-jit. */
#include "cpython_check.h"
#include "test_support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* pystats writes its file at exit into this fixed folder (Python/specialize.c). */
#define PYSTATS_DIR "/tmp/py_stats"

static char python[1024];

static int find_python(void)
{
	const char *cache = getenv("JITFLOW_CPYTHON_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (cache && *cache)
		snprintf(python, sizeof(python), "%s/jit-pystats/python", cache);
	else if (xdg && *xdg)
		snprintf(python, sizeof(python), "%s/jitflow/cpython-3.13-jit/jit-pystats/python", xdg);
	else
		snprintf(python, sizeof(python), "%s/.cache/jitflow/cpython-3.13-jit/jit-pystats/python",
			 home ? home : "");
	return access(python, X_OK) == 0;
}

/* The one file in PYSTATS_DIR that is not in before (names joined by '\n'). */
static char *new_pystats_file(const char *before)
{
	DIR *d = opendir(PYSTATS_DIR);
	struct dirent *e;
	char *found = NULL;
	int n = 0;

	if (!d)
		fail_msg("%s: no pystats folder after the run", PYSTATS_DIR);
	while ((e = readdir(d))) {
		char key[300];

		if (e->d_name[0] == '.')
			continue;
		snprintf(key, sizeof(key), "\n%s\n", e->d_name);
		if (strstr(before, key))
			continue;
		n++;
		free(found);
		found = malloc(strlen(PYSTATS_DIR) + strlen(e->d_name) + 2);
		sprintf(found, "%s/%s", PYSTATS_DIR, e->d_name);
	}
	closedir(d);
	if (n != 1)
		fail_msg("%d new pystats files in %s (expected the run's one)", n, PYSTATS_DIR);
	return found;
}

static char *list_pystats(void)
{
	char *out = NULL;

	if (jf_test_run("mkdir -p " PYSTATS_DIR " && printf '\\n' && ls -1 " PYSTATS_DIR
			" && printf '\\n'", &out) != 0)
		fail_msg("cannot list %s", PYSTATS_DIR);
	return out;
}

/* Every report writer names CPython's code in its words, none in a tracing JIT's. */
static void check_words(const char *dir)
{
	static const char *const text_said[] = { "Executors (top", "Uop stencils", "Guard uops (top",
						 "cold exits:", "_EXIT_TRACE",
						 "Not told apart: the eval loop's helpers" };
	static const char *const never[] = { "TargetToken", "PyPy", "\nTraces (", " loop ",
					     "\n  trace " };
	char cmd[4096], *text, *html, *timeline;
	size_t i;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s'", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &text), 0);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --html '%s.html' && cat '%s.html'",
		 jf_test_cli(), dir, dir, dir);
	assert_int_equal(jf_test_run(cmd, &html), 0);
	snprintf(cmd, sizeof(cmd), "'%s' timeline '%s' -o '%s.json' && cat '%s.json'",
		 jf_test_cli(), dir, dir, dir);
	assert_int_equal(jf_test_run(cmd, &timeline), 0);
	for (i = 0; i < sizeof(text_said) / sizeof(text_said[0]); i++)
		if (!strstr(text, text_said[i]))
			fail_msg("%s: the text report does not say \"%s\"", dir, text_said[i]);
	if (!strstr(html, "Guard uops"))
		fail_msg("%s: the HTML report has no \"Guard uops\" heading", dir);
	if (!strstr(timeline, "executor "))
		fail_msg("%s: the timeline names no executor", dir);
	for (i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (strstr(text, never[i]) || strstr(html, never[i]) || strstr(timeline, never[i]))
			fail_msg("%s: a report says \"%s\"", dir, never[i]);
	free(text);
	free(html);
	free(timeline);
}

/* inline.py's loop calls a function the executor inlined: its uops count in the
 * callee's code object (cpython_check.c). */
static void check_inlined(const char *dir, const char *out_path, const char *pystats_path)
{
	jf_test_cpython_inlined(dir, out_path, pystats_path, "inline.py", 1, 0);
}

/* Records tests/cpython/NAME.py with pystats and compares; more, when set, checks the
 * recording further (given its folder, the program's output and the pystats file). */
static void check_program(const char *name,
			  void (*more)(const char *dir, const char *out, const char *pystats))
{
	char dir[1024], cmd[8192], out[1100], *before, *stats;

	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), name);
	snprintf(out, sizeof(out), "%s/%s.out", jf_test_tmpdir(), name);
	/* The extension is compiled once per build, here natively, not inside the recording. */
	snprintf(cmd, sizeof(cmd),
		 "JITFLOW_EMIT_LIB='%s/imagemap/libjitflow-emit.so.0' "
		 "PYTHONPATH='%s/tools/runtimes/cpython' '%s' -m jitflow_cpython build",
		 jf_test_binary_dir(), jf_test_binary_dir(), python);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	before = list_pystats();
	/* The module is loaded by jitflow record itself; the user's settings are not ours. */
	snprintf(cmd, sizeof(cmd),
		 "env -u PYTHONPATH -u JITFLOW_ZONE_DIR -u JITFLOW_EMIT_LIB -u PYTHON_JIT "
		 "'%s' record --emulate -o '%s' -- '%s' -X pystats '%s/tests/cpython/%s.py' "
		 ">'%s' 2>&1",
		 jf_test_cli(), dir, python, jf_test_source_dir(), name, out);
	if (jf_test_run(cmd, NULL) != 0) {
		snprintf(cmd, sizeof(cmd), "cat '%s' >&2", out);
		jf_test_run(cmd, NULL);
		fail_msg("%s: jitflow record failed", name);
	}
	stats = new_pystats_file(before);
	printf("%s: jitflow against pystats\n", name);
	assert_true(jf_test_cpython_matches_pystats(dir, stats, stdout) > 0);
	check_words(dir);
	if (more)
		more(dir, out, stats);
	unlink(stats);
	free(stats);
	free(before);
}

static void test_guards(void **state) { (void)state; check_program("guards", NULL); }
static void test_inlined_frames(void **state) { (void)state; check_program("inline", check_inlined); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guards),
		cmocka_unit_test(test_inlined_frames),
	};

	if (!find_python())
		return jf_test_skip_reason(JF_NEED_RUNTIME_BUILD, "no CPython JIT build at %s "
					   "(tools/runtimes/cpython/build.sh makes it, in about "
					   "30 minutes per variant on 2 cores)", python);
	jf_test_require_tools("perf --version", "perf (linux-perf)");
	jf_test_require_tools("qemu-x86_64 --version", "qemu-x86_64 (qemu-user)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
