/* Checking jitflow's report of a CPython 3.13 JIT recording against the pystats file
 * the same run wrote (-X pystats of a --enable-pystats build). */
#ifndef JITFLOW_TEST_CPYTHON_CHECK_H
#define JITFLOW_TEST_CPYTHON_CHECK_H

#include <stdio.h>

/* Compares `jitflow report DIR --json` with pystats_path: for every uop that pystats saw
 * execute, jitflow's entries into its stencils (the module's POINTs at each stencil's
 * first instruction; _COLD_EXIT: the entries of the cold-exit regions) equal pystats'
 * execution_count, and for every guard uop the passes of its jumps to the exit stub equal
 * pystats' miss; executors made, executors entered and uops executed equal pystats'
 * optimizer successes, traces executed and uops executed; the exits the report counts at
 * the GUARD records' branches add up to all of pystats' misses; each guard kind's exits
 * equal pystats' misses of the uops it lists, with every missing uop in one kind; the
 * executor chains add up to pystats' _EXIT_TRACE runs less _COLD_EXIT's (plus at most
 * _DYNAMIC_EXIT's, which may also chain); no
 * decode error and no data lost. Writes the comparison table to table
 * (may be NULL). Fails the running test on any difference; returns the number of uops
 * compared. */
int jf_test_cpython_matches_pystats(const char *dir, const char *pystats_path, FILE *table);

/* A recording whose caller's loop calls a function the executor inlined
 * (cpython_inline_check.c): in `jitflow report DIR --json`, that callee's bytecode ranges
 * are under its own code object (name and first line as facts_path says: code_facts.py's
 * lines, in code objects of a file ending in file_suffix), inside its code (below its
 * size), with instructions; the caller's are inside its loop, with instructions; `jitflow
 * bytecodes DIR` has a heading for the callee. With jit_only (a recording with
 * --filter=jit, where no native call returns into the inlined code), in `jitflow stacks
 * DIR --json` the callee's guest frame lies on its executor's region frame or on the
 * caller's guest frame (the inline chain), entered as often as pystats_path says JIT code
 * pushed a frame (_PUSH_FRAME), and the stacks topped by each function ran its bytecode
 * ranges' instructions. The zone file's INLINE_FRAMES records name the caller's code object at
 * its call of the callee (facts_path's "call" offset). must_push: facts_path must also
 * say "pushes 1" (the program saw the executor push the callee's frame). Fails the
 * running test otherwise. */
int jf_test_cpython_inlined(const char *dir, const char *facts_path, const char *pystats_path,
			    const char *file_suffix, int must_push, int jit_only);

#endif
