/* Faults while recording: the disk full (a small tmpfs) for the perf.data and
 * for the zone files, and the recorded program killed (SIGKILL) from outside. Each leaves
 * a recording that decodes up to the cut, with no decode error and the cut located, and
 * `jitflow record` says what happened in its exit status and one line naming the file.
 * The oracles: the program's own semantics (fib(25) enters fib 242785 times, its whole
 * recording's instruction count) and Linux perf's decode of the same file.
 * The tmpfs needs mount(2) (root or CAP_SYS_ADMIN): without it those tests skip with a
 * message, asked before they record. perf and qemu-x86_64 missing is a failure. */
#include "test_support.h"

#include "jitflow/zone_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpfs[1024];
static int mounted;

static const char *program(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/tests/programs/recprog_%s", jf_test_binary_dir(), name);
	return path;
}

/* Why a tmpfs cannot be mounted here (mount's message), or NULL when it can. */
static char *cannot_mount;

/* A tmpfs of kb KiB at TMP/name; 0, or -1 with mount's message in *why (malloc'd). */
static int try_mount_tmpfs(const char *name, unsigned kb, char **why)
{
	char cmd[8400], *out = NULL;

	snprintf(tmpfs, sizeof(tmpfs), "%s/%s", jf_test_tmpdir(), name);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && mount -t tmpfs -o size=%uk jitflow-test '%s' 2>&1",
		 tmpfs, kb, tmpfs);
	if (jf_test_run(cmd, &out) != 0) {
		*why = out;
		return -1;
	}
	free(out);
	mounted = 1;
	return 0;
}

/* The tests' tmpfs, which mounted once in main already (so it cannot fail for want of
 * privileges): a failure here fails the test. */
static void mount_tmpfs(const char *name, unsigned kb)
{
	char *why = NULL;

	if (try_mount_tmpfs(name, kb, &why) < 0)
		fail_msg("cannot mount a %u KiB tmpfs at %s: %s", kb, tmpfs, why);
}

static void skip_without_mount(void)
{
	if (cannot_mount)
		jf_test_skip(JF_NEED_ROOT, "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): %s",
			     cannot_mount);
}

/* After each test, passed or failed: no tmpfs is left mounted. */
static int unmount_tmpfs(void **state)
{
	char cmd[1200];

	(void)state;
	if (!mounted)
		return 0;
	mounted = 0;
	snprintf(cmd, sizeof(cmd), "umount '%s'", tmpfs);
	return jf_test_run(cmd, NULL) == 0 ? 0 : -1;
}

struct decoded {
	long instructions, errors;
	int file_cut;
	int missing_code;       /* code the decode needed and did not have */
};

static void stat_recording(const char *dir, struct decoded *d)
{
	char cmd[8400], *out = NULL;

	snprintf(cmd, sizeof(cmd), "'%s' stat --recording '%s' --json", jf_test_cli(), dir);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("%s failed: %s", cmd, out);
	d->instructions = jf_test_number_after(out, "\"instructions\":");
	d->errors = jf_test_number_after(out, "\"errors\":");
	d->file_cut = strstr(out, "\"file-cut\"") != NULL;
	d->missing_code = !strstr(out, "\"missing_code\":{\"gaps\":0,");
	free(out);
}

/* The perf.data fills a 256 KiB disk (fib(25)'s recording is ~280 KB): exit status 1, one
 * line naming the file, the offset, the reason and how much was written; the file decodes
 * to where the disk filled up, the cut located, and fewer instructions than the whole
 * recording (made first, on the ordinary disk). */
