#!/usr/bin/env bash
# Thread ids when threads start together, outside CI: RUNS recordings (default
# 30) per backend of tests/programs/threadstart.c (4 workers started back to back, worker
# K calling work() 1000 (K + 1) times through a pointer and printing its gettid) with
# `jitflow record --backend=B`, for each backend of BACKENDS (default "plugin log"). A
# recording is right when, for every worker, under the thread id the worker printed, Linux
# perf (`perf script --itrace=b`: calls to work) and jitflow (`jitflow decode --blocks
# --format=jsonl`: blocks starting at work, by the thread of their trace buffer) both
# count exactly the worker's calls, and perf reports no decode error. A swapped id shows
# as two workers' counts under each other's ids. Prints one line per recording and a
# summary per backend; exits 1 if any recording is wrong.
#   tools/bench/tid-check.sh [BUILD_DIR] [RUNS]
# tests/test_signals.c makes 3 such recordings (plugin backend) in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:-build}")
runs=${2:-30}
backends=${BACKENDS:-plugin log}
jf="$build/tools/jitflow"
prog="$build/tests/programs/recprog_threadstart"
tmp=$(mktemp -d /tmp/tid-check-XXXXXX); trap 'rm -rf "$tmp"' EXIT

status=0
for backend in $backends; do
	right=0
	for i in $(seq 1 "$runs"); do
		dir="$tmp/rec"
		rm -rf "$dir"
		"$jf" record --emulate --backend="$backend" -o "$dir" -- "$prog" > "$tmp/out" 2> "$tmp/err"
		sh tests/recorder/signal_counts.sh "$jf" "$dir" "$prog" work > "$tmp/counts"
		errors=$(perf script -i "$dir/perf.data" --itrace=e 2>/dev/null | wc -l)
		verdict=$(awk -v counts="$tmp/counts" '
			BEGIN { while ((getline l < counts) > 0) { split(l, f, " "); got[f[1] " " f[2]] = f[5] } }
			/^worker / {
				split($3, t, "="); split($4, w, "="); tid = t[2]
				if (w[2] != 1000 * ($2 + 1)) bad++
				if (got["perf " tid] != w[2] || got["jitflow " tid] != w[2]) {
					bad++
					printf "worker %s tid %s: %s calls, perf %s, jitflow %s; ", $2, tid, w[2], got["perf " tid] + 0, got["jitflow " tid] + 0
				}
				n++
			}
			END { printf "%s\n", (n == 4 && !bad) ? "right" : "WRONG" }' "$tmp/out")
		printf "%s recording %2d: %s, perf errors %s\n" "$backend" "$i" "$verdict" "$errors"
		if [ "$verdict" = right ] && [ "$errors" = 0 ]; then
			right=$((right + 1))
		else
			kept="/tmp/tid-check-failed-$backend-$i"
			rm -rf "$kept"
			cp -r "$dir" "$kept"
			cp "$tmp/out" "$tmp/counts" "$tmp/err" "$kept/"
			echo "  kept in $kept"
		fi
	done
	printf "%s backend: %d of %d recordings with every thread id right\n" "$backend" "$right" "$runs"
	[ "$right" = "$runs" ] || status=1
done
exit $status
