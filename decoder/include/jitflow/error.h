/* One-line error messages that name the file, the offset and what was expected.
 *
 * Every fallible jitflow call takes a `struct jf_error *` (may be NULL) and fills it on
 * failure, so the command line can print exactly one clear line and exit non-zero. */
#ifndef JITFLOW_ERROR_H
#define JITFLOW_ERROR_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { JF_ERROR_MAX = 512 };

struct jf_error {
	char msg[JF_ERROR_MAX];
};

/* Format the message (printf-style) into err, if err is not NULL. Always returns -1, so a
 * failing function can `return jf_fail(err, ...)`. */
int jf_fail(struct jf_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int jf_vfail(struct jf_error *err, const char *fmt, va_list ap);

/* Prefix an existing message, e.g. with the file name: "trace.pt: " + msg. */
int jf_fail_prefix(struct jf_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
