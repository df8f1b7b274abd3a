/* libFuzzer target: the input is a perf.data file. It goes through the reader (every
 * record parsed, the intel_pt AUXTRACE_INFO decoded, the build-id entries, the cs_etm
 * time schedule) and through the session decoder over an empty code map, so the framing,
 * the sample_id trailers, the queue scans, the sideband reordering and libipt on
 * arbitrary AUXTRACE payloads all see it. Errors are expected;
 * crashes, hangs, leaks and sanitizer reports are findings. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitflow/perf_buildid.h"
#include "jitflow/perf_data.h"
#include "jitflow/perf_intel_pt.h"
#include "perf_cs_order.h"
#include "jitflow/perf_session.h"
#include "fuzz_input_file.h"

/* Bound the work per input: an AUXTRACE payload of random bytes can hold many flows. */
enum { MAX_FLOWS = 1 << 16 };

static void read_records(const char *path)
{
	struct jf_error err;
	struct jf_perf_data *d = jf_perf_data_open(path, &err);
	struct jf_perf_cursor cur;
	struct jf_perf_record rec;
	int rc;

	if (!d)
		return;
	jf_perf_data_begin(d, &cur);
	for (;;) {
		uint64_t before = cur.pos;

		rc = jf_perf_data_next(d, &cur, &rec, &err);
		if (rc == 0 || (rc < 0 && cur.pos == before))
			break;
		if (rc > 0 && rec.type == JF_PERF_RECORD_AUXTRACE_INFO) {
			struct jf_perf_intel_pt pt;

			jf_perf_intel_pt_parse(d, &rec, &pt, &err);
		}
	}
	/* The build-id entries (HEADER_BUILD_ID feature, or pipe mode's records). */
	{
		struct jf_perf_build_id *ids = NULL;
		size_t n = 0;

		struct cs_schedule order;

		jf_perf_build_ids(d, &ids, &n, &err);
		free(ids);
		if (jf_cs_schedule_build(d, &order, &err) == 0)
			jf_cs_schedule_free(&order);
	}
	jf_perf_data_close(d);
}

static void decode(const char *path)
{
	struct jf_error err;
	struct jf_decoder *dec = jf_perf_pt_decoder_new(path, NULL, &err);
	struct jf_flow flow;
	int n = 0;

	if (!dec)
		return;
	while (n++ < MAX_FLOWS && jf_decoder_next(dec, &flow, &err) > 0)
		;
	jf_decoder_free(dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	read_records(path);
	decode(path);
	close(fd);
	return 0;
}
