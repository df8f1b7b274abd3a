#!/usr/bin/env bash
# The JIT's speed-up over the interpreter on each example: mean CPU time (perf stat's
# task-clock) and mean wall time over N runs of `minivm --jit=off` and `--jit=on`.
# usage: tools/minivm/speedup.sh MINIVM [N] [PROGRAM.mvm...]   (default: 20 runs, examples/)
set -eu
minivm=$1
runs=${2:-20}
shift $(( $# >= 2 ? 2 : 1 ))
[ $# -gt 0 ] || set -- "$(dirname "$0")"/examples/*.mvm
mean_ms() { # mode program -> "cpu_ms wall_ms" (means over the runs)
  perf stat -r "$runs" -e task-clock "$minivm" --jit="$1" "$2" 2>&1 >/dev/null |
    awk '/task-clock/{c=$1} /seconds time elapsed/{w=$1*1000} END{printf "%.2f %.2f", c, w}'
}
printf '| %-20s | %9s | %9s | %8s | %9s | %9s | %8s |\n' program "cpu off" "cpu on" speed-up \
  "wall off" "wall on" speed-up
for program in "$@"; do
  read -r cpu_off wall_off <<<"$(mean_ms off "$program")"
  read -r cpu_on wall_on <<<"$(mean_ms on "$program")"
  awk -v p="$(basename "$program")" -v a="$cpu_off" -v b="$cpu_on" -v c="$wall_off" -v d="$wall_on" \
    'BEGIN{printf "| %-20s | %6.1f ms | %6.1f ms | %7.2fx | %6.1f ms | %6.1f ms | %7.2fx |\n", p, a, b, a/b, c, d, c/d}'
done
