#!/bin/sh
# The tests of the ASan + UBSan build (tools/setup.sh --tests makes it in build/sanitize), run as
# one test of the main suite: any sanitizer report fails its test and so this one.
dir=$1
if [ ! -f "$dir/CTestTestfile.cmake" ]; then
  echo "SKIP: no sanitizer build in $dir (tools/setup.sh --tests makes it; JITFLOW_SANITIZE_PASS=0 skips it)"
  exit 77
fi
src=$(cd "$(dirname "$0")/.." && pwd)
# OpenCSD 1.3.3 leaks 32 bytes per decode tree: decoder/fuzz/lsan.supp.
export ASAN_OPTIONS=detect_leaks=1
export LSAN_OPTIONS=suppressions=$src/decoder/fuzz/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# --no-tests=error: a label that selects nothing must not pass as an empty run.
exec ctest --test-dir "$dir" -L '^sanitize$' --output-on-failure --no-tests=error
