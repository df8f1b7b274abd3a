/* Code that runs before its record applies.
 *
 * Runtimes that buffer their jitdump writes (V8, JVMTI agents) write a function's
 * CODE_LOAD some time after the function first runs, so a record applied by its time can
 * come too late: the trace then executes an address where the image has no code yet. The
 * code there can only be what the next record loading that address says it is, so the
 * code map asks here for such bytes (jf_codemap_set_fill) and they are served from the
 * pending record. Each stream's CODE_LOADs are indexed once, when the file is surveyed
 * (memory grows with the number of code loads, not with the trace). */
#include <stdlib.h>
#include <string.h>

#include "zone_image_internal.h"

int jf_zone_early_note(struct jf_zone_stream *s, const struct jf_zone_record *rec,
		       uint64_t ordinal)
{
	struct jf_zone_load *v;

	if (rec->id != JF_JITDUMP_CODE_LOAD || !rec->u.code_load.size)
		return 0;
	if (s->nloads == s->loads_cap) {
		size_t cap = s->loads_cap ? s->loads_cap * 2 : 64;

		v = realloc(s->loads, cap * sizeof(*v));
		if (!v)
			return -1;
		s->loads = v;
		s->loads_cap = cap;
	}
	v = &s->loads[s->nloads++];
	v->ordinal = ordinal;
	v->addr = rec->u.code_load.addr;
	v->size = rec->u.code_load.size;
	v->code = rec->u.code_load.code;
	return 0;
}

size_t jf_zone_early_fill(void *ctx, uint64_t vaddr, void *buf, size_t size)
{
	struct jf_zone_image *zi = ctx;
	size_t i, j;

	for (i = 0; i < zi->nstreams; i++) {
		const struct jf_zone_stream *s = &zi->streams[i];

		if (!s->has_next)
			continue;
		/* The first load at vaddr among the records not applied yet. */
		for (j = 0; j < s->nloads; j++) {
			const struct jf_zone_load *l = &s->loads[j];
			uint64_t n;

			if (l->ordinal < s->read_records - 1 || vaddr < l->addr || vaddr - l->addr >= l->size)
				continue;
			n = l->size - (vaddr - l->addr);
			if (n > size)
				n = size;
			memcpy(buf, l->code + (vaddr - l->addr), (size_t)n);
			zi->stats.early_code++;
			return (size_t)n;
		}
	}
	return 0;
}
