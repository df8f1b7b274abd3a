/* Writing JSON strings: every JSON output of jitflow (listings, reports, manifests) quotes
 * text the same way. */
#ifndef JITFLOW_JSON_OUT_H
#define JITFLOW_JSON_OUT_H

#include <stdio.h>

/* s as a JSON string, quotes included (NULL prints ""). */
void jf_json_string(FILE *out, const char *s);

#endif
