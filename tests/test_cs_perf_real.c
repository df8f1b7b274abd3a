/* cs_etm perf.data files recorded on real ARM machines (../shared/traces/coresight-perf),
 * decoded as their users hand them over: a Neoverse N1 capture with the `perf archive`
 * tarball beside it (the binary and the vDSO come from the archive's build-id cache) and an
 * Android simpleperf capture with the device's files under a sysroot (--symfs). Each gives
 * exactly the instruction sequence, CPU by CPU, that Linux perf 6.1 lists for it
 * (expected-perf-6.1-i1i.txt.gz: `perf script --itrace=i1i -F cpu,ip`, made with perf's
 * --buildid-dir and --symfs). A file under the sysroot whose build-id is not the recorded
 * one is refused and reported, not decoded. Skipped when ../shared is absent. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitflow/perf_cs_etm.h"
#include "jitflow/perf_data.h"

enum { MAX_CPUS = 64 };

struct listing {
	char *cpu[MAX_CPUS];      /* "addr\n" lines of each CPU */
	size_t len[MAX_CPUS], cap[MAX_CPUS];
	unsigned long long total;
};

static void add_line(struct listing *l, unsigned cpu, unsigned long long ip)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "%llx\n", ip);

	assert_true(cpu < MAX_CPUS);
	if (l->len[cpu] + (size_t)n + 1 > l->cap[cpu]) {
		l->cap[cpu] = l->cap[cpu] ? l->cap[cpu] * 2 : 1 << 16;
		l->cpu[cpu] = realloc(l->cpu[cpu], l->cap[cpu]);
		assert_non_null(l->cpu[cpu]);
	}
	memcpy(l->cpu[cpu] + l->len[cpu], line, (size_t)n + 1);
	l->len[cpu] += (size_t)n;
	l->total++;
}

static void free_listing(struct listing *l)
{
	unsigned i;

	for (i = 0; i < MAX_CPUS; i++)
		free(l->cpu[i]);
	memset(l, 0, sizeof(*l));
}

/* perf's listing: "[CPU]   address" per instruction. */
static void read_expected(const char *gz, struct listing *l)
{
	char cmd[1200], *out, *p;
	unsigned cpu;
	unsigned long long ip;
	int n;

	snprintf(cmd, sizeof(cmd), "gzip -dc '%s'", gz);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	for (p = out; sscanf(p, " [%u] %llx%n", &cpu, &ip, &n) == 2; p += n)
		add_line(l, cpu, ip);
	free(out);
}

/* Trace ID -> CPU, from the file's cs_etm AUXTRACE_INFO (as perf maps them). */
static void trace_id_cpus(const char *file, int cpu_of[128])
{
	struct jf_error err;
	struct jf_perf_data *d = jf_perf_data_open(file, &err);
	struct jf_perf_cursor cur;
	struct jf_perf_record rec;
	struct jf_cs_source *src;
	uint32_t *cpus;
	size_t n, i;

	assert_non_null(d);
	memset(cpu_of, -1, 128 * sizeof(int));
	jf_perf_data_begin(d, &cur);
	while (jf_perf_data_next(d, &cur, &rec, &err) > 0 &&
	       rec.type != JF_PERF_RECORD_AUXTRACE_INFO)
		;
	assert_int_equal(rec.type, JF_PERF_RECORD_AUXTRACE_INFO);
	assert_int_equal(jf_perf_cs_etm_sources(&rec, &src, &cpus, &n, &err), 0);
	for (i = 0; i < n; i++)
		cpu_of[jf_cs_source_trace_id(&src[i]) & 127] = (int)cpus[i];
	free(src);
	free(cpus);
	jf_perf_data_close(d);
}

/* jitflow's listing: its ranges (A64: 4-byte instructions) by trace ID, then CPU. With
 * HOME in a fresh folder, so no ~/.debug of this machine takes part. */
