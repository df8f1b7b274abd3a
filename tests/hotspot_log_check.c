/* HotSpot reports against LogCompilation (-XX:+UnlockDiagnosticVMOptions
 * -XX:+LogCompilation): its <uncommon_trap> frames, OSR <nmethod>s, <deoptimized> frames
 * and <make_not_entrant> lines. */
#include "hotspot_log_check.h"

#include "hotspot_check.h"

#include "json_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IDS 256

long jf_test_log_number(const char *el, const char *attr)
{
	char v[32];

	if (jf_test_log_attribute(el, attr, v, sizeof(v)) < 0)
		fail_msg("LogCompilation: no %s= in %.120s", attr, el);
	return atol(v);
}

/* "Traps$Box unbox (LTraps$Box;)I" -> "Traps$Box.unbox" */
static void frame_method(const char *log_method, char *out, size_t size)
{
	const char *space = strchr(log_method, ' ');
	const char *end = space ? strchr(space + 1, ' ') : NULL;

	if (!space || !end)
		fail_msg("LogCompilation: a method without class and name: %s", log_method);
	snprintf(out, size, "%.*s.%.*s", (int)(space - log_method), log_method,
		 (int)(end - space - 1), space + 1);
}

/* The report's trap with this compile id and innermost bci, or NULL. */
static const cJSON *reported_trap(const cJSON *hotspot, long compile_id, long bci)
{
	const cJSON *t;

	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(hotspot, "traps"))
		if ((long)jf_test_num(t, "compile_id") == compile_id && (long)jf_test_num(t, "bci") == bci)
			return t;
	return NULL;
}

int jf_test_trap_frames_match(const char *log, const cJSON *hotspot)
{
	const char *el = log;
	int inlined = 0;

	while ((el = strstr(el, "<uncommon_trap thread='")) != NULL) {
		const char *jvms = strstr(el, "<jvms "), *close = strstr(el, "</uncommon_trap>");
		long compile_id = jf_test_log_number(el, "compile_id");
		const cJSON *trap, *frames, *f;
		int k = 0;

		if (!jvms || !close)
			fail_msg("LogCompilation: a trap without frames: %.160s", el);
		trap = reported_trap(hotspot, compile_id, jf_test_log_number(jvms, "bci"));
		if (!trap)
			fail_msg("no reported trap for compile id %ld, bci %ld", compile_id,
				 jf_test_log_number(jvms, "bci"));
		frames = cJSON_GetObjectItemCaseSensitive(trap, "frames");
		f = frames ? frames->child : NULL;
		for (; jvms && jvms < close; jvms = strstr(jvms + 1, "<jvms "), k++) {
			char method[256], expected[256];

			if (jf_test_log_attribute(jvms, "method", method, sizeof(method)) < 0)
				fail_msg("LogCompilation: a frame without method: %.160s", jvms);
			frame_method(method, expected, sizeof(expected));
			if (!f || strcmp(jf_test_str(f, "method"), expected) ||
			    (long)jf_test_num(f, "bci") != jf_test_log_number(jvms, "bci"))
				fail_msg("compile id %ld: frame %d is %s@%ld in LogCompilation, %s@%.0f "
					 "in the report", compile_id, k, expected,
					 jf_test_log_number(jvms, "bci"), f ? jf_test_str(f, "method") : "none",
					 f ? jf_test_num(f, "bci") : -1.0);
			f = f->next;
		}
		if (f)
			fail_msg("compile id %ld: the report names more frames than LogCompilation's %d",
				 compile_id, k);
		inlined += k > 1;
		el++;
	}
	return inlined;
}

/* The report's row of compile_id in array key, or NULL. */
static const cJSON *row_of(const cJSON *hotspot, const char *key, long compile_id)
{
	const cJSON *o;

	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(hotspot, key))
		if ((long)jf_test_num(o, "compile_id") == compile_id)
			return o;
	return NULL;
}

/* The osr_bci of the <task_queued compile_id=ID compile_kind='osr' ...> element. */
static long queued_osr_bci(const char *log, long compile_id)
{
	char key[96];
	const char *el;

	snprintf(key, sizeof(key), "<task_queued compile_id='%ld' compile_kind='osr'", compile_id);
	el = strstr(log, key);
	if (!el)
		fail_msg("LogCompilation: OSR compile %ld was never queued", compile_id);
	return jf_test_log_number(el, "osr_bci");
}

