#include "etm_snapshot.h"
#include "etm_frames.h"
#include "etm_registers.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The trace unit (etm_registers.h), as OpenCSD reads it. */
static const char etm_ini[] =
	"[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n\n[regs]\n"
	"TRCCONFIGR(0x004)=0x%08X\nTRCTRACEIDR(0x010)=0x%08X\nTRCIDR0(0x078)=0x%08X\n"
	"TRCIDR1(0x079)=0x%08X\nTRCIDR2(0x07A)=0x%08X\nTRCIDR8(0x060)=0x%08X\n";

static const char snapshot_ini[] =
	"[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=cpu_0.ini\ndevice1=ETM_0.ini\n\n"
	"[trace]\nmetadata=trace.ini\n";

/* format=source_data: the trace unit's bytes alone; coresight: formatter frames. */
static const char trace_ini[] =
	"[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETB_0\nfile=trace.bin\n"
	"format=%s\n\n[source_buffers]\nETM_0=ETB_0\n\n[core_trace_sources]\n"
	"cpu_0=ETM_0\n";

static int write_file(const char *dir, const char *name, const void *data, size_t size,
		      struct jf_error *err)
{
	char path[PATH_MAX];
	FILE *fp;
	int bad;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (!fp)
		return jf_fail(err, "%s: cannot create: %m", path);
	bad = size && fwrite(data, 1, size, fp) != size;
	if (fclose(fp) || bad)
		return jf_fail(err, "%s: write failed: %m", path);
	return 0;
}

/* Code less than this far apart goes into one image, the gap zero-filled: no decoder reads
 * there (every instruction a decoder walks over ran, so it was translated), and a
 * program's code makes a handful of files instead of one per stretch that ran. */
enum { MERGE_GAP = 1 << 16 };

static int by_pc(const void *a, const void *b)
{
	const struct jf_etm_code *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* One memory image being assembled from sorted translations. */
struct region {
	uint64_t start;
	uint8_t *bytes;
	size_t size, cap;
};

static int region_add(struct region *r, const struct jf_etm_flow *f, const struct jf_etm_code *c,
		      uint64_t *conflicts)
{
	const uint8_t *src = f->bytes + c->offset;
	size_t at = (size_t)(c->pc - r->start), overlap, end = at + c->size;

	if (end > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		uint8_t *nb;

		while (cap < end)
			cap *= 2;
		nb = realloc(r->bytes, cap);
		if (!nb)
			return -1;
		r->bytes = nb;
		r->cap = cap;
	}
	if (at > r->size)
		memset(r->bytes + r->size, 0, at - r->size);
	overlap = r->size > at ? (r->size < end ? r->size : end) - at : 0;
	if (overlap && memcmp(r->bytes + at, src, overlap))
		(*conflicts)++;
	if (end > r->size) {
		memcpy(r->bytes + at + overlap, src + overlap, c->size - overlap);
		r->size = end;
	}
	return 0;
}

static int write_memory(const struct jf_etm_flow *f, const char *dir, FILE *cpu,
			struct jf_etm_snapshot_stats *stats, struct jf_error *err)
{
	struct jf_etm_code *sorted = malloc((f->ncode ? f->ncode : 1) * sizeof(*sorted));
	struct region r = { 0 };
	size_t i;
	int rc = 0;

	if (!sorted)
		return jf_fail(err, "out of memory");
	memcpy(sorted, f->code, f->ncode * sizeof(*sorted));
	qsort(sorted, f->ncode, sizeof(*sorted), by_pc);
	for (i = 0; i <= f->ncode && rc == 0; i++) {
		char name[64];

		if (i < f->ncode && r.size && sorted[i].pc <= r.start + r.size + MERGE_GAP) {
			if (region_add(&r, f, &sorted[i], &stats->conflicts))
				rc = jf_fail(err, "out of memory");
			continue;
		}
		if (r.size) {
			struct jf_etm_image *im = realloc(stats->images, (stats->regions + 1) *
							  sizeof(*im));

			if (!im) {
				rc = jf_fail(err, "out of memory");
				break;
			}
			stats->images = im;
			im[stats->regions].start = r.start;
			im[stats->regions].size = r.size;
			snprintf(name, sizeof(name), "mem_%" PRIu64 ".bin", stats->regions);
			fprintf(cpu, "\n[dump%" PRIu64 "]\nfile=%s\naddress=0x%" PRIx64
				"\nlength=0x%zx\n", stats->regions + 1, name, r.start, r.size);
			rc = write_file(dir, name, r.bytes, r.size, err);
			stats->regions++;
			stats->code_bytes += r.size;
		}
		r.size = 0;
		if (i < f->ncode) {
			r.start = sorted[i].pc;
			if (region_add(&r, f, &sorted[i], &stats->conflicts))
				rc = jf_fail(err, "out of memory");
		}
	}
	free(r.bytes);
	free(sorted);
	return rc;
}

/* trace.bin: the stream as it is, or in formatter frames. */
static int write_trace(const struct jf_etm_flow *f, const char *dir, int formatted,
		       struct jf_error *err)
{
	size_t size = jf_cs_frames_size(f->etm.size);
	uint8_t *frames;
	int rc;

	if (!formatted)
		return write_file(dir, "trace.bin", f->etm.buf, f->etm.size, err);
	frames = malloc(size ? size : 1);
	if (!frames)
		return jf_fail(err, "out of memory");
	jf_cs_frames_write(f->etm.buf, f->etm.size, JF_ETM_TRCTRACEIDR, frames);
	rc = write_file(dir, "trace.bin", frames, size, err);
	free(frames);
	return rc;
}

int jf_etm_snapshot_write(const struct jf_etm_flow *f, const char *dir, int formatted,
			  struct jf_etm_snapshot_stats *stats, struct jf_error *err)
{
	char path[PATH_MAX], text[sizeof(etm_ini) + 64], trace[sizeof(trace_ini) + 16];
	FILE *cpu;
	int rc;

	memset(stats, 0, sizeof(*stats));
	snprintf(text, sizeof(text), etm_ini, JF_ETM_TRCCONFIGR, JF_ETM_TRCTRACEIDR, JF_ETM_TRCIDR0,
		 JF_ETM_TRCIDR1, JF_ETM_TRCIDR2, JF_ETM_TRCIDR8);
	snprintf(trace, sizeof(trace), trace_ini, formatted ? "coresight" : "source_data");
	if (write_file(dir, "snapshot.ini", snapshot_ini, strlen(snapshot_ini), err) ||
	    write_file(dir, "ETM_0.ini", text, strlen(text), err) ||
	    write_file(dir, "trace.ini", trace, strlen(trace), err) ||
	    write_trace(f, dir, formatted, err))
		return -1;
	snprintf(path, sizeof(path), "%s/cpu_0.ini", dir);
	cpu = fopen(path, "w");
	if (!cpu)
		return jf_fail(err, "%s: cannot create: %m", path);
	fprintf(cpu, "[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n\n[regs]\n"
		"PC(size:64)=0x%" PRIx64 "\n", f->first_pc);
	rc = write_memory(f, dir, cpu, stats, err);
	if (fclose(cpu) && rc == 0)
		rc = jf_fail(err, "%s: write failed: %m", path);
	return rc;
}

void jf_etm_snapshot_stats_free(struct jf_etm_snapshot_stats *stats)
{
	free(stats->images);
	memset(stats, 0, sizeof(*stats));
}
