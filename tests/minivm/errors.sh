#!/usr/bin/env bash
# Bad programs and run-time faults: exit status 1 and exactly one line on stderr,
# "file:line:column: message", the same with the interpreter and with the JIT (where
# --hot=5 puts the faulting operation inside a compiled trace, so the fault is found by a
# guard and reported by the interpreter at the same place). Bad usage: status 2.
# usage: errors.sh MINIVM
set -u
minivm=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fail=0

# check NAME PROGRAM EXPECTED_STDERR
check() {
  printf '%s' "$2" >bad.mvm
  for mode in "--jit=off" "--jit=on --hot=5 --bridge=2"; do
    # shellcheck disable=SC2086
    "$minivm" $mode bad.mvm >/dev/null 2>err
    status=$?
    if [ $status != 1 ] || [ "$(cat err)" != "$3" ]; then
      echo "FAIL: $1 ($mode): status $status, stderr:"
      cat err
      echo "expected: $3"
      fail=1
    fi
  done
}

check "missing semicolon" $'var x = 1\nprint x;' \
  "bad.mvm:2:1: error: expected ';' after the declaration, found 'print'"
check "undefined name" $'print 1;\nprint y;' \
  "bad.mvm:2:7: error: 'y' is neither a variable nor a function"
check "missing operand" 'print 1 +;' "bad.mvm:1:10: error: expected an expression, found ';'"
check "redeclared" 'var x = 1; var x = 2;' \
  "bad.mvm:1:16: error: 'x' is already declared in this function"
check "huge literal" 'print 99999999999999999999;' \
  "bad.mvm:1:7: error: integer literal does not fit in 64 bits"
check "bad character" 'print 1 @ 2;' "bad.mvm:1:9: error: unexpected character '@'"
check "unclosed paren" 'print (1;' "bad.mvm:1:9: error: expected ')' to close '(', found ';'"
check "unclosed block" 'while (1) { print 1;' \
  "bad.mvm:1:21: error: expected '}' before the end of the file"
check "nested function" 'func f() { func g() {} }' \
  "bad.mvm:1:12: error: functions are defined at the top level only"
check "builtin arity" 'print array(1, 2);' "bad.mvm:1:7: error: array() takes 1 argument, not 2"
check "builtin redefined" 'func len(x) { return 1; }' "bad.mvm:1:6: error: 'len' is a built-in function"
# 300 "(": the 201st (column 7 + 200) is one level too many
check "nested too deep" "print $(printf '(%.0s' $(seq 300))1;" \
  "bad.mvm:1:207: error: nested more than 200 levels deep"
check "bad assignment" '1 + 2 = 3;' \
  "bad.mvm:1:1: error: only a variable or an element a[i] can be assigned"

# Binary garbage (a NUL byte), written with printf since shell strings cannot hold it.
check_bytes() { # NAME PRINTF_FORMAT EXPECTED_STDERR
  printf "$2" >bad.mvm
  "$minivm" bad.mvm >/dev/null 2>err
  status=$?
  if [ $status != 1 ] || [ "$(cat err)" != "$3" ]; then
    echo "FAIL: $1: status $status, stderr: $(cat err); expected: $3"
    fail=1
  fi
}
check_bytes "NUL byte" 'print 1;\nprint\000 2;' "bad.mvm:2:6: error: unexpected byte 0x00"
check_bytes "truncated program" 'func f(a, ' "bad.mvm:1:11: error: expected name as a parameter name, found end of file"

check "division by zero" 'print 1 / 0;' "bad.mvm:1:9: runtime error: division by zero"
check "index out of bounds" $'var a = array(2);\nprint a[2];' \
  "bad.mvm:2:8: runtime error: index 2 is out of bounds (length 2)"
check "call an integer" 'print 3(1);' "bad.mvm:1:8: runtime error: calling an integer, which is not a function"
check "wrong arity" $'func f(a) { return a; }\nprint f(1, 2);' \
  "bad.mvm:2:8: runtime error: f() takes 1 argument, not 2"
check "stack overflow" 'func r(n) { return r(n + 1); } print r(0);' \
  "bad.mvm:1:21: runtime error: stack overflow (calls nested too deeply)"
check "negative array size" 'print array(-1);' \
  "bad.mvm:1:7: runtime error: array size -1 is not between 0 and 16777216"
check "array arithmetic" 'var a = array(1); print a + 1;' \
  "bad.mvm:1:27: runtime error: the left operand must be an integer, not an array"
check "len of integer" 'print len(5);' "bad.mvm:1:7: runtime error: len() needs an array"
# Faults that happen only after the loop has been compiled (with the JIT): caught by a guard.
check "division by zero in a trace" $'var i = 0; var s = 0;\nwhile (i < 100) {\n  s = s + 1000 / (50 - i);\n  i = i + 1;\n}' \
  "bad.mvm:3:16: runtime error: division by zero"
check "out of bounds in a trace" $'var i = 0; var a = array(60);\nwhile (i < 100) {\n  a[i] = i;\n  i = i + 1;\n}' \
  "bad.mvm:3:8: runtime error: index 60 is out of bounds (length 60)"
check "callee changes in a trace" $'func f(x) { return x; } var i = 0; var g = f;\nwhile (i < 100) {\n  if (i == 70) { g = 3; }\n  g(i);\n  i = i + 1;\n}' \
  "bad.mvm:4:4: runtime error: calling an integer, which is not a function"
check "type changes in a trace" $'var i = 0; var x = 0;\nwhile (i < 100) {\n  if (i == 70) { x = array(1); }\n  i = i + x;\n  i = i + 1;\n}' \
  "bad.mvm:4:9: runtime error: the right operand must be an integer, not an array"
check "deep recursion from a trace" $'func r(n) { return r(n + 1); }\nvar i = 0;\nwhile (i < 100) {\n  if (i == 80) { r(0); }\n  i = i + 1;\n}' \
  "bad.mvm:1:21: runtime error: stack overflow (calls nested too deeply)"

# usage NAME EXPECTED_STATUS ARGS...
usage() {
  local name=$1 want=$2
  shift 2
  "$minivm" "$@" >/dev/null 2>err
  status=$?
  if [ $status != "$want" ] || [ "$(wc -l <err)" != 1 ]; then
    echo "FAIL: $name: status $status (want $want), stderr:"
    cat err
    fail=1
  fi
}
printf 'print 1;' >ok.mvm
usage "no program" 2
usage "bad --jit" 2 --jit=maybe ok.mvm
usage "zero --hot" 2 --hot=0 ok.mvm
usage "bad --bridge" 2 --bridge=x ok.mvm
usage "tiny --code-size" 2 --code-size=10 ok.mvm
usage "unknown option" 2 --frobnicate ok.mvm
usage "two programs" 2 ok.mvm ok.mvm
usage "missing file" 1 no-such-file.mvm
usage "unwritable zone dir" 1 --zone-dir /proc/no-such-dir ok.mvm
if ! "$minivm" --help | grep -q -- "--counters"; then
  echo "FAIL: --help does not describe --counters"
  fail=1
fi
[ $fail = 0 ] && echo "all error cases give the expected one-line message and status"
exit $fail
