/* Where the zone files will still change code: the code map's pending answer
 * (jf_codemap_set_pending), which lets the fast path decode ahead while a JIT goes on
 * compiling elsewhere.
 *
 * A byte changes from here on only when a record not applied yet applies. The first record
 * to change byte x is either a runtime change (load, move, free, patch) whose range holds
 * x, or an observed PATCH (code as the recorder saw it first run, zone_settled.c) whose
 * byte at x differs from the image's now, since nothing changed x before it. So x may
 * change only if a runtime change still to apply covers it, or an observed patch still
 * to apply covers it and differs from the image now. Records apply in order and never
 * come back, so a range that none covers stays so. Each stream's records are indexed
 * once, when the file is surveyed; the ranges of all streams are sorted by address when
 * first asked, in classes by length: a query looks for the ranges that may hold an
 * address among those starting at most the class's longest range before it, and one
 * freed region of half a MiB would otherwise make that window hold thousands of patches
 * (HotSpot's code cache).
 *
 * A record that writes bytes (a load, a patch) changes nothing in a range it writes as
 * the range reads now (mapped, or through the early fill: zone_early.c) and that lies
 * inside it, away from its edges (a section edge next to an instruction ends libipt's
 * block; the caller's range holds the bytes next to it). When every record still to
 * apply over a range is such a write, the first of them leaves the range as it is, and
 * so does each after it, whatever order they apply in: by marker call, time or
 * position alike. HotSpot announces code long after it first ran (its native signature
 * handlers in one load at the end of the run), and the recorder's observed patches of
 * a method hold bytes its later loads write again. */
#include <stdlib.h>
#include <string.h>

#include "zone_image_internal.h"

static int add_range(struct jf_zone_stream *s, uint64_t ordinal, uint64_t addr, uint64_t size,
		     const uint8_t *bytes)
{
	struct jf_zone_change *v;

	if (!size)
		return 0;
	if (s->nchanges == s->changes_cap) {
		size_t cap = s->changes_cap ? s->changes_cap * 2 : 64;

		v = realloc(s->changes, cap * sizeof(*v));
		if (!v)
			return -1;
		s->changes = v;
		s->changes_cap = cap;
	}
	v = &s->changes[s->nchanges++];
	v->ordinal = ordinal;
	v->from = addr;
	v->to = addr + size < addr ? UINT64_MAX : addr + size;
	v->bytes = bytes;
	return 0;
}

int jf_zone_pending_note(struct jf_zone_stream *s, const struct jf_zone_record *rec,
			 uint64_t ordinal)
{
	switch (rec->id) {
	case JF_JITDUMP_CODE_LOAD:
		return add_range(s, ordinal, rec->u.code_load.addr, rec->u.code_load.size,
				 rec->u.code_load.code);
	case JF_JITDUMP_CODE_MOVE:
		/* (Whether it changes code is known only at the end of the survey: counted.) */
		return add_range(s, ordinal, rec->u.code_move.old_addr, rec->u.code_move.size,
				 NULL) |
		       add_range(s, ordinal, rec->u.code_move.new_addr, rec->u.code_move.size,
				 NULL);
	case JF_ZONE_REGION_FREE:
		return add_range(s, ordinal, rec->u.region_free.addr, rec->u.region_free.size,
				 NULL);
	case JF_ZONE_REGION_MOVE:
		return add_range(s, ordinal, rec->u.region_move.old_addr,
				 rec->u.region_move.size, NULL) |
		       add_range(s, ordinal, rec->u.region_move.new_addr, rec->u.region_move.size,
				 NULL);
	case JF_ZONE_PATCH:
		/* Observed patches are indexed by zone_settled.c, with their bytes. */
		if (rec->u.patch.flags & JF_PATCH_OBSERVED)
			return 0;
		return add_range(s, ordinal, rec->u.patch.addr, rec->u.patch.size,
				 rec->u.patch.bytes);
	}
	return 0;
}

/* A range's length class: up to 2^4 bytes, 2^8, 2^12, 2^16, longer. */
static unsigned length_class(uint64_t from, uint64_t to)
{
	uint64_t len = to - from;
	unsigned k = 0;

	while (k + 1 < JF_ZONE_PENDING_CLASSES && len > (1ull << (4 * (k + 1))))
		k++;
	return k;
}

