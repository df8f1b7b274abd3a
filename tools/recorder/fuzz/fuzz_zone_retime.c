/* libFuzzer target for the zone file retimers (by markers, by writes) and the MARKER
 * record's reader and rewriter: hostile jitdump files (sizes beyond the file,
 * zero sizes, extension records too short for their fields) must never crash or read out
 * of bounds. The marker times belong to the tids in the first bytes of the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zone_copy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t times[] = { 10, 20, 30, 40 };
	struct jf_zone_markers m[2] = { { .tid = 0, .times = times, .count = 4 },
					{ .tid = 0, .times = times, .count = 2 } };
	struct jf_zone_copy_result res;
	struct jf_error err;
	uint8_t *copy;

	if (size >= 8) {
		memcpy(&m[0].tid, data, 4);
		memcpy(&m[1].tid, data + 4, 4);
		data += 8;
		size -= 8;
	}
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	jf_zone_retime(copy, size, m, 2, &res, &err);
	{
		static const uint64_t ends[] = { 40, 100, 1000, 5000 };

		jf_zone_retime_by_writes(copy, size, ends, times, 4, &res, &err);
	}
	if (jf_zone_marker_calls_addr(copy, size))
		jf_zone_clear_marker_calls(copy, size);
	free(copy);
	return 0;
}
