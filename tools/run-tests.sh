#!/usr/bin/env bash
# Run the test suite of a built tree (after `tools/setup.sh --tests`), then list the tests
# that skipped and why (tools/ci-summary.sh). Exit status: ctest's when it failed, else 1
# when the summary finds a skip that is not allowed (under CI=true: a skip for want of
# something tools/setup.sh installs), else 0. Extra arguments go to ctest (-R NAME, -j 1).
# Tests run one per core (CTEST_PARALLEL_LEVEL, default nproc): each writes only under its
# own temporary folder or its own build subfolder, so they do not meet.
#
#   tools/run-tests.sh [CTEST_ARGS...]        JITFLOW_BUILD_DIR picks the tree (build)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${JITFLOW_BUILD_DIR:-build}
status=0
export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-$(nproc)}
ctest --test-dir "$build" --output-on-failure "$@" || status=$?
if [ -f "$build/Testing/Temporary/LastTest.log" ]; then
  tools/ci-summary.sh "$build" || { [ "$status" -ne 0 ] || status=1; }
fi
exit "$status"
