#!/usr/bin/env bash
# Decode speed of `jitflow stat` on several kinds of Intel PT capture, beside libipt's block
# decoder (and libxdc where built), all in the same run:
#   tools/bench/captures-speed.sh [-b BUILD] [-r RUNS] [-j JOBS] DIR
# DIR is made by tools/bench/make-captures.sh (clean, errors, damaged, filtered, timed,
# interp, recording). For each raw capture the tools run RUNS times (default 5),
# interleaved so that all see the same load (other processes share the machine):
#   libipt   BUILD/tools/libipt_block_stat: libipt's block decoder driven as
#            `ptxed --block-decoder --quiet --stat` drives it (ptxed needs Intel XED, which
#            Debian lacks; tools/bench/libipt_block_stat.c)
#   stat-j1  jitflow stat -j 1 (the fast path, decoder/pt_fast.c)
#   stat-jN  jitflow stat -j JOBS (default 2)
#   report   jitflow report -j 1 (blocks from the fast path: jf_pt_fast_decoder_new, whose
#            hand-overs take over again where the block decoder resynchronises)
#   report-blk  jitflow report -j 1 --decoder=libipt-block (libipt's block decoder only)
#   libxdc   with LIBXDC_BENCH=PROGRAM: PROGRAM IMAGE BASE TRACE, a driver of libxdc
#            (github:nyx-fuzz/libxdc) built outside the repository; it prints
#            "result R ..." (R 0: decoder_success; libxdc gives only a coverage bitmap)
# and for DIR/recording, DIR/recording-filtered and DIR/recording-loop where present
# (perf.data with timing, decoded per AUX buffer): jitflow stat --recording and jitflow
# report --recording, each with the fast path (on the buffers that start once the code
# is settled: decoder/perf_session.c) and with --decoder=libipt-block; the stats must agree but for the lines on how they decoded
# and the block count, the reports in full.
# Printed per capture: the median wall and CPU (user + system) seconds, MB of trace per CPU
# second, instructions counted by each tool (stat -j 1 and -j JOBS must agree on every
# line but those on how they decoded; libipt 2.0's count differs where the capture has
# the status errors that jitflow reports as libipt 2.1's ptxed does: pt_status_check.h),
# then a table: stat -j 1 against libipt by CPU time, MB/s, -j JOBS against -j 1 by wall
# time and by CPU time (on a loaded machine wall time says little of what threads save),
# and report against report --decoder=libipt-block by CPU time.
# Benchmarks are not tests: nothing here fails on a slow result.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build runs=5 jobs=2
while getopts b:r:j: opt; do
	case $opt in
	b) build=$OPTARG ;;
	r) runs=$OPTARG ;;
	j) jobs=$OPTARG ;;
	*) sed -n '2,31p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# = 1 ] || { sed -n '2,31p' "$0" >&2; exit 2; }
dir=$1
jf="$build/tools/jitflow"
blk="$build/tools/libipt_block_stat"
[ -x "$jf" ] && [ -x "$blk" ] || { echo "captures-speed: build $build first" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# run NAME COMMAND...: one timed run, appended to $tmp/NAME as "wall cpu"
run() {
	local name=$1; shift
	/usr/bin/time -f "%e %U %S" -o "$tmp/time" "$@" > "$tmp/out.$name" 2>&1 || {
		echo "captures-speed: $name failed: $*" >&2; cat "$tmp/out.$name" >&2; exit 1; }
	awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$tmp/time" >> "$tmp/$name"
}

# shellcheck source=tools/bench/capture-helpers.sh
. tools/bench/capture-helpers.sh
col() { cut -d' ' -f"$2" "$tmp/$1" | median; }

# line NAME BYTES INSNS: one tool's medians
line() {
	awk -v n="$1" -v w="$(col "$1" 1)" -v c="$(col "$1" 2)" -v b="$2" -v i="$3" 'BEGIN {
		if (c <= 0) c = 0.001
		printf "  %-8s wall %7.3f s  cpu %7.3f s  %8.2f MB/s  %12s insns\n", n, w, c, b / c / 1e6, i }'
}

