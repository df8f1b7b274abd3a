#include "reference_lines.h"
#include "test_support.h"

#include <stdlib.h>
#include <string.h>

void jf_lines_add(struct lines *l, char *line)
{
	if (!(l->n & 1023)) {
		l->v = realloc(l->v, (l->n + 1024) * sizeof(*l->v));
		if (!l->v)
			fail_msg("out of memory");
	}
	l->v[l->n++] = line;
}

void jf_lines_compare(const char *what, const struct lines *got, const struct lines *want)
{
	size_t i;

	for (i = 0; i < got->n && i < want->n; i++) {
		if (strcmp(got->v[i], want->v[i]))
			fail_msg("%s line %zu: jitflow printed '%s', the reference '%s'", what, i + 1,
				 got->v[i], want->v[i]);
	}
	if (got->n != want->n)
		fail_msg("%s: jitflow printed %zu lines, the reference %zu", what, got->n, want->n);
}
