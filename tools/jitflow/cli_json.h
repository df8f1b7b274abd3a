/* Reading a JSON file given on the command line (reports, baselines). */
#ifndef JITFLOW_CLI_JSON_H
#define JITFLOW_CLI_JSON_H

#include <cjson/cJSON.h>

#include "jitflow/error.h"

/* The parsed document, or NULL with err naming the file, and for bad JSON the offset where
 * parsing stopped and `expected` (what the file should have been). */
cJSON *jf_cli_load_json(const char *path, const char *expected, struct jf_error *err);

#endif
