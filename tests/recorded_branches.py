#!/usr/bin/env python3
"""Every taken branch of traces/recorded-fib, from jitflow's decode, against Linux perf's
own list of them (expected-perf-branches.txt, `perf script --itrace=b -F ip,addr`).

jitflow prints executed instructions only; a branch was taken where the next instruction
is not the one after (instruction lengths from binutils' objdump, not from jitflow), and
tracing stopping and starting again shows as perf shows it, a branch to and from 0. The
lists must be equal line by line: fib(15)'s 1973 calls of fib and the 100 calls of each
table entry among them (traces/recorded-fib/README.md).

usage: recorded_branches.py JITFLOW SOURCE_DIR"""
import subprocess
import sys


def instruction_lengths(binary):
    """{address: length} from objdump -d, whose long instructions go on over lines that
    hold only more bytes."""
    lengths = {}
    last = None
    out = subprocess.run(["objdump", "-d", binary], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        fields = line.split("\t")
        if len(fields) < 2 or not fields[0].strip().endswith(":"):
            continue
        try:
            address = int(fields[0].strip()[:-1], 16)
        except ValueError:
            continue
        size = len(fields[1].split())
        if len(fields) == 2 and last is not None:  # more bytes of the one before
            lengths[last] += size
            continue
        lengths[address] = size
        last = address
    return lengths


def taken_branches(listing, lengths):
    branches = []
    prev = None
    for line in listing.splitlines():
        if line.startswith("[disabled"):
            if prev is not None:
                branches.append("%x 0" % prev)
            prev = None
            continue
        if line.startswith("["):
            continue
        address = int(line.split()[0], 16)
        if prev is None:
            branches.append("0 %x" % address)
        elif address != prev + lengths[prev]:
            branches.append("%x %x" % (prev, address))
        prev = address
    return branches


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    jitflow, src = sys.argv[1:]
    folder = src + "/traces/recorded-fib"
    decoded = subprocess.run([jitflow, "decode", "--perf", folder + "/perf.data",
                              "--image-dir", folder], capture_output=True, text=True)
    if decoded.returncode != 0:
        sys.exit("jitflow decode failed (%d): %s" % (decoded.returncode, decoded.stderr))
    ours = taken_branches(decoded.stdout, instruction_lengths(folder + "/fib_nolibc"))
    with open(folder + "/expected-perf-branches.txt") as f:
        perfs = f.read().splitlines()
    for i, (a, b) in enumerate(zip(ours, perfs)):
        if a != b:
            sys.exit("branch %d: jitflow %s, perf %s" % (i + 1, a, b))
    if len(ours) != len(perfs):
        sys.exit("jitflow has %d taken branches, perf %d" % (len(ours), len(perfs)))
    calls = sum(1 for b in ours if b.endswith(" 401045"))
    if calls != 1973:
        sys.exit("%d transfers to fib's entry; fib(15) enters fib 1973 times" % calls)
    print("%d taken branches as perf lists them, %d of them into fib" % (len(ours), calls))


if __name__ == "__main__":
    main()
