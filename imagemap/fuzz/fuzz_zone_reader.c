/* libFuzzer target: the zone reader (jitdump + extension records) and the perf map reader
 * on arbitrary bytes. Every record is read to the end or to the first error; entries of
 * PC_MAP and DEBUG_INFO records are walked, as a listing would. */
#include <stddef.h>
#include <stdint.h>

#include "jitflow/perf_map.h"
#include "jitflow/zone.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_zone_reader *r;
	struct jf_perf_map_reader *pm;
	struct jf_perf_map_entry pe;
	struct jf_zone_record rec;
	struct jf_error err;
	int rc, budget = 1 << 16;

	if (jf_zone_reader_open_memory(&r, data, size, "fuzz.dump", &err) == 0) {
		while (jf_zone_next(r, &rec, &err) == 1) {
			if (rec.id == JF_ZONE_PC_MAP || rec.id == JF_ZONE_INLINE_FRAMES) {
				struct jf_zone_pc_entry e;
				uint32_t i;

				for (i = 0; i < rec.u.pc_map.count; i++)
					jf_zone_pc_map_entry(r, &rec, i, &e);
			} else if (rec.id == JF_JITDUMP_CODE_DEBUG_INFO) {
				struct jf_zone_debug_iter it = { 0, 0 };
				struct jf_zone_debug_entry e;

				while (jf_zone_debug_entries(r, &rec, &it, &e))
					;
			}
		}
		jf_zone_reader_close(r);
	}
	if (jf_perf_map_open_memory(&pm, data, size, "fuzz.map", &err) == 0) {
		while ((rc = jf_perf_map_next(pm, &pe, &err)) != 0 && --budget)
			;
		jf_perf_map_close(pm);
	}
	return 0;
}
