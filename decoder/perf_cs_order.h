/* Internal: the order a cs_etm perf.data is decoded in (perf_cs_order.c).
 *
 * perf writes AUXTRACE buffers when it drains the AUX ring, so a buffer's position in the
 * file says little about when its code ran: MMAP2 records of the code it executes may come
 * after it (several CPUs, threads started late). The kernel's AUX record, written when
 * the data landed in the ring, carries that time. Every record is therefore scheduled by
 * time: sideband at its sample time (untimed records keep their place after the record
 * before them), and each AUXTRACE buffer at the latest time of the AUX records whose data
 * it holds (same CPU, or same thread in per-thread mode), after all sideband up to that
 * time. A buffer no AUX record describes, and every buffer of a file without times,
 * keeps its place in the file. Memory: 32 bytes a record, nothing of the AUX data. */
#ifndef JITFLOW_PERF_CS_ORDER_H
#define JITFLOW_PERF_CS_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/perf_data.h"

struct cs_item {
	uint64_t key, seq;        /* time, then order among equal times */
	uint64_t offset;          /* file offset of the record */
	uint32_t aux_flags;       /* buffers: the AUX flags of their data (RAW, ...) */
	uint32_t is_buffer;
};

struct cs_schedule {
	struct cs_item *items;
	size_t n, cap;
	int failed;               /* the file is broken after the items: err says where */
	struct jf_error err;
};

/* Read every record of d and order them. -1 only when out of memory; a malformed record
 * ends the schedule there (failed, err) so that what comes before still decodes. */
int jf_cs_schedule_build(const struct jf_perf_data *d, struct cs_schedule *s,
			 struct jf_error *err);
void jf_cs_schedule_free(struct cs_schedule *s);

#endif
