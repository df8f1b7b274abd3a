/* perf's own build-id tools on a recording of ours: `jitflow record` runs a program, `perf
 * inject -b` writes the build-ids of the files it mapped into the perf.data, `perf
 * buildid-cache -a` fills a build-id cache (HOME/.debug) and `perf archive` packs it. With
 * the recorded paths hidden (--symfs of an empty folder), jitflow finds every file through
 * the cache (by default or --buildid-dir) or the archive (beside the file or --archive)
 * and decodes exactly the instructions QEMU executed (the recording's manifest); without
 * them it names each missing file with its build-id; a file of another build-id under
 * --symfs is refused. The HEADER_BUILD_ID reader takes perf's entries and rejects
 * truncated ones with their offset. A missing perf or qemu-x86_64 fails. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/perf_buildid.h"
#include "perf_builder.h"

static char dir[600], home[700], empty[700], other[700];

static int setup(void **state)
{
	char cmd[16000];

	(void)state;
	jf_test_require_tools("perf --version && qemu-x86_64 --version && command -v bzip2 && "
			      "python3 -c 'import tarfile, bz2'",
			      "perf (linux-perf), qemu-x86_64 (qemu-user), bzip2 or python3");
	snprintf(dir, sizeof(dir), "%s/rec", jf_test_tmpdir());
	snprintf(home, sizeof(home), "%s/home", jf_test_tmpdir());
	snprintf(empty, sizeof(empty), "%s/empty", jf_test_tmpdir());
	snprintf(other, sizeof(other), "%s/other", jf_test_tmpdir());
	/* Record, inject the build-ids, cache the files, pack the archive (HOME: the cache). */
	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p '%s' '%s' '%s'; '%s' record -o '%s' -- true >/dev/null 2>&1; "
		 "cd '%s'; perf inject -b -i perf.data -o inj.data 2>/dev/null; "
		 "for f in $(perf buildid-list -i inj.data 2>/dev/null | cut -d' ' -f2); do "
		 "HOME='%s' perf buildid-cache -a \"$f\"; done; "
		 "HOME='%s' perf archive inj.data >/dev/null 2>&1; "
		 "ln -sf '%s/inj.data' '%s/inj.data'",
		 home, empty, other, jf_test_cli(), dir, dir, home, home, dir, other);
	if (jf_test_run(cmd, NULL) != 0)
		fail_msg("recording, injecting the build-ids or packing the archive failed: %s", cmd);
	return 0;
}

static unsigned long long recorded_instructions(void)
{
	char path[700], *m, *p;
	unsigned long long n = 0;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	m = jf_test_read_file(path, NULL);
	p = strstr(m, "\"instructions\": ");
	assert_non_null(p);
	n = strtoull(p + 16, NULL, 10);
	free(m);
	return n;
}

/* `jitflow stat` of file with args, HOME at h: instructions, and stderr in *warnings. */
static unsigned long long stat_insns(const char *h, const char *file, const char *args,
				     char **warnings)
{
	char cmd[4000], errs[700], *out, *p;
	unsigned long long n;

	snprintf(errs, sizeof(errs), "%s/stat-stderr.txt", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "HOME='%s' '%s' stat --perf '%s' --symfs '%s' %s 2>'%s'", h,
		 jf_test_cli(), file, empty, args, errs);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	p = strstr(out, "instructions");
	assert_non_null(p);
	n = strtoull(p + 12, NULL, 10);
	free(out);
	*warnings = jf_test_read_file(errs, NULL);
	return n;
}

/* stat --json's missing_code: every gap is charged to a missing file with its build-id
 * (the program starts in the dynamic loader, so that one at least). */
