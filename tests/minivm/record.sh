#!/usr/bin/env bash
# minivm runs under `jitflow record` (QEMU + synthesised Intel PT): same output and counters
# as natively, the recording follows all of it (static non-PIE: nothing "not followed"),
# its zone file is found, the emitter's marker calls are seen in the trace, and the
# recording decodes to every instruction QEMU ran.
# usage: record.sh JITFLOW MINIVM
set -u
jitflow=$1
minivm=$2
command -v qemu-x86_64 >/dev/null ||
  { echo "FAIL: qemu-x86_64 is not installed (tools/setup.sh installs qemu-user)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
cat >loop.mvm <<'PROGRAM'
func run(n) {
  var i = 0;
  var s = 0;
  while (i < n) {
    if (i % 100 == 7) { s = s + 2; } else { s = s + 1; }
    i = i + 1;
  }
  return s;
}
print run(3000);
PROGRAM
"$minivm" --counters native.json loop.mvm >native.out || exit 1
if ! "$jitflow" record -o rec -- "$minivm" --zone-dir . --counters recorded.json loop.mvm \
     >recorded.out 2>record.err; then
  echo "FAIL: jitflow record: $(tail -2 record.err)"
  exit 1
fi
fail=0
# 3000 iterations with 30 of them taking the other branch: s = 3000 + 30
[ "$(cat recorded.out)" = 3030 ] || { echo "FAIL: output under record: $(cat recorded.out)"; fail=1; }
cmp -s native.out recorded.out || { echo "FAIL: output differs from the native run"; fail=1; }
cmp -s native.json recorded.json || { echo "FAIL: counters differ from the native run"; fail=1; }
python3 - rec/manifest.json <<'CHECK' || fail=1
import json, sys
m = json.load(open(sys.argv[1]))
problems = []
if m["exit_status"] != 0: problems.append("exit status %s" % m["exit_status"])
if m["not_followed"]: problems.append("not followed: %s" % m["not_followed"])
if len(m["zone_files"]) != 1: problems.append("zone files %s" % m["zone_files"])
if sum(t["marker_calls"] for t in m["threads"]) == 0: problems.append("no marker calls")
for p in problems: print("FAIL: manifest: " + p)
sys.exit(1 if problems else 0)
CHECK
# The recording decodes to every instruction QEMU ran (the recorder's count), without error.
if ! "$jitflow" stat --recording rec --json >stat.json 2>stat.err; then
  echo "FAIL: jitflow stat: $(tail -2 stat.err)"
  fail=1
else
  python3 - rec/manifest.json stat.json <<'CHECK' || fail=1
import json, sys
ran = json.load(open(sys.argv[1]))["instructions"]
stat = json.load(open(sys.argv[2]))
if (stat["instructions"], stat["errors"], stat["lost_bytes"]) != (ran, 0, 0):
    print("FAIL: decoded %d instructions (%d errors, %d bytes lost); QEMU ran %d"
          % (stat["instructions"], stat["errors"], stat["lost_bytes"], ran))
    sys.exit(1)
CHECK
fi
[ $fail = 0 ] && echo "minivm runs under jitflow record with the same output and counters"
exit $fail