static void decode(const char *file, const char *args, struct listing *l, char **warnings)
{
	char cmd[3000], errs[700], *out;
	const char *p;
	int cpu_of[128];

	trace_id_cpus(file, cpu_of);
	snprintf(errs, sizeof(errs), "%s/stderr.txt", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "HOME='%s' '%s' decode --perf '%s' %s --format=jsonl 2>'%s'",
		 jf_test_tmpdir(), jf_test_cli(), file, args, errs);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	for (p = out; (p = strstr(p, "{\"kind\":\"range\",\"source\":")); p++) {
		unsigned src;
		unsigned long long start, end, ip;

		assert_int_equal(sscanf(p, "{\"kind\":\"range\",\"source\":%u,\"start\":\"%llx\","
					"\"end\":\"%llx\"", &src, &start, &end), 3);
		assert_true(src < 128 && cpu_of[src] >= 0);
		for (ip = start; ip < end; ip += 4)
			add_line(l, (unsigned)cpu_of[src], ip);
	}
	free(out);
	*warnings = jf_test_read_file(errs, NULL);
}

static void assert_same(const struct listing *ours, const struct listing *perf,
			const char *whose)
{
	unsigned i;

	assert_true(perf->total > 0);
	for (i = 0; i < MAX_CPUS; i++)
		assert_string_equal(ours->cpu[i] ? ours->cpu[i] : "",
				    perf->cpu[i] ? perf->cpu[i] : "");
	assert_true(ours->total == perf->total);
	fprintf(stderr, "%llu instructions, all equal to %s\n", ours->total, whose);
}

static const char *capture(const char *name)
{
	static char dir[1024];
	const char *shared = jf_test_shared_traces();

	struct stat st;

	if (!shared)
		skip();
	snprintf(dir, sizeof(dir), "%s/coresight-perf/%s", shared, name);
	if (stat(dir, &st) != 0)
		jf_test_skip(JF_NEED_SHARED, "%s is absent", dir);
	return dir;
}

/* The N1 capture with its perf archive beside it: found without being named. */
static void test_n1_with_archive_beside(void **state)
{
	struct listing ours = { 0 }, perf = { 0 };
	char file[1200], gz[1200], *warnings;
	const char *dir = capture("n1-sort-single");

	(void)state;
	snprintf(file, sizeof(file), "%s/perf.data", dir);
	snprintf(gz, sizeof(gz), "%s/expected-perf-6.1-i1i.txt.gz", dir);
	read_expected(gz, &perf);
	decode(file, "", &ours, &warnings);
	assert_same(&ours, &perf, "perf's");
	/* Nothing is missing: the binary and the vDSO came from the archive. */
	assert_null(strstr(warnings, "no code for"));
	free(warnings);
	free_listing(&ours);
	free_listing(&perf);
}

/* The same perf.data elsewhere, its archive named with --archive. */
static void test_n1_with_archive_option(void **state)
{
	struct listing ours = { 0 }, perf = { 0 };
	char file[1200], link[1200], gz[1200], args[1400], *warnings;
	const char *dir = capture("n1-sort-single");

	(void)state;
	snprintf(file, sizeof(file), "%s/perf.data", dir);
	snprintf(link, sizeof(link), "%s/n1.data", jf_test_tmpdir());
	unlink(link);
	assert_int_equal(symlink(file, link), 0);
	snprintf(gz, sizeof(gz), "%s/expected-perf-6.1-i1i.txt.gz", dir);
	snprintf(args, sizeof(args), "--archive '%s/perf.data.tar.bz2'", dir);
	read_expected(gz, &perf);
	decode(link, args, &ours, &warnings);
	assert_same(&ours, &perf, "perf's");
	free(warnings);
	free_listing(&ours);
	free_listing(&perf);

	/* Without it, the binary is missing and the warning says which build-id to find. */
	decode(link, "", &ours, &warnings);
	assert_true(ours.total == 0);
	assert_non_null(strstr(warnings, "bubblesort_singlethread/sort, build-id "
					 "ea6ce2d9fb131cbdc1775806f2b40306b871d5c0"));
	free(warnings);
	free_listing(&ours);
}

