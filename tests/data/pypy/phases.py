# Phase change, polymorphic call site (guard_class), nested loops, bridges of bridges.
class A:
    def f(self, x): return x + 1
class B:
    def f(self, x): return x * 2
class C:
    def f(self, x): return x - 3

def poly(n):
    objs = [A(), B(), C()]
    s = 0
    for i in range(n):
        if i < n // 2:
            o = objs[0]          # phase 1: monomorphic
        else:
            o = objs[i % 3]      # phase 2: polymorphic -> guard_class fails, bridges
        s += o.f(i) & 0xff
    return s

def nested(n):
    t = 0
    for i in range(n):
        for j in range(i % 5 + 1):
            if j % 2:
                t += j
            else:
                t ^= i
    return t

print(poly(1200), nested(500))