static void assert_missing_code_charged(const char *file)
{
	char cmd[2400], *out, *p;
	unsigned long long gaps = 0, charged = 0, n;

	snprintf(cmd, sizeof(cmd), "HOME='%s' '%s' stat --json --perf '%s' --symfs '%s' "
		 "2>/dev/null", empty, jf_test_cli(), file, empty);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	static const char key[] = "\"missing_code\":{\"gaps\":";

	p = strstr(out, key);
	assert_non_null(p);
	gaps = strtoull(p + strlen(key), NULL, 10);
	assert_true(gaps > 0);
	assert_non_null(strstr(p, "ld-linux-x86-64.so.2\",\"build_id\":\""));
	/* Each file's ,"gaps":N (the total's is preceded by '{'). */
	while ((p = strstr(p + 1, ",\"gaps\":"))) {
		n = strtoull(p + 8, NULL, 10);
		charged += n;
	}
	assert_true(charged == gaps);
	assert_non_null(strstr(out, "\"kernel_gaps\":0,\"unmapped_gaps\":0"));
	free(out);
}

static void test_perf_archive_and_cache(void **state)
{
	char file[800], moved[800], args[1600], *w;
	unsigned long long want;

	(void)state;
	want = recorded_instructions();
	assert_true(want > 10000);
	snprintf(file, sizeof(file), "%s/inj.data", dir);
	snprintf(moved, sizeof(moved), "%s/inj.data", other);
	/* The archive beside the perf.data, found as perf names it. */
	assert_true(stat_insns(empty, file, "", &w) == want);
	assert_null(strstr(w, "no code for"));
	free(w);
	/* The archive named. */
	snprintf(args, sizeof(args), "--archive '%s/inj.data.tar.bz2'", dir);
	assert_true(stat_insns(empty, moved, args, &w) == want);
	free(w);
	/* The cache in HOME/.debug, as perf looks by default, and named. */
	assert_true(stat_insns(home, moved, "", &w) == want);
	free(w);
	snprintf(args, sizeof(args), "--buildid-dir '%s/.debug'", home);
	assert_true(stat_insns(empty, moved, args, &w) == want);
	free(w);
	/* Neither: each file is named with the build-id to look for, and stat charges the
	 * gaps where decoding stopped to the file whose code was missing. */
	assert_true(stat_insns(empty, moved, "", &w) == 0);
	assert_non_null(strstr(w, "no code for /usr/bin/true, build-id "));
	free(w);
	assert_missing_code_charged(moved);
}

static void test_wrong_file_under_symfs(void **state)
{
	char cmd[2400], root[700], file[800], *w;

	(void)state;
	/* Another ELF (jitflow itself) where the program was: not decoded, reported. */
	snprintf(root, sizeof(root), "%s/wrong", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/usr/bin' && cp '%s' '%s/usr/bin/true'", root,
		 jf_test_cli(), root);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	snprintf(file, sizeof(file), "%s/inj.data", other);
	snprintf(cmd, sizeof(cmd), "HOME='%s' '%s' stat --perf '%s' --symfs '%s' 2>&1 >/dev/null",
		 empty, jf_test_cli(), file, root);
	assert_int_equal(jf_test_run(cmd, &w), 0);
	assert_non_null(strstr(w, "no code for /usr/bin/true"));
	assert_non_null(strstr(w, "build-id mismatch"));
	free(w);
}

