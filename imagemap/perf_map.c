/* perf-PID.map reader (jitflow/perf_map.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/mapped_file.h"
#include "jitflow/perf_map.h"

struct jf_perf_map_reader {
	struct jf_mapped_file file;
	int mapped;
	char *name;
	size_t pos;
	uint64_t line;
	char buf[JF_PERF_MAP_NAME_MAX + 1];
};

static int finish(struct jf_perf_map_reader *r, struct jf_perf_map_reader **out,
		  const char *name, struct jf_error *err)
{
	r->name = strdup(name);
	if (!r->name) {
		jf_perf_map_close(r);
		return jf_fail(err, "%s: out of memory", name);
	}
	*out = r;
	return 0;
}

int jf_perf_map_open(struct jf_perf_map_reader **out, const char *path, struct jf_error *err)
{
	struct jf_perf_map_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return jf_fail(err, "%s: out of memory", path);
	if (jf_map_file(&r->file, path, err)) {
		free(r);
		return -1;
	}
	r->mapped = 1;
	return finish(r, out, path, err);
}

int jf_perf_map_open_memory(struct jf_perf_map_reader **out, const void *data, size_t size,
			    const char *name, struct jf_error *err)
{
	struct jf_perf_map_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return jf_fail(err, "%s: out of memory", name);
	r->file.data = data;
	r->file.size = size;
	return finish(r, out, name ? name : "(memory)", err);
}

void jf_perf_map_close(struct jf_perf_map_reader *r)
{
	if (!r)
		return;
	if (r->mapped)
		jf_unmap_file(&r->file);
	free(r->name);
	free(r);
}

/* A hex number (optional 0x) at *p, ending at a space; advances *p past it. */
static int parse_hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	*v = 0;
	for (; s < end && *s != ' '; s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		if (digits >= 16)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	if (!digits)
		return -1;
	*p = s;
	return 0;
}

int jf_perf_map_next(struct jf_perf_map_reader *r, struct jf_perf_map_entry *e,
		     struct jf_error *err)
{
	const char *base = (const char *)r->file.data, *line, *end, *p, *nl;
	size_t len;

	for (;;) {
		if (r->pos >= r->file.size)
			return 0;
		line = base + r->pos;
		nl = memchr(line, '\n', r->file.size - r->pos);
		end = nl ? nl : base + r->file.size;
		e->offset = r->pos;
		e->line = ++r->line;
		r->pos = (size_t)(end - base) + (nl ? 1 : 0);
		if (end > line && end[-1] == '\r')
			end--;
		if (end > line)
			break;
	}
	p = line;
	if (parse_hex(&p, end, &e->start) || p >= end || *p++ != ' ' ||
	    parse_hex(&p, end, &e->size) || p >= end || *p++ != ' ')
		return jf_fail(err, "%s:%" PRIu64 " (offset %" PRIu64 "): expected 'START SIZE "
			       "NAME' with START and SIZE in hex", r->name, e->line, e->offset);
	if (e->start + e->size < e->start)
		return jf_fail(err, "%s:%" PRIu64 " (offset %" PRIu64 "): range 0x%" PRIx64
			       " + 0x%" PRIx64 " wraps around the address space", r->name,
			       e->line, e->offset, e->start, e->size);
	len = (size_t)(end - p);
	if (len > JF_PERF_MAP_NAME_MAX)
		return jf_fail(err, "%s:%" PRIu64 " (offset %" PRIu64 "): name of %zu bytes is "
			       "longer than %d", r->name, e->line, e->offset, len,
			       JF_PERF_MAP_NAME_MAX);
	memcpy(r->buf, p, len);
	r->buf[len] = 0;
	e->name = r->buf;
	return 1;
}
