/* Whether the zone files can still change code bytes (jf_zone_image_code_settled), so
 * that a perf session may decode ahead of them with the fast path.
 *
 * A recorder writes a PATCH of the bytes it saw run wherever code runs for the first time
 * (JF_PATCH_OBSERVED, tools/recorder/record_code_changes.h), placed at that instruction:
 * code that first runs near the end of the trace (a loop's exit path) leaves such a record
 * pending until then, though it nearly always holds the bytes the runtime's own records
 * put there, and changes nothing when it applies (zone_image.c, patch). So the code is
 * settled once every other code change is applied and each observed patch still to apply
 * holds the image's bytes: nothing else changes the image, so none of them will. Each
 * stream's observed patches are indexed once, when the file is surveyed. */
#include <stdlib.h>

#include "zone_image_internal.h"

int jf_zone_settled_note(struct jf_zone_stream *s, const struct jf_zone_record *rec,
			 uint64_t ordinal)
{
	struct jf_zone_observed *v;

	if (rec->id == JF_JITDUMP_CODE_MOVE) {
		s->moves_end = ordinal + 1;
		return 0;
	}
	if (!jf_zone_changes_code(s, rec))
		return 0;
	if (rec->id != JF_ZONE_PATCH || !(rec->u.patch.flags & JF_PATCH_OBSERVED)) {
		s->runtime_changes_end = ordinal + 1;
		return 0;
	}
	if (s->nobserved == s->observed_cap) {
		size_t cap = s->observed_cap ? s->observed_cap * 2 : 64;

		v = realloc(s->observed, cap * sizeof(*v));
		if (!v)
			return -1;
		s->observed = v;
		s->observed_cap = cap;
	}
	v = &s->observed[s->nobserved++];
	v->ordinal = ordinal;
	v->addr = rec->u.patch.addr;
	v->size = rec->u.patch.size;
	v->bytes = rec->u.patch.bytes;
	return 0;
}

/* The first of s's observed patches at or after ordinal (nobserved if none). */
static size_t observed_from(const struct jf_zone_stream *s, uint64_t ordinal)
{
	size_t lo = 0, hi = s->nobserved;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->observed[mid].ordinal < ordinal)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether what is left to apply of s changes no code byte (given that no other stream's
 * records do). */
static int stream_settled(const struct jf_zone_image *zi, const struct jf_zone_stream *s)
{
	uint64_t first, end = s->runtime_changes_end;
	size_t i;

	if (!s->has_next ||
	    s->code_changes_applied >= s->code_changes + (s->has_ext ? 0 : s->code_moves))
		return 1;
	first = s->read_records - 1; /* s->next's ordinal */
	if (!s->has_ext && s->moves_end > end)
		end = s->moves_end;
	if (first < end)
		return 0;
	for (i = observed_from(s, first); i < s->nobserved; i++) {
		const struct jf_zone_observed *o = &s->observed[i];

		if (jf_zone_bytes_difference(zi->map, o->addr, o->bytes, o->size))
			return 0;
	}
	return 1;
}

int jf_zone_image_code_settled(const struct jf_zone_image *zi)
{
	size_t i;

	for (i = 0; i < zi->nstreams; i++)
		if (!stream_settled(zi, &zi->streams[i]))
			return 0;
	return 1;
}
