/* libFuzzer target: the input is a perf.data file. It goes through the reader (every
 * record parsed, the intel_pt AUXTRACE_INFO decoded, the build-id entries, the cs_etm
 * time schedule) and through the session decoder over an empty code map, so the framing,
 * the sample_id trailers, the queue scans, the sideband reordering and libipt on
 * arbitrary AUXTRACE payloads all see it; then twice more over a code map of the input's
 * own bytes, with the fast path on the buffers once the code is settled and without it,
 * which must give the same records. Errors are expected;
 * crashes, hangs, leaks and sanitizer reports are findings. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitflow/codemap.h"
#include "jitflow/flow.h"
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

/* Every queue decodes over one code map: the input's own bytes at the addresses a
 * recording's program runs at (recorded-fib's, the seed), so blocks decode to something. */
static struct jf_codemap *the_map(void *ctx, int32_t pid)
{
	(void)pid;
	return ctx;
}

static struct jf_decoder *blocks_decoder(const char *path, struct jf_codemap *map, int fast)
{
	struct jf_perf_session_hooks hooks = { map, the_map, NULL, NULL };
	struct jf_perf_session_options opts;
	struct jf_error err;

	memset(&opts, 0, sizeof(opts));
	opts.end_on_call = opts.end_on_jump = opts.join_cache_splits = 1;
	opts.fast_when_settled = fast;
	return jf_perf_pt_decoder_new_opts(path, &hooks, &opts, &err);
}

/* The buffers decoded by the fast path once the code is settled (here: once the sideband's
 * MMAP, FORK and COMM records are delivered; the map never changes) against libipt's
 * block decoder on all: the same records, or the fast path is wrong. */
static void fast_against_block(const char *path, const uint8_t *data, size_t size)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;
	struct jf_decoder *block, *fast;
	struct jf_flow a, b;
	int n = 0, ra = 0, rb = 0;

	if (!map || jf_codemap_add_bytes(map, data, size, 0x400000, "input", &err) < 0) {
		jf_codemap_free(map);
		return;
	}
	block = blocks_decoder(path, map, 0);
	fast = blocks_decoder(path, map, 1);
	while (block && fast && n++ < MAX_FLOWS) {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		ra = jf_decoder_next(block, &a, &err);
		rb = jf_decoder_next(fast, &b, &err);
		if (ra != rb || (ra > 0 && !jf_flow_same(&a, &b))) {
			fprintf(stderr, "record %d: libipt's block decoder returned %d (kind %u offset "
				"%#llx ip %#llx time %llu flags %#x start %#llx last %#llx ninsn %u end "
				"%u), the session's fast path %d (kind %u offset %#llx ip %#llx time "
				"%llu flags %#x start %#llx last %#llx ninsn %u end %u)\n", n, ra, a.kind,
				(unsigned long long)a.offset, (unsigned long long)a.ip,
				(unsigned long long)a.time, a.flags,
				(unsigned long long)a.u.block.start, (unsigned long long)a.u.block.last,
				a.u.block.ninsn, a.u.block.end, rb, b.kind, (unsigned long long)b.offset,
				(unsigned long long)b.ip, (unsigned long long)b.time, b.flags,
				(unsigned long long)b.u.block.start, (unsigned long long)b.u.block.last,
				b.u.block.ninsn, b.u.block.end);
			abort();
		}
		if (ra <= 0)
			break;
	}
	jf_decoder_free(block);
	jf_decoder_free(fast);
	jf_codemap_free(map);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	read_records(path);
	decode(path);
	fast_against_block(path, data, size);
	close(fd);
	return 0;
}
