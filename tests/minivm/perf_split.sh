#!/usr/bin/env bash
# Linux perf as the oracle of the time split's instructions. perf_split.mvm is recorded
# with `jitflow record`; `perf inject --jit` turns the zone file's CODE_LOADs into
# jitted-PID-N.so files, and `perf script --itrace=i1i` (perf's own Intel PT decoder) then
# lists every instruction with the object it ran in. Its trace is never patched, so perf
# decodes all of it: the instructions perf lists in jitted-*.so are jitflow's "jitted",
# the ones in minivm are jitflow's interpreter + native + instrumentation, and together
# they are every instruction QEMU ran (the manifest); and per region of the zone file
# (trace, exit stubs), perf's instructions at its addresses are the report's.
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
if ! "$jitflow" report rec --json >report.json 2>report.err; then
  echo "FAIL: jitflow report: $(tail -3 report.err)"
  exit 1
fi
python3 - <<'CHECK'
import bisect, json, sys
report = json.load(open("report.json"))
recorded = json.load(open("rec/manifest.json"))["instructions"]
split = report["split"]["total"]["instructions"]
regions = sorted((int(r["addr"], 16), r["size"], r["name"], r["instructions"])
                 for r in report["regions"])
starts = [r[0] for r in regions]
perf_jitted = perf_other = errors = outside = 0
per_region = [0] * len(regions)
for line in open("listing"):
    if " instruction trace error" in line:
        errors += 1
        continue
    fields = line.split()
    if not fields:
        continue
    if "/jitted-" not in line:
        perf_other += 1
        continue
    perf_jitted += 1
    ip = int(fields[0], 16)
    k = bisect.bisect_right(starts, ip) - 1
    if k >= 0 and ip < regions[k][0] + regions[k][1]:
        per_region[k] += 1
    else:
        outside += 1
other = split["interpreter"] + split["native"] + split["instrumentation"] + split["unknown"]
print(f"perf: {perf_jitted} instructions in jitted code, {perf_other} in minivm, {errors} "
      f"errors; jitflow: {split['jitted']} jitted, {other} interpreter/native/"
      f"instrumentation; the recorder ran {recorded}")
failed = False
if errors or perf_jitted + perf_other != recorded or outside:
    print(f"FAIL: perf did not decode the recording whole: {errors} errors, "
          f"{perf_jitted + perf_other} of {recorded} instructions, {outside} in jitted code "
          f"outside every region")
    failed = True
if split["jitted"] != perf_jitted or other != perf_other or report["summary"]["instructions"] != recorded:
    print("FAIL: jitflow's split differs from perf's listing")
    failed = True
for (addr, size, name, mine), perfs in zip(regions, per_region):
    if mine != perfs:
        print(f"FAIL: {name} at {addr:#x}: {mine} instructions, perf lists {perfs}")
        failed = True
if failed:
    sys.exit(1)
print(f"the split's jitted and non-jitted instructions and each of the {len(regions)} "
      f"regions' instructions are perf's")
CHECK
