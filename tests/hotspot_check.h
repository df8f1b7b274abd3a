/* Comparing the HotSpot agent's nmethod regions with the JVM's own LogCompilation, and
 * reading its elements. */
#ifndef JITFLOW_TEST_HOTSPOT_CHECK_H
#define JITFLOW_TEST_HOTSPOT_CHECK_H

#include <stddef.h>

/* Every <nmethod> of the LogCompilation file log_path is a function region of the zone
 * file zone_path (read with `jitflow zone dump`) with the same compile id, code address
 * (address + insts_offset), code size (insts_offset up to the next section after the
 * instructions and stubs), level and OSR kind, and the zone file has no other nmethod.
 * Fails the test otherwise; returns the number of nmethods and, in *osr and *native,
 * how many were OSR compilations and native wrappers. An nmethod installed once the VM
 * was shutting down (its stamp at or after <destroy_vm>'s) may lack a region (JVMTI posts
 * no event then): it is said on stderr and left out of the counts. */
int jf_test_hotspot_nmethods_match(const char *zone_path, const char *log_path, int *osr,
				   int *native);

/* The value of attr='...' in the LogCompilation element at el (before its '>'), XML's
 * escapes undone ("&lt;init&gt;" -> "<init>"); -1 when it has none or out is too small. */
int jf_test_log_attribute(const char *el, const char *attr, char *out, size_t size);

/* Whether the build has the JVMTI agent (it needs a JDK); says so on stderr when not. */
int jf_test_hotspot_agent_built(void);

#endif
