/* A recording's code pieces: the pages of mapped files that the trace executed, saved as
 * DIR/code/NAME@ADDRESS.bin, so that a recording decodes on a machine where those files
 * are not at their recorded path, or differ (a rebuilt binary), and stays small enough to
 * check in. JIT code is not saved: the zone files beside the recording hold it. */
#include "code_pieces.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_output.h"
#include "jitflow/zone_image.h"

enum { PAGE = 4096 };

/* The set of executed pages: open addressing over page numbers (+1, 0 = empty). */
struct page_set {
	uint64_t *slot;
	size_t mask, used;
};

static int page_add(struct page_set *s, uint64_t page)
{
	size_t i;

	if ((s->used + 1) * 2 > s->mask + 1) {
		struct page_set bigger = { 0 };
		size_t cap = s->slot ? (s->mask + 1) * 2 : 1024, j;

		bigger.slot = calloc(cap, sizeof(*bigger.slot));
		if (!bigger.slot)
			return -1;
		bigger.mask = cap - 1;
		for (j = 0; s->slot && j <= s->mask; j++) {
			if (s->slot[j])
				page_add(&bigger, s->slot[j] - 1);
		}
		free(s->slot);
		*s = bigger;
	}
	for (i = (size_t)(page * 0x9e3779b97f4a7c15ull >> 20) & s->mask; s->slot[i];
	     i = (i + 1) & s->mask) {
		if (s->slot[i] == page + 1)
			return 0;
	}
	s->slot[i] = page + 1;
	s->used++;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Write the bytes of [start, end) that the code map has, as pieces named by their file. */
static int write_pieces(struct jf_cli_inputs *in, const char *codedir, uint64_t start,
			uint64_t end, int *written, struct jf_error *err)
{
	static uint8_t buf[PAGE];

	while (start < end) {
		uint64_t section;
		const char *name = jf_codemap_lookup(in->map, start, &section);
		char path[4096 + 512];
		size_t n;
		FILE *f;

		/* Pages of JIT code (or of nothing) are not the files' to save. */
		if (!name || (in->zones && jf_zone_image_lookup(in->zones, start, NULL, NULL))) {
			start = (start & ~(uint64_t)(PAGE - 1)) + PAGE;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s@%" PRIx64 ".bin", codedir, name, start);
		f = fopen(path, "wb");
		if (!f)
			return jf_fail(err, "%s: cannot create: %s", path, strerror(errno));
		/* One file per run of pages within one section. */
		while (start < end && jf_codemap_lookup(in->map, start, &section) == name &&
		       (n = jf_codemap_read(in->map, start, buf,
					    (size_t)(((start & ~(uint64_t)(PAGE - 1)) + PAGE) - start))) > 0) {
			if (fwrite(buf, 1, n, f) != n) {
				fclose(f);
				return jf_fail(err, "%s: write failed", path);
			}
			start += n;
		}
		if (fclose(f) != 0)
			return jf_fail(err, "%s: write failed", path);
		(*written)++;
	}
	return 0;
}

int jf_save_code_pieces(const char *dir, struct jf_error *err)
{
	char perf[4096], codedir[4096];
	struct jf_cli_inputs in;
	struct page_set pages = { 0 };
	struct jf_decoder *dec = NULL;
	struct jf_flow f;
	uint64_t *sorted = NULL;
	size_t i, n = 0;
	int rc = -1, written = 0;

	jf_cli_inputs_init(&in);
	snprintf(perf, sizeof(perf), "%s/perf.data", dir);
	snprintf(codedir, sizeof(codedir), "%s/code", dir);
	in.perf_path = perf;
	if (jf_cli_add_recording_zones(&in, dir, err) < 0)
		goto out;
	dec = jf_cli_open_decoder(&in, err);
	if (!dec)
		goto out;
	while ((rc = jf_decoder_next(dec, &f, err)) > 0) {
		uint64_t p;

		if (f.kind != JF_FLOW_BLOCK)
			continue;
		/* The last instruction may run into the next page. */
		for (p = f.u.block.start / PAGE; p <= (f.u.block.last + 15) / PAGE; p++) {
			if (page_add(&pages, p) < 0) {
				rc = jf_fail(err, "out of memory");
				goto out;
			}
		}
	}
	if (rc < 0)
		goto out;
	rc = -1;
	/* The code map now holds every file mapped during the recording. */
	sorted = malloc((pages.used ? pages.used : 1) * sizeof(*sorted));
	if (!sorted) {
		jf_fail(err, "out of memory");
		goto out;
	}
	for (i = 0; pages.slot && i <= pages.mask; i++) {
		if (pages.slot[i])
			sorted[n++] = pages.slot[i] - 1;
	}
	qsort(sorted, n, sizeof(*sorted), by_value);
	if (mkdir(codedir, 0777) && errno != EEXIST) {
		jf_fail(err, "%s: cannot create folder: %s", codedir, strerror(errno));
		goto out;
	}
	for (i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && sorted[j] == sorted[j - 1] + 1)
			j++;
		if (write_pieces(&in, codedir, sorted[i] * PAGE, (sorted[j - 1] + 1) * PAGE,
				 &written, err) < 0)
			goto out;
		i = j;
	}
	fprintf(stderr, "jitflow record: saved %zu executed pages of code in %d pieces in %s\n",
		n, written, codedir);
	rc = 0;
out:
	jf_decoder_free(dec);
	jf_cli_inputs_fini(&in);
	free(pages.slot);
	free(sorted);
	return rc;
}

int jf_load_code_pieces(struct jf_cli_inputs *in, const char *dir, struct jf_error *err)
{
	char codedir[4096], path[8192];
	struct dirent *e;
	DIR *d;
	int rc = 0;

	snprintf(codedir, sizeof(codedir), "%s/code", dir);
	d = opendir(codedir);
	if (!d)
		return 0; /* a recording without saved code: its files are read where they are */
	while (rc == 0 && (e = readdir(d))) {
		char name[256], *at;
		uint64_t addr;
		struct stat st;

		at = strrchr(e->d_name, '@');
		if (!at || at == e->d_name || (size_t)(at - e->d_name) >= sizeof(name) ||
		    sscanf(at + 1, "%" SCNx64 ".bin", &addr) != 1)
			continue;
		memcpy(name, e->d_name, (size_t)(at - e->d_name));
		name[at - e->d_name] = 0;
		snprintf(path, sizeof(path), "%s/%s", codedir, e->d_name);
		if (stat(path, &st) || !st.st_size)
			continue;
		rc = jf_codemap_add_file(in->map, path, 0, (uint64_t)st.st_size, addr, name, err);
		if (rc == 0)
			rc = jf_perf_images_provided(in->perf_images, name, err);
	}
	closedir(d);
	return rc;
}
