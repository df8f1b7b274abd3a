/* minivm's example programs (tools/minivm/examples/NAME.mvm), for the tests that run them
 * all. */
#ifndef JITFLOW_TEST_MINIVM_EXAMPLES_H
#define JITFLOW_TEST_MINIVM_EXAMPLES_H

/* Calls check(NAME) for every example; fails the running test unless there are at least
 * the seven that docs/minivm.md lists. */
void jf_test_each_minivm_example(void (*check)(const char *name));

#endif
