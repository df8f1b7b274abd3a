# A program for CPython's JIT whose executors leave through guards, exactly as often as
# CPython's pystats count: a loop over values of changing types (the type guards fail),
# nested loops, calls out of JIT code (a C function, a Python function the trace does not
# inline, a generator), exceptions raised and caught in a loop, and executors invalidated
# by changing a global and a class attribute the traces depend on.
import sys


class Box:
    scale = 2

    def __init__(self, v):
        self.v = v


def poly(values):
    total = 0
    for v in values:            # int, float, str: the trace's type guards exit
        if isinstance(v, str):
            total += len(v)
        else:
            total += v * 2
    return total


def nested(n):
    acc = 0
    for i in range(n):
        for j in range(i % 7):
            acc += i ^ j
    return acc


def gen(n):
    for i in range(n):
        yield i * 3


def consume(n):
    s = 0
    for x in gen(n):
        s += x
    return s


def excepting(n):
    caught = 0
    for i in range(n):
        try:
            if i % 5 == 0:
                raise ValueError(i)
            caught += 1
        except ValueError:
            caught -= 1
    return caught


LIMIT = 3


def with_global(n):
    s = 0
    for i in range(n):
        s += i % LIMIT
    return s


def boxes(n):
    b = Box(3)
    s = 0
    for i in range(n):
        s += b.v * Box.scale + abs(-i)
    return s


def main():
    values = [1, 2.5, "abc"] * 300 + [7] * 500
    out = [poly(values) for _ in range(4)]
    out.append(nested(600))
    out.append(consume(2000))
    out.append(excepting(1500))
    global LIMIT
    out.append(with_global(1500))
    LIMIT = 5                   # globals changed: executors that depend on it go
    out.append(with_global(1500))
    out.append(boxes(1500))
    Box.scale = 3               # class attribute changed: the same
    out.append(boxes(1500))
    print(" ".join(str(x) for x in out))


main()
