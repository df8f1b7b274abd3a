/* Ranges of addresses kept as parallel start/end arrays, where a new range that touches or
 * overlaps one of them grows it: a JIT that maps or makes executable one piece of code at a
 * time (CPython: one mapping per executor) gets them next to each other, so one range grows
 * instead of filling the table. */
#ifndef JITFLOW_RECORDER_ADDRESS_RANGES_H
#define JITFLOW_RECORDER_ADDRESS_RANGES_H

#include <stdint.h>

/* Grows the first of ranges [from, n) that [addr, addr + len) touches or overlaps to cover
 * it too; 0 when it touches none (the caller adds it). */
static inline int jf_rec_ranges_join(uint64_t *start, uint64_t *end, unsigned from, unsigned n,
				     uint64_t addr, uint64_t len)
{
	unsigned i;

	for (i = from; i < n; i++) {
		if (addr + len < start[i] || addr > end[i])
			continue;
		if (addr < start[i])
			start[i] = addr;
		if (addr + len > end[i])
			end[i] = addr + len;
		return 1;
	}
	return 0;
}

#endif