/* The reader itself: entries as perf writes them, then cut or broken. */
static void test_build_id_entries(void **state)
{
	static const uint8_t sha[20] = { 0xea, 0x6c, 0xe2, 0xd9, 1, 2, 3, 4, 5, 6,
					 7, 8, 9, 10, 11, 12, 13, 14, 15, 0xc0 };
	static const uint8_t md5[16] = { 0x0c, 0x9a, 0x20, 0xbf };
	struct jf_perf_build_id *ids;
	struct jf_error err;
	struct pb b;
	char hex[41];
	size_t n;

	(void)state;
	pb_init(&b);
	pb_build_id(&b, -1, 2, sha, 20, "/usr/bin/sort");
	pb_build_id(&b, -1, 1, md5, 16, "[kernel.kallsyms]");
	assert_int_equal(jf_perf_build_ids_parse(b.build_ids, b.build_ids_len, 1000, "f", &ids,
						 &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ids[0].filename, "/usr/bin/sort");
	assert_int_equal(ids[0].cpumode, 2);
	jf_build_id_hex(ids[0].id, ids[0].size, hex);
	assert_string_equal(hex, "ea6ce2d90102030405060708090a0b0c0d0e0fc0");
	assert_int_equal(ids[1].size, 16);
	assert_int_equal(ids[1].offset, 1000 + 52);
	/* perf pads 16-byte ids with zeros to 20: the same id. */
	assert_true(jf_build_id_same(ids[1].id, 16, (const uint8_t[20]){ 0x0c, 0x9a, 0x20, 0xbf },
				     20));
	assert_false(jf_build_id_same(ids[0].id, 20, md5, 16));
	free(ids);
	/* Cut inside the second entry. */
	assert_int_equal(jf_perf_build_ids_parse(b.build_ids, b.build_ids_len - 9, 1000, "f",
						 &ids, &n, &err), -1);
	assert_non_null(strstr(err.msg, "f: offset 1052: build-id entry of"));
	/* A size below the fixed part. */
	b.build_ids[6] = 8;
	b.build_ids[7] = 0;
	assert_int_equal(jf_perf_build_ids_parse(b.build_ids, b.build_ids_len, 0, "f", &ids, &n,
						 &err), -1);
	assert_non_null(strstr(err.msg, "offset 0: build-id entry of 8 bytes"));
	pb_free(&b);
}

/* Archives that are not perf's: clear errors naming the file (and the entry), nothing
 * written outside the temporary folder. */
static void test_bad_archives(void **state)
{
	static const struct {
		const char *python, *message;
	} cases[] = {
		{ "open(a, 'w').write('not a tarball')", "not a readable tar archive" },
		{ "t = tarfile.open(a, 'w:bz2'); i = tarfile.TarInfo('../escape'); "
		  "t.addfile(i, io.BytesIO(b''))", "entry '../escape': path outside" },
		{ "t = tarfile.open(a, 'w:bz2'); i = tarfile.TarInfo('.build-id/ab/cd'); "
		  "i.type = tarfile.SYMTYPE; i.linkname = '/etc/passwd'; t.addfile(i)",
		  "absolute symbolic link" },
	};
	char file[700], archive[700], cmd[3000], *out;
	struct pb b;
	size_t i;

	(void)state;
	snprintf(file, sizeof(file), "%s/plain.data", jf_test_tmpdir());
	snprintf(archive, sizeof(archive), "%s/bad.tar.bz2", jf_test_tmpdir());
	pb_init(&b);
	pb_add_attr(&b, PB_INTEL_PT_PMU, 0, PB_SAMPLE_STD, PB_ATTR_SAMPLE_ID_ALL, 1);
	pb_write(&b, file);
	pb_free(&b);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(cmd, sizeof(cmd), "python3 -c \"import tarfile, io; a = '%s'; %s\"",
			 archive, cases[i].python);
		assert_int_equal(jf_test_run(cmd, NULL), 0);
		snprintf(cmd, sizeof(cmd), "'%s' stat --perf '%s' --archive '%s' 2>&1",
			 jf_test_cli(), file, archive);
		assert_int_equal(jf_test_run(cmd, &out), 1);
		if (!strstr(out, archive) || !strstr(out, cases[i].message))
			fail_msg("case %zu: %s", i, out);
		free(out);
	}
	snprintf(cmd, sizeof(cmd), "test ! -e '%s/escape'", jf_test_tmpdir());
	assert_int_equal(jf_test_run(cmd, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_id_entries),
		cmocka_unit_test(test_bad_archives),
		cmocka_unit_test(test_perf_archive_and_cache),
		cmocka_unit_test(test_wrong_file_under_symfs),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, setup, NULL));
}
