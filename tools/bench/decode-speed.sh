#!/usr/bin/env bash
# Decode speed of jitflow against libipt's block decoder and Linux perf, on the same inputs
# in the same run:
#   tools/bench/decode-speed.sh [-b BUILD] [-r RUNS] [-t TIMES] [-j JOBS] [-L TIMES]
#                               [RECORDING_DIR...]
#
# 1. The real Intel PT capture ../shared/traces/intel-pt/foo concatenated TIMES times
#    (default 2400: 70 MB, 283 M instructions; each copy starts with a PSB; 0: none), decoded by
#      libipt   `ptxed --block-decoder --quiet --stat` when PTXED names a ptxed binary
#               (libipt built with Intel XED, which Debian lacks; docs/performance.md
#               gives the commands that build it outside the repository); otherwise
#               BUILD/tools/libipt_block_stat, our program that drives libipt's block
#               decoder exactly as ptxed --quiet --stat does (tools/bench/libipt_block_stat.c)
#      stat     jitflow stat -j 1 (its fast counting path, the default: decoder/pt_fast.c)
#      stat-blk jitflow stat -j 1 --decoder=libipt-block (libipt's block decoder throughout)
#      report   jitflow report -j 1 (the whole analysis; blocks from the fast decoder)
#      report-blk jitflow report -j 1 --decoder=libipt-block (blocks from libipt's)
#      stat-jN, stat-blk-jN, report-jN  stat (the fast path), stat --decoder=libipt-block
#               and report with -j JOBS (default 2): segments decoded by JOBS threads;
#               compared with one thread by wall time (what threads save) and CPU time
#               (what splitting costs)
# 1b. With -L LONG: foo concatenated LONG times (e.g. 9600: 282 MB), decoded by stat -j 1
#    and stat -j JOBS only: what threads save on a long trace, where the process start and
#    each thread's cache fills (fixed costs, about 0.1 s) no longer weigh. The files of both are compared.
# 2. Each RECORDING_DIR (written by `jitflow record`), decoded by
#      stat     jitflow stat --recording DIR
#      report   jitflow report DIR (the fast path on the buffers that start once the
#               code no longer changes)
#      report-blk jitflow report --decoder=libipt-block DIR (libipt's block decoder on all)
#      perf-i   perf script --itrace=i1i -F ip (every instruction: the same work as stat)
#      perf-b   perf script --itrace=b -F ip,addr (every branch: perf's cheapest mode that
#               still gives the whole path)
#      perf-ij  perf script --itrace=i1i -F ip on the recording after
#               `perf inject --jit` (which gives perf the JIT code of the zone file)
#    perf cannot see code that is only in a zone file (JIT code), so perf-i decodes fewer
#    instructions than jitflow there (and fails on the rest); its count is printed beside
#    its time, and instructions per CPU second are compared with each tool's own count.
#    perf-ij decodes all of them where the JIT code did not change after it was loaded
#    (the script says whether its count is jitflow's: the same work).
#
# Each command runs RUNS times (default 3), interleaved, so that all tools see the same
# load (other processes share this machine). Printed per tool: the median wall time, the
# median CPU time (user + system, less sensitive to other processes than wall time), MB of
# trace and instructions per CPU second, peak RSS; then the ratios of the medians, and
# the median of each run's own ratio (both tools measured under the same load).
# BENCH_WRAP=CMD runs each timed command as CMD /usr/bin/time ... COMMAND, e.g. a script
# that pauses other jobs for the length of one run (docs/performance.md).
# Benchmarks are not tests: nothing here fails on a slow result.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build runs=3 times=2400 jobs=2 long=0
while getopts b:r:t:j:L: opt; do
	case $opt in
	b) build=$OPTARG ;;
	r) runs=$OPTARG ;;
	t) times=$OPTARG ;;
	j) jobs=$OPTARG ;;
	L) long=$OPTARG ;;
	*) sed -n '2,49p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
