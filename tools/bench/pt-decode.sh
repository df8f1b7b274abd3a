#!/usr/bin/env bash
# Decode speed and peak memory of `jitflow stat` and `jitflow decode` on a real Intel PT
# capture concatenated N times (default: foo from ../shared/traces, 200 times).
#   tools/bench/pt-decode.sh [BUILD_DIR] [TIMES]
# Each copy starts with a PSB, so the concatenation is a valid stream that decodes to N
# times the capture's instructions; memory must not grow with N.
# With PTXED=/path/to/ptxed (libipt's reference decoder, built with Intel XED, which Debian
# does not ship), ptxed decodes the same input in the same run and the ratio is printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
times=${2:-200}
shared=../shared/traces/intel-pt/foo
[ -d "$shared" ] || { echo "pt-decode: $shared not found (needs ../shared/traces)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < times; i++)); do cat "$shared/trace"; done > "$tmp/trace"
bytes=$(stat -c %s "$tmp/trace")
jf="$build/tools/jitflow"
inputs=(--raw "$shared/data:0x7ffff7819000" --pt "$tmp/trace")

measure() { # name, command...: wall seconds and peak RSS (KiB) from GNU time
	local name=$1; shift
	/usr/bin/time -f "%e %M" -o "$tmp/time" "$@" > "$tmp/out"
	read -r secs rss < "$tmp/time"
	echo "$name $secs $rss"
}
insns=$("$jf" stat --json "${inputs[@]}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])')
echo "trace: foo x$times = $bytes bytes, $insns instructions"
if [ -n "${PTXED:-}" ]; then
	read -r name psecs prss < <(measure ptxed "$PTXED" --block-decoder --raw \
		"$shared/data:0x7ffff7819000" --pt "$tmp/trace" --no-inst)
	awk -v s="$psecs" -v r="$prss" -v b="$bytes" -v i="$insns" 'BEGIN {
		if (s <= 0) s = 0.001;
		printf "%-16s %7.3f s  %8.1f MB/s  %7.1f M insn/s  peak RSS %6.1f MiB\n",
		       "ptxed --no-inst", s, b / s / 1e6, i / s / 1e6, r / 1024 }'
fi
for what in stat decode decode--blocks; do
	# shellcheck disable=SC2086
	read -r name secs rss < <(measure "$what" "$jf" ${what/--/ --} "${inputs[@]}")
	awk -v n="$what" -v s="$secs" -v r="$rss" -v b="$bytes" -v i="$insns" -v p="${psecs:-0}" 'BEGIN {
		if (s <= 0) s = 0.001;
		printf "%-16s %7.3f s  %8.1f MB/s  %7.1f M insn/s  peak RSS %6.1f MiB", n, s,
		       b / s / 1e6, i / s / 1e6, r / 1024
		if (p > 0) printf "  (%.1fx ptxed)", p / s
		printf "\n" }'
done
