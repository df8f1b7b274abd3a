#!/usr/bin/env bash
# A fuzzing campaign over every libFuzzer target, as docs/fuzzing.md describes it.
#
#   tools/fuzz/campaign.sh [BUILD] [SECONDS] [TARGET...]
#
# BUILD (default build-fuzz) is configured with clang, -DJITFLOW_FUZZ=ON (ASan + UBSan)
# when it does not exist yet. Each target runs SECONDS (default 180) on one core, from a
# corpus kept in BUILD/corpus/TARGET and seeded from the repository's own inputs (traces/,
# test inputs, minivm examples). Targets that reach OpenCSD 1.3.3's known crashes run in
# fork mode so the campaign looks past them; each crash found is then replayed and sorted
# by its stack: "known OpenCSD" (frames only inside libopencsd, see docs/fuzzing.md) or
# "NEW". Prints one line per target: executions, executions/s, corpus size, crashes.
set -uo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
build=${1:-build-fuzz}
seconds=${2:-180}
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_pt_decode fuzz_perf_data fuzz_perf_cs_etm fuzz_cs_snapshot
                                     fuzz_cs_frames fuzz_zone_reader fuzz_zone_image fuzz_pypylog
                                     fuzz_qemu_log fuzz_plugin_stream fuzz_zone_retime
                                     fuzz_minivm_compile)

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFLOW_FUZZ=ON >&2 || exit 1
fi
cmake --build "$build" -j"$(nproc)" >&2 || exit 1

# OpenCSD's per-tree leak is suppressed by function and by library (lsan.supp): its
# libraries have no frame pointers, so the fast unwinder may stop inside them.
export ASAN_OPTIONS=allocator_may_return_null=1
export LSAN_OPTIONS=suppressions=$src/decoder/fuzz/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

seed() { # seed TARGET CORPUS: the repository's own inputs of that kind
  local t=$1 c=$2
  case $t in
    fuzz_pt_decode) cp "$src"/decoder/fuzz/corpus_pt/* "$c"/ 2>/dev/null ;;
    fuzz_perf_data) cp "$src"/traces/recorded-fib/perf.data "$c"/fib.data 2>/dev/null ;;
    fuzz_zone_reader|fuzz_zone_image|fuzz_zone_retime)
      for f in "$src"/traces/*/*.dump; do cp "$f" "$c/$(basename "$(dirname "$f")").dump"; done ;;
    fuzz_minivm_compile) cp "$src"/tools/minivm/examples/*.mvm "$c"/ 2>/dev/null ;;
    fuzz_pypylog) cp "$src"/tests/data/pypy/* "$c"/ 2>/dev/null ;;
  esac
  return 0
}

# A crash is OpenCSD's own when every frame of ours below it is the decode tree's caller
# and the top frames are inside libopencsd.
classify() { # classify TARGET INPUT
  local out
  out=$("$build/$(find_target "$1")" "$2" 2>&1 | grep -E '^ +#[0-9]+ ' | head -4)
  if grep -qE 'libopencsd|TrcPktDecode|TraceFmtDcdImpl|ocsd_' <<<"$(head -2 <<<"$out")"; then
    echo "known OpenCSD"
  else
    echo "NEW"
  fi
}

find_target() { (cd "$build" && find . -name "$1" -type f -perm -u+x | head -1); }

printf '%-22s %12s %10s %8s %s\n' target executions exec/s corpus crashes
for t in "${targets[@]}"; do
  bin=$(find_target "$t")
  if [ -z "$bin" ]; then
    printf '%-22s not built\n' "$t"
    continue
  fi
  corpus=$build/corpus/$t; crashes=$build/crashes/$t
  mkdir -p "$corpus" "$crashes"
  [ -n "$(ls -A "$corpus")" ] || seed "$t" "$corpus"
  log=$build/crashes/$t.log
  mode=()
  case $t in fuzz_cs_frames|fuzz_cs_snapshot|fuzz_perf_cs_etm)
    mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1) ;;
  esac
  "$build/$bin" "${mode[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/" -print_final_stats=1 "$corpus" >"$log" 2>&1
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  [ -n "$runs" ] || runs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
  known=0; new=0
  for c in "$crashes"/crash-* "$crashes"/timeout-* "$crashes"/leak-*; do
    [ -e "$c" ] || continue
    if [ "$(classify "$t" "$c")" = "known OpenCSD" ]; then known=$((known + 1)); else new=$((new + 1)); fi
  done
  printf '%-22s %12s %10s %8s %s\n' "$t" "${runs:-?}" "$(( ${runs:-0} / seconds ))" \
    "$(ls "$corpus" | wc -l)" "$new new, $known known OpenCSD (log: $log)"
done
