#include "test_support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitflow/codemap.h"

static int skipped;
static int failed_tests; /* set by jf_test_exit: a failure keeps the temporary folder */

static const char *const need_names[] = {
	[JF_NEED_SHARED] = "shared",
	[JF_NEED_ROOT] = "root",
	[JF_NEED_HARDWARE] = "hardware",
	[JF_NEED_RUNTIME_BUILD] = "runtime-build",
};

int jf_test_skip_reason(enum jf_test_need need, const char *fmt, ...)
{
	va_list ap;

	skipped = 1;
	fprintf(stderr, "SKIP(%s): ", need_names[need]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return JF_TEST_SKIP;
}

void jf_test_mark_skipped(void)
{
	skipped = 1;
}

int jf_test_exit(int failed)
{
	failed_tests = failed;
	if (failed)
		return failed > 0 && failed < JF_TEST_SKIP ? failed : 1;
	return skipped ? JF_TEST_SKIP : 0;
}

const char *jf_test_shared_traces(void)
{
	const char *dir = getenv("JITFLOW_SHARED_TRACES");
	struct stat st;

	if (!dir || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		jf_test_skip_reason(JF_NEED_SHARED,
				    "real captures not found at %s (../shared/traces beside the "
				    "repository)",
				    dir ? dir : "(JITFLOW_SHARED_TRACES unset)");
		return NULL;
	}
	return dir;
}

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v ? v : fallback;
}

const char *jf_test_source_dir(void) { return env_or("JITFLOW_SOURCE_DIR", "."); }
const char *jf_test_binary_dir(void) { return env_or("JITFLOW_BINARY_DIR", "build"); }
const char *jf_test_cli(void) { return env_or("JITFLOW_CLI", "jitflow"); }

static char test_tmpdir[PATH_MAX];
static pid_t test_tmpdir_owner;

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

/* A test binary's temporary folder goes when it exits (hundreds were left in /tmp by each
 * run of the suite), unless JITFLOW_KEEP_TEST_TMP is set to look at what a test wrote, or
 * a test failed: a failure seen once (a recording under load) can then be looked at
 * without waiting for it to happen again. */
static void remove_tmpdir(void)
{
	if (getpid() != test_tmpdir_owner)
		return; /* a forked child's exit: the folder is its parent's */
	if (failed_tests) {
		fprintf(stderr, "kept %s (a test failed)\n", test_tmpdir);
		return;
	}
	if (getenv("JITFLOW_KEEP_TEST_TMP")) {
		fprintf(stderr, "kept %s\n", test_tmpdir);
		return;
	}
	nftw(test_tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *jf_test_tmpdir(void)
{
	if (!test_tmpdir[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(test_tmpdir, sizeof(test_tmpdir), "%s/jitflow-test-XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(test_tmpdir))
			fail_msg("mkdtemp failed");
		test_tmpdir_owner = getpid();
		atexit(remove_tmpdir);
	}
	return test_tmpdir;
}

void *jf_test_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		fail_msg("cannot open %s", path);
	do {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
			if (!buf)
				fail_msg("out of memory reading %s", path);
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	if (ferror(f))
		fail_msg("cannot read %s", path);
	fclose(f);
	buf[len] = 0;
	if (size)
		*size = len;
	return buf;
}

void jf_test_write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		fail_msg("cannot create %s", path);
	if (size && fwrite(data, 1, size, f) != size)
		fail_msg("cannot write %s", path);
	fclose(f);
}

int jf_test_run(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int status;

	if (!p)
		return -1;
	for (;;) {
		size_t n;

		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap);
			if (!buf)
				fail_msg("out of memory");
		}
		n = fread(buf + len, 1, cap - len - 1, p);
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = 0;
	status = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

long jf_test_number_after(const char *text, const char *prefix)
{
	const char *p = strstr(text, prefix);

	if (!p)
		fail_msg("'%s' not found in: %.2000s", prefix, text);
	return strtol(p + strlen(prefix), NULL, 10);
}

long jf_test_recorded_instructions(const char *dir)
{
	char path[8192], *m;
	long n;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	m = jf_test_read_file(path, NULL);
	n = jf_test_number_after(m, "\"instructions\": ");
	free(m);
	return n;
}

long jf_test_perf_instructions(const char *perf_data)
{
	char cmd[8400], *out = NULL;
	long n;

	snprintf(cmd, sizeof(cmd), "perf script -i '%s' --itrace=i1i -F ip 2>/dev/null | wc -l",
		 perf_data);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("%s failed", cmd);
	n = strtol(out, NULL, 10);
	free(out);
	return n;
}

void jf_test_require_tools(const char *check_cmd, const char *what)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "(%s) >/dev/null 2>&1", check_cmd);
	if (jf_test_run(cmd, NULL) != 0)
		fail_msg("%s missing (`%s` fails): tools/setup.sh installs it; run it", what,
			 check_cmd);
}

struct jf_codemap *jf_test_capture_code(const char *name, uint64_t base)
{
	struct jf_error err = { "" };
	struct jf_codemap *map = jf_codemap_new();
	struct stat st;
	char path[4096];

	assert_non_null(map);
	snprintf(path, sizeof(path), "%s/intel-pt/%s/data", jf_test_shared_traces(), name);
	assert_int_equal(stat(path, &st), 0);
	if (jf_codemap_add_file(map, path, 0, (uint64_t)st.st_size, base, NULL, &err) < 0)
		fail_msg("%s: %s", path, err.msg);
	return map;
}

unsigned char *jf_test_concatenated_capture(const char *name, int times, int damage,
					     size_t *size)
{
	char path[1024];
	size_t n, i;
	unsigned char *one, *all;
	unsigned seed = 5;

	snprintf(path, sizeof(path), "%s/intel-pt/%s/trace", jf_test_shared_traces(), name);
	one = jf_test_read_file(path, &n);
	*size = n * (size_t)times;
	all = malloc(*size);
	assert_non_null(all);
	for (i = 0; i < (size_t)times; i++)
		memcpy(all + i * n, one, n);
	/* A fixed pseudo-random sequence: the same damage every run. */
	for (i = 0; damage && i < 40; i++) {
		seed = seed * 1103515245u + 12345u;
		all[(seed >> 8) % *size] = (unsigned char)(seed >> 24);
	}
	free(one);
	return all;
}
