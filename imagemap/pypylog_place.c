/* Placing a PyPy log's code writes at the blocks that first ran them
 * (jitflow/pypylog_place.h). */
#include "jitflow/pypylog_place.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pypylog_notes.h"

/* ---- a sparse byte image: 4 KiB pages, each byte known or not ---- */

enum { PAGE = 4096 };

struct page {
	uint64_t base;
	uint8_t bytes[PAGE], known[PAGE];
};

struct image {
	struct page **slots;
	size_t mask, used;
};

static struct page *page_at(struct image *im, uint64_t addr, int add)
{
	uint64_t base = addr & ~(uint64_t)(PAGE - 1);
	size_t i;

	if (!im->slots) {
		if (!add)
			return NULL;
		im->mask = 255;
		im->slots = calloc(im->mask + 1, sizeof(*im->slots));
		if (!im->slots)
			return NULL;
	}
	for (i = (size_t)(base >> 12) & im->mask; im->slots[i]; i = (i + 1) & im->mask)
		if (im->slots[i]->base == base)
			return im->slots[i];
	if (!add)
		return NULL;
	if ((im->used + 1) * 2 > im->mask + 1) {
		struct image bigger = { calloc((im->mask + 1) * 2, sizeof(*im->slots)),
					(im->mask + 1) * 2 - 1, 0 };
		size_t k;

		if (!bigger.slots)
			return NULL;
		for (k = 0; k <= im->mask; k++) {
			size_t j;

			if (!im->slots[k])
				continue;
			for (j = (size_t)(im->slots[k]->base >> 12) & bigger.mask; bigger.slots[j];
			     j = (j + 1) & bigger.mask)
				;
			bigger.slots[j] = im->slots[k];
			bigger.used++;
		}
		free(im->slots);
		*im = bigger;
		for (i = (size_t)(base >> 12) & im->mask; im->slots[i]; i = (i + 1) & im->mask)
			;
	}
	im->slots[i] = calloc(1, sizeof(struct page));
	if (!im->slots[i])
		return NULL;
	im->slots[i]->base = base;
	im->used++;
	return im->slots[i];
}

static void image_free(struct image *im)
{
	size_t i;

	if (im->slots)
		for (i = 0; i <= im->mask; i++)
			free(im->slots[i]);
	free(im->slots);
}

static int image_write(struct image *im, uint64_t addr, const uint8_t *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct page *p = page_at(im, addr + i, 1);

		if (!p)
			return -1;
		p->bytes[(addr + i) & (PAGE - 1)] = b[i];
		p->known[(addr + i) & (PAGE - 1)] = 1;
	}
	return 0;
}

/* ---- one block against an image ---- */

struct view {
	uint8_t *bytes, *known;  /* n bytes of the image over the block's range */
	size_t n;
};

static void view_from(struct view *v, struct image *im, uint64_t pc)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		const struct page *p = page_at(im, pc + i, 0);

		v->known[i] = p ? p->known[(pc + i) & (PAGE - 1)] : 0;
		v->bytes[i] = p ? p->bytes[(pc + i) & (PAGE - 1)] : 0;
	}
}

/* 1 if the block's bytes equal the view wherever it knows them, and it knows some. */
static int matches(const struct view *v, const uint8_t *block)
{
	size_t i, known = 0;

	for (i = 0; i < v->n; i++) {
		if (!v->known[i])
			continue;
		if (v->bytes[i] != block[i])
			return 0;
		known++;
	}
	return known > 0;
}

/* Overlay a dump onto the view of [pc, pc + n); 1 if it touched it. */
static int overlay(struct view *v, uint64_t pc, const struct jf_pypylog_dump *d)
{
	uint64_t lo = d->addr > pc ? d->addr : pc;
	uint64_t hi = d->addr + d->size < pc + v->n ? d->addr + d->size : pc + v->n;
	uint64_t a;

	if (lo >= hi)
		return 0;
	for (a = lo; a < hi; a++) {
		v->bytes[a - pc] = d->bytes[a - d->addr];
		v->known[a - pc] = 1;
	}
	return 1;
}

/* ---- the placement ---- */

#define problem(pl, ...) \
	jf_pypylog_note((pl)->problem, sizeof((pl)->problem) / sizeof((pl)->problem[0]), \
			&(pl)->nproblems, __VA_ARGS__)

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

struct placer {
	const struct jf_pypylog *log;
	struct jf_pypylog_placement *pl;
	struct image cur;       /* S_A */
	size_t placed;          /* A */
	uint8_t *vbytes, *vknown;
	size_t vcap;
};

static int keep_foreign(struct jf_pypylog_placement *pl, int32_t tid, uint64_t pos,
			uint64_t pc, const uint8_t *block, size_t n)
{
	struct jf_pypylog_foreign *f;

	if (!(pl->nforeigners & (pl->nforeigners + 1)) || !pl->foreigners) {
		/* grow at 0, 1, 3, 7, ...: capacity is the next power of two */
		f = realloc(pl->foreigners, (pl->nforeigners + 1) * 2 * sizeof(*f));
		if (!f)
			return -1;
		pl->foreigners = f;
	}
	f = &pl->foreigners[pl->nforeigners];
	f->bytes = malloc(n);
	if (!f->bytes)
		return -1;
	memcpy(f->bytes, block, n);
	f->size = n;
	f->tid = tid;
	f->position = pos;
	f->block = pl->blocks;
	f->pc = pc;
	pl->nforeigners++;
	return 0;
}