jf="$build/tools/jitflow"
[ -x "$jf" ] || { echo "decode-speed: $jf not built" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# run NAME COMMAND...: one timed run, appended to $tmp/NAME as "wall cpu rss_kib"
run() {
	local name=$1; shift
	${BENCH_WRAP:-} /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" > "$tmp/out.$name" 2> /dev/null || {
		echo "decode-speed: $name failed: $*" >&2; exit 1; }
	awk '{ printf "%s %.3f %s\n", $1, $2 + $3, $4 }' "$tmp/time" >> "$tmp/$name"
}

# shellcheck source=tools/bench/capture-helpers.sh
. tools/bench/capture-helpers.sh

# report NAME BYTES INSNS: the line of one tool
report() {
	local name=$1 bytes=$2 insns=$3 wall cpu rss
	wall=$(cut -d' ' -f1 "$tmp/$name" | median)
	cpu=$(cut -d' ' -f2 "$tmp/$name" | median)
	rss=$(cut -d' ' -f3 "$tmp/$name" | sort -g | tail -1)
	awk -v n="$name" -v w="$wall" -v c="$cpu" -v r="$rss" -v b="$bytes" -v i="$insns" 'BEGIN {
		if (c <= 0) c = 0.001
		printf "  %-8s wall %7.2f s  cpu %7.2f s  %8.2f MB/s  %8.2f M insn/s  peak RSS %6.1f MiB\n",
		       n, w, c, b / c / 1e6, i / c / 1e6, r / 1024 }'
}

# over X Y COLUMN: the median of tool X's COLUMN (1 wall, 2 CPU) over tool Y's (0 if Y's is 0)
over() {
	awk -v x="$(cut -d' ' -f"$3" "$tmp/$1" | median)" -v y="$(cut -d' ' -f"$3" "$tmp/$2" | median)" \
		'BEGIN { print (y > 0 ? x / y : 0) }'
}

# ratio A B: how many times faster A is than B, by CPU time (median of per-run ratios)
ratio() {
	local a=$1 b=$2 per
	per=$(paste -d' ' "$tmp/$a" "$tmp/$b" | awk '{ print ($2 > 0 ? $5 / $2 : 0) }' | median)
	printf "  %-6s is %5.2fx as fast as %-6s (CPU time; per-run ratios: median %.2fx; wall: %.2fx)\n" \
		"$a" "$(over "$b" "$a" 2)" "$b" "$per" "$(over "$b" "$a" 1)"
}

# speedup A B: how many times less wall time A took than B (medians; per-run median)
speedup() {
	local a=$1 b=$2 per
	per=$(paste -d' ' "$tmp/$a" "$tmp/$b" | awk '{ print ($1 > 0 ? $4 / $1 : 0) }' | median)
	printf "  %-9s took %5.2fx less wall time than %-6s (per-run ratios: median %.2fx); CPU time %.2fx of it\n" \
		"$a" "$(over "$b" "$a" 1)" "$b" "$per" "$(over "$a" "$b" 2)"
}

json_field() { # FILE KEY: a number from jitflow's one-line JSON
	grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2
}

shared=../shared/traces/intel-pt/foo

# foo_inputs N FILE: foo's trace concatenated N times into FILE; sets bytes and inputs
foo_inputs() {
	for ((i = 0; i < $1; i++)); do cat "$shared/trace"; done > "$2"
	bytes=$(stat -c %s "$2")
	inputs=(--raw "$shared/data:0x7ffff7819000" --pt "$2")
}

# same_stat A B: stat's outputs of runs A and B, but for the lines on how it decoded
same_stat() {
	cmp -s <(grep -v '^decode ' "$tmp/out.$1") <(grep -v '^decode ' "$tmp/out.$2") ||
		echo "  ($2 differs from $1!)"
}