static int by_class_and_start(const void *a, const void *b)
{
	const struct jf_zone_pending_entry *x = a, *y = b;
	unsigned cx = length_class(x->from, x->to), cy = length_class(y->from, y->to);

	if (cx != cy)
		return cx < cy ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

static void entry(struct jf_zone_pending_index *p, size_t stream, size_t observed,
		  uint64_t ordinal, uint64_t from, uint64_t to, const uint8_t *bytes)
{
	struct jf_zone_pending_entry *e = &p->v[p->n++];
	struct jf_zone_pending_class *c = &p->cls[length_class(from, to)];

	e->from = from;
	e->to = to;
	e->ordinal = ordinal;
	e->stream = stream;
	e->observed = observed;
	e->bytes = bytes;
	c->n++;
	if (to - from > c->longest)
		c->longest = to - from;
}

static void build(struct jf_zone_image *zi)
{
	struct jf_zone_pending_index *p = &zi->pending;
	size_t i, j, n = 0;

	free(p->v);
	p->v = NULL;
	p->n = 0;
	memset(p->cls, 0, sizeof(p->cls));
	p->streams = zi->nstreams;
	for (i = 0; i < zi->nstreams; i++)
		n += zi->streams[i].nchanges + zi->streams[i].nobserved;
	p->broken = n && !(p->v = malloc(n * sizeof(*p->v)));
	if (p->broken)
		return;
	for (i = 0; i < zi->nstreams; i++) {
		const struct jf_zone_stream *s = &zi->streams[i];

		for (j = 0; j < s->nchanges; j++)
			entry(p, i, SIZE_MAX, s->changes[j].ordinal, s->changes[j].from,
			      s->changes[j].to, s->changes[j].bytes);
		for (j = 0; j < s->nobserved; j++)
			entry(p, i, j, s->observed[j].ordinal, s->observed[j].addr,
			      s->observed[j].addr + s->observed[j].size, s->observed[j].bytes);
	}
	if (p->n)
		qsort(p->v, p->n, sizeof(*p->v), by_class_and_start);
	for (i = 1; i < JF_ZONE_PENDING_CLASSES; i++)
		p->cls[i].first = p->cls[i - 1].first + p->cls[i - 1].n;
}

/* Whether e's record writes [vaddr, end) as it reads now, the range inside its own (see
 * the top). */
static int writes_as_now(struct jf_codemap *map, const struct jf_zone_pending_entry *e,
			 uint64_t vaddr, uint64_t end)
{
	return e->bytes && vaddr >= e->from && end <= e->to &&
	       !jf_zone_bytes_difference_as_read(map, vaddr, e->bytes + (vaddr - e->from),
						 end - vaddr);
}

/* Whether e's record is still to apply and may change [vaddr, end) (see the top). */
static int still_changes(struct jf_zone_image *zi, const struct jf_zone_pending_entry *e,
			 uint64_t vaddr, uint64_t end)
{
	const struct jf_zone_stream *s = &zi->streams[e->stream];
	const struct jf_zone_observed *o;

	if (!s->has_next || e->ordinal < s->read_records - 1)
		return 0;
	if (e->observed != SIZE_MAX) {
		o = &s->observed[e->observed];
		if (!jf_zone_bytes_difference(zi->map, o->addr, o->bytes, o->size))
			return 0;
	}
	return !writes_as_now(zi->map, e, vaddr, end);
}

/* Whether a range of class c that holds part of [vaddr, end) still changes. */
static int class_changes(struct jf_zone_image *zi, const struct jf_zone_pending_class *c,
			 uint64_t vaddr, uint64_t end)
{
	const struct jf_zone_pending_entry *v = zi->pending.v + c->first;
	uint64_t lo = vaddr > c->longest ? vaddr - c->longest : 0;
	size_t a = 0, b = c->n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (v[mid].from < lo)
			a = mid + 1;
		else
			b = mid;
	}
	for (; a < c->n && v[a].from < end; a++)
		if (v[a].to > vaddr && still_changes(zi, &v[a], vaddr, end))
			return 1;
	return 0;
}

int jf_zone_pending(void *ctx, uint64_t vaddr, uint64_t size)
{
	struct jf_zone_image *zi = ctx;
	struct jf_zone_pending_index *p = &zi->pending;
	uint64_t end = vaddr + size < vaddr ? UINT64_MAX : vaddr + size;
	unsigned k;

	if (p->streams != zi->nstreams)
		build(zi);
	if (p->broken)
		return 1;
	for (k = 0; k < JF_ZONE_PENDING_CLASSES; k++)
		if (p->cls[k].n && class_changes(zi, &p->cls[k], vaddr, end))
			return 1;
	return 0;
}

void jf_zone_pending_fini(struct jf_zone_image *zi)
{
	free(zi->pending.v);
	zi->pending.v = NULL;
	zi->pending.n = 0;
}
