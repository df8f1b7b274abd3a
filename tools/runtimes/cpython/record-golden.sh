#!/usr/bin/env bash
# Records traces/cpython-guards again: its program.py run by the cached --enable-pystats
# JIT build (build.sh) under `jitflow record --emulate --filter=jit` with -X pystats, so
# that the recording and CPython's own counts come from the same run. Writes, into the
# folder: recording.tar.xz (perf.data with Intel PT of JIT code only, the zone file,
# manifest.json), pystats.txt (the oracle), code-objects.txt (the same build's facts
# about `calls` and the `scale` its executor inlines: tests/cpython/code_facts.py) and
# expected-report.txt.
#
# Usage: tools/runtimes/cpython/record-golden.sh BUILD_DIR [OUT_DIR]
#   BUILD_DIR  jitflow's build folder (its tools/jitflow and emitter library are used)
#   OUT_DIR    default traces/cpython-guards of this source tree
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
build=$(cd "${1:?usage: record-golden.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=$(cd "${2:-$src/traces/cpython-guards}" && pwd)
cache=${JITFLOW_CPYTHON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/jitflow/cpython-3.13-jit}
python=$cache/jit-pystats/python
jitflow=$build/tools/jitflow
# Code objects are named by the program's absolute path: a fixed one keeps the names
# (and the expected report) the same on every machine.
work=/tmp/jitflow-cpython-guards
stats=/tmp/py_stats             # where -X pystats writes, fixed by CPython

[ -x "$python" ] || { echo "no $python: run tools/runtimes/cpython/build.sh jit-pystats" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work" "$stats"
cp "$out/program.py" "$work/"
# The extension is compiled natively first, not inside the recording.
JITFLOW_EMIT_LIB=$build/imagemap/libjitflow-emit.so.0 PYTHONPATH=$build/tools/runtimes/cpython \
    "$python" -m jitflow_cpython build >/dev/null
ls -1 "$stats" > "$work/stats-before"
cd "$work"
env -u PYTHONPATH -u JITFLOW_ZONE_DIR -u JITFLOW_EMIT_LIB -u PYTHON_JIT \
    "$jitflow" record --emulate --filter=jit -o rec -- "$python" -X pystats program.py
new=$(ls -1 "$stats" | grep -vxFf "$work/stats-before" || true)
[ "$(printf '%s\n' "$new" | grep -c .)" = 1 ] || { echo "expected one new file in $stats, got: $new" >&2; exit 1; }
mv "$stats/$new" "$out/pystats.txt"
"$python" "$src/tests/cpython/code_facts.py" program.py calls scale > "$out/code-objects.txt"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=2026-11-29 -C rec -cf - . |
    xz -9e > "$out/recording.tar.xz"
"$jitflow" report rec > "$out/expected-report.txt"
echo "record-golden: $out: $(stat -c %s "$out/recording.tar.xz") bytes packed; $(du -sb rec | cut -f1) unpacked"
