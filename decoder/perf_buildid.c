/* Build-id entries of a perf.data file (see jitflow/perf_buildid.h for the layout). */
#include "jitflow/perf_buildid.h"
#include "perf_data_internal.h"

#include <stdlib.h>
#include <string.h>

enum {
	ENTRY_HEADER = 8 + 4 + 24,   /* record header, pid, build-id area */
	MISC_BUILD_ID_SIZE = 1 << 15,
	MISC_CPUMODE_MASK = 7,
};

static int add_entry(struct jf_perf_build_id **out, size_t *n, size_t *cap,
		     const struct jf_perf_build_id *e)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct jf_perf_build_id *v = realloc(*out, c * sizeof(*v));

		if (!v)
			return -1;
		*out = v;
		*cap = c;
	}
	(*out)[(*n)++] = *e;
	return 0;
}

static int parse_into(const uint8_t *bytes, uint64_t size, uint64_t base, const char *path,
		      struct jf_perf_build_id **out, size_t *n, size_t *cap,
		      struct jf_error *err)
{
	uint64_t at = 0;

	while (at < size) {
		struct jf_perf_build_id e;
		const uint8_t *p = bytes + at;
		uint16_t misc, esize;
		uint64_t name_len;

		if (size - at < ENTRY_HEADER)
			return jf_fail(err,
				       "%s: offset %llu: build-id entry cut short (%llu bytes left); "
				       "expected at least %d",
				       path, (unsigned long long)(base + at),
				       (unsigned long long)(size - at), ENTRY_HEADER);
		misc = (uint16_t)(p[4] | p[5] << 8);
		esize = (uint16_t)(p[6] | p[7] << 8);
		if (esize < ENTRY_HEADER || esize > size - at)
			return jf_fail(err,
				       "%s: offset %llu: build-id entry of %u bytes; expected %d to "
				       "%llu (what is left of the section)",
				       path, (unsigned long long)(base + at), esize, ENTRY_HEADER,
				       (unsigned long long)(size - at));
		memset(&e, 0, sizeof(e));
		e.offset = base + at;
		e.cpumode = misc & MISC_CPUMODE_MASK;
		e.pid = (int32_t)jf_perf_u32(p + 8);
		memcpy(e.id, p + 12, JF_BUILD_ID_MAX);
		e.size = JF_BUILD_ID_MAX;
		if ((misc & MISC_BUILD_ID_SIZE) && p[12 + JF_BUILD_ID_MAX] <= JF_BUILD_ID_MAX)
			e.size = p[12 + JF_BUILD_ID_MAX];
		name_len = esize - ENTRY_HEADER;
		if (!name_len || !memchr(p + ENTRY_HEADER, 0, name_len))
			return jf_fail(err,
				       "%s: offset %llu: build-id entry: the file name is not "
				       "NUL-terminated inside its %u bytes",
				       path, (unsigned long long)(base + at), esize);
		e.filename = (const char *)p + ENTRY_HEADER;
		if (add_entry(out, n, cap, &e) < 0)
			return jf_fail(err, "%s: out of memory", path);
		at += esize;
	}
	return 0;
}

int jf_perf_build_ids_parse(const uint8_t *bytes, uint64_t size, uint64_t base,
			    const char *path, struct jf_perf_build_id **out, size_t *n,
			    struct jf_error *err)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (parse_into(bytes, size, base, path, out, n, &cap, err) < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

int jf_perf_build_ids(const struct jf_perf_data *data, struct jf_perf_build_id **out,
		      size_t *n, struct jf_error *err)
{
	const char *path = jf_perf_data_path(data);
	struct jf_perf_cursor cur;
	struct jf_perf_record rec;
	const uint8_t *bytes;
	uint64_t size, offset;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	if (!jf_perf_data_is_pipe(data)) {
		if (!jf_perf_data_feature(data, JF_PERF_FEAT_BUILD_ID, &bytes, &size, &offset))
			return 0;
		return jf_perf_build_ids_parse(bytes, size, offset, path, out, n, err);
	}
	/* Pipe mode: a HEADER_FEATURE record may carry the section; each entry may also be a
	 * record of its own. */
	if (jf_perf_data_feature(data, JF_PERF_FEAT_BUILD_ID, &bytes, &size, &offset) &&
	    parse_into(bytes, size, offset, path, out, n, &cap, err) < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -1;
	}
	jf_perf_data_begin(data, &cur);
	while ((rc = jf_perf_data_next_header(data, &cur, &rec, err)) > 0) {
		if (rec.type != JF_PERF_RECORD_HEADER_BUILD_ID)
			continue;
		if (parse_into(rec.raw, rec.size, rec.offset, path, out, n, &cap, err) < 0) {
			rc = -1;
			break;
		}
	}
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}

void jf_build_id_hex(const uint8_t *id, size_t size, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (size > JF_BUILD_ID_MAX)
		size = JF_BUILD_ID_MAX;
	for (i = 0; i < size; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * size] = 0;
}

int jf_build_id_same(const uint8_t *a, size_t asize, const uint8_t *b, size_t bsize)
{
	size_t common = asize < bsize ? asize : bsize, i;

	if (!common || memcmp(a, b, common))
		return 0;
	for (i = common; i < asize; i++)
		if (a[i])
			return 0;
	for (i = common; i < bsize; i++)
		if (b[i])
			return 0;
	return 1;
}
