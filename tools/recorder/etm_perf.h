/* Writes an AArch64 recording as a cs_etm perf.data (perf_data.h), as `perf record -e
 * cs_etm/contextid,timestamp/u` leaves it on a one-CPU machine whose ETMv4 writes into a
 * TRBE-style buffer (raw, unformatted stream) or through an ETR (formatter frames):
 *
 *   AUXTRACE_INFO  the trace unit of etm_registers.h on CPU 0
 *   COMM           the program (its first thread's ID is the process ID)
 *   MMAP2          each memory image of the snapshot (mem_N.bin) where its code ran: perf
 *                  and jitflow read the code from there, as from `perf inject --jit`'s
 *                  files (the recording folder's absolute path is in the records)
 *   FORK, EXIT     each other thread when it first ran and when it last ran
 *   AUX, AUXTRACE  the ETMv4 stream, in pieces of at most JF_ETM_PERF_CHUNK bytes that
 *                  each start at an A-Sync, so that every piece decodes on its own (each
 *                  formatted on its own, flag CORESIGHT_FORMAT_RAW clear, when formatted)
 *
 * Times are the synthetic clock of the trace's Timestamp packets. */
#ifndef JITFLOW_RECORDER_ETM_PERF_H
#define JITFLOW_RECORDER_ETM_PERF_H

#include <jitflow/error.h>

#include "etm_flow.h"
#include "etm_snapshot.h"
#include "perf_data.h"

enum { JF_ETM_PERF_CHUNK = 4 << 20 };

/* Writes dir/perf.data for f (finished), whose snapshot snap describes (its images in
 * dir), the trace in formatter frames (etm_frames.h) when formatted; comm names the
 * program. 0, or -1 with err. */
int jf_etm_perf_write(const struct jf_etm_flow *f, const struct jf_etm_snapshot_stats *snap,
		      const char *dir, int formatted, const char *comm,
		      const struct jf_perf_info *info, struct jf_error *err);

#endif
