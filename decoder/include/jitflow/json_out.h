/* Writing JSON strings: every JSON output of jitflow (listings, reports, manifests) quotes
 * text the same way. */
#ifndef JITFLOW_JSON_OUT_H
#define JITFLOW_JSON_OUT_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdio.h>

/* s as a JSON string, quotes included (NULL prints ""). */
void jf_json_string(FILE *out, const char *s);

#pragma GCC visibility pop

#endif
