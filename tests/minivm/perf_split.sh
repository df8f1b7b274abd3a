#!/usr/bin/env bash
# Linux perf as the oracle of the time split's instructions. perf_split.mvm is recorded
# with `jitflow record`; `perf inject --jit` turns the zone file's CODE_LOADs into
# jitted-PID-N.so files, and `perf script --itrace=i1i` (perf's own Intel PT decoder) then
# lists every instruction with the object it ran in. Its trace is never patched, so perf
# decodes all of it: the instructions perf lists in jitted-*.so are jitflow's "jitted",
# the ones in minivm are jitflow's interpreter + native + instrumentation, and together
# they are every instruction QEMU ran (the manifest).
# usage: perf_split.sh JITFLOW MINIVM SOURCE_DIR
set -u
jitflow=$1
minivm=$2
src=$3
command -v perf >/dev/null || { echo "FAIL: perf is not installed (tools/setup.sh installs linux-perf)"; exit 1; }
command -v qemu-x86_64 >/dev/null ||
  { echo "FAIL: qemu-x86_64 is not installed (tools/setup.sh installs qemu-user)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
if ! "$jitflow" record -o rec -- "$minivm" "$src/tests/minivm/perf_split.mvm" >out 2>err; then
  echo "FAIL: jitflow record: $(tail -3 err)"
  exit 1
fi
if ! cmp -s out "$src/tests/minivm/perf_split.expected"; then
  echo "FAIL: perf_split.mvm's output under the recorder differs from perf_split.expected"
  diff out "$src/tests/minivm/perf_split.expected" | head -5
  exit 1
fi
# perf inject --jit reads the zone file named by the recording's MMAP and writes the
# jitted-*.so beside it.
if ! (cd rec && perf inject --jit -i perf.data -o ../perf.jit.data) 2>inject.err; then
  echo "FAIL: perf inject --jit: $(tail -3 inject.err)"
  exit 1
fi
if ! perf script -i perf.jit.data --itrace=i1ie -F ip,dso >listing 2>script.err; then
  echo "FAIL: perf script: $(tail -3 script.err)"
  exit 1
fi
read -r perf_jitted perf_other perf_errors < <(awk '
  / instruction trace error/ { e++; next }
  /jitted-[0-9]+-[0-9]+\.so/ { j++; next }
  NF { o++ }
  END { print j + 0, o + 0, e + 0 }' listing)
if ! "$jitflow" report rec --json >report.json 2>report.err; then
  echo "FAIL: jitflow report: $(tail -3 report.err)"
  exit 1
fi
read -r jitted other total manifest < <(python3 -c '
import json, sys
r = json.load(open("report.json"))
m = json.load(open("rec/manifest.json"))
i = r["split"]["total"]["instructions"]
print(i["jitted"], i["interpreter"] + i["native"] + i["instrumentation"] + i["unknown"],
      r["summary"]["instructions"], m["instructions"])')
echo "perf: $perf_jitted instructions in jitted code, $perf_other in minivm, $perf_errors errors;" \
     "jitflow: $jitted jitted, $other interpreter/native/instrumentation; the recorder ran $manifest"
if [ "$perf_errors" != 0 ] || [ $((perf_jitted + perf_other)) != "$manifest" ]; then
  echo "FAIL: perf did not decode the recording whole: $perf_errors errors, $((perf_jitted + perf_other)) of $manifest instructions"
  exit 1
fi
if [ "$jitted" != "$perf_jitted" ] || [ "$other" != "$perf_other" ] || [ "$total" != "$manifest" ]; then
  echo "FAIL: jitflow's split differs from perf's listing"
  exit 1
fi
echo "the split's jitted and non-jitted instructions are perf's"
