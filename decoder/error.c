#include "jitflow/error.h"

#include <stdio.h>
#include <string.h>

int jf_vfail(struct jf_error *err, const char *fmt, va_list ap)
{
	if (err)
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return -1;
}

int jf_fail(struct jf_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	jf_vfail(err, fmt, ap);
	va_end(ap);
	return -1;
}

int jf_fail_prefix(struct jf_error *err, const char *fmt, ...)
{
	char old[JF_ERROR_MAX];
	va_list ap;
	int n;

	if (!err)
		return -1;
	memcpy(old, err->msg, sizeof(old));
	va_start(ap, fmt);
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	/* The old message after the prefix, cut to what fits (snprintf says it plainly; the
	 * sanitizer build's -O2 warns about strncat doing the same). */
	if (n >= 0 && (size_t)n < sizeof(err->msg))
		snprintf(err->msg + n, sizeof(err->msg) - (size_t)n, "%.*s",
			 (int)(sizeof(err->msg) - (size_t)n - 1), old);
	return -1;
}
