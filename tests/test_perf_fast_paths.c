/* stat and decode on perf.data recordings take the fast path once the code is settled, as
 * report does: stat counts each such AUX buffer with the fast counting path
 * (count_when_fast), decode returns its blocks from the fast path. Each is checked against
 * libipt's block decoder on every buffer (--decoder=libipt-block), through the command's
 * own inputs (tools/jitflow/cli_inputs.c: the session, the zone filter, PyPy's log), on
 * the recordings checked in under traces/ (two JITs' and a plain program's), with the
 * recorded CPU's errata (the fast path hands over only where libipt works around one)
 * and without (--cpu none), each PSB+'s CBR calibrating with the nominal frequency
 * perf.data gives. What is compared: perf_fast_check.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "perf_fast_check.h"
#include "test_support.h"

/* minivm-bridge's runtime loads and patches its code in the first of its AUX buffers: the
 * decoders after it are the fast path's; recorded-fib has no JIT code and its MMAPs come
 * before the trace: all are. pypy-loop has one buffer, in which PyPy compiles: it starts
 * on the fast path, while code still changes (the zone image tells where), and hands over
 * where it meets code that will change; decode's records and stat's counts are those of
 * libipt's block decoder all the same. */
static void test_checked_in_recordings(void **state)
{
	static const char *const dirs[] = { "minivm-bridge", "pypy-loop", "recorded-fib" };
	char path[4096];
	size_t i;
	int count, cpu_none;

	(void)state;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		/* recorded-fib's program is in its folder, not at the path it was recorded at */
		const char *image_dir = strcmp(dirs[i], "recorded-fib") ? NULL : path;

		snprintf(path, sizeof(path), "%s/traces/%s", jf_test_source_dir(), dirs[i]);
		for (count = 0; count < 2; count++) {
			for (cpu_none = 0; cpu_none < 2; cpu_none++) {
				struct jf_pt_fast_report fp;
				uint64_t of, n;

				n = jf_check_perf_fast(path, image_dir, count, cpu_none, &fp,
						       &of).fast_buffers;
				assert_true(n > 0);
				if (i == 1)
					assert_true(fp.hand_overs > 0);
				assert_int_equal(fp.is_fast, 1);
				assert_true(fp.fast_bytes <= of);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checked_in_recordings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
