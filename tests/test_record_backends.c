/* jitflow record's two backends, QEMU's text log and jitflow's TCG plugin, on the same
 * programs: each recording decodes without error, and to the same instructions per
 * thread. The log backend is the older, independently written path (it reads what QEMU
 * prints); perf's decoder splits threaded recordings by thread. A missing perf or
 * qemu-x86_64 fails. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *program(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/tests/programs/recprog_%s", jf_test_binary_dir(), name);
	return path;
}

/* Records name with backend into TMP/name-backend; returns the folder. The program's
 * exit status is checked by the caller's expectation. */
static const char *record(const char *name, const char *backend, int want_status)
{
	static char dirs[2][512];
	char cmd[4096], *out = NULL, *manifest = NULL;
	char *dir = dirs[!strcmp(backend, "plugin")];

	snprintf(dir, 512, "%s/%s-%s", jf_test_tmpdir(), name, backend);
	/* The zone folder is the same for both: the guest's environment must not differ. */
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/zones && JITFLOW_ZONE_DIR=%s/zones %s record "
		 "--emulate --backend=%s -o %s -- %s >/dev/null 2>%s.err", jf_test_tmpdir(),
		 jf_test_tmpdir(), jf_test_cli(), backend, dir, program(name), dir);
	assert_int_equal(jf_test_run(cmd, &out), want_status);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s/manifest.json", dir);
	manifest = jf_test_read_file(cmd, NULL);
	assert_non_null(manifest);
	snprintf(cmd, sizeof(cmd), "\"backend\": \"%s\"", backend);
	if (!strstr(manifest, cmd))
		fail_msg("%s: the recording was not made with the %s backend", dir, backend);
	free(manifest);
	return dir;
}

/* jitflow's decode of a single-threaded recording in DIR, without the context lines (pids
 * differ), into DIR.insns; returns its instruction count. */
static long decode(const char *dir)
{
	char cmd[4096], *out = NULL;
	long n;

	/* jitflow's exit status counts: its output goes to a file before it is filtered. */
	snprintf(cmd, sizeof(cmd), "%s decode --perf %s/perf.data $(ls %s/jit-*.dump 2>/dev/null "
		 "| sed 's/^/--zone /') > %s.decoded && grep -v '^\\[context' %s.decoded > "
		 "%s.insns && grep -c '^[0-9a-f]' %s.insns", jf_test_cli(), dir, dir, dir, dir, dir,
		 dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	n = strtol(out, NULL, 10);
	free(out);
	snprintf(cmd, sizeof(cmd), "grep -c 'error' %s.insns", dir);
	jf_test_run(cmd, &out);
	if (strtol(out, NULL, 10) != 0)
		fail_msg("%s decodes with errors (see %s.insns)", dir, dir);
	free(out);
	return n;
}

static void same_instructions(const char *name, int want_status)
{
	char cmd[2048], *out = NULL;
	const char *log = record(name, "log", want_status), *plugin;
	long nlog = decode(log), nplugin;

	plugin = record(name, "plugin", want_status);
	nplugin = decode(plugin);
	assert_true(nlog > 1000);
	assert_int_equal(nlog, nplugin);
	snprintf(cmd, sizeof(cmd), "cmp %s.insns %s.insns", log, plugin);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("%s: the backends' instructions differ: %s", name, out);
	free(out);
}

static void test_single_threaded(void **state)
{
	(void)state;
	same_instructions("fib", 0);
	same_instructions("branches", 0);
	same_instructions("callbacks", 3);  /* qsort, longjmp, synchronous signals */
	same_instructions("fib_dyn", 0);    /* the loader's and libc's load addresses */
	same_instructions("fib_spie", 0);
	same_instructions("aborts", 128 + 6);
	same_instructions("jit", 0);        /* code rewritten at one address, zone file */
}

/* perf's instructions of each thread in DIR, threads ranked by tid (creation order), into
 * DIR.threads. */
static void per_thread(const char *dir)
{
	char cmd[4096], *out = NULL;

	snprintf(cmd, sizeof(cmd), "perf script -i %s/perf.data --itrace=i1i -F tid,ip 2>/dev/null"
		 " | sort -s -n -k1,1 | awk '$1 != last { rank++; last = $1 } { print rank, $2 }' "
		 "> %s.threads", dir, dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	free(out);
}

/* The workers run the same instructions under both backends. (How main waits in
 * pthread_join depends on timing; test_recorder checks its calls of work().) */
static void test_threads(void **state)
{
	char cmd[2048], *out = NULL;
	const char *log = record("threads", "log", 0), *plugin;

	(void)state;
	per_thread(log);
	plugin = record("threads", "plugin", 0);
	per_thread(plugin);
	snprintf(cmd, sizeof(cmd), "awk '$1 == 3' %s.threads | wc -l; awk '$1 > 1' %s.threads > "
		 "%s.workers; awk '$1 > 1' %s.threads > %s.workers; cmp -s %s.workers %s.workers "
		 "&& echo same", log, log, log, plugin, plugin, log, plugin);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_true(strtol(out, NULL, 10) > 1000); /* the second worker's instructions */
	if (!strstr(out, "same"))
		fail_msg("the workers' instructions differ between the backends (%s, %s)", log,
			 plugin);
	free(out);
}

/* A QEMU that cannot load the plugin (here: the plugin file is no shared library): the
 * default falls back to the log backend and says so; --backend=plugin fails clearly. */
static void test_fallback_to_log(void **state)
{
	char cmd[4096], *out = NULL, path[600];

	(void)state;
	snprintf(path, sizeof(path), "%s/not-a-plugin.so", jf_test_tmpdir());
	jf_test_write_file(path, "text\n", 5);
	snprintf(cmd, sizeof(cmd), "JITFLOW_QEMU_PLUGIN=%s %s record --emulate -o %s/fallback -- "
		 "%s 2>&1 >/dev/null && grep -c '\"backend\": \"log\"' %s/fallback/manifest.json",
		 path, jf_test_cli(), jf_test_tmpdir(), program("fib"), jf_test_tmpdir());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "QEMU did not load the plugin"));
	assert_non_null(strstr(out, "recording from QEMU's log instead"));
	free(out);
	snprintf(cmd, sizeof(cmd), "JITFLOW_QEMU_PLUGIN=%s %s record --emulate --backend=plugin "
		 "-o %s/fallback2 -- %s 2>&1 >/dev/null", path, jf_test_cli(), jf_test_tmpdir(),
		 program("fib"));
	assert_int_equal(jf_test_run(cmd, &out), 1);
	assert_non_null(strstr(out, "use --backend=log"));
	free(out);
	snprintf(cmd, sizeof(cmd), "%s record --emulate --backend=fast -- %s 2>&1", jf_test_cli(),
		 program("fib"));
	assert_int_equal(jf_test_run(cmd, &out), 2);
	assert_non_null(strstr(out, "unknown backend 'fast'"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single_threaded),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_fallback_to_log),
	};

	jf_test_require_tools("perf --version && qemu-x86_64 --version",
			      "perf (linux-perf) or qemu-x86_64 (qemu-user)");
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
