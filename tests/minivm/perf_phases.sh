#!/usr/bin/env bash
# Linux perf as the oracle of the VM phases' instructions. perf_split.mvm (its trace is
# never patched, so perf decodes every instruction) is recorded with `jitflow record`;
# `perf script --itrace=i1ie` lists every instruction with its symbol. minivm brackets each
# phase with a function of its own (mvm_zone_tracing_begin, ..._end, tools/minivm/zone.c)
# that calls the emitter, so the listing alone says where each phase begins and ends: a
# phase ends where its END bracket enters the emitter, and begins where the emitter, called
# by its BEGIN bracket, returns to minivm's own code; the emitter's code, and the library
# code it calls until then, is in no phase. Which code is minivm's own and which is the
# emitter's comes from the binary's symbols and their source files (nm -l). The phase
# spans perf shows must equal minivm's own counters (--counters), and the instructions
# perf lists in each phase must equal jitflow's classes, in total, for the trace made, and
# summed over the iterations of the JSON report and of the timeline.
# usage: perf_phases.sh JITFLOW MINIVM SOURCE_DIR
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
if ! "$jitflow" record -o rec -- "$minivm" --counters counters.json \
     "$src/tests/minivm/perf_split.mvm" >out 2>err; then
  echo "FAIL: jitflow record: $(tail -3 err)"
  exit 1
fi
if ! (cd rec && perf inject --jit -i perf.data -o ../perf.jit.data) 2>inject.err; then
  echo "FAIL: perf inject --jit: $(tail -3 inject.err)"
  exit 1
fi
if ! perf script -i perf.jit.data --itrace=i1ie -F ip,sym,symoff >listing 2>script.err; then
  echo "FAIL: perf script: $(tail -3 script.err)"
  exit 1
fi
if ! nm -S -l --defined-only "$minivm" >symbols 2>nm.err; then
  echo "FAIL: nm: $(tail -3 nm.err)"
  exit 1
fi
if ! "$jitflow" report rec --json >report.json 2>report.err ||
   ! "$jitflow" timeline rec -o timeline.json 2>>report.err ||
   ! "$jitflow" report rec --html report.html >/dev/null 2>>report.err ||
   ! "$jitflow" split rec >split.txt 2>>report.err; then
  echo "FAIL: jitflow report, timeline or split: $(tail -3 report.err)"
  exit 1
fi
# The views say which phases the runtime told.
for view in split.txt report.html; do
  if ! grep -q "told by the runtime: tracing, compiling, exit handling" $view; then
    echo "FAIL: $view does not show the phases minivm told"
    exit 1
  fi
done
python3 - <<'CHECK'
import bisect, collections, json, sys

# [start, end) of the functions compiled from minivm's sources and from the emitter's
own, emitter = [], []
for line in open("symbols"):
    f = line.split()
    if len(f) < 5 or f[2] not in "tT":
        continue
    start, size, where = int(f[0], 16), int(f[1], 16), f[-1]
    if "/tools/minivm/" in where:
        own.append((start, start + size))
    elif "/imagemap/emitter/" in where:
        emitter.append((start, start + size))
def inside(ranges):
    ranges.sort()
    starts = [r[0] for r in ranges]
    def test(ip):
        k = bisect.bisect_right(starts, ip) - 1
        return k >= 0 and ip < ranges[k][1]
    return test
is_own, is_emitter = inside(own), inside(emitter)
brackets = {
    "mvm_zone_tracing_begin": ("begin", "tracing"), "mvm_zone_tracing_end": ("end", "tracing"),
    "mvm_zone_compiling_begin": ("begin", "compiling"),
    "mvm_zone_compiling_end": ("end", "compiling"),
    "mvm_zone_exit_handling_begin": ("begin", "exit handling"),
    "mvm_zone_exit_handling_end": ("end", "exit handling"),
}
stack, counts, spans = [], collections.Counter(), collections.Counter()
bracket = pending = None
in_emitter = False
errors = 0
for line in open("listing"):
    if " instruction trace error" in line:
        errors += 1
        continue
    f = line.split()
    if len(f) < 2:
        continue
    ip, sym = int(f[0], 16), f[1]
    if sym.endswith("+0x0") and sym[:-4] in brackets:
        bracket = brackets[sym[:-4]]
    if not in_emitter and is_emitter(ip):
        in_emitter = True
        if bracket:
            what, phase = bracket
            if what == "end":
                if not stack or stack[-1] != phase:
                    sys.exit(f"FAIL: perf shows {phase} ending while {stack} is open")
                stack.pop()
            else:
                pending = phase
                spans[phase] += 1
            bracket = None
    elif in_emitter and is_own(ip):
        in_emitter = False
        if pending:
            stack.append(pending)
            pending = None
    if not in_emitter and stack:
        counts[stack[-1]] += 1

report = json.load(open("report.json"))
truth = json.load(open("counters.json"))["phases"]
classes = report["split"]["total"]["instructions_by_class"]
mine_spans = report["phases"]["total"]["spans"]
print(f"perf: {dict(counts)} instructions, {dict(spans)} spans, {errors} errors; "
      f"minivm counted {truth}")
failed = errors > 0 or stack != []
for phase in ("tracing", "compiling", "exit handling"):
    if spans[phase] != truth[phase] or mine_spans[phase] != truth[phase]:
        print(f"FAIL: {phase}: perf shows {spans[phase]} spans, jitflow {mine_spans[phase]}, "
              f"minivm counted {truth[phase]}")
        failed = True
    if classes.get(phase, 0) != counts[phase]:
        print(f"FAIL: {phase}: jitflow {classes.get(phase, 0)} instructions, perf {counts[phase]}")
        failed = True
made = [t for t in report["traces"] if "tracing" in t]
if len(made) != 1 or made[0]["tracing"]["instructions"] != counts["tracing"] or \
   made[0]["compiling"]["instructions"] != counts["compiling"]:
    print(f"FAIL: the one trace's making is not perf's: {made}")
    failed = True
# Every phase instruction here falls inside an iteration (the loop's first mark comes
# before the loop heats up): per iteration, in the report and in the timeline's marks,
# they add up to perf's.
timeline = json.load(open("timeline.json"))
marks = [e["args"]["phases"] for e in timeline["traceEvents"] if e.get("cat") == "iteration"]
rows = [it["phases"] for it in report["iterations"]]
for phase in ("tracing", "compiling", "exit handling"):
    for name, series in (("report", rows), ("timeline", marks)):
        if sum(p[phase] for p in series) != counts[phase]:
            print(f"FAIL: {phase}: the {name}'s iterations add up to "
                  f"{sum(p[phase] for p in series)} instructions, perf lists {counts[phase]}")
            failed = True
if sum(classes.values()) != report["summary"]["instructions"]:
    print("FAIL: the classes do not add up to every instruction")
    failed = True
if failed:
    sys.exit(1)
print("each phase's spans are minivm's, and its instructions perf's")
CHECK
