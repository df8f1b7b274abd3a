#!/usr/bin/env python3
"""Random minivm programs (fixed seeds) run with the interpreter alone and with the JIT under
aggressive settings (every loop traced at once, bridges after one exit, code memory small
enough to flush often): output, error message and exit status must be identical. The
programs mix nested loops, branches that change behaviour, calls through a variable that
changes function, array reads and writes, and divisions that may fault.

usage: differential.py MINIVM [FIRST_SEED COUNT]"""
import random
import subprocess
import sys
import tempfile

MINIVM = sys.argv[1]
FIRST = int(sys.argv[2]) if len(sys.argv) > 2 else 1
COUNT = int(sys.argv[3]) if len(sys.argv) > 3 else 60
JIT_MODES = (["--hot=1", "--bridge=1"], ["--hot=3", "--bridge=2", "--code-size=1500"])
VARS = ["a", "b", "c", "d"]

PRELUDE = """func f1(x) { return x * 3 + 1; }
func f2(x) { if (x % 2 == 0) { return x / 2; } return x - 7; }
func f3(x, y) { var k = 0; var t = 0; while (k < y % 7) { t = t + x; k = k + 1; } return t; }
var arr = array(64);
var g = f1;
"""


def program(seed):
    r = random.Random(seed)

    def expr(depth=0):
        choice = r.randint(0, 9 if depth < 3 else 2)
        sub = lambda: expr(depth + 1)
        if choice == 0:
            return str(r.randint(0, 20))
        if choice in (1, 2):
            return r.choice(VARS + ["i"])
        if choice == 3:
            return "(%s %s %s)" % (sub(), r.choice("+-*"), sub())
        if choice == 4:
            return "(%s %s %s)" % (sub(), r.choice(["<", "<=", "==", "!=", ">", ">="]), sub())
        if choice == 5:
            return "arr[((%s) %% 64 + 64) %% 64]" % sub()
        if choice == 6:
            return "g(%s)" % sub()
        if choice == 7:
            return "f3(%s, i)" % sub()
        if choice == 8:
            return "((%s) / (%s))" % (sub(), sub())  # may divide by zero
        return "(%s %% %d)" % (sub(), r.choice([2, 3, 5, 11]))

    def stmt(depth=0):
        choice = r.randint(0, 7 if depth < 2 else 3)
        if choice == 0:
            return "%s = %s;" % (r.choice(VARS), expr())
        if choice == 1:
            return "arr[((%s) %% 64 + 64) %% 64] = %s;" % (expr(), expr())
        if choice == 2:
            return "%s = (%s) %% 1000003;" % (r.choice(VARS), expr())
        if choice == 3:
            return "if (%s) { g = %s; }" % (expr(), r.choice(["f1", "f2"]))
        if choice in (4, 5):
            return "if (%s) { %s } else { %s }" % (expr(), stmt(depth + 1), stmt(depth + 1))
        if choice == 6:
            w = "w%d" % r.randint(0, 10**6)
            return "var %s = 0; while (%s < %d) { %s %s = %s + 1; }" % (
                w, w, r.randint(0, 30), stmt(depth + 1), w, w)
        return "if (i %% %d == %d) { %s }" % (r.choice([3, 7, 50, 200]), r.randint(0, 2),
                                           stmt(depth + 1))

    text = PRELUDE + "".join("var %s = %d;\n" % (v, r.randint(-5, 5)) for v in VARS)
    body = " ".join(stmt() for _ in range(r.randint(2, 6)))
    text += "var i = 0; while (i < %d) { %s i = i + 1; }\n" % (r.randint(100, 1500), body)
    text += "".join("print %s;\n" % v for v in VARS) + "print arr;\n"
    return text


def run(path, options):
    p = subprocess.run([MINIVM, *options, path], capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


failures = 0
with tempfile.TemporaryDirectory() as tmp:
    path = tmp + "/p.mvm"
    for seed in range(FIRST, FIRST + COUNT):
        with open(path, "w") as f:
            f.write(program(seed))
        want = run(path, ["--jit=off"])
        for mode in JIT_MODES:
            got = run(path, mode)
            if got != want:
                failures += 1
                print("FAIL: seed %d, %s: status %d/%d, stderr %r/%r" % (
                    seed, " ".join(mode), want[0], got[0], want[2][-200:], got[2][-200:]))
if failures:
    sys.exit(1)
print("differential: %d programs identical with the JIT in %d modes" % (COUNT, len(JIT_MODES)))
