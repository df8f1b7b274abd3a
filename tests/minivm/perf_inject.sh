#!/usr/bin/env bash
# The zone file minivm writes (jitdump + jitflow's extension records) is accepted by
# `perf inject --jit`, which turns each CODE_LOAD into a jitted-PID-N.so and skips the
# extension records; perf report then names samples in jitted code by their region names.
# Skips (77) only when perf cannot record here at all (perf_event_paranoid forbids it),
# asked of `true` before minivm runs; perf missing or minivm failing under it is a failure.
# usage: perf_inject.sh MINIVM SOURCE_DIR
set -u
minivm=$1
src=$2
command -v perf >/dev/null || { echo "FAIL: perf is not installed (tools/setup.sh installs linux-perf)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
if ! perf record -q -k mono -e cpu-clock -o probe.data true >probe.out 2>&1; then
  echo "SKIP(root): perf cannot record here: $(tail -1 probe.out)"
  exit 77
fi
# -k mono: sample times in CLOCK_MONOTONIC, the clock of the zone file's records.
# perf record exits with the program's status.
if ! perf record -q -k mono -e cpu-clock -c 100000 -o perf.data \
     "$minivm" --zone-dir . "$src/tools/minivm/examples/phase_change.mvm" >out 2>err; then
  echo "FAIL: minivm under perf record: $(tail -3 err)"
  exit 1
fi
if ! cmp -s out "$src/tools/minivm/examples/phase_change.expected"; then
  echo "FAIL: minivm's output under perf record differs from phase_change.expected"
  diff out "$src/tools/minivm/examples/phase_change.expected" | head -10
  exit 1
fi
if ! perf inject --jit -i perf.data -o perf.jit.data 2>inject.err; then
  echo "FAIL: perf inject --jit: $(tail -3 inject.err)"
  exit 1
fi
loads=$(ls jitted-*.so 2>/dev/null | wc -l)
if [ "$loads" -lt 2 ]; then
  echo "FAIL: perf inject --jit made $loads jitted-*.so files, want one per code region"
  exit 1
fi
if ! perf report -i perf.jit.data --stdio --sort sym 2>/dev/null | grep -q "trace 1 (loop at"; then
  echo "FAIL: no sample attributed to 'trace 1' after perf inject --jit"
  perf report -i perf.jit.data --stdio --sort sym 2>/dev/null | head -20
  exit 1
fi
echo "perf inject --jit accepted the zone file ($loads code regions)"
