/* perf.data: the file header, the attrs, the feature table, and pipe mode's prescan.
 * Record bodies are parsed in perf_data_records.c.
 *
 * Layout of a normal file (perf's util/header.h): a 104-byte header (magic "PERFILE2",
 * header size, attr entry size, then three {offset, size} sections: attrs, data,
 * event_types, then a 256-bit feature bitmap); the attrs section holds entries of
 * perf_event_attr + {offset, size} of the event's id array; the records fill the data
 * section; right after it comes a table of {offset, size}, one for each feature bit set. */
#include "perf_data_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
	FILE_HEADER_SIZE = 104,
	FILE_HEADER_SIZE_NO_FEATURES = 72, /* perf accepts headers without the bitmap */
	PIPE_HEADER_SIZE = 16,
	ATTR_SIZE_VER0 = 64,               /* the first published perf_event_attr */
	ATTR_FIELDS_USED = 48,             /* type .. flags: what jitflow reads */
	ATTR_SIZE_MAX = 4096,              /* far above any real perf_event_attr */
	SECTION_SIZE = 16,
};

uint64_t jf_perf_u64(const uint8_t *p, uint64_t i)
{
	uint64_t v;

	memcpy(&v, p + i * 8, 8);
	return v;
}

uint32_t jf_perf_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* A section {offset, size} read at file offset at, checked to lie inside the file. */
static int read_section(struct jf_perf_data *d, uint64_t at, const char *what,
			uint64_t *offset, uint64_t *size, struct jf_error *err)
{
	*offset = jf_perf_u64(d->file.data + at, 0);
	*size = jf_perf_u64(d->file.data + at, 1);
	if (*offset > d->file.size || *size > d->file.size - *offset)
		return jf_fail(err,
			       "%s: offset %llu: %s section [%llu, +%llu) lies beyond the end of "
			       "the file (%zu bytes); expected it inside the file",
			       d->file.path, (unsigned long long)at, what,
			       (unsigned long long)*offset, (unsigned long long)*size,
			       d->file.size);
	return 0;
}

/* Fill a jf_perf_attr from the attr bytes at file offset at (avail bytes may be read). */
static int parse_attr(struct jf_perf_data *d, uint64_t at, uint64_t avail,
		      struct jf_perf_attr *a, struct jf_error *err)
{
	const uint8_t *p = d->file.data + at;

	memset(a, 0, sizeof(*a));
	a->size = jf_perf_u32(p + 4);
	if (a->size == 0)
		a->size = ATTR_SIZE_VER0;
	if (a->size < ATTR_SIZE_VER0 || a->size > avail)
		return jf_fail(err,
			       "%s: offset %llu: perf_event_attr size %u is wrong; expected %u to "
			       "%llu bytes",
			       d->file.path, (unsigned long long)at, a->size, ATTR_SIZE_VER0,
			       (unsigned long long)avail);
	a->type = jf_perf_u32(p);
	a->config = jf_perf_u64(p, 1);
	a->sample_type = jf_perf_u64(p, 3);
	a->read_format = jf_perf_u64(p, 4);
	a->flags = jf_perf_u64(p, 5);
	a->sample_id_all = (a->flags >> 18) & 1;
	a->offset = at;
	return 0;
}

static int add_attr(struct jf_perf_data *d, const struct jf_perf_attr *a)
{
	if (d->nattrs == d->cap_attrs) {
		size_t cap = d->cap_attrs ? d->cap_attrs * 2 : 4;
		struct jf_perf_attr *n = realloc(d->attrs, cap * sizeof(*n));

		if (!n)
			return -1;
		d->attrs = n;
		d->cap_attrs = cap;
	}
	d->attrs[d->nattrs++] = *a;
	return 0;
}

static int read_attrs(struct jf_perf_data *d, uint64_t attr_size, struct jf_error *err)
{
	uint64_t off, size, at;

	if (attr_size < ATTR_SIZE_VER0 + SECTION_SIZE || attr_size > ATTR_SIZE_MAX)
		return jf_fail(err,
			       "%s: offset 16: attr entry size %llu is wrong; expected %u to %u bytes",
			       d->file.path, (unsigned long long)attr_size,
			       ATTR_SIZE_VER0 + SECTION_SIZE, ATTR_SIZE_MAX);
	if (read_section(d, 24, "attrs", &off, &size, err) < 0)
		return -1;
	if (size % attr_size)
		return jf_fail(err,
			       "%s: offset 32: attrs section of %llu bytes is not a multiple of "
			       "the %llu-byte attr entry",
			       d->file.path, (unsigned long long)size,
			       (unsigned long long)attr_size);
	for (at = off; at < off + size; at += attr_size) {
		struct jf_perf_attr a;
		uint64_t ids_off, ids_size;

		if (parse_attr(d, at, attr_size - SECTION_SIZE, &a, err) < 0)
			return -1;
		if (read_section(d, at + attr_size - SECTION_SIZE, "event ids", &ids_off,
				 &ids_size, err) < 0)
			return -1;
		if (ids_size % 8)
			return jf_fail(err,
				       "%s: offset %llu: event id array of %llu bytes; expected a "
				       "multiple of 8",
				       d->file.path,
				       (unsigned long long)(at + attr_size - SECTION_SIZE + 8),
				       (unsigned long long)ids_size);
		a.ids = d->file.data + ids_off;
		a.nr_ids = ids_size / 8;
		if (add_attr(d, &a) < 0)
			return jf_fail(err, "%s: out of memory", d->file.path);
	}
	return 0;
}

