/* libFuzzer target: a zone file (arbitrary bytes) applied to the analysis record by
 * record, with one block over the region loaded last after each record, so that what the
 * records describe (regions, guards, pc maps of ops and of code objects, points, code
 * objects, loop headers) meets the per-block paths that use it: bytecode ranges, ops,
 * code lines, guard passes and exits, points, iterations. The bytes of the code come from
 * the same file through a zone image (its final state; a block over code that is gone is
 * counted as not readable). The result, its views and its call stacks are made and
 * freed. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitflow/analysis.h"
#include "jitflow/zone.h"
#include "jitflow/zone_format.h"
#include "jitflow/zone_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RECORDS 4096     /* bounds the blocks one input makes */
#define MAX_BLOCK 512        /* bytes of a region one block covers */

static void run_block(struct jf_analysis *a, uint64_t start, uint64_t size)
{
	struct jf_flow f;
	uint64_t len = size < MAX_BLOCK ? size : MAX_BLOCK;

	if (!len || start + len < start)
		return;
	memset(&f, 0, sizeof(f));
	f.kind = JF_FLOW_BLOCK;
	f.ip = start;
	f.u.block.start = start;
	f.u.block.last = start + len - 1;
	f.u.block.ninsn = (uint32_t)len;
	f.u.block.next = start + len;
	f.u.block.last_size = 1;
	f.u.block.isa = JF_ISA_X86_64;
	f.u.block.end = JF_END_JUMP;
	jf_analysis_flow(a, &f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_codemap *map = NULL;
	struct jf_zone_image *zi = NULL;
	struct jf_zone_reader *reader = NULL;
	struct jf_analysis *a = NULL;
	struct jf_analysis_config cfg;
	struct jf_analysis_result res;
	struct jf_zone_record rec;
	struct jf_error err;
	uint64_t region = 0, region_size = 0;
	char path[64];
	int fd = memfd_create("fuzz-zone-analysis", MFD_CLOEXEC), n = 0;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size)
		goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	map = jf_codemap_new();
	zi = map ? jf_zone_image_new(map, NULL, &err) : NULL;
	if (!zi || jf_zone_image_add_file(zi, path, &err) < 0 || jf_zone_image_apply_all(zi, &err) < 0)
		goto out;
	memset(&cfg, 0, sizeof(cfg));
	cfg.map = map;
	cfg.views = 1;
	cfg.call_stacks = 1;
	a = jf_analysis_new(&cfg);
	if (!a || jf_zone_reader_open(&reader, path, &err) < 0)
		goto out;
	while (n++ < MAX_RECORDS && jf_zone_next(reader, &rec, &err) > 0) {
		if (jf_analysis_zone_record(a, reader, &rec) < 0)
			break;
		if (rec.id == JF_ZONE_REGION_LOAD) {
			region = rec.u.region_load.addr;
			region_size = rec.u.region_load.size;
		}
		run_block(a, region, region_size);
	}
	if (jf_analysis_result(a, &res) == 0)
		jf_analysis_result_free(&res);
out:
	if (reader)
		jf_zone_reader_close(reader);
	jf_analysis_free(a);
	jf_zone_image_free(zi);
	jf_codemap_free(map);
	close(fd);
	return 0;
}
