#!/usr/bin/env bash
# Reliability campaign, outside CI: `jitflow record` killed (SIGKILL) at a
# random moment, RUNS times (default 30), each recording of fib(40) (tests/programs/fib.c,
# which runs far longer than any kill time) decoded by jitflow and by Linux perf.
# The first three kills come 0, 5 and 20 ms after the start (before any trace is written);
# the rest at a random time in [0, MAX_MS] ms (default 1500). Each recording passes when:
#   - `jitflow stat` exits 0 with no decode error, and the cut is located (a "file-cut"
#     loss) whenever the file holds any record;
#   - jitflow's instruction count equals perf's (`perf script --itrace=i1i`) on a copy
#     perf can read (perf_copy below);
# and over all recordings, sorted by file size, the instruction counts never go down.
# A header-only file (killed before the first record) must fail with one clear line
# naming the file, or decode to 0 instructions.
#   tools/bench/kill-recorder.sh [BUILD_DIR] [RUNS] [MAX_MS]
# Prints one line per recording and a summary; exits 1 if any fails. KEEP=DIR keeps the
# recordings that fail there.
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

# A little-endian u64 on stdout.
le64() {
	local v=$1 i s=""
	for i in 0 1 2 3 4 5 6 7; do
		s="$s$(printf '\\%03o' $((v & 255)))"
		v=$((v >> 8))
	done
	printf "$s"
}

# A copy of a cut perf.data that perf reads as jitflow does. perf reads nothing of a file
# whose data size is 0 ("Was the 'perf record' command properly terminated?"): the copy
# gets the size of what is there. And perf reads an AUXTRACE payload the cut left partial
# with its full size, past the end of the file: the bytes it then decodes are not in the
# file (its count changes from run to run), so the copy's last AUXTRACE record gets the
# size of the bytes present, and a PSB the cut left partial is blanked (partial_psb).
perf_copy() {
	local from=$1 size=$2 to=$3 data_off pos last=-1 w k
	cp "$from" "$to"
	data_off=$(od -An -t u8 -j 40 -N 8 "$to" | tr -d ' ')
	le64 $((size - data_off)) | dd of="$to" bs=1 seek=48 conv=notrunc status=none
	pos=$data_off
	while [ $((pos + 16)) -le "$size" ]; do
		read -r -a w <<< "$(od -An -t u2 -j "$pos" -N 16 "$to")"
		[ "${w[3]}" -ge 8 ] || break
		if [ "${w[0]}" = 71 ] && [ "${w[1]}" = 0 ]; then
			[ $((pos + 48)) -le "$size" ] || break # its header cut: perf stops there
			last=$pos
			pos=$((pos + w[3] + w[4] + (w[5] << 16) + (w[6] << 32)))
		else
			pos=$((pos + w[3]))
		fi
	done
	if [ "$last" -ge 0 ] && [ "$pos" -gt "$size" ]; then
		le64 $((size - last - 48)) | dd of="$to" bs=1 seek=$((last + 8)) conv=notrunc \
			status=none
		# A PSB the cut left partial becomes PAD packets (0x00), which perf skips.
		k=$(partial_psb "$to" "$size")
		head -c "$k" /dev/zero | dd of="$to" bs=1 seek=$((size - k)) conv=notrunc \
			status=none
	fi
}

# How many bytes at the end of the file are the start of a PSB (02 82 02 82 ...) that the
# cut left partial: perf, after its "Bad packet", reads their 0x82 bytes as TNT packets
# and decodes instructions from them.
partial_psb() {
	local file=$1 size=$2 k tail
	tail=$(tail -c 15 "$file" | od -An -tx1 | tr -d ' \n')
	for k in 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1; do
		[ $((k * 2)) -le "${#tail}" ] || continue
		if [ "${tail: -$((k * 2))}" = "$(printf '0282%.0s' 1 2 3 4 5 6 7 8 | cut -c1-$((k * 2)))" ]
		then
			echo "$k"
			return
		fi
	done
	echo 0
}

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
		insns=$(grep -o '"instructions":[0-9]*' "$tmp/stat" | head -1 | grep -o '[0-9]*$')
		errors=$(grep -o '"errors":[0-9]*' "$tmp/stat" | head -1 | grep -o '[0-9]*$')
		grep -q '"file-cut"' "$tmp/stat" && cut=yes
		perf_copy "$dir/perf.data" "$size" "$tmp/perf.data"
		perf_insns=$(perf script -i "$tmp/perf.data" --itrace=i1i -F ip 2>/dev/null | wc -l)
		[ "$errors" = 0 ] || verdict="FAIL(errors)"
		[ "$cut" = yes ] || [ "$insns" = 0 ] || verdict="FAIL(cut not located)"
		[ "$insns" = "$perf_insns" ] || verdict="FAIL(not perf's count)"
	elif [ "$size" -le 4096 ] && [ "$(wc -l < "$tmp/stat.err")" = 1 ] &&
	     grep -q "$dir" "$tmp/stat.err"; then
		verdict="ok(no records: $(cut -c1-100 "$tmp/stat.err"))"
	else
		verdict="FAIL(stat: $(head -c 200 "$tmp/stat.err"))"
	fi
	case $verdict in FAIL*)
		failed=$((failed + 1))
		[ -z "${KEEP:-}" ] || { mkdir -p "$KEEP" && cp -r "$dir" "$KEEP/kill-$i"; }
		;;
	esac
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
