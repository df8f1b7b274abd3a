/* Copies a zone file (jit-PID.dump: jitdump + jitflow extension records) that the program
 * wrote into the recording's directory, with its timestamps moved onto the recording's
 * synthetic clock, so that `perf inject --jit` and jitflow apply each record at the right
 * point of the trace.
 *
 * The emitter calls jf_emitter_marker after each extension record; the k-th call of
 * thread T belongs to the k-th extension record of T (docs/zone-format.md, "Ordering").
 * The recorder saw those calls in the trace, so each extension record gets the time of its
 * marker call, and each perf record (CODE_LOAD, ...) the time of the extension record that
 * follows it (a CODE_LOAD is followed by its REGION_LOAD). Files without markers are copied
 * unchanged, and the caller is told so. */
#ifndef JITFLOW_RECORDER_ZONE_COPY_H
#define JITFLOW_RECORDER_ZONE_COPY_H

#include <stddef.h>
#include <stdint.h>

#include <jitflow/error.h>

/* The marker calls of one thread: their times (perf ns), in order. */
struct jf_zone_markers {
	int tid;
	const uint64_t *times;
	size_t count;
};

struct jf_zone_copy_result {
	size_t records, retimed, markers_unmatched;
};

/* Rewrite the timestamps of the zone file image in place (data, size). Returns 0, or -1
 * with err naming the offset when the file is not a jitdump file or a record's size is
 * impossible (the records before it are still retimed). */
int jf_zone_retime(uint8_t *data, size_t size, const struct jf_zone_markers *threads,
		   size_t nthreads, struct jf_zone_copy_result *res, struct jf_error *err);

/* For zone files without marker calls (plain jitdump writers: V8, CPython, OpenJDK
 * agents): each record takes the time of the write() that completed it in the file. ends[i]
 * is the file size after the i-th write, times[i] its time (both increasing). Returns like
 * jf_zone_retime; res->retimed counts the records given a time. */
int jf_zone_retime_by_writes(uint8_t *data, size_t size, const uint64_t *ends,
			     const uint64_t *times, size_t n, struct jf_zone_copy_result *res,
			     struct jf_error *err);

/* The address of the marker function when the file's MARKER record says marker calls
 * follow its records, else 0. */
uint64_t jf_zone_marker_calls_addr(const uint8_t *data, size_t size);
/* A recording whose trace cannot show the marker calls (an IP filter leaves the marker
 * function out): clear the marker-calls method of every MARKER record, so that readers
 * apply the records by their timestamps. Returns how many records were changed. */
size_t jf_zone_clear_marker_calls(uint8_t *data, size_t size);

#endif
