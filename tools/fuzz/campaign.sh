#!/usr/bin/env bash
# A fuzzing campaign over every libFuzzer target, as docs/fuzzing.md describes it.
#
#   tools/fuzz/campaign.sh [BUILD] [SECONDS] [TARGET...]
#
# JITFLOW_FUZZ_RUNS=N also stops each target after N executions; JITFLOW_FUZZ_CPU=N stops it
# once it has used N seconds of CPU (SECONDS stays the cap on wall time), so that a target
# sharing the cores (at nice 10 beside builds) still gets its hour; JITFLOW_FUZZ_SEED=S fixes
# libFuzzer's random seed (the CI run does, so that what it finds replays with the same S); JITFLOW_FUZZ_WORK=DIR
# keeps the corpora, crashes and logs in DIR instead of BUILD (tools/fuzz/smoke.sh, the CI
# run, uses a fresh one).
#
# BUILD (default build-fuzz) is configured with clang, -DJITFLOW_FUZZ=ON (ASan + UBSan)
# when it does not exist yet. Each target runs SECONDS (default 180) on one core, from a
# corpus kept in BUILD/corpus/TARGET and seeded from the repository's own inputs (traces/,
# test inputs, minivm examples). Targets that reach OpenCSD 1.3.3's known crashes run in
# fork mode so the campaign looks past them; each crash found is then replayed and sorted
# by its stack (tools/fuzz/crash_kind.sh): "known OpenCSD" (one of the OpenCSD bugs that
# docs/fuzzing.md lists, crashing inside OpenCSD below any frame of ours) or "NEW". Prints
# one line per target: executions, executions/s, corpus size, wall time, crashes.
#
# The exit status is 1 when a target was not built, when a crash, leak or hang is NEW or
# does not crash again when replayed alone, or when a fuzzer exited with an error that no
# artifact it left explains.
set -uo pipefail
cd "$(dirname "$0")/../.."
src=$PWD
build=${1:-build-fuzz}
seconds=${2:-180}
shift $(( $# > 2 ? 2 : $# ))
targets=("$@")
runs=${JITFLOW_FUZZ_RUNS:-}
cpu_budget=${JITFLOW_FUZZ_CPU:-}
fuzz_seed=${JITFLOW_FUZZ_SEED:-}
work=${JITFLOW_FUZZ_WORK:-$build}
[ ${#targets[@]} -gt 0 ] || targets=($(tools/fuzz/targets.sh))

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJITFLOW_FUZZ=ON >&2 || exit 1
fi
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >&2 || exit 1

# OpenCSD's per-tree leak is suppressed by function and by library (lsan.supp): its
# libraries have no frame pointers, so the fast unwinder may stop inside them.
export ASAN_OPTIONS=allocator_may_return_null=1
export LSAN_OPTIONS=suppressions=$src/decoder/fuzz/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# fuzz_perf_archive and fuzz_recording_dir write their folders here, not in /tmp at large
mkdir -p "$work/tmp" || exit 1
TMPDIR=$(cd "$work/tmp" && pwd) || exit 1
export TMPDIR

seed() { # seed TARGET CORPUS: the repository's own inputs of that kind
  local t=$1 c=$2 d
  case $t in
    fuzz_pt_decode) cp "$src"/decoder/fuzz/corpus_pt/* "$c"/ 2>/dev/null ;;
    fuzz_perf_data|fuzz_perf_sideband)
      cp "$src"/traces/recorded-fib/perf.data "$c"/fib.data 2>/dev/null ;;
    fuzz_zone_reader|fuzz_zone_image|fuzz_zone_retime|fuzz_zone_code_read)
      for f in "$src"/traces/*/*.dump; do cp "$f" "$c/$(basename "$(dirname "$f")").dump"; done ;;
    # the zone files beside the recordings, and the one packed with CPython's (two pc maps)
    fuzz_zone_analysis)
      for f in "$src"/traces/*/*.dump; do cp "$f" "$c/$(basename "$(dirname "$f")").dump"; done
      tar -xJOf "$src"/traces/cpython-guards/recording.tar.xz --wildcards './jit-*.dump' \
        >"$c/cpython-guards.dump" 2>/dev/null ;;
    fuzz_minivm_compile) cp "$src"/tools/minivm/examples/*.mvm "$c"/ 2>/dev/null ;;
    fuzz_pypylog) cp "$src"/tests/data/pypy/* "$c"/ 2>/dev/null ;;
    fuzz_cpython_stencils) cp "$src"/tests/data/cpython/stencils_*.h "$c"/ 2>/dev/null ;;
    # the real cs_etm recordings in ../shared, when present
    fuzz_perf_cs_data)
      for f in "${JITFLOW_SHARED_TRACES:-$src/../shared/traces}"/coresight-perf/*/*.data; do
        [ -f "$f" ] && cp "$f" "$c/$(basename "$(dirname "$f")").data"
      done ;;
    fuzz_elf_image) cp "$src"/traces/recorded-fib/fib_nolibc "$c"/ ;;
    # a perf archive's layout: .build-id/xx/REST -> ../../PATH, and the file
    fuzz_perf_archive)
      d=$(mktemp -d) && mkdir -p "$d/.build-id/01" "$d/bin" &&
        cp "$src"/traces/recorded-fib/fib_nolibc "$d/bin/fib" &&
        ln -s ../../bin/fib "$d/.build-id/01/23456789abcdef0123456789abcdef01234567" &&
        tar -C "$d" -cjf "$c/archive.tar.bz2" .build-id bin &&
        tar -C "$d" -cf "$c/archive.tar" .build-id bin; rm -rf "$d" ;;
    # manifest.json NUL jit-*.dump NUL pypylog.log NUL jit-code.txt
    fuzz_recording_dir)
      for d in "$src"/traces/*/; do
        [ -f "$d/manifest.json" ] || continue
        { cat "$d/manifest.json"; printf '\0'; cat "$d"/jit-*.dump 2>/dev/null; printf '\0'
          cat "$d/pypylog.log" 2>/dev/null; printf '\0'; cat "$d/jit-code.txt" 2>/dev/null
        } >"$c/$(basename "$d")"
      done ;;
    # a report against itself, and against an empty baseline
    fuzz_check_reports)
      { cat "$src"/tools/fuzz/corpus_check/report.json; printf '\0'
        cat "$src"/tools/fuzz/corpus_check/report.json; } >"$c/same"
      { cat "$src"/tools/fuzz/corpus_check/report.json; printf '\0{"traces":[]}'; } >"$c/empty" ;;
    # a report whose series steps down at iteration 3, then a timeline with a compilation
    # and guard exits in it; a warm-up report to merge
    fuzz_warmup_inputs)
      printf '%s\0%s' \
        '{"iterations":[{"index":0,"instructions":90,"jitted_instructions":0},{"index":1,"instructions":91,"jitted_instructions":0},{"index":2,"instructions":90,"jitted_instructions":0},{"index":3,"instructions":20,"jitted_instructions":18},{"index":4,"instructions":21,"jitted_instructions":19},{"index":5,"instructions":20,"jitted_instructions":18},{"index":6,"instructions":20,"jitted_instructions":18},{"index":7,"instructions":20,"jitted_instructions":18}]}' \
        '{"traceEvents":[{"ph":"i","cat":"iteration","name":"iteration 0","ts":1},{"ph":"i","cat":"iteration","name":"iteration 1","ts":5},{"ph":"i","cat":"code","name":"compiled trace 1 (loop)","ts":6},{"ph":"i","cat":"code","name":"code freed at 0x10","ts":6},{"ph":"i","cat":"code","name":"bridge 2 attached to guard 1/2","ts":7},{"ph":"i","cat":"guard","name":"guard exit 1/2","ts":8,"args":{"trace":1,"guard":2,"exits":40}},{"ph":"i","cat":"iteration","name":"iteration 10","ts":20}]}' \
        >"$c/series"
      printf '{"warmup_benchmarks":[{"name":"b","verdict":"consistent","executions":[{"name":"b/e","iterations":9,"class":"warmup","segments":[],"changepoints":[{"iteration":3,"events":{"compiled":["x"],"guards":[{"guard":"1/2"}]}}]}]}]}' \
        >"$c/merge" ;;
  esac
  return 0
}

# classify TARGET INPUT: "known OpenCSD FUNCTION", "NEW", or "does not replay" when the
# input runs clean alone (OpenCSD's extractFrame bug reads past the bytes it is given and
# faults only where the memory after them happens not to be mapped, docs/fuzzing.md; a
# hang found while the machine was loaded may run fast alone). Each fails the run but the
# known ones: what cannot be replayed cannot be shown to be OpenCSD's.
classify() {
  local out
  out=$("$build/$(find_target "$1")" -timeout=20 -rss_limit_mb=2048 "$2" 2>&1)
  if ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error|SUMMARY' <<<"$out"; then
    echo "does not replay"
    return
  fi
  "$src/tools/fuzz/crash_kind.sh" <<<"$out"
}

find_target() { (cd "$build" && find . -name "$1" -type f -perm -u+x | head -1); }

# cpu_seconds PID: the CPU time of PID and of the children it has waited for (fork mode's
# jobs), from /proc (fields 14-17: utime, stime, cutime, cstime, in clock ticks)
cpu_seconds() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }   # the fields after the command name, which may hold spaces
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($12 + $13 + $14 + $15) / hz }' <<<"$stat"
}

# stop_at_cpu TIME_PID BUDGET FORK: interrupt the fuzzer under /usr/bin/time (TIME_PID) once its
# CPU time, with its live fork-mode job's (a child of the shell it is run by), reaches
# BUDGET seconds; libFuzzer prints its final statistics on SIGINT
stop_at_cpu() {
  local time_pid=$1 budget=$2 fork=$3 fuzzer used children pid
  while kill -0 "$time_pid" 2>/dev/null; do
    sleep 5
    fuzzer=$(pgrep -P "$time_pid" | head -1)
    [ -n "$fuzzer" ] || continue
    used=$(cpu_seconds "$fuzzer") || continue
    children=$(pgrep -d, -P "$fuzzer")
    for pid in ${children//,/ } ${children:+$(pgrep -P "$children")}; do
      used=$(( used + $(cpu_seconds "$pid" || echo 0) ))
    done
    if [ "$used" -ge "$budget" ]; then
      # SIGINT ends a plain run with its statistics; a fork-mode parent does not stop
      # for it, so it gets SIGTERM and its running job (under a shell) is ended too
      if [ "$fork" = 1 ]; then
        kill -TERM "$fuzzer" 2>/dev/null
        [ -z "$children" ] || pkill -TERM -P "$children" 2>/dev/null
      else
        kill -INT "$fuzzer" 2>/dev/null
      fi
      touch "$log.stopped" # its exit status is then the stop's, not an error
      return 0
    fi
  done
}

status=0
printf '%-22s %12s %10s %8s %7s %7s %s\n' target executions exec/s corpus wall cpu crashes
for t in "${targets[@]}"; do
  bin=$(find_target "$t")
  if [ -z "$bin" ]; then
    printf '%-22s not built\n' "$t"
    status=1
    continue
  fi
  corpus=$work/corpus/$t; crashes=$work/crashes/$t
  mkdir -p "$corpus" "$crashes"
  [ -n "$(ls -A "$corpus")" ] || seed "$t" "$corpus"
  log=$work/crashes/$t.log
  mode=(); fork=0
  case $t in fuzz_cs_frames|fuzz_cs_snapshot|fuzz_perf_cs_etm|fuzz_perf_cs_data)
    mode=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1); fork=1 ;;
  esac
  [ -z "$runs" ] || mode+=(-runs="$runs")
  [ -z "$fuzz_seed" ] || mode+=(-seed="$fuzz_seed")
  start=$(date +%s)
  # -close_fd_mask=3: the targets' own messages (parse errors) are dropped; libFuzzer keeps
  # its statistics and the sanitizers' reports on a copy of stderr.
  # /usr/bin/time: the CPU time of the fuzzer and of its fork-mode children, which is what
  # "an hour of fuzzing" means on a shared machine (the wall time is printed beside it)
  artifacts_before=$(ls "$crashes" | wc -l)
  rm -f "$log.stopped"
  /usr/bin/time -f '%U %S' -o "$log.cpu" "$build/$bin" "${mode[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -close_fd_mask=3 \
    -artifact_prefix="$crashes/" -print_final_stats=1 "$corpus" >"$log" 2>&1 &
  time_pid=$!
  watcher=""
  if [ -n "$cpu_budget" ]; then
    stop_at_cpu "$time_pid" "$cpu_budget" "$fork" &
    watcher=$!
  fi
  wait "$time_pid"
  fuzzer_status=$?
  [ -z "$watcher" ] || { kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null; }
  # a fork-mode parent's own statistics count none of its jobs' executions: its last #N does
  executed=""
  [ "$fork" = 1 ] || executed=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1)
  [ -n "$executed" ] || executed=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#')
  # every artifact of this target (earlier runs' included), by kind: crash, leak, timeout
  # (a hang), oom; each NEW one is named with the command that replays it
  known=0; new=0; unreplayed=0; kinds=""
  for kind in crash leak timeout oom; do
    n=0
    for c in "$crashes/$kind"-*; do
      [ -e "$c" ] || continue
      n=$((n + 1))
      case $(classify "$t" "$c") in
        "known OpenCSD"*) known=$((known + 1)) ;;
        "does not replay")
          unreplayed=$((unreplayed + 1))
          echo "does not replay, $kind: $build/$bin $c (the log says: $(grep -m1 -E '==[0-9]+==ERROR|ERROR: libFuzzer' "$log"))" >&2 ;;
        *)
          new=$((new + 1))
          echo "NEW $kind: $build/$bin $c" >&2 ;;
      esac
    done
    kinds="$kinds $kind $n"
  done
  wall=$(( $(date +%s) - start )); [ "$wall" -gt 0 ] || wall=1
  # the last line: GNU time puts "Command exited with non-zero status N" before it
  cpu=$(awk 'END { printf "%d", $1 + $2 }' "$log.cpu" 2>/dev/null)
  printf '%-22s %12s %10s %8s %6ss %6ss %s\n' "$t" "${executed:-?}" "$(( ${executed:-0} / wall ))" \
    "$(ls "$corpus" | wc -l)" "$wall" "${cpu:-?}" "$new new, $known known OpenCSD, $unreplayed not replaying (${kinds# }; log: $log)"
  [ "$new" -eq 0 ] && [ "$unreplayed" -eq 0 ] || status=1
  # A fuzzer that stops with an error leaves an artifact (sorted above); one that leaves
  # none failed some other way (it could not start, read its corpus, or fork its jobs).
  if [ "$fuzzer_status" -ne 0 ] && [ ! -e "$log.stopped" ] &&
     [ "$(ls "$crashes" | wc -l)" -le "$artifacts_before" ]; then
    echo "$t: the fuzzer exited with status $fuzzer_status and left no crash, leak or hang: $(tail -3 "$log")" >&2
    status=1
  fi
done
exit $status
