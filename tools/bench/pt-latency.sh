#!/usr/bin/env bash
# Latency of decoding one Intel PT buffer into its block sequence, as a tracing JIT that
# decodes online would (issue: 4 MiB in 10 ms at most):
#   tools/bench/pt-latency.sh [-b BUILD] [-r RUNS] [-m MIB] [-j JOBS] OUT
# records BUILD/tools/bench_interp_loop (tools/bench/interp_loop.c, a bytecode
# interpreter's dispatch loop) with `jitflow record --emulate --no-timing` into OUT
# (outside the source tree; made if missing, reused if it holds the buffer already), keeps
# the first MIB MiB (default 4) of its Intel PT data as the buffer, and runs
# BUILD/tools/bench_pt_latency on it RUNS times (default 21): the median, minimum and
# maximum CPU milliseconds (and the median wall milliseconds) of one decode into blocks
# (jf_pt_fast_decoder_new, caches filled afresh each run), read one record at a time
# (jf_decoder_next), in bulk (jf_decoder_next_batch) and as block ids (block_stream.h),
# and of libipt's block decoder alone, which gives the same blocks; beside them, libipt's
# packet decoder reading the buffer's packets and nothing else. With -j JOBS (> 1), also the
# records and the block ids decoded on JOBS threads (jf_pt_parallel_decoder_new,
# jf_pt_parallel_block_stream_new): CPU of all threads, and the wall time, which is the
# latency only where JOBS cores are idle.
# Benchmarks are not tests: nothing here fails on a slow result.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build runs=21 mib=4 jobs=1
while getopts b:r:m:j: opt; do
	case $opt in
	b) build=$OPTARG ;;
	r) runs=$OPTARG ;;
	m) mib=$OPTARG ;;
	j) jobs=$OPTARG ;;
	*) sed -n '2,18p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { sed -n '2,18p' "$0" >&2; exit 2; }
out=$1
jf="$build/tools/jitflow"
prog="$build/tools/bench_interp_loop"
bench="$build/tools/bench_pt_latency"
[ -x "$jf" ] && [ -x "$prog" ] && [ -x "$bench" ] || {
	echo "pt-latency: build $build first (targets jitflow, bench_interp_loop, bench_pt_latency)" >&2
	exit 1; }
case "$(realpath -m "$out")/" in
"$(realpath .)"/*) echo "pt-latency: $out is inside the source tree" >&2; exit 1 ;;
esac
mkdir -p "$out"
out=$(realpath "$out")
# shellcheck source=tools/bench/capture-helpers.sh
. tools/bench/capture-helpers.sh

if [ ! -s "$out/buffer" ]; then
	rm -rf "$out/interp.rec"
	"$jf" record --emulate --no-timing -o "$out/interp.rec" -- "$prog" > /dev/null
	exec_segment "$prog" "$out/image" > "$out/base"
	aux_data "$out/interp.rec/perf.data" > "$out/interp.aux"
	size=$(stat -c %s "$out/interp.aux")
	want=$((mib * 1024 * 1024))
	[ "$size" -ge "$want" ] || {
		echo "pt-latency: the recording has $size bytes of trace, fewer than $want" >&2
		exit 1; }
	head -c "$want" "$out/interp.aux" > "$out/buffer"
	rm -rf "$out/interp.rec" "$out/interp.aux"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$bench" -j "$jobs" "$out/image" "$(cat "$out/base")" "$out/buffer" "$runs"
