/* Writes an AArch64 recording as a CoreSight snapshot folder (ARM's "Trace and Debug
 * Snapshot" format, as OpenCSD's trc_pkt_lister and `jitflow --cs-snapshot` read it):
 *
 *   snapshot.ini   the device list and the trace metadata file
 *   cpu_0.ini      the core (Cortex-A53), its PC, and one [dumpN] per memory image
 *   ETM_0.ini      the ETMv4.0 registers (etm_registers.h): TRCIDR0/1/2/8, TRCCONFIGR,
 *                  TRCTRACEIDR
 *   trace.ini      one buffer of ETMv4 data from ETM_0: raw (format=source_data) or in
 *                  CoreSight formatter frames (format=coresight, etm_frames.h)
 *   trace.bin      the trace stream
 *   mem_N.bin      the code that ran: every translated block's bytes, in images that
 *                  join code less than 64 KiB apart (zeros between) */
#ifndef JITFLOW_RECORDER_ETM_SNAPSHOT_H
#define JITFLOW_RECORDER_ETM_SNAPSHOT_H

#include <stdint.h>

#include <jitflow/error.h>

#include "etm_flow.h"

/* A memory image: the file mem_N.bin (N its index) holds the code at [start, start +
 * size). */
struct jf_etm_image {
	uint64_t start, size;
};

struct jf_etm_snapshot_stats {
	struct jf_etm_image *images;
	uint64_t regions;        /* memory images written */
	uint64_t code_bytes;     /* their size */
	uint64_t conflicts;      /* translations whose bytes differ from an earlier one at the
	                          * same address (code rewritten: the first bytes are kept) */
};

/* Writes the snapshot of f (finished) into dir (which exists), its trace buffer in
 * formatter frames when formatted; 0 or -1 with err. stats is filled either way and freed
 * with jf_etm_snapshot_stats_free. */
int jf_etm_snapshot_write(const struct jf_etm_flow *f, const char *dir, int formatted,
			  struct jf_etm_snapshot_stats *stats, struct jf_error *err);
void jf_etm_snapshot_stats_free(struct jf_etm_snapshot_stats *stats);

#endif