stat_insns() { awk '$1 == "instructions" { print $2 }' "$tmp/out.$1"; }
how() { grep -E '^decode (threads|path)' "$tmp/out.$1" | sed 's/^/    /'; }

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
table=()
for kind in clean errors damaged filtered timed interp; do
	k="$dir/$kind"
	if [ ! -f "$k/trace" ]; then
		# Folders made before make-captures.sh made interp lack it; the others are needed.
		[ "$kind" = interp ] && { echo "interp: $k/trace missing (make-captures.sh makes it): left out"; continue; }
		echo "captures-speed: $k/trace missing (make-captures.sh)" >&2; exit 1
	fi
	base=$(cat "$k/base")
	inputs=(--raw "$k/image:$base" --pt "$k/trace")
	bytes=$(stat -c %s "$k/trace")
	names=(libipt stat-j1 "stat-j$jobs" report report-blk)
	[ -z "${LIBXDC_BENCH:-}" ] || names+=(libxdc)
	for n in "${names[@]}"; do rm -f "$tmp/$n"; done
	for ((r = 0; r < runs; r++)); do
		run libipt "$blk" "${inputs[@]}"
		run stat-j1 "$jf" stat -j 1 "${inputs[@]}"
		run "stat-j$jobs" "$jf" stat -j "$jobs" "${inputs[@]}"
		run report "$jf" report -j 1 "${inputs[@]}"
		run report-blk "$jf" report -j 1 --decoder=libipt-block "${inputs[@]}"
		[ -z "${LIBXDC_BENCH:-}" ] || run libxdc "$LIBXDC_BENCH" "$k/image" "$base" "$k/trace"
	done
	insns=$(stat_insns stat-j1)
	echo "$kind: $bytes bytes of trace"
	line libipt "$bytes" "$(awk '/^insn:/ { print $2 + 0 }' "$tmp/out.libipt")"
	line stat-j1 "$bytes" "$insns"
	how stat-j1
	line "stat-j$jobs" "$bytes" "$(stat_insns "stat-j$jobs")"
	how "stat-j$jobs"
	cmp -s <(grep -v '^decode ' "$tmp/out.stat-j1") <(grep -v '^decode ' "$tmp/out.stat-j$jobs") ||
		echo "  WARNING: stat -j $jobs's counts differ from stat -j 1's"
	line report "$bytes" "$insns"
	line report-blk "$bytes" "$insns"
	cmp -s "$tmp/out.report" "$tmp/out.report-blk" ||
		echo "  WARNING: report differs from report --decoder=libipt-block"
	xdc=-
	if [ -n "${LIBXDC_BENCH:-}" ]; then
		line libxdc "$bytes" -
		result=$(awk '$1 == "result" { print $2 }' "$tmp/out.libxdc")
		xdc=$(awk -v c="$(col libxdc 2)" -v b="$bytes" 'BEGIN { printf "%.1f", b / (c > 0 ? c : 0.001) / 1e6 }')
		[ "$result" = 0 ] || xdc="$xdc (fails: result $result)"
		echo "    libxdc: $(grep '^result' "$tmp/out.libxdc")"
	fi
	table+=("$(awk -v k="$kind" -v b="$bytes" -v l="$(col libipt 2)" -v s="$(col stat-j1 2)" \
		-v w1="$(col stat-j1 1)" -v wn="$(col "stat-j$jobs" 1)" -v x="$xdc" \
		-v c1="$(col stat-j1 2)" -v cn="$(col "stat-j$jobs" 2)" \
		-v r="$(col report 2)" -v rb="$(col report-blk 2)" 'BEGIN {
		if (s <= 0) s = 0.001; if (l <= 0) l = 0.001; if (wn <= 0) wn = 0.001
		if (cn <= 0) cn = 0.001; if (r <= 0) r = 0.001
		printf "| %s | %.1f | %.2fx | %.1f | %.1f | %s | %.2fx | %.2fx | %.2fx |", k,
		       b / 1e6, l / s, b / s / 1e6, b / l / 1e6, x, w1 / wn, c1 / cn, rb / r }')")
done

for rec in recording recording-filtered recording-loop; do
	[ -f "$dir/$rec/perf.data" ] || continue
	rm -f "$tmp/rec-fast" "$tmp/rec-blk" "$tmp/rec-report" "$tmp/rec-report-blk"
	for ((r = 0; r < runs; r++)); do
		run rec-fast "$jf" stat --recording "$dir/$rec"
		run rec-blk "$jf" stat --recording "$dir/$rec" --decoder=libipt-block
		run rec-report "$jf" report --recording "$dir/$rec"
		run rec-report-blk "$jf" report --recording "$dir/$rec" --decoder=libipt-block
	done
	bytes=$(awk '$1 == "trace" && $2 == "bytes" { print $3 }' "$tmp/out.rec-fast")
	insns=$(stat_insns rec-fast)
	echo "$rec (stat --recording, report --recording): $bytes bytes of trace"
	line rec-fast "$bytes" "$insns"
	how rec-fast
	line rec-blk "$bytes" "$(stat_insns rec-blk)"
	cmp -s <(grep -vE '^(decode|blocks) ' "$tmp/out.rec-fast") \
		<(grep -vE '^(decode|blocks) ' "$tmp/out.rec-blk") ||
		echo "  WARNING: stat --recording's counts differ from --decoder=libipt-block's"
	line rec-report "$bytes" "$insns"
	line rec-report-blk "$bytes" "$insns"
	cmp -s "$tmp/out.rec-report" "$tmp/out.rec-report-blk" ||
		echo "  WARNING: report --recording differs from --decoder=libipt-block"
	awk -v k="$rec" -v s="$(col rec-fast 2)" -v sb="$(col rec-blk 2)" -v r="$(col rec-report 2)" \
		-v rb="$(col rec-report-blk 2)" 'BEGIN {
		if (s <= 0) s = 0.001; if (r <= 0) r = 0.001
		printf "  %s: stat %.2fx its --decoder=libipt-block, report %.2fx (CPU)\n",
		       k, sb / s, rb / r }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| capture | MB | stat -j 1 vs libipt (CPU) | stat -j 1 MB/s | libipt MB/s | libxdc MB/s | -j $jobs vs -j 1 (wall) | -j 1 CPU / -j $jobs CPU | report vs report-blk (CPU) |"
echo "|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${table[@]}"