static int place_block(struct placer *p, int32_t tid, uint64_t pos, uint64_t pc,
		       const uint8_t *block, size_t n)
{
	struct view v;
	size_t k;
	int touched = 0;

	if (n > p->vcap) {
		free(p->vbytes);
		free(p->vknown);
		p->vbytes = malloc(n);
		p->vknown = malloc(n);
		if (!p->vbytes || !p->vknown)
			return -1;
		p->vcap = n;
	}
	v.bytes = p->vbytes;
	v.known = p->vknown;
	v.n = n;
	view_from(&v, &p->cur, pc);
	for (k = 0; k < n && !v.known[k]; k++)
		;
	touched = k < n;
	if (matches(&v, block)) {
		p->pl->consistent++;
		return 0;
	}
	for (k = p->placed; k < p->log->ndumps; k++) {
		if (!overlay(&v, pc, &p->log->dumps[k]))
			continue;
		touched = 1;
		if (!matches(&v, block))
			continue;
		/* writes placed .. k apply right before this block */
		for (; p->placed <= k; p->placed++) {
			const struct jf_pypylog_dump *d = &p->log->dumps[p->placed];

			p->pl->at[p->placed].placed = 1;
			p->pl->at[p->placed].tid = tid;
			p->pl->at[p->placed].position = pos;
			p->pl->at[p->placed].block = p->pl->blocks;
			if (image_write(&p->cur, d->addr, d->bytes, d->size) < 0)
				return -1;
		}
		p->pl->placing++;
		return 0;
	}
	if (!touched) {
		p->pl->foreign++;
		return keep_foreign(p->pl, tid, pos, pc, block, n);
	}
	p->pl->unexplained++;
	problem(p->pl, "thread %" PRId32 " at instruction %" PRIu64 ": the block at 0x%" PRIx64
		" (%zu bytes) ran bytes that no state of the log's code writes has", tid, pos, pc, n);
	return 0;
}

static int one_line(struct placer *p, char *line, size_t len, uint64_t lineno, const char *path)
{
	long long tid;
	unsigned long long pos, pc;
	int used = 0;
	char *hex;
	size_t n, i;
	uint8_t *block;
	int rc;

	if (!len || line[0] == '#')
		return 0;
	if (sscanf(line, "%lld %llu %llx %n", &tid, &pos, &pc, &used) < 3 || !used) {
		p->pl->bad_lines++;
		problem(p->pl, "%s:%" PRIu64 ": expected \"TID POSITION PC HEX\"", path, lineno);
		return 0;
	}
	hex = line + used;
	n = strlen(hex);
	while (n && (hex[n - 1] == '\n' || hex[n - 1] == '\r' || hex[n - 1] == ' '))
		n--;
	if (!n || (n & 1)) {
		p->pl->bad_lines++;
		problem(p->pl, "%s:%" PRIu64 ": odd or missing hex bytes", path, lineno);
		return 0;
	}
	block = malloc(n / 2);
	if (!block)
		return -1;
	for (i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(block);
			p->pl->bad_lines++;
			problem(p->pl, "%s:%" PRIu64 ": bad hex digit", path, lineno);
			return 0;
		}
		block[i] = (uint8_t)(hi << 4 | lo);
	}
	if (!p->pl->blocks++)
		p->pl->first_tid = (int32_t)tid;
	rc = place_block(p, (int32_t)tid, pos, pc, block, n / 2);
	free(block);
	return rc;
}

int jf_pypylog_place(const struct jf_pypylog *log, const char *jit_code_path,
		     struct jf_pypylog_placement **out, struct jf_error *err)
{
	FILE *f = fopen(jit_code_path, "r");
	int rc;

	*out = NULL;
	if (!f)
		return jf_fail(err, "%s: %m", jit_code_path);
	rc = jf_pypylog_place_stream(log, f, jit_code_path, out, err);
	fclose(f);
	return rc;
}

int jf_pypylog_place_stream(const struct jf_pypylog *log, FILE *f, const char *jit_code_path,
			    struct jf_pypylog_placement **out, struct jf_error *err)
{
	struct placer p;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t lineno = 0;
	int rc = 0;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	p.log = log;
	p.pl = calloc(1, sizeof(*p.pl));
	if (p.pl)
		p.pl->at = calloc(log->ndumps ? log->ndumps : 1, sizeof(*p.pl->at));
	if (!p.pl || !p.pl->at) {
		rc = jf_fail(err, "out of memory");
		goto done;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		if (one_line(&p, line, (size_t)len, ++lineno, jit_code_path) < 0) {
			rc = jf_fail(err, "%s:%" PRIu64 ": out of memory", jit_code_path, lineno);
			goto done;
		}
	}
done:
	free(line);
	free(p.vbytes);
	free(p.vknown);
	image_free(&p.cur);
	if (rc) {
		jf_pypylog_placement_free(p.pl);
		return -1;
	}
	*out = p.pl;
	return 0;
}

void jf_pypylog_placement_free(struct jf_pypylog_placement *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nforeigners; i++)
		free(p->foreigners[i].bytes);
	free(p->foreigners);
	free(p->at);
	free(p);
}
