#!/usr/bin/env bash
# stencil_gen refuses objects whose code the JIT could not copy and patch, with a message
# naming the object, the stencil and the problem, and exit status 1.
# usage: stencil_gen.sh STENCIL_GEN CALLS_LIBC.o GUARD_USES_STACK.o
set -u
gen=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# expect_error NAME OBJECT PATTERN
expect_error() {
  "$gen" "$2" "$tmp/t.c" "$tmp/ids.h" 2>"$tmp/err"
  status=$?
  if [ $status != 1 ] || ! grep -q -- "$3" "$tmp/err" || [ "$(wc -l <"$tmp/err")" != 1 ]; then
    echo "FAIL: $1: status $status, stderr: $(cat "$tmp/err")"
    fail=1
  fi
}
expect_error "call to libc" "$2" "calls_puts+0x[0-9a-f]*: relocation type [0-9]* against '\\(puts\\|.rodata[.a-z0-9]*\\)'"
expect_error "guard after push" "$3" "guard_after_push+0x[0-9a-f]*: '\\(push\\|stp\\) .*' moves the stack in a guard stencil"
printf 'not an object' >"$tmp/junk.o"
expect_error "not ELF" "$tmp/junk.o" "junk.o: not a readable ELF object"
: >"$tmp/empty.o"
expect_error "empty file" "$tmp/empty.o" "empty.o: not a readable ELF object"
head -c 100 "$2" >"$tmp/truncated.o"
expect_error "truncated object" "$tmp/truncated.o" "truncated.o: "
expect_error "missing file" "$tmp/none.o" "none.o: not a readable ELF object"
[ $fail = 0 ] && echo "stencil_gen refuses bad objects with one clear line each"
exit $fail
