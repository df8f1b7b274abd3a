"""What CPython says about a caller and the function its loop calls, for the tests that
check where jitflow puts an inlined function's bytecode ranges and frames
(tests/cpython_inline_check.c):

    callee NAME FIRST_LINE CODE_SIZE
    caller NAME FIRST_LINE LOOP_FROM LOOP_TO
    call OFFSET

CODE_SIZE is len(co_code) in bytes, caches included, as bytecode offsets count them;
the caller's loop runs from its FOR_ITER to the POP_TOP after END_FOR, where the loop's
exit resumes; OFFSET is the CALL in that loop of the callee (loaded as a global), the
call an executor that inlines the callee names as its frame's caller. Run as a script
on a program's source (compiled, not run) or imported.

    python code_facts.py PROGRAM CALLER CALLEE
"""
import dis
import sys


def loop_span(code):
    ins = list(dis.get_instructions(code))
    start = next(i.offset for i in ins if i.opname == "FOR_ITER")
    end = next(i.offset for i in ins if i.opname == "END_FOR")
    return start, end + 2


def call_offset(caller, callee, lo, hi):
    loaded = False
    for i in dis.get_instructions(caller):
        if not lo <= i.offset < hi:
            continue
        if i.opname == "LOAD_GLOBAL" and i.argval == callee.co_name:
            loaded = True
        elif loaded and i.opname == "CALL":
            return i.offset
    raise ValueError("%s's loop does not call %s" % (caller.co_qualname, callee.co_name))


def facts(caller, callee):
    lo, hi = loop_span(caller)
    return ("callee %s %d %d\ncaller %s %d %d %d\ncall %d" %
            (callee.co_qualname, callee.co_firstlineno, len(callee.co_code),
             caller.co_qualname, caller.co_firstlineno, lo, hi,
             call_offset(caller, callee, lo, hi)))


def code_objects(code):
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            yield from code_objects(const)


def main(path, caller, callee):
    with open(path) as f:
        module = compile(f.read(), path, "exec")
    named = {c.co_qualname: c for c in code_objects(module)}
    print(facts(named[caller], named[callee]))


if __name__ == "__main__":
    main(*sys.argv[1:4])
