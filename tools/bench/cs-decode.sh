#!/usr/bin/env bash
# Decode speed of the CoreSight backend against OpenCSD's own trc_pkt_lister on the same
# input: a shared snapshot (default juno_r1_1, the largest trace buffer) whose trace
# buffers are concatenated N times (default 200) into a temporary copy of the snapshot.
#   tools/bench/cs-decode.sh [BUILD_DIR] [TIMES] [SNAPSHOT_NAME]
# Formatted buffers are whole 16-byte frames, so each copy resynchronises like the first.
# trc_pkt_lister -decode_only prints the decoded elements (to /dev/null here); jitflow stat
# decodes without printing, jitflow decode --format=jsonl prints every record. Speeds are
# per CPU second (user + sys), which a busy shared machine disturbs less than wall time.
# trc_pkt_lister decodes only the first buffer of a snapshot; jitflow decodes all of them
# (for juno_r1_1 the second is a 2 KB STM buffer, reported and skipped).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(realpath "${1:-build}")
times=${2:-200}
name=${3:-juno_r1_1}
src=$(realpath -m "../shared/traces/coresight/$name")
[ -d "$src" ] || { echo "cs-decode: $src not found (needs ../shared/traces)" >&2; exit 1; }
command -v trc_pkt_lister >/dev/null || { echo "cs-decode: trc_pkt_lister missing (libopencsd-bin)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The copy: .ini files as they are, memory dumps linked, trace buffers repeated.
cp "$src"/*.ini "$tmp/"
buffers=$(sed -n 's/^file=//p' "$src/trace.ini")
for f in $(cd "$src" && find . -type f ! -name '*.ini' ! -name '*.gz'); do
	mkdir -p "$tmp/$(dirname "$f")"
	ln -s "$src/$f" "$tmp/$f"
done
bytes=0
for b in $buffers; do
	rm -f "$tmp/$b"
	for ((i = 0; i < times; i++)); do cat "$src/$b"; done > "$tmp/$b"
	bytes=$((bytes + $(stat -c %s "$tmp/$b")))
done
jf="$build/tools/jitflow"
insns=$("$jf" stat --cs-snapshot "$tmp" | awk '/^instructions/ {print $2}')
echo "trace: $name, buffers x$times = $bytes bytes, $insns instructions"

measure() { # label, command...: speeds from CPU time (user + sys), wall time, peak RSS
	local label=$1; shift
	(cd "$tmp" && /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$@" > /dev/null)
	read -r wall user sys rss < "$tmp/time"
	awk -v n="$label" -v w="$wall" -v u="$user" -v y="$sys" -v r="$rss" -v b="$bytes" \
	    -v i="$insns" 'BEGIN {
		s = u + y; if (s <= 0) s = 0.001;
		printf "%-28s cpu %6.2f s (wall %6.2f)  %7.2f MB/s  %6.2f M insn/s  peak RSS %6.1f MiB\n",
		       n, s, w, b / s / 1e6, i / s / 1e6, r / 1024 }'
}
measure "jitflow stat" "$jf" stat --cs-snapshot "$tmp"
measure "jitflow decode --jsonl" "$jf" decode --cs-snapshot "$tmp" --format=jsonl
measure "jitflow decode (insns)" "$jf" decode --cs-snapshot "$tmp"
measure "trc_pkt_lister -decode_only" trc_pkt_lister -ss_dir "$tmp" -decode_only -logstdout
measure "trc_pkt_lister -decode" trc_pkt_lister -ss_dir "$tmp" -decode -logstdout
