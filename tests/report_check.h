/* Checking a `jitflow report --json` against a runtime's own counters (minivm
 * --counters), both ways: for every trace of the runtime, entries and iterations; for
 * every guard, exits, and passes (what the runtime's counts leave for the guard: a trace's
 * iterations less the exits of the guards before it and its own); and every trace and
 * guard of the report is one the runtime had. */
#ifndef JITFLOW_TEST_REPORT_CHECK_H
#define JITFLOW_TEST_REPORT_CHECK_H

#include <stdint.h>

/* Run `jitflow report DIR --json` and compare it with the counters in counters_path.
 * Fails the running test on any difference, decode error or lost data. Returns the
 * number of guards compared. */
int jf_test_report_matches_counters(const char *dir, const char *counters_path,
				    const char *name);
/* The same with the report's inputs given as shell words (e.g. "--cs-snapshot 'D' --zone
 * 'F'") instead of a recording folder; *instructions (if not NULL) gets the number of
 * instructions the report decoded. */
int jf_test_report_inputs_match_counters(const char *inputs, const char *counters_path,
					 const char *name, uint64_t *instructions);

#endif
