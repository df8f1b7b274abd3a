#!/usr/bin/env bash
# jitflow against Linux perf on the same Intel PT perf.data, in one run:
#   tools/bench/perf-vs-jitflow.sh PERF.DATA [BUILD_DIR]
# Both list every executed instruction's address (perf script --itrace=i1i -F ip versus
# jitflow decode); jitflow stat shows the cost of decoding without printing. Prints wall
# seconds, instructions per second and the ratio. Images must be where the perf.data says
# (e.g. a recording of a static program made on this machine).
set -euo pipefail
data=${1:?usage: perf-vs-jitflow.sh PERF.DATA [BUILD_DIR]}
build=${2:-build}
jf="$build/tools/jitflow"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

seconds() { # command...: wall seconds
	local s e
	s=$(date +%s.%N); "$@" > "$tmp/out" 2> /dev/null; e=$(date +%s.%N)
	echo "$e - $s" | bc
}
perf_s=$(seconds perf script -i "$data" --itrace=i1i -F ip)
perf_n=$(wc -l < "$tmp/out")
jf_s=$(seconds "$jf" decode --perf "$data")
jf_n=$(grep -vc '^\[' "$tmp/out" || true)
stat_s=$(seconds "$jf" stat --perf "$data")
bytes=$(stat -c %s "$data")
awk -v ps="$perf_s" -v pn="$perf_n" -v js="$jf_s" -v jn="$jf_n" -v ss="$stat_s" -v b="$bytes" 'BEGIN {
	printf "input: %s bytes of perf.data\n", b
	printf "perf script --itrace=i1i  %8.2f s  %12d instructions  %6.2f M insn/s\n", ps, pn, pn / ps / 1e6
	printf "jitflow decode            %8.2f s  %12d instructions  %6.2f M insn/s\n", js, jn, jn / js / 1e6
	printf "jitflow stat              %8.2f s                              %6.2f M insn/s\n", ss, jn / ss / 1e6
	printf "ratio: jitflow decode is %.1fx perf, jitflow stat %.1fx\n", ps / js, ps / ss
}'
