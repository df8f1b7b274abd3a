#!/bin/sh
# One execution of a warm-up matrix, as a batch engine runs it (GNU parallel, a Slurm job
# array): record PROGRAM into OUT, then write OUT/report.json (`jitflow report --json`) and
# OUT/timeline.json (`jitflow timeline`), the two files `jitflow warmup OUT...` reads.
#   usage: warmup-job.sh OUT -- PROGRAM [ARGS...]
# $JITFLOW: the jitflow binary (default: jitflow on PATH). PROGRAM's output is discarded.
set -eu
if [ $# -lt 3 ] || [ "$2" != "--" ]; then
	echo "usage: warmup-job.sh OUT -- PROGRAM [ARGS...]" >&2
	exit 2
fi
out=$1
shift 2
jitflow=${JITFLOW:-jitflow}
mkdir -p "$(dirname "$out")"
"$jitflow" record -o "$out" -- "$@" > /dev/null 2> "$out.log" || {
	echo "warmup-job.sh: recording $out failed:" >&2
	cat "$out.log" >&2
	exit 1
}
rm -f "$out.log"
"$jitflow" report --json "$out" > "$out/report.json"
"$jitflow" timeline -o "$out/timeline.json" "$out"
