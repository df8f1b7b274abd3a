"""jitflow's description of CPython 3.13's copy-and-patch JIT (docs/cpython.md).

start() builds (once, into a cache folder) and loads the _jitflow_cpython extension,
which wraps the tier-2 optimizer and writes a zone record for every executor through
jitflow's emitter. It needs a JIT build run from its build tree: the extension is compiled
against that build's internal headers (Py_BUILD_CORE) and reads its generated
jit_stencils.h for the size of every uop's stencil.

    python -m jitflow_cpython build   # compile the extension now; prints its path
"""
import hashlib
import os
import subprocess
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = [os.path.join(HERE, os.pardir, name)
           for name in ("cpython_zones.c", "stencil_table.c", "stencil_table.h")]


class NotAvailable(Exception):
    pass


def is_jit_build():
    return (sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 13)
            and "--enable-experimental-jit" in (sysconfig.get_config_var("CONFIG_ARGS") or ""))


def build_dirs():
    """(source folder, build folder) of the running interpreter's build tree."""
    src = sysconfig.get_config_var("srcdir")
    build = sysconfig.get_config_var("abs_builddir")
    if not src or not build or not os.path.isfile(os.path.join(build, "pyconfig.h")):
        raise NotAvailable("%s is not run from its build tree (no pyconfig.h in %r)"
                           % (sys.executable, build))
    return os.path.abspath(src), os.path.abspath(build)


def stencils_path():
    _, build = build_dirs()
    path = os.path.join(build, "jit_stencils.h")
    if not os.path.isfile(path):
        raise NotAvailable("no jit_stencils.h in %s" % build)
    return path


def _emit_lib():
    lib = os.environ.get("JITFLOW_EMIT_LIB")
    if not lib or not os.path.isfile(lib):
        raise NotAvailable("JITFLOW_EMIT_LIB does not name the emitter library "
                           "(jitflow record sets it)")
    return os.path.realpath(lib)


def _include_dir():
    for d in (os.environ.get("JITFLOW_EMIT_INCLUDE"), os.path.join(HERE, os.pardir, "include")):
        if d and os.path.isfile(os.path.join(d, "jitflow", "emitter.h")):
            return os.path.abspath(d)
    raise NotAvailable("jitflow/emitter.h not found (set JITFLOW_EMIT_INCLUDE)")


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "jitflow", "cpython-ext")


def build():
    """Compiles the extension for this interpreter unless it is cached; returns its path."""
    src, bld = build_dirs()
    lib, inc, stencils = _emit_lib(), _include_dir(), stencils_path()
    key = hashlib.sha256()
    headers = [os.path.join(inc, "jitflow", h) for h in ("emitter.h", "zone_format.h")]
    for path in SOURCES + headers + [stencils]:
        with open(path, "rb") as f:
            key.update(f.read())
    key.update(("%s\0%s\0%s" % (os.path.realpath(sys.executable), lib, bld)).encode())
    out_dir = os.path.join(_cache_dir(), key.hexdigest()[:16])
    out = os.path.join(out_dir, "_jitflow_cpython.so")
    if os.path.isfile(out):
        return out
    os.makedirs(out_dir, exist_ok=True)
    tmp = "%s.%d.tmp" % (out, os.getpid())
    # The core's own defines (-D_Py_TIER2=1 -D_Py_JIT): the internal headers depend on them.
    core_defines = [flag for flag in (sysconfig.get_config_var("CONFIGURE_CFLAGS_NODIST")
                                      or "").split() if flag.startswith("-D")]
    cmd = [os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", "-std=gnu11",
           "-fvisibility=hidden", "-DPy_BUILD_CORE_MODULE"] + core_defines + [
           "-I" + os.path.join(src, "Include"), "-I" + os.path.join(src, "Include", "internal"),
           "-I" + os.path.join(src, "Include", "internal", "mimalloc"), "-I" + bld,
           "-I" + os.path.join(bld, "Include"), "-I" + inc,
           os.path.join(HERE, os.pardir, "cpython_zones.c"),
           os.path.join(HERE, os.pardir, "stencil_table.c"),
           lib, "-Wl,-rpath," + os.path.dirname(lib), "-lcapstone", "-o", tmp]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        raise NotAvailable("compiling the extension failed:\n%s\n%s" % (" ".join(cmd), res.stderr))
    os.replace(tmp, out)
    return out


def _load(path):
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.ExtensionFileLoader("_jitflow_cpython", path)
    spec = importlib.util.spec_from_file_location("_jitflow_cpython", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules["_jitflow_cpython"] = module
    return module


def start():
    """Describes this interpreter's JIT code from now on; False when it has no JIT."""
    if not is_jit_build():
        return False
    module = _load(build())
    return module.start(stencils_path())