if [ -d "$shared" ] && [ "$times" -gt 0 ]; then
	foo_inputs "$times" "$tmp/trace"
	if [ -n "${PTXED:-}" ]; then
		libipt=("$PTXED" --block-decoder --quiet --stat "${inputs[@]}")
		libipt_name="ptxed --block-decoder --quiet --stat"
	else
		libipt=("$build/tools/libipt_block_stat" "${inputs[@]}")
		libipt_name="libipt_block_stat (libipt's block decoder as ptxed --quiet --stat drives it)"
	fi
	"$jf" stat --json "${inputs[@]}" > "$tmp/stat.json"
	insns=$(json_field "$tmp/stat.json" instructions)
	echo "foo x$times: $bytes bytes of real Intel PT, $insns instructions"
	echo "  libipt = $libipt_name"
	echo "  load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
	rm -f "$tmp"/libipt "$tmp"/stat "$tmp"/stat-blk "$tmp"/report "$tmp"/report-blk \
		"$tmp/stat-j$jobs" \
		"$tmp/stat-blk-j$jobs" "$tmp/report-j$jobs"
	for ((r = 0; r < runs; r++)); do
		run libipt "${libipt[@]}"
		run stat "$jf" stat -j 1 "${inputs[@]}"
		run stat-blk "$jf" stat -j 1 --decoder=libipt-block "${inputs[@]}"
		run report "$jf" report -j 1 "${inputs[@]}"
		run report-blk "$jf" report -j 1 --decoder=libipt-block "${inputs[@]}"
		run "stat-j$jobs" "$jf" stat -j "$jobs" "${inputs[@]}"
		run "stat-blk-j$jobs" "$jf" stat --decoder=libipt-block -j "$jobs" "${inputs[@]}"
		run "report-j$jobs" "$jf" report -j "$jobs" "${inputs[@]}"
	done
	echo "  load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	cmp -s "$tmp/out.report" "$tmp/out.report-blk" ||
		echo "  (report differs from report --decoder=libipt-block!)"
	cmp -s "$tmp/out.report" "$tmp/out.report-j$jobs" ||
		echo "  (report -j $jobs differs from report -j 1!)"
	same_stat stat "stat-j$jobs"
	grep threads "$tmp/out.stat-j$jobs" | sed 's/^/  stat -j '"$jobs"': /'
	grep threads "$tmp/out.stat-blk-j$jobs" | sed 's/^/  stat --decoder=libipt-block -j '"$jobs"': /'
	grep -q "insn: $insns\." "$tmp/out.libipt" ||
		echo "  (libipt decoded a different count: $(grep insn "$tmp/out.libipt"))"
	grep -q "^instructions *$insns\$" "$tmp/out.stat-blk" ||
		echo "  (stat --decoder=libipt-block decoded a different count)"
	for t in libipt stat stat-blk report report-blk "stat-j$jobs" "stat-blk-j$jobs" \
		"report-j$jobs"; do
		report $t "$bytes" "$insns"
	done
	ratio stat libipt
	ratio stat-blk libipt
	ratio stat stat-blk
	ratio report libipt
	ratio stat report
	speedup "stat-j$jobs" stat
	speedup "stat-blk-j$jobs" stat-blk
	speedup "report-j$jobs" report
	speedup report report-blk
elif [ "$times" -gt 0 ]; then
	echo "decode-speed: $shared not found (needs ../shared/traces); skipping the real capture" >&2
fi

if [ -d "$shared" ] && [ "$long" -gt 0 ]; then
	foo_inputs "$long" "$tmp/long"
	"$jf" stat --json "${inputs[@]}" > "$tmp/stat.json"
	insns=$(json_field "$tmp/stat.json" instructions)
	echo "foo x$long: $bytes bytes of real Intel PT, $insns instructions"
	rm -f "$tmp/long-j1" "$tmp/long-j$jobs"
	for ((r = 0; r < runs; r++)); do
		run long-j1 "$jf" stat -j 1 "${inputs[@]}"
		run "long-j$jobs" "$jf" stat -j "$jobs" "${inputs[@]}"
	done
	same_stat long-j1 "long-j$jobs"
	grep threads "$tmp/out.long-j$jobs" | sed 's/^/  stat -j '"$jobs"': /'
	report long-j1 "$bytes" "$insns"
	report "long-j$jobs" "$bytes" "$insns"
	speedup "long-j$jobs" long-j1
	rm -f "$tmp/long"
fi

