/* Comparing the HotSpot agent's nmethod regions with the JVM's own LogCompilation. */
#ifndef JITFLOW_TEST_HOTSPOT_CHECK_H
#define JITFLOW_TEST_HOTSPOT_CHECK_H

/* Every <nmethod> of the LogCompilation file log_path is a function region of the zone
 * file zone_path (read with `jitflow zone dump`) with the same compile id, code address
 * (address + insts_offset), code size (insts_offset up to the next section after the
 * instructions and stubs), level and OSR kind, and the zone file has no other nmethod.
 * Fails the test otherwise; returns the number of nmethods and, in *osr and *native,
 * how many were OSR compilations and native wrappers. */
int jf_test_hotspot_nmethods_match(const char *zone_path, const char *log_path, int *osr,
				   int *native);

#endif
