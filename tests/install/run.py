#!/usr/bin/env python3
"""jitflow as a user installs it: `cmake --install` into BUILD/install-test/prefix, then
- a runtime built against the installed emitter with `pkg-config jitflow-emit` (shared and
  static) and with find_package(jitflow) writes a zone file, which the installed
  `jitflow zone dump` lists with exactly the records the program wrote;
- a tool built with find_package(jitflow), and with the static libjitflow.a, decodes
  traces/recorded-fib through libjitflow's public headers alone: the instruction count of
  Linux perf's decoder (the oracle file's line count) and the same counts as the
  installed `jitflow stat`;
- the shared libraries export exactly the functions and objects their public headers
  declare (the headers' prototypes as gcc -aux-info lists them), in one version node,
  with versioned sonames;
- a man page for jitflow and every subcommand its --help lists, mentioning every option
  that subcommand's --help prints; bash completion lists the same subcommands.
usage: run.py BUILD_DIR SOURCE_DIR CC"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

build, src = (os.path.abspath(p) for p in sys.argv[1:3])
cc = sys.argv[3]
work = os.path.join(build, "install-test")
prefix = os.path.join(work, "prefix")
failures = []


def run(*cmd, env=None, cwd=None):
    """Run cmd; its stdout, or exit the test naming the command and its stderr."""
    full_env = dict(os.environ, **(env or {}))
    p = subprocess.run(cmd, capture_output=True, text=True, env=full_env, cwd=cwd)
    if p.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
        sys.exit(1)
    return p.stdout


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
run("cmake", "--install", build, "--prefix", prefix)
jitflow = os.path.join(prefix, "bin", "jitflow")
libdirs = [os.path.dirname(p) for p in glob.glob(f"{prefix}/lib*/**/libjitflow.so", recursive=True)]
check(len(libdirs) == 1, f"one libdir with libjitflow.so, found {libdirs}")
libdir = libdirs[0]
incdir = os.path.join(prefix, "include", "jitflow")
for f in ["bin/jitflow", "include/jitflow/emitter.h", "include/jitflow/zone_format.h",
          "include/jitflow/decoder.h", "share/bash-completion/completions/jitflow",
          "share/doc/jitflow/README.md", "share/doc/jitflow/emitting-zones.md"]:
    check(os.path.isfile(os.path.join(prefix, f)), f"installed {f}")
for f in ["libjitflow.a", "libjitflow-emit.a", "libjitflow-emit.so.0",
          "pkgconfig/jitflow.pc", "pkgconfig/jitflow-emit.pc", "cmake/jitflow/jitflowConfig.cmake"]:
    check(os.path.exists(os.path.join(libdir, f)), f"installed {f} in {libdir}")
run_env = {"LD_LIBRARY_PATH": libdir}


# --- a runtime's zone file, read back by the installed jitflow
def check_zone(program, label):
    zone_dir = os.path.join(work, "zones-" + label)
    os.makedirs(zone_dir)
    path = run(program, zone_dir, env=run_env).strip()
    lines = run(jitflow, "zone", "dump", path, "--json").splitlines()
    recs = [json.loads(line) for line in lines]
    # What the emitter writes at open: its clock, its marker, its own code range.
    main = [r for r in recs if r.get("record") not in (None, "CLOCK", "MARKER") and
            not (r.get("record") == "INTERP_RANGE" and r.get("kind") == "instrumentation")]
    base = "0x7f0000001000"
    want = [("CODE_LOAD", {"addr": base, "size": 10, "name": "install-test trace"}),
            ("REGION_LOAD", {"addr": base, "size": 10, "name": "install-test trace",
                             "kind": "trace", "trace": 7}),
            ("GUARD", {"guard": 1, "trace": 7, "branch": "0x7f0000001003",
                       "stub": "0x7f0000001019", "resume_pc": 42}),
            ("REGION_FREE", {"addr": base, "size": 10}),
            ("CODE_CLOSE", {})]
    got = [(r["record"], {k: r.get(k) for k in fields})
           for r, (_, fields) in zip(main, want)]
    check(len(main) == len(want) and got == want,
          f"{label}: zone dump lists the records emit_zone wrote:\n  {main}\n  want {want}")
    summary = recs[-1]
    check(summary.get("summary") and summary["unknown_skipped"] == 0,
          f"{label}: zone dump summary {summary}")


pc_env = {"PKG_CONFIG_PATH": os.path.join(libdir, "pkgconfig")}
emit_flags = run("pkg-config", "--cflags", "--libs", "jitflow-emit", env=pc_env).split()
emit_pc = os.path.join(work, "emit_zone_pkgconfig")
run(cc, os.path.join(src, "tests/install/emit_zone.c"), *emit_flags, "-o", emit_pc)
needed = run("readelf", "-d", emit_pc)
check("[libjitflow-emit.so.0]" in needed, "pkg-config build links libjitflow-emit.so.0")
check_zone(emit_pc, "pkg-config")
# The static emitter: the archive and what --static adds (pthread).
static_flags = run("pkg-config", "--static", "--cflags", "--libs-only-other", "jitflow-emit",
                   env=pc_env).split()
emit_static = os.path.join(work, "emit_zone_static")
run(cc, os.path.join(src, "tests/install/emit_zone.c"), *static_flags,
    os.path.join(libdir, "libjitflow-emit.a"), "-o", emit_static)
check("libjitflow-emit" not in run("readelf", "-d", emit_static), "static build needs no .so")
check_zone(emit_static, "static")

# --- find_package(jitflow) in a project of its own
consumer = os.path.join(work, "consumer")
run("cmake", "-S", os.path.join(src, "tests/install/consumer"), "-B", consumer,
    f"-DCMAKE_PREFIX_PATH={prefix}", f"-DCMAKE_C_COMPILER={cc}")
run("cmake", "--build", consumer, "-j2")
check_zone(os.path.join(consumer, "emit_zone_cmake"), "find_package")

fib = os.path.join(src, "traces/recorded-fib")
perf_data = os.path.join(fib, "perf.data")
lib_counts = json.loads(run(os.path.join(consumer, "decode_perf_cmake"), perf_data, fib,
                            env=run_env))
# The consumer reads libipt's blocks (records returned); stat's fast counter cuts blocks at
# every branch, so its block count is compared with the same decoder's.
stat = json.loads(run(jitflow, "stat", "--perf", perf_data, "--image-dir", fib, "--json",
                      "--decoder=libipt-block"))
with open(os.path.join(fib, "expected-perf-instructions.txt")) as f:
    perf_insns = sum(1 for _ in f)
check(lib_counts["instructions"] == perf_insns,
      f"libjitflow decodes {lib_counts['instructions']} instructions, perf {perf_insns}")
for k in ["trace_bytes", "instructions", "blocks", "events", "errors"]:
    check(lib_counts[k] == stat[k], f"libjitflow {k} {lib_counts[k]}, jitflow stat {stat[k]}")
check(lib_counts["missing_images"] == 0, "libjitflow found every mapped file")
# The same tool linked with the static libjitflow and what `pkg-config --static` adds.
decode_static = os.path.join(work, "decode_perf_static")
static_libs = [f for f in run("pkg-config", "--static", "--libs", "jitflow", env=pc_env).split()
               if f != "-ljitflow"]
run(cc, os.path.join(src, "tests/install/decode_perf.c"),
    *run("pkg-config", "--cflags", "jitflow", env=pc_env).split(), "-l:libjitflow.a",
    *static_libs, "-o", decode_static)
check("libjitflow" not in run("readelf", "-d", decode_static), "static build needs no .so")
static_counts = json.loads(run(decode_static, perf_data, fib))
check(static_counts == lib_counts, f"static libjitflow: {static_counts}, shared: {lib_counts}")

# --- exported symbols = the public headers' functions and objects
gcc = shutil.which("gcc") or cc   # -aux-info is gcc's


def header_api(headers):
    """Functions (gcc -aux-info) and extern objects the installed headers declare."""
    tu = os.path.join(work, "api.c")
    aux = os.path.join(work, "api.aux")
    with open(tu, "w") as f:
        f.writelines(f'#include "jitflow/{h}"\n' for h in headers)
    run(gcc, "-I", os.path.join(prefix, "include"), "-aux-info", aux, "-fsyntax-only", tu)
    funcs = set()
    for line in open(aux):
        m = re.match(r"/\* (\S+):\d+:.. \*/ (.*)", line)
        if m and os.path.dirname(m.group(1)) == incdir and " static " not in f" {m.group(2)}":
            funcs.add(re.search(r"(\w+) \(", m.group(2)).group(1))
    objects = set()
    for h in headers:
        for m in re.finditer(r"^extern [^(;\n]*?\b(jf_\w+)\s*(\[[^]]*\])?\s*;",
                             open(os.path.join(incdir, h)).read(), re.M):
            objects.add(m.group(1))
    return funcs, objects


def exported(lib):
    funcs, objects, versions = set(), set(), set()
    for line in run("nm", "-D", "--defined-only", lib).splitlines():
        _, kind, sym = line.split()
        if kind == "A":
            continue     # the version node itself
        name, _, version = sym.partition("@@")
        versions.add(version)
        (funcs if kind == "T" else objects).add(name)
    return funcs, objects, versions


all_headers = sorted(os.listdir(incdir))
for lib, headers, node in [("libjitflow-emit.so", ["emitter.h"], "JITFLOW_EMIT_0"),
                           ("libjitflow.so", [h for h in all_headers if h != "emitter.h"],
                            "JITFLOW_0")]:
    want_f, want_o = header_api(headers)
    got_f, got_o, versions = exported(os.path.join(libdir, lib))
    check(got_f == want_f, f"{lib} exports the headers' functions: "
          f"not exported {sorted(want_f - got_f)}, not in headers {sorted(got_f - want_f)}")
    check(got_o == want_o, f"{lib} exports the headers' objects: {sorted(got_o)} vs {sorted(want_o)}")
    check(versions == {node}, f"{lib}: version nodes {versions}, want {node}")
    soname = re.search(r"Library soname: \[(.*)\]", run("readelf", "-d", os.path.join(libdir, lib)))
    check(soname and soname.group(1) == lib + ".0", f"{lib}: soname {soname and soname.group(1)}")
    print(f"{lib}: {len(got_f)} functions, {len(got_o)} objects exported, all declared in "
          f"{len(headers)} public headers")

# --- man pages and completion, against the installed command's --help
help_text = run(jitflow, "--help")
commands = re.findall(r"^  ([a-z]+) ", help_text.split("commands:", 1)[1], re.M)
check(len(commands) >= 9, f"jitflow --help lists commands: {commands}")
mandir = os.path.join(prefix, "share/man/man1")
groff = shutil.which("groff")
for cmd in [None] + commands:
    page = os.path.join(mandir, "jitflow.1" if cmd is None else f"jitflow-{cmd}.1")
    if not os.path.isfile(page):
        check(False, f"man page {page}")
        continue
    if groff:   # rendered, as man shows it
        text = run(groff, "-man", "-Tascii", "-P-cbou", page)
    else:       # the source, unescaped
        text = open(page).read().replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")
    helped = run(jitflow, "--help") if cmd is None else run(jitflow, cmd, "--help")
    options = set(re.findall(r"(?:^|[\s\[|,(])(--?[A-Za-z][\w.-]*)", helped))
    missing = sorted(o for o in options if o not in text)
    check(not missing, f"{os.path.basename(page)} mentions every option of --help; missing {missing}")
print(f"man pages: jitflow and {len(commands)} subcommands, every --help option in them"
      f" ({'rendered with groff' if groff else 'troff source'})")

completion = os.path.join(prefix, "share/bash-completion/completions/jitflow")
script = (f'source "{completion}"; COMP_WORDS=("{jitflow}" ""); COMP_CWORD=1; _jitflow; '
          'printf "%s\\n" "${COMPREPLY[@]}"')
completed = run("bash", "-c", script).split()
check(set(commands) <= set(completed), f"completion of `jitflow ` {completed}, want {commands}")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("installed jitflow: emitter via pkg-config (shared, static) and find_package, zone file"
      f" read back, libjitflow decodes {lib_counts['instructions']} instructions = perf's")
