#!/usr/bin/env bash
# After `ctest --test-dir BUILD`: lists the tests that skipped, each with the reasons it
# printed, from ctest's log of the run (BUILD/Testing/Temporary/LastTest.log, which keeps
# every test's output; --output-on-failure shows only the failures').
#
#   tools/ci-summary.sh [BUILD]
#
# A test may skip only for what tools/setup.sh cannot provide, and says which with a line
# "SKIP(shared): ..." (the real captures in ../shared), "SKIP(root): ..." (root, mount(2),
# perf_event_paranoid), "SKIP(hardware): ..." or "SKIP(runtime-build): ..." (a runtime
# that tools/runtimes/NAME/build.sh builds outside the tree, as CPython's JIT). Any other skip (for want of something
# setup.sh installs or builds, or without a reason) is a broken setup: under CI=true the
# exit status is then 1. Also 1 when there is no log.
set -uo pipefail
build=${1:-build}
log=$build/Testing/Temporary/LastTest.log
if [ ! -f "$log" ]; then
  echo "ci-summary: no ctest log at $log (has ctest run in $build?)" >&2
  exit 1
fi

# One line per skipped test: NAME<TAB>ALLOWED(0/1)<TAB>REASONS (joined by " | "). The log
# says "Test Passed." for a skip too, so a skip is told by its output: a "SKIP" line, or
# cmocka's "[  SKIPPED ]" (a cmocka skip without our reason line).
skipped=$(awk '
  /^[0-9]+\/[0-9]+ Test: / { name = $3; reasons = ""; skipped = 0; other = 0; next }
  name == "" { next }
  /^SKIP/ {
    skipped = 1
    # each reason once (a program skipping several tests for one reason says it each time)
    if (index(" | " reasons " | ", " | " $0 " | ") == 0)
      reasons = reasons (reasons == "" ? "" : " | ") $0
    if ($0 !~ /^SKIP\((shared|root|hardware|runtime-build)\): /) other = 1
    next
  }
  /^\[  SKIPPED \]/ { skipped = 1; next }
  /^Test Passed\./ && skipped { printf "%s\t%d\t%s\n", name, reasons != "" && !other, reasons }
  /^Test (Passed|Failed)/ { name = "" }
' "$log")

if [ -z "$skipped" ]; then
  echo "ci-summary: no test skipped"
  exit 0
fi
echo "ci-summary: skipped tests and why"
status=0
while IFS=$'\t' read -r name allowed reasons; do
  if [ "$allowed" = 1 ]; then
    printf '  %s: %s\n' "$name" "$reasons"
  else
    printf '  %s: %s  <- not a reason to skip: tools/setup.sh provides it\n' "$name" \
      "${reasons:-(no reason printed)}"
    [ "${CI:-}" != "true" ] || status=1
  fi
done <<<"$skipped"
[ "$status" -eq 0 ] || echo "ci-summary: under CI=true a skip for want of what tools/setup.sh installs is a failure" >&2
exit $status
