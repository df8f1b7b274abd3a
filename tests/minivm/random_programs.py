#!/usr/bin/env python3
"""Random minivm programs recorded and checked against minivm's own counters.

Each seed gives one program and one set of JIT options: 1-3 functions whose hot loops hold
branches on the loop counter (guards that fail now and then, so bridges are compiled),
nested loops up to three deep, calls between the functions, and a top-level loop that
calls them with changing arguments and calls jit_flush() every few iterations; options
with low --hot and --bridge thresholds and often a small --code-size, so that traces are
flushed (by jit_flush() or because code memory is full) and compiled again at the same
addresses, bridges and patched exit stubs included.

Every program runs under `jitflow record`; `jitflow report --json` must give, for every
trace minivm compiled, its entries and iterations, for every guard its exits, and for
every bridge the exits of its parent guard that went on to it, exactly as minivm's
compiled code counted them (--counters), with no decode error and no data lost, and
every instruction QEMU ran (the recorder's count) decoded; and the
program's output must be the same as in a native run.

With --arch aarch64, MINIVM is minivm built for AArch64 (minivm_a64): the "native" run is
plain qemu-aarch64, the recording an ETMv4 one (a cs_etm perf.data and a CoreSight
snapshot), read by `jitflow report DIR` as on x86-64 (in-process: JITFLOW_ISOLATE=0, see
tests/test_minivm_a64.c), and QEMU's count is the recording's recording.txt.

usage: random_programs.py MINIVM JITFLOW FIRST[-LAST] [--keep DIR] [--arch aarch64]
Exit status 0 when every program matched, 1 otherwise (each difference is printed), 1
also when the programs together compiled no trace, guard or bridge (nothing would have
been compared; a single program may compile none, when its code memory is too small for
any trace), or when QEMU (which tools/setup.sh installs) is missing."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time


def generate(seed):
    """The program text and minivm options of one seed."""
    rnd = random.Random(seed)

    def condition(var):
        m = rnd.randint(2, 9)
        return "%s %% %d == %d" % (var, m, rnd.randint(0, m - 1))

    def statement(var, depth, callable_functions):
        c = rnd.random()
        if c < 0.45:
            return "if (%s) { s = s + %d; } else { s = s - %d; }" % (
                condition(var), rnd.randint(1, 5), rnd.randint(1, 3))
        if c < 0.6:
            # a branch that changes with the function's argument: a phase change
            return "if (k %% 2 == %d) { if (%s) { s = s + 3; } }" % (
                rnd.randint(0, 1), condition(var))
        if c < 0.72 and callable_functions:
            return "s = s + g%d(%s %% 5, 3);" % (rnd.randrange(callable_functions), var)
        if c < 0.88 and depth < 2:
            inner = "j%d" % depth
            body = " ".join(statement(inner, depth + 1, callable_functions)
                            for _ in range(rnd.randint(1, 2)))
            return "%s = 0; while (%s < %d + k %% 3) { %s %s = %s + 1; }" % (
                inner, inner, rnd.randint(2, 8), body, inner, inner)
        return "s = s + %s %% %d;" % (var, rnd.randint(2, 7))

    functions = rnd.randint(1, 3)
    lines = []
    for f in range(functions):
        body = " ".join(statement("i", 0, f) for _ in range(rnd.randint(1, 4)))
        lines.append("func g%d(k, n) {\n  var i = 0; var s = 0; var j0 = 0; var j1 = 0;\n"
                     "  while (i < n) { %s i = i + 1; }\n  return s;\n}" % (f, body))
    period = rnd.randint(1, 6)
    calls = " ".join("t = t + g%d(o, %d + o * %d);" % (f, rnd.randint(10, 120), rnd.randint(0, 6))
                     for f in range(functions) if f == functions - 1 or rnd.random() < 0.8)
    lines.append("var o = 0;\nvar t = 0;\nwhile (o < %d) {\n  %s\n"
                 "  if (o %% %d == %d) { jit_flush(); }\n  o = o + 1;\n}\nprint t;" % (
                     rnd.randint(4, 16), calls, period, rnd.randint(0, period - 1)))
    options = ["--hot=%d" % rnd.randint(2, 30), "--bridge=%d" % rnd.randint(1, 6),
               "--code-size=%d" % rnd.choice([256, 512, 1024, 2048, 4096, 16384, 1048576])]
    return "\n".join(lines) + "\n", options


def by_id(items):
    return {x["id"]: x for x in items}


def compare(report, truth):
    """Differences between jitflow's report and minivm's counters, both ways (what minivm
    counted must be in the report, and what the report holds must be minivm's), and the
    numbers of traces and guards compared."""
    bad = []
    summary = report["summary"]
    if summary["decode_errors"] or summary["lost_bytes"]:
        bad.append("%d decode errors, %d bytes lost" % (summary["decode_errors"],
                                                         summary["lost_bytes"]))
    mine = by_id(report["traces"])
    guards = 0
    for t in truth["traces"]:
        m = mine.get(t["id"])
        if m is None:
            bad.append("trace %d (%s) is not in the report" % (t["id"], t["kind"]))
            continue
        if (m["entries"], m["iterations"]) != (t["entries"], t["iterations"]):
            bad.append("trace %d (%s): entries %d iterations %d, minivm counted %d and %d"
                       % (t["id"], t["kind"], m["entries"], m["iterations"], t["entries"],
                          t["iterations"]))
        if "parent_trace" in t:
            parent = by_id(mine.get(t["parent_trace"], {}).get("guards", []))
            pg = parent.get(t["parent_guard"])
            if pg is None or pg["to_bridge"] != t["entries"]:
                bad.append("bridge %d: its guard went to it %s times, minivm counted %d "
                           "entries" % (t["id"], pg and pg["to_bridge"], t["entries"]))
        mg = by_id(m.get("guards", []))
        for g in t["guards"]:
            exits = mg.get(g["id"], {}).get("exits", 0)
            if exits != g["exits"]:
                bad.append("trace %d guard %d: %d exits, minivm counted %d" % (
                    t["id"], g["id"], exits, g["exits"]))
            guards += 1
    known = by_id(truth["traces"])
    for m in report["traces"]:
        t = known.get(m["id"])
        if t is None:
            bad.append("the report's trace %d (%s, %d entries) is not one minivm compiled" % (
                m["id"], m["kind"], m["entries"]))
            continue
        if m["kind"] != t["kind"]:
            bad.append("trace %d is a %s in the report, a %s in minivm" % (
                m["id"], m["kind"], t["kind"]))
        theirs = by_id(t["guards"])
        for g in m.get("guards", []):
            if g["id"] not in theirs:
                bad.append("the report's guard %d of trace %d (%d exits) is not one minivm "
                           "compiled" % (g["id"], m["id"], g["exits"]))
    return bad, len(truth["traces"]), guards


def recorded_instructions(rec, arch):
    """The number of instructions QEMU ran, as the recorder wrote it."""
    if arch == "aarch64":
        with open(os.path.join(rec, "recording.txt")) as f:
            for line in f:
                key, _, value = line.partition(" = ")
                if key == "instructions":
                    return int(value)
        return -1
    with open(os.path.join(rec, "manifest.json")) as f:
        return json.load(f)["instructions"]


def report_command(jitflow, rec, arch):
    """`jitflow report` of a recording (its trace and the zone files the recorder copied
    into it), and the environment it runs in."""
    command = [jitflow, "report", rec, "--json"]
    if arch != "aarch64":
        return command, None
    return command, dict(os.environ, JITFLOW_ISOLATE="0")


def run_seed(minivm, jitflow, seed, work, arch):
    """(differences, traces, guards, bridges) of one seed, recorded in folder work."""
    program, options = generate(seed)
    path = os.path.join(work, "p.mvm")
    with open(path, "w") as f:
        f.write(program)
    native_runner = ["qemu-aarch64"] if arch == "aarch64" else []
    native = subprocess.run([*native_runner, minivm, *options, path], capture_output=True,
                            text=True)
    zones = os.path.join(work, "zones")
    os.makedirs(zones, exist_ok=True)
    counters = os.path.join(work, "counters.json")
    rec = os.path.join(work, "rec")
    recorded = subprocess.run([jitflow, "record", "-o", rec, "--", minivm, *options,
                               "--counters", counters, "--zone-dir", zones, path],
                              capture_output=True, text=True)
    if recorded.returncode != 0 or native.returncode != 0:
        return ["minivm exited with %d natively and %d recorded: %s" % (
            native.returncode, recorded.returncode, recorded.stderr.strip()[-300:])], 0, 0, 0
    bad = []
    if recorded.stdout != native.stdout:
        bad.append("output differs from the native run")
    command, env = report_command(jitflow, rec, arch)
    report = subprocess.run(command, capture_output=True, text=True, env=env)
    if report.returncode != 0:
        return bad + ["jitflow report failed: " + report.stderr.strip()], 0, 0, 0
    with open(counters) as f:
        truth = json.load(f)
    report = json.loads(report.stdout)
    ran = recorded_instructions(rec, arch)
    if report["summary"]["instructions"] != ran:
        bad.append("%d instructions decoded, QEMU ran %d" % (report["summary"]["instructions"],
                                                             ran))
    more, traces, guards = compare(report, truth)
    bridges = sum(1 for t in truth["traces"] if t["kind"] == "bridge")
    return bad + more, traces, guards, bridges


def main():
    args = sys.argv[1:]
    keep = None
    if "--keep" in args:
        i = args.index("--keep")
        keep = args[i + 1]
        del args[i:i + 2]
    arch = "x86_64"
    if "--arch" in args:
        i = args.index("--arch")
        arch = args[i + 1]
        del args[i:i + 2]
    if len(args) != 3 or arch not in ("x86_64", "aarch64"):
        sys.exit(__doc__)
    minivm, jitflow, seeds = args
    first, _, last = seeds.partition("-")
    first, last = int(first), int(last or first)
    if shutil.which("qemu-" + arch) is None:
        print("FAIL: qemu-%s is not installed (tools/setup.sh installs qemu-user)" % arch)
        sys.exit(1)
    failed = programs = traces = guards = bridges = 0
    started = time.time()
    for seed in range(first, last + 1):
        work = tempfile.mkdtemp(prefix="minivm-random-%d-" % seed)
        bad, t, g, b = run_seed(minivm, jitflow, seed, work, arch)
        programs += 1
        traces += t
        guards += g
        bridges += b
        options = " ".join(generate(seed)[1])
        if bad:
            failed += 1
            print("seed %d (%s): %d differences" % (seed, options, len(bad)))
            for line in bad[:20]:
                print("  " + line)
        else:
            print("seed %d (%s): %d traces (%d bridges), %d guards exact" % (
                seed, options, t, b, g))
        sys.stdout.flush()
        if keep and bad:
            shutil.copytree(work, os.path.join(keep, "seed-%d" % seed), dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    print("%d programs, %d with differences; %d traces (%d bridges) and %d guards compared; "
          "%.0f s" % (programs, failed, traces, bridges, guards, time.time() - started))
    if not (traces and guards and bridges):
        print("FAIL: %d traces, %d guards and %d bridges compared: too little to check" % (
            traces, guards, bridges))
        sys.exit(1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
