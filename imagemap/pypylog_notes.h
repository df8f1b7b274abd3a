/* Keeping the first few problem messages of a PyPy log's placement (internal). */
#ifndef JITFLOW_IMAGEMAP_PYPYLOG_NOTES_H
#define JITFLOW_IMAGEMAP_PYPYLOG_NOTES_H

#include <stddef.h>

/* Format a message into msgs[*n] and count it, while fewer than cap are kept. */
void jf_pypylog_note(char (*msgs)[192], size_t cap, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
