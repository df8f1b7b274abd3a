"""python -m jitflow_cpython build: compile the extension now and print its path."""
import sys

from jitflow_cpython import build

if sys.argv[1:] == ["build"]:
    print(build())
else:
    sys.exit("usage: python -m jitflow_cpython build")
