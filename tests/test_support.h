/* Helpers shared by the cmocka tests. */
#ifndef JITFLOW_TEST_SUPPORT_H
#define JITFLOW_TEST_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

/* Exit code ctest treats as "skipped" (SKIP_RETURN_CODE). */
enum { JF_TEST_SKIP = 77 };

/* The folder of real captures (../shared/traces), or NULL after printing why the test is
 * skipped when it is absent. */
const char *jf_test_shared_traces(void);

/* The repository root, the build folder, the jitflow command (from ctest's environment). */
const char *jf_test_source_dir(void);
const char *jf_test_binary_dir(void);
const char *jf_test_cli(void);

/* A fresh temporary directory (removed by the OS's tmp cleaning, not by the test). */
const char *jf_test_tmpdir(void);

/* The whole file at path, NUL-terminated (size without the NUL, if size is not NULL), in a
 * malloc'd buffer; fails the test if it cannot be read. */
void *jf_test_read_file(const char *path, size_t *size);

/* The real capture ../shared/traces/intel-pt/NAME/trace `times` times end to end (each
 * copy starts with a PSB), with 40 bytes overwritten by a fixed pseudo-random sequence
 * when damage is set (errors and resynchronisations); malloc'd, *size its bytes. */
unsigned char *jf_test_concatenated_capture(const char *name, int times, int damage,
					     size_t *size);

/* Write size bytes to path; fails the test on error. */
void jf_test_write_file(const char *path, const void *data, size_t size);

/* Run a shell command, capturing stdout into a malloc'd string (NUL-terminated); returns
 * the exit status (or -1). */
int jf_test_run(const char *cmd, char **out);

/* The number right after the first `prefix` in text ("tick=" in a program's output,
 * "\"instructions\": " in a manifest); fails the test when prefix is absent. */
long jf_test_number_after(const char *text, const char *prefix);

/* Whether Linux perf and qemu-x86_64 are installed (the recorder's tests need both);
 * prints why the test is skipped when not. */
int jf_test_have_perf_and_qemu(void);

#endif
