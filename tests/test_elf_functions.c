/* Functions found by name in an ELF file, as file offsets (jf_elf_function_offsets), with
 * the loader as the oracle: the bytes at the offset found in this test's own executable
 * are the bytes the loader mapped at the function's address. Names the file lacks give 0;
 * a missing, truncated or corrupt file gives an error naming the file, or no function,
 * never a crash. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/images.h"

int main(void);

/* Not static, so that it keeps a symbol of its own. */
__attribute__((noinline)) int jf_test_probe_function(int x);
__attribute__((noinline)) int jf_test_probe_function(int x)
{
	return x * 7 + 3;
}

static void test_offsets_are_the_mapped_bytes(void **state)
{
	static const char *const names[] = { "jf_test_probe_function", "main",
					     "no_such_function_here" };
	uint64_t offsets[3];
	struct jf_error err;
	size_t size;
	unsigned char *exe = jf_test_read_file("/proc/self/exe", &size);
	int i;

	(void)state;
	assert_non_null(exe);
	assert_int_equal(jf_elf_function_offsets("/proc/self/exe", names, 3, offsets, &err), 2);
	for (i = 0; i < 2; i++) {
		const void *code = i == 0 ? (const void *)jf_test_probe_function : (const void *)main;

		assert_true(offsets[i] > 0 && offsets[i] + 16 <= size);
		if (memcmp(exe + offsets[i], code, 16) != 0)
			fail_msg("%s: the file's bytes at offset %#llx are not the mapped function's",
				 names[i], (unsigned long long)offsets[i]);
	}
	assert_int_equal(offsets[2], 0);
	assert_int_equal(jf_test_probe_function(1), 10);
	free(exe);
}

static void test_bad_files(void **state)
{
	static const char *const names[] = { "main" };
	char path[1100];
	uint64_t offsets[1];
	struct jf_error err;
	size_t size, cut;
	unsigned char *exe = jf_test_read_file("/proc/self/exe", &size);
	int rc;

	(void)state;
	assert_non_null(exe);
	snprintf(path, sizeof(path), "%s/no-such-file", jf_test_tmpdir());
	assert_int_equal(jf_elf_function_offsets(path, names, 1, offsets, &err), -1);
	assert_non_null(strstr(err.msg, path));
	/* not an ELF file */
	snprintf(path, sizeof(path), "%s/not-elf", jf_test_tmpdir());
	jf_test_write_file(path, "#!/bin/sh\nexit 0\n", 17);
	assert_int_equal(jf_elf_function_offsets(path, names, 1, offsets, &err), -1);
	assert_non_null(strstr(err.msg, "expected the ELF magic"));
	/* cut anywhere: an error, or fewer functions, and nothing outside the file */
	snprintf(path, sizeof(path), "%s/cut", jf_test_tmpdir());
	for (cut = 0; cut < size; cut += size / 97 + 1) {
		jf_test_write_file(path, exe, cut);
		rc = jf_elf_function_offsets(path, names, 1, offsets, &err);
		assert_true(rc == -1 || rc == 0 || rc == 1);
		assert_true(offsets[0] < cut || offsets[0] == 0);
	}
	/* the section headers' offset pointed past the end */
	memset(exe + 0x28, 0xff, 8);
	jf_test_write_file(path, exe, size);
	rc = jf_elf_function_offsets(path, names, 1, offsets, &err);
	assert_true(rc <= 0);
	free(exe);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets_are_the_mapped_bytes),
		cmocka_unit_test(test_bad_files),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
