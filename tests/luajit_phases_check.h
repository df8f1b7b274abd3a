/* Checking the VM phases jitflow's LuaJIT module describes (tools/runtimes/luajit/jitflow/
 * vmphases.lua) in a recording, on any machine LuaJIT runs on: the tracing phase against
 * LuaJIT's own "trace" events, and the interpreter's range against a -joff program whose
 * cost is fixed by its semantics. */
#ifndef JITFLOW_TEST_LUAJIT_PHASES_CHECK_H
#define JITFLOW_TEST_LUAJIT_PHASES_CHECK_H

#include <cjson/cJSON.h>

/* How many times word occurs in text. */
long jf_test_occurrences(const char *text, const char *word);

/* LuaJIT's own count of its "trace" events of kind `what` (start, stop, abort, flush in
 * texit_path, tests/luajit/texit_counts.lua's output; NULL: all of them). */
long jf_test_luajit_trace_events(const char *texit_path, const char *what);

/* The tracing phase, from the recording's zone file (dump: `jitflow zone dump`) and its
 * `jitflow report --json`: one PHASE_BEGIN (tracing) per LuaJIT "start" event, one
 * PHASE_END per "stop" or "abort", no other phase; as many tracing spans in the report;
 * tracing instructions for every trace compiled; and exit handling instructions (the
 * programs checked here all exit to the interpreter). Fails the running test otherwise. */
void jf_test_luajit_tracing_matches(const char *dump, const cJSON *report,
				    const char *texit_path, const char *name);

/* A recording in dir of tests/luajit/interpreter_only.lua run with -joff, which printed
 * `runs` and `trips`: its report has no jitted code, no tracing, no exit handling and no
 * unknown code; each marked run costs the one before plus 1000 trips of one instruction
 * count c; the interpreter's instructions hold all trips at c each (and under a tenth
 * more: the bytecodes outside the inner loop). Prints c. */
void jf_test_luajit_interpreter_only(const char *dir, long runs, long trips);

#endif
