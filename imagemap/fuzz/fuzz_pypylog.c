/* libFuzzer target: the PYPYLOG reader (code sections, timed phase sections, iteration
 * marks), the guard/counter layout, the placement against a jit-code list and the marks'
 * placement against a clock-reads list, on arbitrary text. The input is split at its first
 * NUL byte: the log before it, the list after it (read as both lists). Every dump, trace,
 * op and mark returned is touched, so a bad pointer or length shows under the sanitizers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fmemopen */
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jitflow/pypylog.h"
#include "jitflow/pypylog_clock.h"
#include "jitflow/pypylog_layout.h"
#include "jitflow/pypylog_place.h"
#include "jitflow/pypylog_zone.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t log_size = nul ? (size_t)(nul - data) : size;
	struct jf_pypylog *log;
	struct jf_pypylog_layout *lay;
	struct jf_pypylog_placement *place;
	struct jf_error err;
	volatile size_t sink = 0;
	size_t i;

	if (jf_pypylog_parse(&log, (const char *)data, log_size, "fuzz.log", &err))
		return 0;
	for (i = 0; i < log->ndumps; i++)
		if (log->dumps[i].size)
			sink += log->dumps[i].bytes[log->dumps[i].size - 1];
	for (i = 0; i < log->ntraces; i++)
		sink += strlen(log->traces[i].name) + log->traces[i].first_op + log->traces[i].nops;
	for (i = 0; i < log->nmarks; i++)
		sink += log->marks[i].tsc + log->marks[i].kind + log->marks[i].phase;
	for (i = 0; i < log->nops; i++)
		sink += strlen(log->ops[i].name) + (log->ops[i].code ? strlen(log->ops[i].code) : 0);
	if (jf_pypylog_layout(log, &lay, &err) == 0) {
		/* the zone writer parses code object names and TSC-converts the stamps */
		struct jf_tsc_conversion conv = { .valid = 1, .time_shift = 3, .time_mult = 1 };
		struct jf_pypylog_zone_stats st;

		jf_pypylog_write_zone(log, lay, NULL, &conv, "/dev/null", &st, &err);
		jf_pypylog_layout_free(lay);
	}
	if (nul && size - log_size > 1) {
		FILE *f = fmemopen((void *)(nul + 1), size - log_size - 1, "r");

		if (f) {
			if (jf_pypylog_place_stream(log, f, "fuzz.jit-code", &place, &err) == 0)
				jf_pypylog_placement_free(place);
			fclose(f);
		}
		f = fmemopen((void *)(nul + 1), size - log_size - 1, "r");
		if (f) {
			struct jf_pypylog_clock_placement *marks;
			uint64_t events;

			if (jf_pypylog_place_marks_stream(log, f, "fuzz.clock-reads", &marks,
							  &err) == 0) {
				for (i = 0; i < marks->ntids; i++)
					jf_pypylog_write_marks_zone(log, marks, marks->tids[i],
								    "/dev/null", &events, &err);
				jf_pypylog_clock_placement_free(marks);
			}
			fclose(f);
		}
	}
	(void)sink;
	jf_pypylog_free(log);
	return 0;
}
