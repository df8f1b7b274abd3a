/* Fields of the zone files the recorded runtime writes, in its (this machine's) byte
 * order, read from or written to bytes with no alignment: zone_copy.c retimes whole
 * files, record_zone_code.c reads records as the runtime writes them. */
#ifndef JITFLOW_RECORDER_NATIVE_FIELDS_H
#define JITFLOW_RECORDER_NATIVE_FIELDS_H

#include <stdint.h>
#include <string.h>

static inline uint32_t jf_rec_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t jf_rec_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline void jf_rec_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#endif