int jf_test_osr_entries_match(const char *log, const cJSON *hotspot, const char *fixed_prefix)
{
	const char *el = log;
	int fixed = 0, n = 0;

	while ((el = strstr(el, "<nmethod compile_id='")) != NULL) {
		char kind[16], method[256];
		const char *nm = el++;
		long id = jf_test_log_number(nm, "compile_id");
		const cJSON *row;

		if (jf_test_log_attribute(nm, "compile_kind", kind, sizeof(kind)) < 0 ||
		    strcmp(kind, "osr"))
			continue;
		n++;
		row = row_of(hotspot, "osr_entries", id);
		if (!row || (long)jf_test_num(row, "osr_bci") != queued_osr_bci(log, id))
			fail_msg("OSR nmethod %ld (bci %ld in LogCompilation) is not among the report's "
				 "OSR entries with that bci", id, queued_osr_bci(log, id));
		if (jf_test_log_attribute(nm, "method", method, sizeof(method)) == 0 &&
		    !strncmp(method, fixed_prefix, strlen(fixed_prefix))) {
			if (jf_test_num(row, "entries") != 1)
				fail_msg("OSR nmethod %ld of %s: %.0f entries in the report; the program "
					 "enters it once", id, method, jf_test_num(row, "entries"));
			fixed++;
		}
	}
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hotspot, "osr_entries")) != n)
		fail_msg("the report lists %d OSR nmethods, LogCompilation %d",
			 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hotspot, "osr_entries")), n);
	return fixed;
}

int jf_test_deoptimized_match(const char *log, const cJSON *hotspot)
{
	long ids[MAX_IDS], counts[MAX_IDS];
	int n = 0, i, total = 0;
	const char *el = log;

	while ((el = strstr(el, "<deoptimized ")) != NULL) {
		long id = jf_test_log_number(el, "compile_id");

		for (i = 0; i < n && ids[i] != id; i++)
			;
		if (i == n) {
			if (n == MAX_IDS)
				fail_msg("more than %d deoptimized nmethods", MAX_IDS);
			ids[n] = id;
			counts[n++] = 0;
		}
		counts[i]++;
		total++;
		el++;
	}
	for (i = 0; i < n; i++) {
		const cJSON *row = row_of(hotspot, "deoptimized", ids[i]);

		if (!row || (long)jf_test_num(row, "count") != counts[i])
			fail_msg("nmethod %ld: %ld frames deoptimized in LogCompilation, %.0f in the "
				 "report", ids[i], counts[i], row ? jf_test_num(row, "count") : 0.0);
	}
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hotspot, "deoptimized")) != n ||
	    jf_test_num(hotspot, "deoptimizations_not_tied") != 0)
		fail_msg("the report ties deoptimizations to %d nmethods and leaves %.0f untied; "
			 "LogCompilation deoptimized frames of %d",
			 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hotspot, "deoptimized")),
			 jf_test_num(hotspot, "deoptimizations_not_tied"), n);
	return total;
}

/* The compile id of method's <nmethod> (its first one). */
static long nmethod_id(const char *log, const char *method)
{
	char key[300];
	const char *at;

	snprintf(key, sizeof(key), " method='%s ", method);
	for (at = strstr(log, "<nmethod compile_id='"); at; at = strstr(at + 1, "<nmethod compile_id='")) {
		const char *end = strchr(at, '>'), *m = strstr(at, key);

		if (m && end && m < end)
			return jf_test_log_number(at, "compile_id");
	}
	fail_msg("LogCompilation: %s was never compiled", method);
	return -1;
}

int jf_test_not_entrant_match(const char *log, const cJSON *hotspot, const char *method)
{
	long expected = nmethod_id(log, method);
	const char *el = log;
	const cJSON *seen = cJSON_GetObjectItemCaseSensitive(hotspot, "not_entrant_seen"), *row;
	int logged = 0, found = 0;

	while ((el = strstr(el, "<make_not_entrant thread=")) != NULL) {
		long id = jf_test_log_number(el, "compile_id");

		logged++;
		found += id == expected;
		el++;
	}
	if (!found)
		fail_msg("LogCompilation: %s (nmethod %ld) was not made not entrant", method, expected);
	cJSON_ArrayForEach(row, seen)
		if ((long)jf_test_num(row, "compile_id") != expected ||
		    jf_test_num(row, "calls_turned_away") != 1)
			fail_msg("the report saw nmethod %.0f made not entrant (%.0f calls turned away); "
				 "the program calls only %s (nmethod %ld) so, once",
				 jf_test_num(row, "compile_id"), jf_test_num(row, "calls_turned_away"),
				 method, expected);
	if (cJSON_GetArraySize(seen) != 1)
		fail_msg("the report saw %d nmethods made not entrant; the program calls %s's once "
			 "after", cJSON_GetArraySize(seen), method);
	return logged - 1;
}
