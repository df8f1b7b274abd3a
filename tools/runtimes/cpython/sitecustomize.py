"""Put on PYTHONPATH by `jitflow record` for Python programs: when the interpreter is a
CPython 3.13 JIT build, jitflow_cpython describes its JIT code (executors, stencils, exits)
into the recording. Then the sitecustomize this file hides (the user's or the
distribution's), if there is one, runs as it would have. Outside a recording (no
JITFLOW_ZONE_DIR, which `jitflow record` always sets) nothing is described: building the
extension with `python -m jitflow_cpython build` writes no zone file."""
import os
import sys


def _jitflow_start():
    try:
        import jitflow_cpython
        jitflow_cpython.start()
    except Exception as e:  # the program runs, undescribed, and the user is told why
        sys.stderr.write("jitflow: CPython JIT code not described: %s\n" % (e,))


def _run_hidden_sitecustomize():
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


if os.environ.get("JITFLOW_ZONE_DIR"):
    _jitflow_start()
_run_hidden_sitecustomize()