/* Pipe mode (`perf inject -o -` writes it: attrs and features as records): the same
 * instructions as the normal file, the binary given with --image-dir (a pipe carries no
 * build-id section here, so the archive cannot be used), the vDSO missing in both. */
static void test_n1_pipe_mode(void **state)
{
	struct listing normal = { 0 }, piped = { 0 };
	char cmd[8000], file[1200], pipe[800], images[800], args[1000], *w;
	const char *dir = capture("n1-sort-single");

	(void)state;
	jf_test_require_tools("perf version && command -v bzip2", "perf (linux-perf) or bzip2");
	snprintf(file, sizeof(file), "%s/perf.data", dir);
	snprintf(pipe, sizeof(pipe), "%s/n1-pipe.data", jf_test_tmpdir());
	snprintf(images, sizeof(images), "%s/n1-images", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd),
		 "set -e; perf inject -i '%s' -o - >'%s' 2>/dev/null; mkdir -p '%s'; cd '%s'; "
		 "tar -xjf '%s/perf.data.tar.bz2' home; "
		 "ln -sf \"$PWD\"/home/*/target/bubblesort_singlethread/sort/*/elf sort",
		 file, pipe, images, images, dir);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(args, sizeof(args), "--image-dir '%s'", images);
	decode(pipe, args, &piped, &w);
	free(w);
	/* The normal file through a link, so the archive beside it is not found. */
	snprintf(cmd, sizeof(cmd), "ln -sf '%s' '%s/n1-plain.data'", file, jf_test_tmpdir());
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(file, sizeof(file), "%s/n1-plain.data", jf_test_tmpdir());
	decode(file, args, &normal, &w);
	free(w);
	assert_true(piped.total > 60000);
	assert_same(&piped, &normal, "the normal file's");
	free_listing(&piped);
	free_listing(&normal);
}

/* A sysroot holding file at the path the Android device had it. */
static void make_sysroot(const char *root, const char *file)
{
	char path[4000];

	snprintf(path, sizeof(path), "mkdir -p '%s/data/local/tmp' && ln -sf '%s' "
		 "'%s/data/local/tmp/etm_test_loop'", root, file, root);
	assert_int_equal(jf_test_run(path, NULL), 0);
}

static void test_simpleperf_with_symfs(void **state)
{
	struct listing ours = { 0 }, perf = { 0 };
	char file[1200], elf[1200], gz[1200], root[800], args[1000], *warnings;
	const char *dir = capture("simpleperf-etm");

	(void)state;
	snprintf(file, sizeof(file), "%s/perf_etm.data", dir);
	snprintf(elf, sizeof(elf), "%s/etm_test_loop", dir);
	snprintf(gz, sizeof(gz), "%s/expected-perf-6.1-i1i.txt.gz", dir);
	snprintf(root, sizeof(root), "%s/sysroot", jf_test_tmpdir());
	make_sysroot(root, elf);
	snprintf(args, sizeof(args), "--symfs '%s'", root);
	read_expected(gz, &perf);
	decode(file, args, &ours, &warnings);
	assert_same(&ours, &perf, "perf's");
	free(warnings);
	free_listing(&ours);
	free_listing(&perf);

	/* Another ELF at that path (jitflow itself): its build-id differs, so it is refused
	 * and named, not decoded. */
	snprintf(root, sizeof(root), "%s/wrong-sysroot", jf_test_tmpdir());
	make_sysroot(root, jf_test_cli());
	snprintf(args, sizeof(args), "--symfs '%s'", root);
	decode(file, args, &ours, &warnings);
	assert_true(ours.total == 0);
	assert_non_null(strstr(warnings, "build-id mismatch"));
	assert_non_null(strstr(warnings, "0c9a20bf9c009d0e4e8bbf9fad0300ae"));
	free(warnings);
	free_listing(&ours);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_n1_with_archive_beside),
		cmocka_unit_test(test_n1_with_archive_option),
		cmocka_unit_test(test_n1_pipe_mode),
		cmocka_unit_test(test_simpleperf_with_symfs),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
