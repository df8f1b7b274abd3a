/* JSON helpers for tests that read jitflow's --json output (cJSON). Each fails the running
 * test with a message naming what was missing. */
#ifndef JITFLOW_TEST_JSON_CHECK_H
#define JITFLOW_TEST_JSON_CHECK_H

#include <cjson/cJSON.h>

/* Run a shell command that must succeed and print one JSON document. */
cJSON *jf_test_run_json(const char *cmd);
/* A JSON file. */
cJSON *jf_test_json_file(const char *path);
/* A member that must be a number / a string. */
double jf_test_num(const cJSON *o, const char *key);
const char *jf_test_str(const cJSON *o, const char *key);

#endif
