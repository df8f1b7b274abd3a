/* A HotSpot report's entries other than at an nmethod's start, and its uncommon traps'
 * frames, against the JVM's own LogCompilation of the same run. Each check fails the
 * running test with what differed. */
#ifndef JITFLOW_TEST_HOTSPOT_LOG_CHECK_H
#define JITFLOW_TEST_HOTSPOT_LOG_CHECK_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* The value of attr='...' in the LogCompilation element starting at el
 * (jf_test_log_attribute) as a number; fails the test when missing. */
long jf_test_log_number(const char *el, const char *attr);

/* Every <uncommon_trap thread=...> of log: the report's trap with its compile id and
 * innermost bci (hotspot: the report's "hotspot" object) names the same frames as the
 * log's <jvms> elements, innermost first ("Traps branchy (I)I" bci 1 is Traps.branchy@1).
 * Returns how many traps had inlined frames. */
int jf_test_trap_frames_match(const char *log, const cJSON *hotspot);

/* Every OSR nmethod the log lists is in the report's osr_entries with the same OSR bci;
 * those of methods whose name starts with fixed_prefix ("Traps ") were entered exactly
 * once (the program's construction), the JVM's own ones as often as they were. Returns
 * how many OSR nmethods were fixed so. */
int jf_test_osr_entries_match(const char *log, const cJSON *hotspot, const char *fixed_prefix);

/* The report's deoptimizations per compile id are the log's <deoptimized> frames per
 * compile id, and none is left untied. Returns the deoptimized frames. */
int jf_test_deoptimized_match(const char *log, const cJSON *hotspot);

/* The report's nmethods seen made not entrant are among the log's <make_not_entrant>,
 * and they are exactly the nmethods of method (LogCompilation's "Traps weighAgain"),
 * each turning away once. Returns how many of the log's were not seen. */
int jf_test_not_entrant_match(const char *log, const cJSON *hotspot, const char *method);

#endif
