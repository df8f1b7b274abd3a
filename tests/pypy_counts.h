/* PyPy's own counters (the jit-backend-counts section it writes at exit) against the
 * "pypy" part of `jitflow report --json`: the oracle of the PyPy tests. The section is read
 * here with sscanf, not with jitflow's reader. */
#ifndef JITFLOW_TEST_PYPY_COUNTS_H
#define JITFLOW_TEST_PYPY_COUNTS_H

#include <cjson/cJSON.h>

/* Every "entry N:count", "TargetToken(T):count" and "bridge B:count" line of the
 * jit-backend-counts section(s) in path (a PYPYLOG file, or the section alone) must equal
 * jitflow's entries / passes; fails the running test at the first difference. Returns the
 * number of counts compared. */
int jf_test_pypy_counts_match(const cJSON *pypy, const char *path);
/* Each bridge is entered exactly when its guard exits after the bridge was attached. */
void jf_test_pypy_bridges_match_guards(const cJSON *pypy);

/* A recording made with --filter=jit, in dir: every instruction inside the filter is decoded
 * (`jitflow stat` equals the manifest's traced_instructions), with no error and nothing
 * lost, and its report's counts equal PyPy's in counts_path (as jf_test_pypy_counts_match)
 * and each bridge's entries its guard's exits. Returns the number of counts compared. */
int jf_test_pypy_filtered_recording_matches(const char *dir, const char *counts_path);

#endif