static void test_perf_data_disk_full(void **state)
{
	char cmd[16384], dir[1100], err_path[1200], *out = NULL, *err_text;
	struct decoded whole, cut;
	int status;

	(void)state;
	skip_without_mount();
	snprintf(dir, sizeof(dir), "%s/fib25", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "'%s' record -o '%s' -- '%s' 25 2>/dev/null", jf_test_cli(), dir,
		 program("fib"));
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_string_equal(out, "fib(25)=75025\n");
	free(out);
	stat_recording(dir, &whole);
	assert_int_equal(whole.instructions, jf_test_recorded_instructions(dir));
	mount_tmpfs("full-perf", 256);
	snprintf(dir, sizeof(dir), "%s/rec", tmpfs);
	snprintf(err_path, sizeof(err_path), "%s/fib25-full.err", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "'%s' record -o '%s' -- '%s' 25 2>'%s'", jf_test_cli(), dir,
		 program("fib"), err_path);
	status = jf_test_run(cmd, &out);
	free(out);
	err_text = jf_test_read_file(err_path, NULL);
	if (status != 1 || !strstr(err_text, "perf.data: write failed at offset ") ||
	    !strstr(err_text, "No space left on device") ||
	    !strstr(err_text, "bytes are in the file"))
		fail_msg("exit status %d, stderr: %s", status, err_text);
	free(err_text);
	stat_recording(dir, &cut);
	if (cut.errors != 0 || !cut.file_cut || cut.instructions < 100000 ||
	    cut.instructions >= whole.instructions)
		fail_msg("the recording cut by the full disk: %ld instructions (whole: %ld), %ld "
			 "errors, cut %s", cut.instructions, whole.instructions, cut.errors,
			 cut.file_cut ? "reported" : "not reported");
}

/* The zone file cannot be copied into the recording (the disk holds the perf.data and
 * little more): exit status 1 naming the zone file and how much of it was written; the
 * perf.data is whole and decodes (perf agrees), and the part of the zone file that was
 * written is read up to its damage, which is reported with its offset. The JIT code the
 * recorder saw run (observed-code-TID.dump, written while recording) still decodes without
 * error or missing code; without that too, the JIT code's absence is reported. */
