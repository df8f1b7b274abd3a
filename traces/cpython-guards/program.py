# A small program for CPython 3.13's JIT, recorded into traces/cpython-guards: each
# function's loop becomes an executor, and each one leaves it in a different way.
class Point:
    def __init__(self, x):
        self.x = x


def scale(p, k):
    return p.x * k              # a small function the caller's trace takes in (_PUSH_FRAME)


def walk(values):
    total = 0
    for v in values:            # ints, then floats: the int guards exit
        total += v * 2
    return total


def flip(n):
    s = 0
    for i in range(n):
        if i < n // 2:          # turns after half the loop: the truth guard exits
            s += 1
        else:
            s -= 1
    return s


def calls(n):
    p = Point(3)
    s = 0
    for i in range(n):
        s += scale(p, i)
    Point.x = 0                 # a class attribute changed: the executor is invalidated
    return s


print(walk([1] * 400 + [2.5] * 400), flip(2000), calls(1000), calls(1000))
