"""For test_pypy_phases: the main thread marks ITERATIONS iterations of a hot loop with
jitflow's marker, then two threads run hot loops of their own (different functions, so
that each thread's loops and bridges are compiled and run on that thread). Prints the
iteration count first, then the results."""
import threading

try:
    from jitflow_iteration import iteration
except ImportError:
    def iteration(index):
        pass

ITERATIONS = 5


def main_loop(n):
    total = 0
    for i in range(n):
        total += i % 7
    return total


def thirds(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        else:
            total -= 1
    return total


def fifths(n):
    total = 0
    for i in range(n):
        if i % 5 == 0:
            total -= i
        else:
            total += 2
    return total


results = {}


def run(name, fn, n):
    results[name] = fn(n)


total = 0
for k in range(ITERATIONS):
    iteration(k)
    total += main_loop(1500)
workers = [threading.Thread(target=run, args=("thirds", thirds, 3000)),
           threading.Thread(target=run, args=("fifths", fifths, 1500))]
for w in workers:
    w.start()
for w in workers:
    w.join()
print(ITERATIONS, total, results["thirds"], results["fifths"])
