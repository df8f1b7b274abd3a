/* Where each thread read the time-stamp counter: DIR/clock-reads.txt lists, for every
 * rdtsc/rdtscp the program ran under the plugin backend, the thread, the instruction's
 * position in the thread's trace, and the host TSC just before it ran:
 *
 *     # jitflow clock-reads 1
 *     TID POSITION TSC
 *
 * (TSC in hex, POSITION as in jit-code.txt: with --filter, instructions run inside the
 * filter; a read outside the filter is at the position of the next traced instruction.)
 * Under QEMU user mode the guest's rdtsc returns the host's TSC, so a value a program
 * read and logged (PyPy's PYPYLOG stamps) is at least this read's TSC and below the
 * thread's next one: the recording has no such clock, and this file places those stamps
 * exactly (imagemap/pypylog_clock.c). Written only when the program read the TSC. */
#ifndef JITFLOW_RECORDER_RECORD_CLOCK_H
#define JITFLOW_RECORDER_RECORD_CLOCK_H

#include <stdint.h>

struct jf_record_state;
struct jf_record_thread;

/* Thread t read the TSC at position `position`; the host's TSC then was tsc. */
void jf_rec_clock_read(struct jf_record_state *st, const struct jf_record_thread *t,
		       uint64_t position, uint64_t tsc);
/* Close the file; how many reads it lists. */
uint64_t jf_rec_clock_finish(struct jf_record_state *st);

#endif
