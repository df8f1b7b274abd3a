# Loops freed and their memory reused: each function is compiled, run once and dropped;
# with loop_longevity=2 PyPy frees a loop two JIT generations after it last ran, and the
# next loop is assembled into the freed memory.
import gc, pypyjit
pypyjit.set_param("loop_longevity=2")

def make(k):
    src = "def f(n):\n    s = 0\n    for i in range(n):\n        s += i * %d\n    return s\n" % k
    d = {}
    exec(src, d)
    return d["f"]

t = 0
for k in range(12):
    f = make(k)
    t += f(2000)
    del f
    gc.collect()
print(t)
