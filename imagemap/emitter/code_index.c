/* code address -> jitdump code_index (see struct jf_code_index_table). */
#include <stdlib.h>

#include "emitter_internal.h"

enum { EMPTY = 0 };
#define DELETED UINT64_MAX

JF_EMIT_CODE
static size_t slot_of(uint64_t addr, size_t cap)
{
	addr ^= addr >> 33;
	addr *= 0xff51afd7ed558ccdull;
	addr ^= addr >> 33;
	return (size_t)addr & (cap - 1);
}

/* Rehash without the deleted slots; double only when live entries need it, so freeing
 * and reloading code forever does not grow the table. */
JF_EMIT_CODE
static int grow(struct jf_code_index_table *t)
{
	size_t live = 0, cap, i;
	uint64_t *addr, *index;

	for (i = 0; i < t->cap; i++)
		live += t->addr[i] != EMPTY && t->addr[i] != DELETED;
	cap = t->cap ? t->cap : 256;
	if ((live + 1) * 2 > cap)
		cap *= 2;
	addr = calloc(cap, sizeof(*addr));
	index = calloc(cap, sizeof(*index));

	if (!addr || !index) {
		free(addr);
		free(index);
		return -1;
	}
	for (i = 0; i < t->cap; i++) {
		size_t s;

		if (t->addr[i] == EMPTY || t->addr[i] == DELETED)
			continue;
		for (s = slot_of(t->addr[i], cap); addr[s] != EMPTY; s = (s + 1) & (cap - 1))
			;
		addr[s] = t->addr[i];
		index[s] = t->index[i];
	}
	free(t->addr);
	free(t->index);
	t->addr = addr;
	t->index = index;
	t->cap = cap;
	t->used = live;
	return 0;
}

/* Address 0 and UINT64_MAX are never code addresses we can track; they are ignored. */
JF_EMIT_CODE
int jf_code_index_put(struct jf_code_index_table *t, uint64_t addr, uint64_t index)
{
	size_t s;

	if (addr == EMPTY || addr == DELETED)
		return 0;
	if ((t->used + 1) * 4 > t->cap * 3 && grow(t))
		return -1;
	for (s = slot_of(addr, t->cap); t->addr[s] != EMPTY; s = (s + 1) & (t->cap - 1)) {
		if (t->addr[s] == addr) {
			t->index[s] = index;
			return 0;
		}
	}
	t->addr[s] = addr;
	t->index[s] = index;
	t->used++;
	return 0;
}

JF_EMIT_CODE
static size_t find(const struct jf_code_index_table *t, uint64_t addr)
{
	size_t s;

	if (!t->cap || addr == EMPTY || addr == DELETED)
		return SIZE_MAX;
	for (s = slot_of(addr, t->cap); t->addr[s] != EMPTY; s = (s + 1) & (t->cap - 1)) {
		if (t->addr[s] == addr)
			return s;
	}
	return SIZE_MAX;
}

JF_EMIT_CODE
int jf_code_index_get(const struct jf_code_index_table *t, uint64_t addr, uint64_t *index)
{
	size_t s = find(t, addr);

	if (s == SIZE_MAX)
		return 0;
	*index = t->index[s];
	return 1;
}

JF_EMIT_CODE
void jf_code_index_del(struct jf_code_index_table *t, uint64_t addr)
{
	size_t s = find(t, addr);

	if (s != SIZE_MAX)
		t->addr[s] = DELETED; /* keeps probe chains intact; counted in used until grow */
}

JF_EMIT_CODE
void jf_code_index_free(struct jf_code_index_table *t)
{
	free(t->addr);
	free(t->index);
	t->addr = t->index = NULL;
	t->cap = t->used = 0;
}
