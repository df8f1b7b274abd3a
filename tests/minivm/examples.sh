#!/usr/bin/env bash
# Every example (and each tests/minivm/*.mvm) prints exactly its .expected output (computed
# independently from the programs' meaning, see each file) with the interpreter alone and
# with the JIT under several threshold and code-memory settings, including ones that force
# bridges everywhere and code-memory flushes.
# usage: examples.sh MINIVM SOURCE_DIR
set -u
minivm=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
modes=("--jit=off" "--jit=on" "--hot=1 --bridge=1" "--hot=2 --bridge=0"
       "--code-size=3000 --hot=2 --bridge=2" "--code-size=2000")
for program in "$src"/tools/minivm/examples/*.mvm "$src"/tests/minivm/*.mvm; do
  expected=${program%.mvm}.expected
  for mode in "${modes[@]}"; do
    # shellcheck disable=SC2086
    if ! timeout 60 "$minivm" $mode --counters "$tmp/counters.json" "$program" >"$tmp/out" 2>"$tmp/err"; then
      echo "FAIL: minivm $mode $(basename "$program") exited non-zero: $(cat "$tmp/err")"
      fail=1
    elif ! cmp -s "$tmp/out" "$expected"; then
      echo "FAIL: minivm $mode $(basename "$program") output differs from $(basename "$expected"):"
      diff "$expected" "$tmp/out" | head -5
      fail=1
    elif [ ! -s "$tmp/counters.json" ]; then
      echo "FAIL: minivm $mode $(basename "$program") wrote no counters"
      fail=1
    fi
  done
done
[ $fail = 0 ] && echo "all examples print their expected output in every mode"
exit $fail
