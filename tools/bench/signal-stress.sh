#!/usr/bin/env bash
# Reliability campaign, outside CI: RUNS recordings (default 50) of the signal
# stress program tests/programs/sigstress.c (8 threads started back to back, SIGUSR1 by
# pthread_kill, a SIGALRM timer per thread, siglongjmp out of the SIGUSR2 handler, a
# fork) with `jitflow record` (BACKEND: plugin, the default, or log). Each recording is
# exact when, for every worker, under the thread id the worker printed, perf and jitflow
# both count the calls and handler entries its semantics fix (work 20000 + 1000 K,
# on_usr1 10, on_usr2 5) and the SIGALRM entries it counted itself, and perf reports no
# decode error other than the OVFs the recorder wrote and counted (a handler left by
# siglongjmp right after a conditional branch, whose direction never shows: the manifest's
# written_as_overflow). Prints one line per recording and a summary; exits 1 if any is
# not exact.
#   tools/bench/signal-stress.sh [BUILD_DIR] [RUNS]
# The CI test (tests/test_signals.c) makes 3 such recordings.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:-build}")
runs=${2:-50}
backend=${BACKEND:-plugin}
jf="$build/tools/jitflow"
prog="$build/tests/programs/recprog_sigstress"
tmp=$(mktemp -d /tmp/signal-stress-XXXXXX); trap 'rm -rf "$tmp"' EXIT

exact=0 tids_right=0 overflows=0 never_ran=0 total_s=0
for i in $(seq 1 "$runs"); do
	dir="$tmp/rec"
	rm -rf "$dir"
	start=$(date +%s.%N)
	"$jf" record --emulate --backend="$backend" -o "$dir" -- "$prog" > "$tmp/out" 2> "$tmp/err"
	end=$(date +%s.%N)
	sh tests/recorder/signal_counts.sh "$jf" "$dir" "$prog" work on_usr1 on_usr2 on_alrm \
		> "$tmp/counts"
	perf script -i "$dir/perf.data" --itrace=e 2>/dev/null > "$tmp/errors" || true
	errors=$(grep -v -c "Overflow packet" "$tmp/errors" || true)
	perf_ovf=$(grep -c "Overflow packet" "$tmp/errors" || true)
	ovf=$(grep -o '"written_as_overflow": [0-9]*' "$dir/manifest.json" | grep -o '[0-9]*$')
	nr=$(grep -o '"target_never_ran": [0-9]*' "$dir/manifest.json" | grep -o '[0-9]*$')
	# Every worker's expected counts, against both decoders; and its tid among perf's.
	verdict=$(awk -v counts="$tmp/counts" '
		BEGIN { while ((getline l < counts) > 0) { split(l, f, " "); got[f[1] " " f[2] " " f[3] " " f[4]] = f[5]; tid_seen[f[2]] = 1 } }
		/^worker / {
			split($3, t, "="); tid = t[2]
			split($4, a, "="); split($5, b, "="); split($6, c, "="); split($7, d, "=")
			want["work calls"] = 20000 + 1000 * $2; want["work blocks"] = want["work calls"]
			if (a[2] != want["work calls"] || b[2] != 10 || c[2] != 5) bad++
			if (got["perf " tid " work calls"] != a[2] || got["jitflow " tid " work blocks"] != a[2]) bad++
			if (got["perf " tid " on_usr1 starts"] != b[2] || got["jitflow " tid " on_usr1 blocks"] != b[2]) bad++
			if (got["perf " tid " on_usr2 starts"] != c[2] || got["jitflow " tid " on_usr2 blocks"] != c[2]) bad++
			if (got["perf " tid " on_alrm starts"] + 0 != d[2] || got["jitflow " tid " on_alrm blocks"] + 0 != d[2]) bad++
			if (!(tid in tid_seen)) tidbad++
			n++
		}
		END { printf "%s %s\n", (n == 8 && !bad) ? "exact" : "NOT-EXACT", (n == 8 && !tidbad) ? "tids-right" : "TIDS-WRONG" }' "$tmp/out")
	secs=$(awk "BEGIN { print $end - $start }")
	printf "recording %2d: %s, perf errors %s, signals written as OVF %s (perf saw %s), after an indirect branch whose target never ran %s, %.2f s\n" \
		"$i" "$verdict" "$errors" "$ovf" "$perf_ovf" "$nr" "$secs"
	[ "$perf_ovf" = "$ovf" ] || errors=$((errors + 1))
	case "$verdict" in exact*) [ "$errors" = 0 ] && exact=$((exact + 1)) ;; esac
	case "$verdict" in *tids-right) tids_right=$((tids_right + 1)) ;; esac
	overflows=$((overflows + ovf)); never_ran=$((never_ran + nr))
	total_s=$(awk "BEGIN { print $total_s + $secs }")
	if [ "$verdict" != "exact tids-right" ] || [ "$errors" != 0 ]; then
		cp -r "$dir" "/tmp/signal-stress-failed-$i"
		cp "$tmp/out" "$tmp/counts" "/tmp/signal-stress-failed-$i/"
		echo "  kept in /tmp/signal-stress-failed-$i"
	fi
done
printf "%d of %d recordings exact (backend %s), tids right in %d; signals written as OVF: %d; after an indirect branch whose target never ran: %d; mean %.2f s a recording\n" \
	"$exact" "$runs" "$backend" "$tids_right" "$overflows" "$never_ran" "$(awk "BEGIN { print $total_s / $runs }")"
[ "$exact" = "$runs" ]
