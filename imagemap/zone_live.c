/* The live extension regions of a zone file, sorted by address, so that a load over code
 * that was never freed is caught (struct jf_live_set). Grows with the code image only. */
#include <stdlib.h>
#include <string.h>

#include "zone_internal.h"

/* Index of the first range whose start is >= start. */
static size_t lower_bound(const struct jf_live_set *s, uint64_t start)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int jf_live_insert(struct jf_live_set *s, uint64_t start, uint64_t end,
		   struct jf_live_range *hit)
{
	size_t i = lower_bound(s, start);

	if (i > 0 && s->v[i - 1].end > start) {
		*hit = s->v[i - 1];
		return 1;
	}
	if (i < s->n && s->v[i].start < end) {
		*hit = s->v[i];
		return 1;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct jf_live_range *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
	s->v[i].start = start;
	s->v[i].end = end;
	s->n++;
	return 0;
}

size_t jf_live_remove(struct jf_live_set *s, uint64_t start, uint64_t end)
{
	size_t i = lower_bound(s, start), j = i;

	while (j < s->n && s->v[j].start < end)
		j++;
	if (j == i)
		return 0; /* nothing to remove (s->v may still be NULL) */
	memmove(&s->v[i], &s->v[j], (s->n - j) * sizeof(*s->v));
	s->n -= j - i;
	return j - i;
}

uint64_t jf_live_take(struct jf_live_set *s, uint64_t start)
{
	size_t i = lower_bound(s, start);
	uint64_t end;

	if (i >= s->n || s->v[i].start != start)
		return 0;
	end = s->v[i].end;
	memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(*s->v));
	s->n--;
	return end;
}

void jf_live_free(struct jf_live_set *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}
