#!/usr/bin/env bash
# The many-core benchmark on a machine with idle cores, from a pack made by
# pack-for-machine.sh (no build, no libraries of this project needed there; python3 or xz
# to unpack):
#   tools/bench/many-core.sh [-s MB] [-r RUNS] PACK.tar.xz OUT
# In order, each part's output also in OUT (outside the source tree):
#   scaling.txt   jobs-scaling.sh -r RUNS -s MB (default 5 rounds, 150 MB): stat -j 1, 2,
#                 4, 8, 16 on each capture concatenated to MB megabytes, wall time
#   latency.txt   bench_pt_latency on the first 4 MiB of the interp capture: every way at
#                 -j 16 (21 runs), then the block ids on 8 and 16 threads with segments of
#                 256, 128, 64 and 32 KiB (31 runs each)
#   libxdc.txt    with xdc_bench in the pack: stat -j 1 and libxdc's driver, in turn, on
#                 clean and errors concatenated to 300 MB (7 rounds; wall, user, system
#                 seconds, and libxdc's own line)
#   captures.txt  captures-speed.sh -r 3 -j 16 (one thread against libipt, report against
#                 report --decoder=libipt-block), where the machine has time left
# The machine is described first (processors, load, C library). Benchmarks are not tests:
# nothing here fails on a slow result.
set -euo pipefail
cd "$(dirname "$0")/../.."
mb=150 runs=5
while getopts s:r: opt; do
	case $opt in
	s) mb=$OPTARG ;;
	r) runs=$OPTARG ;;
	*) sed -n '2,18p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 2 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
pack=$1 out=$2
mkdir -p "$out"
out=$(realpath "$out")
case "$out/" in
"$(realpath .)"/*) echo "many-core: $out is inside the source tree" >&2; exit 1 ;;
esac
root=$(mktemp -d); trap 'rm -rf "$root"' EXIT
if command -v xz > /dev/null; then
	xz -dc "$pack" | tar -C "$root" -xf -
else
	python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$pack" "$root"
fi
{
	echo "processors: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	lscpu 2> /dev/null | grep -E '^(Model name|Thread|Core|Socket|L3)' || true
	ldd --version 2> /dev/null | head -1 || true
} | tee "$out/machine.txt"

# The programs as BUILD/tools/NAME: run on this machine's C library where it is recent
# enough, else on the pack's through its loader.
export LD_LIBRARY_PATH="$root/lib"
build="$root/build"
mkdir -p "$build/tools"
own_libc=1
"$root/bin/jitflow" --help > /dev/null 2>&1 || own_libc=0
for b in "$root"/bin/*; do
	name=$(basename "$b")
	if [ $own_libc = 1 ]; then
		ln -s "$b" "$build/tools/$name"
	else
		printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' "$root/libc/ld-linux-x86-64.so.2" \
			"$root/lib:$root/libc" "$b" > "$build/tools/$name"
		chmod +x "$build/tools/$name"
	fi
done
echo "C library: $([ $own_libc = 1 ] && echo "this machine's" || echo "the pack's")" | tee -a "$out/machine.txt"
"$build/tools/jitflow" --help > /dev/null || { echo "many-core: jitflow does not run here" >&2; exit 1; }
caps="$root/caps"
# shellcheck source=tools/bench/capture-helpers.sh
. tools/bench/capture-helpers.sh

echo "== scaling"
TMPDIR=$root tools/bench/jobs-scaling.sh -b "$build" -r "$runs" -s "$mb" "$caps" | tee "$out/scaling.txt"

echo "== latency"
l="$caps/interp"
head -c $((4 << 20)) "$l/trace" > "$root/buffer"
{
	"$build/tools/bench_pt_latency" -j 16 "$l/image" "$(cat "$l/base")" "$root/buffer" 21
	for j in 16 8; do
		for s in 262144 131072 65536 32768; do
			echo "-j $j, segments of $s bytes:"
			"$build/tools/bench_pt_latency" -j "$j" -s "$s" "$l/image" "$(cat "$l/base")" \
				"$root/buffer" 31 "ids, threads"
		done
	done
} | tee "$out/latency.txt"

if [ -x "$build/tools/xdc_bench" ]; then
	echo "== libxdc"
	for kind in clean errors; do
		concat_to_size "$caps/$kind/trace" 300000000 "$root/$kind.big" > /dev/null
	done
	TIMEFORMAT='%R %U %S'
	for r in 1 2 3 4 5 6 7; do
		for kind in clean errors; do
			k="$caps/$kind" base=$(cat "$caps/$kind/base")
			t=$( { time "$build/tools/jitflow" stat -j 1 --raw "$k/image:$base" --pt "$root/$kind.big" > /dev/null; } 2>&1 )
			echo "round $r $kind stat $t"
			t=$( { time "$build/tools/xdc_bench" "$k/image" "$base" "$root/$kind.big" > "$root/xdc.out"; } 2>&1 )
			echo "round $r $kind libxdc $t $(cat "$root/xdc.out")"
		done
	done | tee "$out/libxdc.txt"
	rm -f "$root"/*.big
fi

echo "== one thread"
# captures-speed.sh times with /usr/bin/time: the pack's where the machine has none.
[ -x /usr/bin/time ] || cp "$root/bin/time" /usr/bin/time 2> /dev/null ||
	{ echo "many-core: no /usr/bin/time here, and none could be put there: one thread left out"; exit 0; }
if [ -x "$build/tools/xdc_bench" ]; then export LIBXDC_BENCH="$build/tools/xdc_bench"; fi
tools/bench/captures-speed.sh -b "$build" -r 3 -j 16 "$caps" | tee "$out/captures.txt"
