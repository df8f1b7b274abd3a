#!/usr/bin/env bash
# Reliability campaign (issue 15), outside CI: `jitflow record` killed (SIGKILL) at a
# random moment, RUNS times (default 30), each recording of fib(40) (tests/programs/fib.c,
# which runs far longer than any kill time) decoded by jitflow and by Linux perf.
# The first three kills come 0, 5 and 20 ms after the start (before any trace is written);
# the rest at a random time in [0, MAX_MS] ms (default 1500). Each recording passes when:
#   - `jitflow stat` exits 0 with no decode error, and the cut is located (a "file-cut"
#     loss) whenever the file holds any record;
#   - jitflow's instruction count equals perf's (`perf script --itrace=i1i`), or exceeds
#     it only by the instructions of the last AUXTRACE buffer, which the cut left partial
#     (jitflow decodes what is there; perf drops the whole buffer): the difference is
#     printed;
# and over all recordings, sorted by file size, the instruction counts never go down.
# A header-only file (killed before the first record) must fail with one clear line
# naming the file, or decode to 0 instructions.
#   tools/bench/kill-recorder.sh [BUILD_DIR] [RUNS] [MAX_MS]
# Prints one line per recording and a summary; exits 1 if any fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:-build}")
runs=${2:-30}
max_ms=${3:-1500}
jf="$build/tools/jitflow"
prog="$build/tests/programs/recprog_fib"
tmp=$(mktemp -d /tmp/kill-recorder-XXXXXX); trap 'rm -rf "$tmp"' EXIT
rows="$tmp/rows"
: > "$rows"
failed=0

for i in $(seq 1 "$runs"); do
	case $i in
	1) ms=0 ;; 2) ms=5 ;; 3) ms=20 ;;
	*) ms=$(( (RANDOM * 32768 + RANDOM) % (max_ms + 1) )) ;;
	esac
	dir="$tmp/rec"
	rm -rf "$dir"
	"$jf" record -o "$dir" -- "$prog" 40 > /dev/null 2>&1 &
	pid=$!
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	# QEMU, the recorder's child, would die of SIGPIPE on its own; it is ended by its id.
	qemu=$(pgrep -P "$pid" || true)
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	[ -z "$qemu" ] || kill -9 $qemu 2>/dev/null || true
	size=$(stat -c %s "$dir/perf.data" 2>/dev/null || echo 0)
	verdict=ok
	insns=0 errors=0 cut=no perf_insns=0
	if "$jf" stat --recording "$dir" --json > "$tmp/stat" 2> "$tmp/stat.err"; then
		insns=$(grep -o '"instructions": [0-9]*' "$tmp/stat" | head -1 | grep -o '[0-9]*$')
		errors=$(grep -o '"errors": [0-9]*' "$tmp/stat" | head -1 | grep -o '[0-9]*$')
		grep -q '"file-cut"' "$tmp/stat" && cut=yes
		perf_insns=$(perf script -i "$dir/perf.data" --itrace=i1i -F ip 2>/dev/null | wc -l)
		[ "$errors" = 0 ] || verdict="FAIL(errors)"
		[ "$cut" = yes ] || [ "$insns" = 0 ] || verdict="FAIL(cut not located)"
		[ "$insns" -ge "$perf_insns" ] || verdict="FAIL(fewer than perf)"
	elif [ "$size" -le 4096 ] && [ "$(wc -l < "$tmp/stat.err")" = 1 ] &&
	     grep -q "$dir" "$tmp/stat.err"; then
		verdict="ok(no records: $(cut -c1-100 "$tmp/stat.err"))"
	else
		verdict="FAIL(stat: $(head -c 200 "$tmp/stat.err"))"
	fi
	case $verdict in FAIL*) failed=$((failed + 1)) ;; esac
	printf '%3d kill at %4d ms: %9d bytes, jitflow %10d insns, perf %10d (diff %d), errors %s, cut %s: %s\n' \
		"$i" "$ms" "$size" "$insns" "$perf_insns" $((insns - perf_insns)) "$errors" "$cut" \
		"$verdict"
	echo "$size $insns" >> "$rows"
done
# Monotone: a longer piece of the same program's recording never decodes fewer.
if ! sort -n -k1,1 -k2,2 "$rows" | awk '$2 < last { bad = 1 } { last = $2 } END { exit bad }'
then
	echo "FAIL: instruction counts go down as the file grows"
	failed=$((failed + 1))
fi
echo "summary: $runs kills, $failed failed"
[ "$failed" = 0 ]
