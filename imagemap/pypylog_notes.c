/* Problem messages of a PyPy log's placement (pypylog_notes.h). */
#include "pypylog_notes.h"

#include <stdarg.h>
#include <stdio.h>

void jf_pypylog_note(char (*msgs)[192], size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;

	if (*n >= cap)
		return;
	va_start(ap, fmt);
	vsnprintf(msgs[(*n)++], sizeof(msgs[0]), fmt, ap);
	va_end(ap);
}