static int read_features(struct jf_perf_data *d, struct jf_error *err)
{
	uint64_t table = d->data_end, bit;
	const uint8_t *bitmap = d->file.data + 72;

	for (bit = 0; bit < JF_PERF_FEAT_MAX; bit++) {
		uint64_t off, size;

		if (!(bitmap[bit / 8] & (1u << (bit % 8))))
			continue;
		if (table > d->file.size || d->file.size - table < SECTION_SIZE) {
			/* Cut short after the data: the records are whole, this feature and
			 * the ones after it are gone (reported as a cut of 0 data bytes). */
			d->cut = 1;
			d->cut_at = d->file.size;
			return 0;
		}
		off = jf_perf_u64(d->file.data + table, 0);
		size = jf_perf_u64(d->file.data + table, 1);
		if ((off > d->file.size || size > d->file.size - off) && off >= d->data_end) {
			d->cut = 1; /* the same, inside a feature's section */
			d->cut_at = d->file.size;
			return 0;
		}
		if (read_section(d, table, "feature", &off, &size, err) < 0)
			return -1;
		d->feat[bit].present = 1;
		d->feat[bit].offset = off;
		d->feat[bit].size = size;
		table += SECTION_SIZE;
	}
	return 0;
}

/* perf's string in a feature: u32 length (including padding), then the NUL-terminated
 * characters. */
static void read_cpuid(struct jf_perf_data *d)
{
	const uint8_t *p;
	uint64_t size;
	uint32_t len;

	if (!jf_perf_data_feature(d, JF_PERF_FEAT_CPUID, &p, &size, NULL) || size < 4)
		return;
	len = jf_perf_u32(p);
	if (len > size - 4)
		len = (uint32_t)(size - 4);
	d->cpuid = strndup((const char *)p + 4, len);
}

/* Pipe mode: attrs and features come as records; collect them before anything is
 * decoded (record headers only, payloads are skipped). */
static int prescan_pipe(struct jf_perf_data *d, struct jf_error *err)
{
	struct jf_perf_cursor cur;
	struct jf_perf_record rec;
	int rc;

	jf_perf_data_begin(d, &cur);
	while ((rc = jf_perf_data_next_header(d, &cur, &rec, err)) > 0) {
		uint64_t body = rec.offset + 8, len = rec.size - 8u;

		if (rec.type == JF_PERF_RECORD_HEADER_ATTR) {
			struct jf_perf_attr a;

			if (len < ATTR_SIZE_VER0)
				return jf_fail(err,
					       "%s: offset %llu: HEADER_ATTR record of %u bytes; "
					       "expected at least %u",
					       d->file.path, (unsigned long long)rec.offset,
					       rec.size, 8 + ATTR_SIZE_VER0);
			if (parse_attr(d, body, len, &a, err) < 0)
				return -1;
			a.ids = d->file.data + body + a.size;
			a.nr_ids = (len - a.size) / 8;
			if (add_attr(d, &a) < 0)
				return jf_fail(err, "%s: out of memory", d->file.path);
		} else if (rec.type == JF_PERF_RECORD_HEADER_FEATURE && len >= 8) {
			uint64_t bit = jf_perf_u64(d->file.data + body, 0);

			if (bit < JF_PERF_FEAT_MAX) {
				d->feat[bit].present = 1;
				d->feat[bit].offset = body + 8;
				d->feat[bit].size = len - 8;
			}
		}
	}
	return rc;
}