static void test_zone_file_disk_full(void **state)
{
	char cmd[16384], dir[1100], zone_dir[1100], err_path[1200], *out = NULL, *err_text;
	long perf_size;
	int status;

	(void)state;
	skip_without_mount();
	snprintf(dir, sizeof(dir), "%s/jit-whole", jf_test_tmpdir());
	snprintf(zone_dir, sizeof(zone_dir), "%s/jit-zone", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && JITFLOW_ZONE_DIR='%s' '%s' record -o '%s' -- "
		 "'%s' >/dev/null 2>&1 && stat -c %%s '%s/perf.data'", zone_dir, zone_dir,
		 jf_test_cli(), dir, program("jit"), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	perf_size = strtol(out, NULL, 10);
	free(out);
	/* The perf.data's pages and one more, which jit-code.txt (written before the zone
	 * files are copied) takes: no room is left for the zone file. */
	mount_tmpfs("full-zone", (unsigned)((perf_size + 4095) / 4096 + 1) * 4);
	snprintf(dir, sizeof(dir), "%s/rec", tmpfs);
	snprintf(err_path, sizeof(err_path), "%s/jit-full.err", jf_test_tmpdir());
	snprintf(cmd, sizeof(cmd), "JITFLOW_ZONE_DIR='%s' '%s' record -o '%s' -- '%s' >/dev/null "
		 "2>'%s'", zone_dir, jf_test_cli(), dir, program("jit"), err_path);
	status = jf_test_run(cmd, &out);
	free(out);
	err_text = jf_test_read_file(err_path, NULL);
	if (status != 1 || !strstr(err_text, ".dump: cannot write: No space left on device (") ||
	    !strstr(err_text, "bytes written; removed"))
		fail_msg("exit status %d, stderr: %s", status, err_text);
	free(err_text);
	{
		struct decoded d, observed;
		char perf_data[1200];

		/* The observed code alone: no error, nothing missing. */
		stat_recording(dir, &observed);
		if (observed.errors != 0 || observed.missing_code)
			fail_msg("with the observed code: %ld errors, missing code %s",
				 observed.errors, observed.missing_code ? "reported" : "none");
		/* Without the zone file the JIT page's code is missing: reported, and the
		 * rest of the program decodes as perf decodes it. */
		snprintf(cmd, sizeof(cmd), "rm -f '%s'/" JF_OBSERVED_CODE_PREFIX "*.dump", dir);
		assert_int_equal(jf_test_run(cmd, NULL), 0);
		stat_recording(dir, &d);
		snprintf(perf_data, sizeof(perf_data), "%s/perf.data", dir);
		assert_false(d.file_cut);
		assert_true(d.instructions > 10000);
		if (d.errors == 0 && !d.missing_code)
			fail_msg("the JIT code's absence is not reported");
		assert_true(d.instructions <= jf_test_perf_instructions(perf_data));
		assert_true(d.instructions < observed.instructions);
	}
}

/* The recorded program killed (SIGKILL) from outside, while jitflow record goes on: exit
 * status 128 + 9 and a line saying so (and the report says so); the recording is
 * finished by the recorder, decodes
 * with no error, jitflow and perf count the same instructions, and the manifest's count
 * (which holds the last block whole, the block the program was stopped inside) exceeds
 * it by at most that one block. */
static void test_program_killed(void **state)
{
	char cmd[16384], dir[1100], err_path[1200], *out = NULL, *err_text, *manifest;
	char perf_data[1200], manifest_path[1200];
	struct decoded d;
	long recorded;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/killed-program", jf_test_tmpdir());
	snprintf(err_path, sizeof(err_path), "%s.err", dir);
	/* fib(40) runs for minutes; QEMU, which is the program, is killed by its id once
	 * 200 KB of the recording are written. */
	snprintf(cmd, sizeof(cmd),
		 "'%s' record -o '%s' -- '%s' 40 >/dev/null 2>'%s' & pid=$!; "
		 "for i in $(seq 600); do s=$(stat -c %%s '%s/perf.data' 2>/dev/null || echo 0); "
		 "[ \"$s\" -gt 200000 ] && break; sleep 0.1; done; kill -9 $(pgrep -P $pid); "
		 "wait $pid", jf_test_cli(), dir, program("fib"), err_path, dir);
	assert_int_equal(jf_test_run(cmd, NULL), 128 + 9);
	err_text = jf_test_read_file(err_path, NULL);
	if (!strstr(err_text, "was killed by signal 9"))
		fail_msg("stderr: %s", err_text);
	free(err_text);
	snprintf(manifest_path, sizeof(manifest_path), "%s/manifest.json", dir);
	manifest = jf_test_read_file(manifest_path, NULL);
	assert_non_null(strstr(manifest, "\"exit_status\": 137"));
	assert_non_null(strstr(manifest, "the program was killed by signal 9"));
	assert_non_null(strstr(manifest, "\"killed_by_signal\": 9"));
	free(manifest);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s'", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	if (!strstr(out, "the recorded program was killed by signal 9"))
		fail_msg("the report does not say the program was killed: %s", out);
	free(out);
	recorded = jf_test_recorded_instructions(dir);
	stat_recording(dir, &d);
	snprintf(perf_data, sizeof(perf_data), "%s/perf.data", dir);
	assert_int_equal(d.errors, 0);
	assert_false(d.file_cut);
	assert_true(d.instructions > 1000000);
	assert_int_equal(d.instructions, jf_test_perf_instructions(perf_data));
	/* fib's longest block is well under 64 instructions. */
	if (recorded < d.instructions || recorded - d.instructions > 64)
		fail_msg("the recorder counted %ld instructions, the decode %ld", recorded,
			 d.instructions);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_perf_data_disk_full, unmount_tmpfs),
		cmocka_unit_test_teardown(test_zone_file_disk_full, unmount_tmpfs),
		cmocka_unit_test(test_program_killed),
	};

	jf_test_require_tools("perf --version && qemu-x86_64 --version",
			      "perf (linux-perf) or qemu-x86_64 (qemu-user)");
	if (try_mount_tmpfs("probe", 64, &cannot_mount) == 0 && unmount_tmpfs(NULL) != 0)
		fail_msg("cannot unmount the probe tmpfs at %s", tmpfs);
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
