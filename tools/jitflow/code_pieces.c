/* A recording's code pieces: the pages of mapped files that the trace executed, saved as
 * DIR/code/NAME@ADDRESS.bin, so that a recording decodes on a machine where those files
 * are not at their recorded path, or differ (a rebuilt binary), and stays small enough to
 * check in. Only the bytes of instructions that ran are kept; the rest of each page is
 * zeros (a decoder reads no other byte, and zeros compress to nothing in git or xz). JIT
 * code is not saved: the zone files beside the recording hold it. */
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

/* The set of executed pages: open addressing over page numbers (+1, 0 = empty), each
 * with a bitmap of its executed bytes (bits[map]). */
struct page_slot {
	uint64_t page;
	uint32_t map;
};

struct page_set {
	struct page_slot *slot;
	size_t mask, used;
	uint8_t (*bits)[PAGE / 8];
	size_t bits_cap;
};

/* The bitmap of page (added when missing), or NULL when out of memory. */
static uint8_t *page_bits(struct page_set *s, uint64_t page)
{
	size_t i;

	if ((s->used + 1) * 2 > s->mask + 1) {
		size_t cap = s->slot ? (s->mask + 1) * 2 : 1024, j, k;
		struct page_slot *bigger = calloc(cap, sizeof(*bigger));

		if (!bigger)
			return NULL;
		for (j = 0; s->slot && j <= s->mask; j++) {
			if (!s->slot[j].page)
				continue;
			for (k = (size_t)(s->slot[j].page * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
			     bigger[k].page; k = (k + 1) & (cap - 1))
				;
			bigger[k] = s->slot[j];
		}
		free(s->slot);
		s->slot = bigger;
		s->mask = cap - 1;
	}
	for (i = (size_t)((page + 1) * 0x9e3779b97f4a7c15ull >> 20) & s->mask; s->slot[i].page;
	     i = (i + 1) & s->mask) {
		if (s->slot[i].page == page + 1)
			return s->bits[s->slot[i].map];
	}
	if (s->used == s->bits_cap) {
		size_t cap = s->bits_cap ? s->bits_cap * 2 : 256;
		void *more = realloc(s->bits, cap * sizeof(*s->bits));

		if (!more)
			return NULL;
		s->bits = more;
		s->bits_cap = cap;
	}
	memset(s->bits[s->used], 0, sizeof(*s->bits));
	s->slot[i].page = page + 1;
	s->slot[i].map = (uint32_t)s->used;
	return s->bits[s->used++];
}

/* Bytes [from, to) ran. */
static int mark_executed(struct page_set *s, uint64_t from, uint64_t to)
{
	for (; from < to; from++) {
		uint8_t *bits = page_bits(s, from / PAGE);

		if (!bits)
			return -1;
		bits[(from % PAGE) / 8] |= (uint8_t)(1u << (from % 8));
	}
	return 0;
}

/* Zero the bytes of buf (n bytes at addr, within one page) that did not run. */
static void keep_executed(struct page_set *s, uint64_t addr, uint8_t *buf, size_t n)
{
	const uint8_t *bits = page_bits(s, addr / PAGE); /* present: the page ran */
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t off = (addr + i) % PAGE;

		if (!bits || !(bits[off / 8] & (1u << (off % 8))))
			buf[i] = 0;
	}
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Write the bytes of [start, end) that the code map has, as pieces named by their file. */
static int write_pieces(struct jf_cli_inputs *in, struct page_set *pages, const char *codedir,
			uint64_t start, uint64_t end, int *written, struct jf_error *err)
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
			keep_executed(pages, start, buf, n);
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
	/* Blocks end at every jump and call, so that each one's bytes are contiguous: a block
	 * running through a direct jump would otherwise span (and save) every page between
	 * its start and its last instruction. */
	in.split_blocks = 1;
	if (jf_cli_add_recording_zones(&in, dir, err) < 0)
		goto out;
	dec = jf_cli_open_decoder(&in, err);
	if (!dec)
		goto out;
	while ((rc = jf_decoder_next(dec, &f, err)) > 0) {
		const struct jf_block *b = &f.u.block;

		if (f.kind != JF_FLOW_BLOCK)
			continue;
		/* Where the end is unknown, the longest an instruction can be. */
		if (mark_executed(&pages, b->start, b->next > b->last ? b->next : b->last + 15) < 0) {
			rc = jf_fail(err, "out of memory");
			goto out;
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
		if (pages.slot[i].page)
			sorted[n++] = pages.slot[i].page - 1;
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
		if (write_pieces(&in, &pages, codedir, sorted[i] * PAGE, (sorted[j - 1] + 1) * PAGE,
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
	free(pages.bits);
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
