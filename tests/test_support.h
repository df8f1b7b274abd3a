/* Helpers shared by the cmocka tests. */
#ifndef JITFLOW_TEST_SUPPORT_H
#define JITFLOW_TEST_SUPPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

struct jf_codemap;

/* Exit code ctest treats as "skipped" (SKIP_RETURN_CODE). */
enum { JF_TEST_SKIP = 77 };

/* What a test may skip for: only what tools/setup.sh cannot provide. A tool that setup.sh
 * installs is never a reason; its absence is a failure. */
enum jf_test_need {
	JF_NEED_SHARED,	  /* the real captures in ../shared/traces */
	JF_NEED_ROOT,	  /* root, CAP_SYS_ADMIN or a perf_event_paranoid that lets perf record */
	JF_NEED_HARDWARE, /* something of the machine itself (a CPU flag, /proc) */
	JF_NEED_RUNTIME_BUILD, /* a runtime that tools/runtimes/NAME/build.sh builds outside the
				* tree, too long for every setup (CPython's JIT: ~30 min a variant) */
};

/* Records that the program skipped something and prints "SKIP(need): reason" on stderr,
 * the line tools/ci-summary.sh reads; returns JF_TEST_SKIP, for main to return when it skips
 * everything before any test runs. */
int jf_test_skip_reason(enum jf_test_need need, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Skip the running cmocka test with a reason (see jf_test_skip_reason). cmocka 1.1.5
 * counts a skipped test as passed, so main ends with jf_test_exit, which turns a run with a
 * skip and no failure into exit status 77. */
#define jf_test_skip(need, ...)                                                        \
	do {                                                                           \
		jf_test_skip_reason(need, __VA_ARGS__);                                \
		_skip(__FILE__, __LINE__);                                             \
	} while (0)

/* cmocka's own skip() counts too (for jf_test_exit), as one without a reason, which
 * tools/ci-summary.sh reports as such: after jf_test_shared_traces returned NULL it has
 * its reason already. */
void jf_test_mark_skipped(void);
#undef skip
#define skip() (jf_test_mark_skipped(), _skip(__FILE__, __LINE__))

/* main's exit status after cmocka_run_group_tests returned `failed` (the failed tests):
 * failed when non-zero, else JF_TEST_SKIP when anything skipped, else 0. After a failure
 * the binary's temporary folder (jf_test_tmpdir) stays when it exits, named on stderr. */
int jf_test_exit(int failed);

/* The folder of real captures (../shared/traces), or NULL after recording a skip (with
 * its reason) when it is absent: the caller skips what needs it. */
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

/* A code map holding the real capture ../shared/traces/intel-pt/NAME's code (its file
 * `data`) at base; fails the test if it cannot be read. */
struct jf_codemap *jf_test_capture_code(const char *name, uint64_t base);

/* Write size bytes to path; fails the test on error. */
void jf_test_write_file(const char *path, const void *data, size_t size);

/* Run a shell command, capturing stdout into a malloc'd string (NUL-terminated); returns
 * the exit status (or -1). */
int jf_test_run(const char *cmd, char **out);

/* The number right after the first `prefix` in text ("tick=" in a program's output,
 * "\"instructions\": " in a manifest); fails the test when prefix is absent. */
long jf_test_number_after(const char *text, const char *prefix);
/* The instructions a recording ran, as its recorder counted them (dir/manifest.json). */
long jf_test_recorded_instructions(const char *dir);
/* The instructions Linux perf's decoder counts in perf_data (one sample per instruction). */
long jf_test_perf_instructions(const char *perf_data);

/* Fails the test (from main: exits 1) when one of the commands, given as a shell command
 * line, is not runnable: each is installed by tools/setup.sh, so its absence is a broken
 * setup, never a skip. `what` names the Debian packages for the message. */
void jf_test_require_tools(const char *check_cmd, const char *what);

#endif
