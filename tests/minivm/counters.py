#!/usr/bin/env python3
"""minivm's ground-truth counters (--counters FILE.json) checked against what the programs'
meaning and the documented thresholds (docs/minivm.md, "Counters") fix exactly.

usage: counters.py MINIVM SOURCE_DIR"""
import json
import os
import subprocess
import sys
import tempfile

MINIVM, SOURCE = sys.argv[1], sys.argv[2]
EXAMPLES = os.path.join(SOURCE, "tools", "minivm", "examples")
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(program_text=None, path=None, options=()):
    with tempfile.TemporaryDirectory() as tmp:
        if program_text is not None:
            path = os.path.join(tmp, "p.mvm")
            with open(path, "w") as f:
                f.write(program_text)
        counters = os.path.join(tmp, "counters.json")
        subprocess.run([MINIVM, *options, "--counters", counters, path], check=True,
                       stdout=subprocess.DEVNULL)
        with open(counters) as f:
            return json.load(f)["traces"]


def guard_exits(trace):
    return [g["exits"] for g in trace["guards"]]


# 1. A loop of N iterations with nothing else in it, hot threshold H: the back-edge is
# taken N times; at the H-th one iteration H+1 is recorded in the interpreter, and the
# trace is entered at back-edge H+1. So: one entry, N - H header executions (the checks
# for iterations H+2..N and the final failing check), and one exit, through the loop
# condition's guard.
N = 1000
LOOP = "var i = 0;\nwhile (i < %d) {\n  i = i + 1;\n}\n" % N
for hot in (1, 2, 50, 500, 999):
    traces = run(LOOP, options=["--hot=%d" % hot])
    check(len(traces) == 1, "hot=%d: %d traces, want 1" % (hot, len(traces)))
    if traces:
        t = traces[0]
        check(t["kind"] == "loop", "hot=%d: kind %s" % (hot, t["kind"]))
        check(t["entries"] == 1, "hot=%d: entries %d, want 1" % (hot, t["entries"]))
        check(t["iterations"] == N - hot,
              "hot=%d: iterations %d, want %d" % (hot, t["iterations"], N - hot))
        check(sorted(guard_exits(t)) == [0] * (len(t["guards"]) - 1) + [1],
              "hot=%d: guard exits %s, want a single 1" % (hot, guard_exits(t)))
# At H = N the recorded iteration leaves the loop: nothing is compiled.
check(run(LOOP, options=["--hot=%d" % N]) == [], "hot=N compiled a trace")
check(run(LOOP, options=["--jit=off"]) == [], "--jit=off compiled a trace")


# 2. Invariants for every example and several settings.
#  - a bridge is recorded right after its parent guard's B-th exit, so its entries are
#    exactly the parent guard's exits minus B;
#  - flow through a tree of traces (a loop and the bridges hanging off it): every entry
#    leaves through exactly one guard exit that is not taken over by a bridge, so
#    root entries = all guard exits in the tree - all bridge entries in the tree;
#  - a bridge's iterations equal its entries.
def check_invariants(name, traces, bridge):
    by_id = {t["id"]: t for t in traces}
    guard_owner = {g["id"]: t for t in traces for g in t["guards"]}
    guard_exit = {g["id"]: g["exits"] for t in traces for g in t["guards"]}

    def root(t):
        while t["kind"] == "bridge":
            t = by_id[t["parent_trace"]]
        return t

    trees = {}
    for t in traces:
        trees.setdefault(root(t)["id"], []).append(t)
        if t["kind"] == "bridge":
            check(t["iterations"] == t["entries"], "%s: bridge %d iterations" % (name, t["id"]))
            check(guard_owner[t["parent_guard"]]["id"] == t["parent_trace"],
                  "%s: bridge %d parent guard not in parent trace" % (name, t["id"]))
            want = guard_exit[t["parent_guard"]] - bridge
            check(t["entries"] == want, "%s: bridge %d entries %d, want guard %d exits - %d = %d"
                  % (name, t["id"], t["entries"], t["parent_guard"], bridge, want))
    for rid, members in trees.items():
        exits = sum(sum(guard_exits(t)) for t in members)
        bridged = sum(t["entries"] for t in members if t["kind"] == "bridge")
        check(by_id[rid]["entries"] == exits - bridged,
              "%s: trace %d entries %d, want exits %d - bridge entries %d"
              % (name, rid, by_id[rid]["entries"], exits, bridged))
        check(by_id[rid]["iterations"] >= by_id[rid]["entries"],
              "%s: trace %d iterates less than it is entered" % (name, rid))


