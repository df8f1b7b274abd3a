#!/usr/bin/env bash
# How `jitflow stat -j N` shares its work among its threads, where wall time cannot show it
# (a machine with fewer idle cores than threads):
#   tools/bench/thread-split.sh [-b BUILD] [-r RUNS] [-j "JOBS..."] [-a ARGS] [-i] CAPTURES
# CAPTURES is a folder made by make-captures.sh. For each raw capture in it, RUNS times
# (default 5), interleaved: `stat -j 1` and `stat -j N` for each N in JOBS (default "2 4"),
# and with -a also `stat -j N ARGS` (another configuration to compare in the same run, e.g.
# "--segment-size 256K"), each under `perf record -e task-clock` (a sample every 0.2 ms of
# a thread's CPU time).
# Printed per capture and N (medians): the CPU seconds of -j 1, of -j N in all, and of -j N's
# busiest thread; "split" = CPU of -j 1 / CPU of the busiest thread: the wall-time speedup
# on an idle machine with N cores if no thread ever waited for another (an upper bound);
# "overhead" = CPU of -j N / CPU of -j 1. Benchmarks are not tests: nothing fails here.
# With -i: instructions executed (in G) instead of CPU seconds, under valgrind's callgrind
# with fair scheduling (threads run one at a time, in turn, each as fast as the others: the
# split of N idle cores, not moved by the load of a shared machine, nor by what CPU time
# adds to instructions: cache misses, page faults); about 50 times slower.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build runs=5 jobs="2 4" args="" insns=0
while getopts b:r:j:a:i opt; do
	case $opt in
	b) build=$OPTARG ;;
	r) runs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	a) args=$OPTARG ;;
	i) insns=1 ;;
	*) sed -n '2,18p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
dir=$1 jf="$build/tools/jitflow" period_ns=200000
if [ $insns = 1 ]; then
	command -v valgrind > /dev/null || { echo "thread-split: valgrind not found" >&2; exit 1; }
else
	command -v perf > /dev/null || { echo "thread-split: perf not found" >&2; exit 1; }
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# sample NAME JOBS STAT_ARGS...: one run; appends "total busiest" CPU seconds (with -i:
# G instructions) to $tmp/NAME
sample() {
	local name=$1 j=$2; shift 2
	if [ $insns = 1 ]; then
		rm -f "$tmp"/cg.*
		valgrind -q --tool=callgrind --fair-sched=yes --separate-threads=yes \
			--callgrind-out-file="$tmp/cg.%p" "$jf" stat -j "$j" "$@" > /dev/null \
			2> "$tmp/err" || {
			echo "thread-split: stat -j $j $* failed" >&2; cat "$tmp/err" >&2; exit 1; }
		cat "$tmp"/cg.*-* | awk '/^totals:/ { t += $2; if ($2 > m) m = $2 }
			END { printf "%.4f %.4f\n", t / 1e9, m / 1e9 }' >> "$tmp/$name"
		return
	fi
	perf record -q -e task-clock -c "$period_ns" -o "$tmp/perf.data" \
		"$jf" stat -j "$j" "$@" > /dev/null 2> "$tmp/err" || {
		echo "thread-split: stat -j $j $* failed" >&2; cat "$tmp/err" >&2; exit 1; }
	perf script -i "$tmp/perf.data" -F tid 2> /dev/null | sort | uniq -c |
		awk -v p="$period_ns" '{ t += $1; if ($1 > m) m = $1 }
			END { printf "%.3f %.3f\n", t * p / 1e9, m * p / 1e9 }' >> "$tmp/$name"
}

# shellcheck source=tools/bench/capture-helpers.sh
. tools/bench/capture-helpers.sh
col() { cut -d' ' -f"$2" "$tmp/$1" | median; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
unit=CPU
[ $insns = 0 ] || unit="G instr."
echo "| capture | -j | $unit -j 1 | $unit -j N | busiest thread | split | overhead |"
echo "|---|---|---|---|---|---|---|"
for k in clean errors damaged filtered timed interp; do
	[ -f "$dir/$k/trace" ] || continue
	inputs=(--raw "$dir/$k/image:$(cat "$dir/$k/base")" --pt "$dir/$k/trace")
	rm -f "$tmp"/j* "$tmp"/a*
	for ((r = 0; r < runs; r++)); do
		sample j1 1 "${inputs[@]}"
		for j in $jobs; do
			sample "j$j" "$j" "${inputs[@]}"
			# shellcheck disable=SC2086 # ARGS are words for stat
			[ -z "$args" ] || sample "a$j" "$j" $args "${inputs[@]}"
		done
	done
	one=$(col j1 1)
	for j in $jobs; do
		for name in "j$j" "a$j"; do
			[ -f "$tmp/$name" ] || continue
			all=$(col "$name" 1) busiest=$(col "$name" 2) label=$j
			[ "$name" = "j$j" ] || label="$j $args"
			awk -v k="$k" -v j="$label" -v o="$one" -v a="$all" -v b="$busiest" 'BEGIN {
				printf "| %s | %s | %.3f | %.3f | %.3f | %.2fx | %.2fx |\n", k, j, o, a,
					b, o / b, a / o }'
		done
	done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
