#!/usr/bin/env bash
# Wall time of `jitflow stat -j N` against `-j 1` on each raw capture, for a machine with
# as many idle cores as the most threads asked for (wall time is the figure here):
#   tools/bench/jobs-scaling.sh [-b BUILD] [-r RUNS] [-j "JOBS..."] [-s MB] CAPTURES
# CAPTURES is a folder made by make-captures.sh. Each raw capture's trace is concatenated
# until it holds at least MB megabytes (default 0: as it is; a scratch copy under
# $TMPDIR, removed at the end), so that the most threads still decode for a while. Then
# RUNS rounds (default 3), each running `stat -j N` once for every N in JOBS (default
# "1 2 4 8 16") in turn. Printed per capture and N: the median wall and CPU (user +
# system) seconds, the wall-time speed-up over the first of JOBS (the ratio of the
# medians, then the median, least and most of each round's own ratio: a machine whose
# speed moves from run to run moves the rounds, not one figure) and MB of trace per wall
# second;
# every -j N must print -j 1's counts (all lines but those on how it decoded and its
# speed). Needs bash's `time` alone (no /usr/bin/time, no perf), so that it runs on a bare
# machine beside a build and its shared libraries. Benchmarks are not tests: nothing here
# fails on a slow result.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build runs=3 jobs="1 2 4 8 16" min_mb=0
while getopts b:r:j:s: opt; do
	case $opt in
	b) build=$OPTARG ;;
	r) runs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	s) min_mb=$OPTARG ;;
	*) sed -n '2,17p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { sed -n '2,17p' "$0" >&2; exit 2; }
dir=$1 jf="$build/tools/jitflow"
[ -x "$jf" ] || { echo "jobs-scaling: $jf not found (build it first)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# shellcheck source=tools/bench/capture-helpers.sh
. tools/bench/capture-helpers.sh

# timed J INPUTS...: one `stat -j J`; appends "wall cpu" to $tmp/j$J, its output in $tmp/out.$J
timed() {
	local j=$1 t; shift
	t=$( { TIMEFORMAT='%R %U %S'; time "$jf" stat -j "$j" "$@" > "$tmp/out.$j" 2>&1; } 2>&1 ) || {
		echo "jobs-scaling: stat -j $j $* failed" >&2; cat "$tmp/out.$j" >&2; exit 1; }
	awk '{ printf "%s %.3f\n", $1, $2 + $3 }' <<< "$t" >> "$tmp/j$j"
}

echo "$(nproc) processors, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in clean errors damaged filtered timed interp; do
	k="$dir/$kind"
	[ -f "$k/trace" ] || { echo "$kind: $k/trace missing (make-captures.sh): left out"; continue; }
	trace="$k/trace" copies=1
	if [ "$(stat -c %s "$trace")" -lt $((min_mb * 1000000)) ]; then
		copies=$(concat_to_size "$k/trace" $((min_mb * 1000000)) "$tmp/trace")
		trace="$tmp/trace"
	fi
	bytes=$(stat -c %s "$trace")
	inputs=(--raw "$k/image:$(cat "$k/base")" --pt "$trace")
	for j in $jobs; do rm -f "$tmp/j$j"; done
	for ((r = 0; r < runs; r++)); do
		for j in $jobs; do timed "$j" "${inputs[@]}"; done
	done
	first=${jobs%% *}
	echo "$kind: $bytes bytes ($copies copies), $(awk '$1 == "instructions" { print $2 }' "$tmp/out.$first") instructions"
	for j in $jobs; do
		wall=$(cut -d' ' -f1 "$tmp/j$j" | median) cpu=$(cut -d' ' -f2 "$tmp/j$j" | median)
		w1=$(cut -d' ' -f1 "$tmp/j$first" | median)
		rounds=$(paste -d' ' "$tmp/j$first" "$tmp/j$j" | awk '{ print $1 / ($3 > 0 ? $3 : 0.001) }' | sort -g)
		awk -v j="$j" -v w="$wall" -v c="$cpu" -v w1="$w1" -v b="$bytes" \
			-v rm="$(median <<< "$rounds")" -v lo="$(head -1 <<< "$rounds")" -v hi="$(tail -1 <<< "$rounds")" 'BEGIN {
			if (w <= 0) w = 0.001
			printf "  -j %-3s wall %7.3f s  cpu %7.3f s  %6.2fx (per round %.2fx, %.2f-%.2fx)  %8.1f MB/s\n",
			       j, w, c, w1 / w, rm, lo, hi, b / w / 1e6 }'
		grep -E '^decode (threads|path)' "$tmp/out.$j" | sed 's/^/      /'
		cmp -s <(grep -vE '^decode ' "$tmp/out.$first") <(grep -vE '^decode ' "$tmp/out.$j") ||
			echo "      WARNING: stat -j $j's counts differ from stat -j $first's"
	done
done
