#!/usr/bin/env bash
# `jitflow zone dump --json` reads the zone file minivm writes for phase_change.mvm: one loop
# trace, one bridge hanging off one of its guards, one patch re-pointing that guard's exit
# stub, as many exit stubs as guards, and 20000 outermost-loop iteration events.
# usage: zone_dump.sh JITFLOW MINIVM SOURCE_DIR
set -u
jitflow=$1
minivm=$2
src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$minivm" --zone-dir "$tmp" "$src/tools/minivm/examples/phase_change.mvm" >/dev/null || exit 1
if ! "$jitflow" zone dump "$tmp"/jit-*.dump --json >"$tmp/dump.jsonl" 2>"$tmp/err"; then
  echo "FAIL: jitflow zone dump: $(cat "$tmp/err")"
  exit 1
fi
count() { grep -c "$1" "$tmp/dump.jsonl"; }
fail=0
expect() { # what pattern count
  local n
  n=$(count "$2")
  [ "$n" = "$3" ] || { echo "FAIL: $1: $n, want $3"; fail=1; }
}
expect "loop traces" '"record":"REGION_LOAD".*"kind":"trace"' 1
expect "bridges" '"record":"REGION_LOAD".*"kind":"bridge"' 1
expect "patches" '"record":"PATCH"' 1
expect "iteration events" '"record":"EVENT".*"kind":"iteration"' 20000
expect "frees" '"record":"REGION_FREE"' 0
stubs=$(count '"record":"REGION_LOAD".*"kind":"exit-stub"')
guards=$(count '"record":"GUARD"')
[ "$stubs" = "$guards" ] && [ "$guards" -gt 0 ] ||
  { echo "FAIL: $stubs exit stubs for $guards guards"; fail=1; }
[ $fail = 0 ] && echo "jitflow zone dump reads minivm's zone file: $guards guards, 1 trace, 1 bridge, 1 patch"
exit $fail
