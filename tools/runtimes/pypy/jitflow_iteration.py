"""Marks a benchmark's iterations for jitflow, under PyPy.

    try:
        from jitflow_iteration import iteration
    except ImportError:          # run without jitflow
        def iteration(index): pass

    for i in range(runs):
        iteration(i)             # once per iteration, as it begins
        benchmark()

Each call logs a section of PyPy's own log, "[TSC] {jitflow-iteration", the index,
"[TSC] jitflow-iteration}", stamped by PyPy with the time-stamp counter; `jitflow record`
asks PyPy for that section (PYPYLOG) and places each mark on the trace by its stamp
(imagemap/pypylog_clock.c), as an ITERATION event with the index. When PyPy's log does not
ask for the section (not recording), PyPy writes nothing; under another Python,
iteration() does nothing.
Put this folder on PYTHONPATH (in a build tree: build/tools/runtimes/pypy). `jitflow
record` does not do it for PyPy: an entry more on sys.path changes the loops PyPy's own
start-up (importlib's path handling) traces and compiles.
"""
SECTION = "jitflow-iteration"

try:
    from __pypy__ import debug_start, debug_print, debug_stop
except ImportError:
    debug_start = None

if debug_start is not None:
    # PyPy reads PYPYLOG at start-up and removes it from the environment, so whether the
    # log takes the section cannot be asked here; where it does not, PyPy's debug_start
    # and the others return at once (a prefix comparison in C).
    def iteration(index):
        """Mark the start of iteration `index` (an int) in PyPy's log."""
        debug_start(SECTION)
        debug_print(str(int(index)))
        debug_stop(SECTION)
else:
    def iteration(index):
        """Not PyPy: nothing to mark."""
