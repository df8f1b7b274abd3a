/* Placing the phase and iteration marks of a PyPy JIT log (jitflow/pypylog.h) in a
 * recording, exactly, by the program's own reads of the time-stamp counter.
 *
 * Each mark's stamp is a value PyPy read with rdtsc. Under QEMU that is the host's TSC;
 * the recorder lists every rdtsc the program ran (DIR/clock-reads.txt: thread, position,
 * the host's TSC just before the instruction ran). The value the guest read is at least
 * its read's TSC and below the next read of any thread (QEMU runs the instruction right
 * after), so the read that made a stamp is the last read at or below it: the mark is
 * placed at that read's thread and position. That also says which thread a mark (a
 * section) belongs to, which the log does not.
 *
 * Checked, counted and located (never guessed at): stamps below every read, two stamps
 * on one read, a section that opens on one thread and closes on another. */
#ifndef JITFLOW_PYPYLOG_CLOCK_H
#define JITFLOW_PYPYLOG_CLOCK_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "jitflow/error.h"
#include "jitflow/pypylog.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_pypylog_mark_place {
	int placed;            /* 0: no read explains its stamp (left out) */
	int32_t tid;
	uint64_t position;     /* instructions tid had run before the read */
};

struct jf_pypylog_clock_placement {
	struct jf_pypylog_mark_place *at; /* one per log->marks entry */
	uint64_t reads, placed, unplaced, shared, crossed, bad_lines;
	char problem[8][192];
	size_t nproblems;
	int32_t *tids;         /* the threads marks were placed on, in order of appearance */
	size_t ntids;
};

/* Read clock_reads_path and place log's marks. 0, or -1 with err (I/O, memory). */
int jf_pypylog_place_marks(const struct jf_pypylog *log, const char *clock_reads_path,
			   struct jf_pypylog_clock_placement **out, struct jf_error *err);
/* The same from an open stream (name for messages). */
int jf_pypylog_place_marks_stream(const struct jf_pypylog *log, FILE *f, const char *name,
				  struct jf_pypylog_clock_placement **out, struct jf_error *err);
void jf_pypylog_clock_placement_free(struct jf_pypylog_clock_placement *p);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
