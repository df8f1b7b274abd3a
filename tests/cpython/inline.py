# A hot loop that calls a small function which CPython 3.13's optimizer takes into the
# loop's executor (_PUSH_FRAME ... _POP_FRAME). tests/test_cpython.c checks that jitflow
# counts the callee's uops in the callee's code object, at its own bytecode offsets.
# The program prints what the test checks against, from CPython itself: each code
# object's name, first line and size, where the caller's loop lies (code_facts.py), and
# whether the executor pushes the callee's frame (_opcode.get_executor).
import _opcode

import code_facts


def scale(x, k):
    return x * k + 1


def caller(n):
    total = 0
    base = 7
    step = 3
    for i in range(n):
        total += scale(i, step)
    return total + base


def pushes(code, callee):
    """1 when an executor of code pushes callee's frame: its _PUSH_FRAME's operand is
    the function (Python/optimizer.c)."""
    for offset in range(0, len(code.co_code), 2):
        try:
            executor = _opcode.get_executor(code, offset)
        except ValueError:
            continue
        for name, _oparg, _target, operand in executor:
            if name == "_PUSH_FRAME" and operand == id(callee):
                return 1
    return 0


def main():
    print(caller(3000))
    print(code_facts.facts(caller.__code__, scale.__code__))
    print("pushes", pushes(caller.__code__, scale))


main()