static int read_header(struct jf_perf_data *d, struct jf_error *err)
{
	const uint8_t *p = d->file.data;
	uint64_t hsize, data_off, data_size;

	if (d->file.size < PIPE_HEADER_SIZE)
		return jf_fail(err,
			       "%s: offset 0: file of %zu bytes is too short; expected a perf.data "
			       "header (at least 16 bytes)",
			       d->file.path, d->file.size);
	if (!memcmp(p, "2ELIFREP", 8))
		return jf_fail(err,
			       "%s: offset 0: byte-swapped (big-endian) perf.data is not supported",
			       d->file.path);
	if (!memcmp(p, "PERFFILE", 8))
		return jf_fail(err,
			       "%s: offset 0: perf.data version 1 (magic PERFFILE) is not supported; "
			       "expected PERFILE2",
			       d->file.path);
	if (memcmp(p, "PERFILE2", 8))
		return jf_fail(err, "%s: offset 0: not a perf.data file; expected magic PERFILE2",
			       d->file.path);
	hsize = jf_perf_u64(p, 1);
	if (hsize == PIPE_HEADER_SIZE) {
		d->pipe = 1;
		d->data_begin = PIPE_HEADER_SIZE;
		d->data_end = d->file.size;
		return prescan_pipe(d, err);
	}
	if (hsize != FILE_HEADER_SIZE && hsize != FILE_HEADER_SIZE_NO_FEATURES)
		return jf_fail(err,
			       "%s: offset 8: header size %llu; expected 104 (or 16 in pipe mode)",
			       d->file.path, (unsigned long long)hsize);
	if (d->file.size < hsize)
		return jf_fail(err,
			       "%s: offset 0: file of %zu bytes is too short for its %llu-byte "
			       "header",
			       d->file.path, d->file.size, (unsigned long long)hsize);
	data_off = jf_perf_u64(p, 5);
	data_size = jf_perf_u64(p, 6);
	if (data_off > d->file.size)
		return jf_fail(err,
			       "%s: offset 40: data section at %llu lies beyond the end of the file "
			       "(%zu bytes); expected it inside the file",
			       d->file.path, (unsigned long long)data_off, d->file.size);
	if ((data_size == 0 && d->file.size > data_off) || data_size > d->file.size - data_off) {
		/* Cut short, or never finished (perf writes the data size when it stops):
		 * read what is there, as perf does. */
		d->cut = 1;
		d->cut_at = d->file.size;
		d->cut_missing = data_size ? data_size - (d->file.size - data_off) : 0;
		data_size = d->file.size - data_off;
	}
	if (data_off < hsize)
		return jf_fail(err,
			       "%s: offset 40: data section at %llu overlaps the header; expected "
			       "it at %llu or later",
			       d->file.path, (unsigned long long)data_off,
			       (unsigned long long)hsize);
	d->data_begin = data_off;
	d->data_end = data_off + data_size;
	if (read_attrs(d, jf_perf_u64(p, 2), err) < 0)
		return -1;
	/* The feature table follows the data: a cut file has none that can be trusted. */
	if (hsize == FILE_HEADER_SIZE && !d->cut && read_features(d, err) < 0)
		return -1;
	return 0;
}

struct jf_perf_data *jf_perf_data_open(const char *path, struct jf_error *err)
{
	struct jf_perf_data *d = calloc(1, sizeof(*d));

	if (!d) {
		jf_fail(err, "%s: out of memory", path);
		return NULL;
	}
	if (jf_map_file(&d->file, path, err) < 0) {
		free(d);
		return NULL;
	}
	if (read_header(d, err) < 0) {
		jf_perf_data_close(d);
		return NULL;
	}
	read_cpuid(d);
	jf_perf_data_index_attrs(d);
	return d;
}

void jf_perf_data_close(struct jf_perf_data *d)
{
	if (!d)
		return;
	jf_unmap_file(&d->file);
	free(d->attrs);
	free(d->cpuid);
	free(d);
}

const char *jf_perf_data_path(const struct jf_perf_data *d)
{
	return d->file.path;
}

int jf_perf_data_cut(const struct jf_perf_data *d, uint64_t *at, uint64_t *missing)
{
	if (at)
		*at = d->cut_at;
	if (missing)
		*missing = d->cut_missing;
	return d->cut;
}

int jf_perf_data_cut_flow(const struct jf_perf_data *d, struct jf_flow *flow)
{
	if (!d->cut)
		return 0;
	memset(flow, 0, sizeof(*flow));
	flow->kind = JF_FLOW_LOST;
	flow->flags = JF_FLOW_IP_SUPPRESSED;
	flow->offset = d->cut_at;
	flow->u.lost.bytes = d->cut_missing;
	flow->u.lost.reason = JF_LOST_FILE_CUT;
	return 1;
}

int jf_perf_data_is_pipe(const struct jf_perf_data *d)
{
	return d->pipe;
}

void jf_perf_data_range(const struct jf_perf_data *d, uint64_t *begin, uint64_t *end)
{
	*begin = d->data_begin;
	*end = d->data_end;
}

size_t jf_perf_data_nattrs(const struct jf_perf_data *d)
{
	return d->nattrs;
}

const struct jf_perf_attr *jf_perf_data_attr(const struct jf_perf_data *d, size_t i)
{
	return i < d->nattrs ? &d->attrs[i] : NULL;
}

int jf_perf_data_feature(const struct jf_perf_data *d, unsigned feature,
			 const uint8_t **bytes, uint64_t *size, uint64_t *offset)
{
	if (feature >= JF_PERF_FEAT_MAX || !d->feat[feature].present)
		return 0;
	if (bytes)
		*bytes = d->file.data + d->feat[feature].offset;
	if (size)
		*size = d->feat[feature].size;
	if (offset)
		*offset = d->feat[feature].offset;
	return 1;
}

const char *jf_perf_data_cpuid(const struct jf_perf_data *d)
{
	return d->cpuid;
}

void jf_perf_data_release(const struct jf_perf_data *d, uint64_t offset, uint64_t size)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), from, to;

	if (!d->file.data || offset > d->file.size || size > d->file.size - offset)
		return;
	from = ((uintptr_t)d->file.data + offset + page - 1) & ~(page - 1);
	to = ((uintptr_t)d->file.data + offset + size) & ~(page - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}
