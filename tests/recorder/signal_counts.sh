#!/bin/sh
# signal_counts.sh JITFLOW RECORDING PROGRAM SYMBOL...
#
# Per thread and function of a recording made by `jitflow record`, what two independent
# decoders saw:
#   perf TID SYMBOL calls N     perf's branch samples (--itrace=b) of kind "call" to it
#   perf TID SYMBOL starts N    perf's "tr strt" samples to it (tracing resumed there:
#                               a signal handler's entry)
#   jitflow TID SYMBOL blocks N jitflow's decoded blocks that start at it
# For a function reached only by indirect calls (or, for a handler, only by signals),
# each of these is the number of times it was entered. Used by tests/test_signals.c and
# tools/bench/signal-stress.sh. Lines for counts of zero are not printed.
set -e
jitflow=$1 dir=$2 prog=$3
shift 3
map=$(for s in "$@"; do
	nm "$prog" | awk -v s="$s" '$3 == s { sub(/^0+/, "", $1); print $1 "=" s }'
done)
perf script -i "$dir/perf.data" --itrace=b -F tid,flags,addr 2>/dev/null | awk -v map="$map" '
BEGIN { n = split(map, m, "\n"); for (i = 1; i <= n; i++) { split(m[i], kv, "="); sym[kv[1]] = kv[2] } }
($NF in sym) {
	if ($2 == "call") calls[$1 " " sym[$NF]]++
	else if ($2 == "tr" && $3 == "strt") starts[$1 " " sym[$NF]]++
}
END {
	for (k in calls) print "perf", k, "calls", calls[k]
	for (k in starts) print "perf", k, "starts", starts[k]
}'
"$jitflow" decode --perf "$dir/perf.data" --blocks --format=jsonl | awk -v map="$map" '
function field(name,    v) {
	if (!match($0, "\"" name "\":\"?[^,\"}]*"))
		return ""
	v = substr($0, RSTART, RLENGTH)
	sub(/^"[^"]*":"?/, "", v)
	return v
}
BEGIN { n = split(map, m, "\n"); for (i = 1; i <= n; i++) { split(m[i], kv, "="); sym["0x" kv[1]] = kv[2] } }
/"event":"context"/ { tid[field("source")] = field("tid"); next }
/"kind":"block"/ {
	a = field("start")
	if (a in sym)
		blocks[tid[field("source")] " " sym[a]]++
}
END { for (k in blocks) print "jitflow", k, "blocks", blocks[k] }'
