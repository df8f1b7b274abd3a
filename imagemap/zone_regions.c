/* The table of live JIT regions, sorted by address, and a ring of the last ones freed so
 * that an error at a freed address can say what used to be there. */
#include <stdlib.h>
#include <string.h>

#include "zone_image_internal.h"

static size_t first_ending_after(const struct jf_zone_regions *rs, uint64_t addr)
{
	size_t lo = 0, hi = rs->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rs->live[mid].addr + rs->live[mid].size <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct jf_zone_region *jf_zone_regions_find(struct jf_zone_regions *rs, uint64_t addr)
{
	size_t i = first_ending_after(rs, addr);

	if (i < rs->n && rs->live[i].addr <= addr)
		return &rs->live[i];
	return NULL;
}

const struct jf_zone_region *jf_zone_regions_find_freed(const struct jf_zone_regions *rs,
							 uint64_t addr)
{
	size_t k, n = rs->nfreed < JF_ZONE_FREED_KEPT ? rs->nfreed : JF_ZONE_FREED_KEPT;

	for (k = 1; k <= n; k++) {
		const struct jf_zone_region *r = &rs->freed[(rs->nfreed - k) % JF_ZONE_FREED_KEPT];

		if (r->addr <= addr && addr - r->addr < r->size)
			return r;
	}
	return NULL;
}

static void remember_freed(struct jf_zone_regions *rs, const struct jf_zone_region *r)
{
	rs->freed[rs->nfreed % JF_ZONE_FREED_KEPT] = *r;
	rs->nfreed++;
}

size_t jf_zone_regions_retire(struct jf_zone_regions *rs, uint64_t addr, uint64_t size)
{
	size_t i = first_ending_after(rs, addr), j = i, k;

	while (j < rs->n && rs->live[j].addr < addr + size)
		j++;
	if (j == i)
		return 0;
	for (k = i; k < j; k++)
		remember_freed(rs, &rs->live[k]);
	memmove(&rs->live[i], &rs->live[j], (rs->n - j) * sizeof(*rs->live));
	rs->n -= j - i;
	return j - i;
}

struct jf_zone_region *jf_zone_regions_insert(struct jf_zone_regions *rs,
					      const struct jf_zone_region *r)
{
	size_t i;

	jf_zone_regions_retire(rs, r->addr, r->size);
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		struct jf_zone_region *v = realloc(rs->live, cap * sizeof(*v));

		if (!v)
			return NULL;
		rs->live = v;
		rs->cap = cap;
	}
	i = first_ending_after(rs, r->addr);
	memmove(&rs->live[i + 1], &rs->live[i], (rs->n - i) * sizeof(*rs->live));
	rs->live[i] = *r;
	rs->n++;
	return &rs->live[i];
}

int jf_zone_regions_take(struct jf_zone_regions *rs, uint64_t addr, struct jf_zone_region *out)
{
	size_t i = first_ending_after(rs, addr);

	if (i >= rs->n || rs->live[i].addr != addr)
		return 0;
	*out = rs->live[i];
	memmove(&rs->live[i], &rs->live[i + 1], (rs->n - i - 1) * sizeof(*rs->live));
	rs->n--;
	return 1;
}

void jf_zone_regions_fini(struct jf_zone_regions *rs)
{
	free(rs->live);
	memset(rs, 0, sizeof(*rs));
}
