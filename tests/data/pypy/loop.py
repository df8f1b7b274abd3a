class A:
    def f(self, x): return x + 1
class B:
    def f(self, x): return x * 2
def run(n):
    objs = [A(), B()]
    s = 0
    for i in range(n):
        o = objs[0] if i % 7 else objs[1]
        s += o.f(i) & 0xff
    return s
print(run(3000))