for example in sorted(os.listdir(EXAMPLES)):
    if not example.endswith(".mvm"):
        continue
    path = os.path.join(EXAMPLES, example)
    for hot, bridge in ((50, 10), (1, 1), (5, 3)):
        traces = run(path=path, options=["--hot=%d" % hot, "--bridge=%d" % bridge])
        check_invariants("%s hot=%d bridge=%d" % (example, hot, bridge), traces, bridge)
        check(len(traces) > 0, "%s: nothing compiled" % example)


# 3. Exact counts fixed by the examples' meaning (default thresholds: hot 50, bridge 10).
def one_loop(example, options=()):
    traces = run(path=os.path.join(EXAMPLES, example), options=list(options))
    loops = [t for t in traces if t["kind"] == "loop"]
    return traces, loops[0]

# hot_loop: 100000 iterations; the rare branch is taken at i = 0 (interpreted, before the
# trace exists) and at i = 20000, 40000, 60000, 80000 (4 guard exits, fewer than 10, so
# no bridge); each exit is followed by a re-entry: 5 entries; all header checks from
# iteration 52 on run in the trace: 100000 - 50 iterations.
traces, t = one_loop("hot_loop.mvm")
check(len(traces) == 1, "hot_loop: %d traces" % len(traces))
check(t["entries"] == 5, "hot_loop: entries %d, want 5" % t["entries"])
check(t["iterations"] == 100000 - 50, "hot_loop: iterations %d" % t["iterations"])
check(sorted(guard_exits(t))[-2:] == [1, 4], "hot_loop: guard exits %s" % guard_exits(t))

# side_exit with --bridge=0: recorded at i = 50 on the warm side. Iteration 60 leaves
# through the "i == 60" guard; then the warm guard fails for every i in 61..49999 (49939
# times); each exit is followed by a re-entry at the next back-edge.
traces, t = one_loop("side_exit.mvm", ["--bridge=0"])
check(len(traces) == 1, "side_exit: %d traces with --bridge=0" % len(traces))
check(t["entries"] == 1 + 1 + 49939, "side_exit: entries %d" % t["entries"])
check(t["iterations"] == 50000 - 50, "side_exit: iterations %d" % t["iterations"])
check(sorted(guard_exits(t))[-3:] == [1, 1, 49939], "side_exit: guard exits %s" % guard_exits(t))

# phase_change: the "i >= 10000" guard (recorded false) fails in every iteration from
# i = 10000 on, except the one the interpreter runs right after the bridge was recorded
# (a recording that reaches a compiled loop's header stops there; the interpreter
# finishes that iteration and the trace is entered at the next back-edge): 9999 exits,
# the first 10 to the interpreter and the other 9989 into the bridge.
traces, t = one_loop("phase_change.mvm")
bridges = [b for b in traces if b["kind"] == "bridge"]
check(len(bridges) == 1, "phase_change: %d bridges" % len(bridges))
check(max(guard_exits(t)) == 9999, "phase_change: guard exits %s" % guard_exits(t))
check(bridges and bridges[0]["entries"] == 9999 - 10, "phase_change: bridge entries")
check(t["entries"] == 1 + 10, "phase_change: entries %d" % t["entries"])

# invalidation: four phases separated by jit_flush(); each compiles one loop trace that is
# entered once and leaves once at the loop's end.
traces = run(path=os.path.join(EXAMPLES, "invalidation.mvm"))
check([t["kind"] for t in traces] == ["loop"] * 4, "invalidation: %s" % traces)
check([t["iterations"] for t in traces] == [4950, 4949, 4950, 2949],
      "invalidation: iterations %s" % [t["iterations"] for t in traces])

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("counters: all checks passed")
