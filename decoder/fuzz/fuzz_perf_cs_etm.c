/* libFuzzer target for the cs_etm AUXTRACE_INFO reader: the input's bytes are the
 * record's private words (after a type word), as perf writes them. Any input must give
 * sources or a clear error, never a crash or a read outside the record. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/perf_cs_etm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_perf_record rec;
	struct jf_cs_source *src;
	uint32_t *cpus;
	size_t n, i;
	struct jf_error err;
	uint8_t *copy = malloc(size ? size : 1); /* exactly size bytes: ASan sees overreads */

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	memset(&rec, 0, sizeof(rec));
	rec.type = JF_PERF_RECORD_AUXTRACE_INFO;
	rec.u.auxtrace_info.type = JF_PERF_AUXTRACE_CS_ETM;
	rec.u.auxtrace_info.nr_priv = size / 8;
	rec.u.auxtrace_info.priv = copy;
	if (jf_perf_cs_etm_sources(&rec, &src, &cpus, &n, &err) == 0) {
		for (i = 0; i < n; i++)
			(void)jf_cs_source_trace_id(&src[i]);
		free(src);
		free(cpus);
	}
	free(copy);
	return 0;
}
