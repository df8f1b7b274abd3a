/* Comparing jitflow's listing with a reference decoder's, line by line (the tests on the
 * real captures in ../shared/traces). */
#ifndef JITFLOW_TEST_REFERENCE_LINES_H
#define JITFLOW_TEST_REFERENCE_LINES_H

#include <stddef.h>

struct lines {
	char **v;
	size_t n;
};

/* Append a line (kept as a pointer into its text). */
void jf_lines_add(struct lines *l, char *line);

/* Fail the running test at the first line that differs, or when the counts differ. */
void jf_lines_compare(const char *what, const struct lines *got, const struct lines *want);

#endif
