/* Checking a `jitflow report --json` of a LuaJIT recording against what LuaJIT itself
 * reported while it was recorded (tests/luajit/texit_counts.lua's output file). */
#ifndef JITFLOW_TEST_LUAJIT_CHECK_H
#define JITFLOW_TEST_LUAJIT_CHECK_H

#include <cjson/cJSON.h>

/* Run `jitflow report DIR --json` and compare its "luajit" section with the counts in
 * texit_path: every trace compiled (root or side, parent trace and exit, link type and
 * linked trace), every exit's exits to the interpreter before and after its side trace
 * was attached, recordings started and aborted, flushes; every side trace's entries
 * equal the exits of its parent exit that went on to it. Fails the running test on any
 * difference, decode error or lost data. Returns the number of side traces entered. */
int jf_test_luajit_report_matches(const char *dir, const char *texit_path, const char *name);
/* The same on a report already read. */
int jf_test_luajit_json_matches(const cJSON *report, const char *texit_path, const char *name);

/* The exits that reached LuaJIT's exit handler: all its "texit" events in texit_path. */
double jf_test_luajit_texits(const char *texit_path);

/* The loop variable of root loop trace `trace` (number + flushes * 2^32) when LuaJIT stopped
 * recording it (texit_path's "loop" line): the last iteration LuaJIT ran in its
 * interpreter before the trace took over. Fails the running test when there is none. */
double jf_test_luajit_recorded_index(const char *texit_path, double trace);

#endif
