/* PyPy's timed log sections as VM phases (jitflow/pypylog_phases.h). */
#include "jitflow/pypylog_phases.h"

#include <string.h>

#include "jitflow/emitter.h"

static int is(const char *name, size_t n, const char *section)
{
	return strlen(section) == n && !memcmp(name, section, n);
}

static int has_prefix(const char *name, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(name, prefix, k);
}

int jf_pypylog_phase_of(const char *name, size_t n)
{
	if (is(name, n, "jit-tracing"))
		return JF_PHASE_TRACING;
	if (has_prefix(name, n, "jit-optimize") || is(name, n, "jit-backend"))
		return JF_PHASE_COMPILING;
	if (is(name, n, "jit-blackhole"))
		return JF_PHASE_EXIT_HANDLING;
	if (has_prefix(name, n, "gc-minor") || has_prefix(name, n, "gc-collect"))
		return JF_PHASE_GC;
	return 0;
}