# rate_ratio A NA B NB: how many times more instructions per CPU second A gave than B, each
# counted by itself (NA and NB instructions): perf lists only the instructions it can
# decode, so its time alone says nothing of how fast it decodes
rate_ratio() {
	awk -v a="$(cut -d' ' -f2 "$tmp/$1" | median)" -v na="$2" \
	    -v b="$(cut -d' ' -f2 "$tmp/$3" | median)" -v nb="$4" -v an="$1" -v bn="$3" 'BEGIN {
		if (a <= 0) a = 0.001
		if (b <= 0 || nb <= 0) exit
		printf "  %-6s decodes %5.2fx the instructions per CPU second of %s (%.1f M/s; %.1f M/s)\n",
		       an, (na / a) / (nb / b), bn, na / a / 1e6, nb / b / 1e6 }'
}

for dir in "$@"; do
	"$jf" stat --json --recording "$dir" > "$tmp/stat.json"
	insns=$(json_field "$tmp/stat.json" instructions)
	bytes=$(json_field "$tmp/stat.json" trace_bytes)
	echo "$dir: $bytes bytes of Intel PT, $insns instructions"
	rm -f "$tmp"/stat "$tmp"/report "$tmp"/report-blk "$tmp"/perf-i "$tmp"/perf-b "$tmp"/perf-ij
	# perf sees JIT code only through `perf inject --jit`, which writes a jitted-PID-N.so
	# per code load next to the zone file (in the recording; removed again below) and a
	# perf.data that maps them: perf-ij, perf on it, decodes all of the recording when no
	# code was changed after it was loaded (a patch makes perf's copy of the code wrong).
	ls "$dir" > "$tmp/files.before"
	inject=0
	if (cd "$dir" && perf inject --jit -i perf.data -o "$tmp/perf.jit.data") 2> /dev/null; then
		inject=1
	fi
	for ((r = 0; r < runs; r++)); do
		run stat "$jf" stat --recording "$dir"
		run report "$jf" report "$dir"
		run report-blk "$jf" report --decoder=libipt-block "$dir"
		run perf-i perf script -i "$dir/perf.data" --itrace=i1i -F ip
		run perf-b perf script -i "$dir/perf.data" --itrace=b -F ip,addr
		[ $inject = 0 ] || run perf-ij perf script -i "$tmp/perf.jit.data" --itrace=i1i -F ip
	done
	ls "$dir" | comm -13 "$tmp/files.before" - | { grep '^jitted-.*\.so$' || true; } |
		while read -r f; do rm -f "$dir/$f"; done
	rm -f "$tmp/perf.jit.data"
	cmp -s "$tmp/out.report" "$tmp/out.report-blk" ||
		echo "  WARNING: report and report --decoder=libipt-block differ" >&2
	listed_i=$(wc -l < "$tmp/out.perf-i")
	for t in stat report report-blk; do report $t "$bytes" "$insns"; done
	report perf-i "$bytes" "$listed_i"
	report perf-b "$bytes" "$insns"
	echo "  (M insn/s: each tool's own count; perf-b's is jitflow's)"
	echo "  perf-i listed $listed_i instructions, perf-b $(wc -l < "$tmp/out.perf-b") branches"
	ratio report stat
	ratio report-blk report
	ratio stat perf-i
	ratio report perf-i
	ratio report perf-b
	rate_ratio report "$insns" perf-i "$listed_i"
	if [ $inject = 1 ]; then
		listed_ij=$(wc -l < "$tmp/out.perf-ij")
		report perf-ij "$bytes" "$listed_ij"
		if [ "$listed_ij" = "$insns" ]; then
			echo "  perf-ij (perf script --itrace=i1i after perf inject --jit) listed the same $insns instructions: the same work"
		else
			echo "  perf-ij (perf script --itrace=i1i after perf inject --jit) listed $listed_ij of the $insns instructions: not the same work"
		fi
		ratio report perf-ij
		rate_ratio report "$insns" perf-ij "$listed_ij"
	else
		echo "  perf-ij: perf inject --jit failed on $dir (no zone file, or not writable)"
	fi
done
