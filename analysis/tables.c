/* Small containers for the analysis: a u64 -> index map, array growth and sorting. */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

static size_t slot_of(const struct jf_index_map *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & m->mask;
}

int jf_index_map_get(const struct jf_index_map *m, uint64_t key, uint32_t *value)
{
	size_t i;

	if (!m->keys)
		return 0;
	for (i = slot_of(m, key); m->values[i]; i = (i + 1) & m->mask) {
		if (m->keys[i] == key) {
			*value = m->values[i] - 1;
			return 1;
		}
	}
	return 0;
}

static int rehash(struct jf_index_map *m, size_t cap)
{
	struct jf_index_map bigger = { 0 };
	size_t i;

	bigger.keys = calloc(cap, sizeof(*bigger.keys));
	bigger.values = calloc(cap, sizeof(*bigger.values));
	if (!bigger.keys || !bigger.values) {
		free(bigger.keys);
		free(bigger.values);
		return -1;
	}
	bigger.mask = cap - 1;
	for (i = 0; m->keys && i <= m->mask; i++) {
		size_t j;

		if (!m->values[i])
			continue;
		for (j = slot_of(&bigger, m->keys[i]); bigger.values[j]; j = (j + 1) & bigger.mask)
			;
		bigger.keys[j] = m->keys[i];
		bigger.values[j] = m->values[i];
		bigger.used++;
	}
	jf_index_map_free(m);
	*m = bigger;
	return 0;
}

int jf_index_map_put(struct jf_index_map *m, uint64_t key, uint32_t value)
{
	size_t i;

	if ((!m->keys || (m->used + 1) * 2 > m->mask + 1) &&
	    rehash(m, m->keys ? (m->mask + 1) * 2 : 64) < 0)
		return -1;
	for (i = slot_of(m, key); m->values[i]; i = (i + 1) & m->mask) {
		if (m->keys[i] == key) {
			m->values[i] = value + 1;
			return 0;
		}
	}
	m->keys[i] = key;
	m->values[i] = value + 1;
	m->used++;
	return 0;
}

void jf_index_map_clear(struct jf_index_map *m)
{
	if (!m->keys)
		return;
	memset(m->values, 0, (m->mask + 1) * sizeof(*m->values));
	m->used = 0;
}

void jf_index_map_free(struct jf_index_map *m)
{
	free(m->keys);
	free(m->values);
	memset(m, 0, sizeof(*m));
}

int jf_grow(void **array, size_t *cap, size_t n, size_t elem)
{
	size_t newcap;
	void *p;

	if (n < *cap)
		return 0;
	newcap = *cap ? *cap * 2 : 16;
	while (newcap <= n)
		newcap *= 2;
	p = realloc(*array, newcap * elem);
	if (!p)
		return -1;
	memset((char *)p + *cap * elem, 0, (newcap - *cap) * elem);
	*array = p;
	*cap = newcap;
	return 0;
}

uint64_t jf_hash_string(const char *s, uint64_t seed)
{
	uint64_t h = 0xcbf29ce484222325ull ^ seed;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

void jf_sort_rows(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}
