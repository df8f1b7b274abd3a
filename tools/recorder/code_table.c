/* Code bytes by address (code_table.h). */
#include "code_table.h"

#include <stdlib.h>

int jf_rec_code_table_init(struct jf_rec_code_table *t, unsigned bits)
{
	t->e = calloc((size_t)1 << bits, sizeof(*t->e));
	t->mask = ((size_t)1 << bits) - 1;
	t->used = 0;
	return t->e ? 0 : -1;
}

static size_t home(const struct jf_rec_code_table *t, uint64_t pc, uint32_t key)
{
	return (size_t)(((pc ^ ((uint64_t)key << 40)) * 0x9e3779b97f4a7c15ull) >> 20) & t->mask;
}

struct jf_rec_code_entry *jf_rec_code_table_find(struct jf_rec_code_table *t, uint64_t pc, uint32_t key,
					 int add)
{
	size_t i;

	if (!t->e)
		return NULL;
	for (i = home(t, pc, key); t->e[i].size; i = (i + 1) & t->mask)
		if (t->e[i].pc == pc && t->e[i].key == key)
			return &t->e[i];
	if (!add)
		return NULL;
	if ((t->used + 1) * 2 > t->mask + 1) {
		struct jf_rec_code_table bigger = { calloc((t->mask + 1) * 2, sizeof(*t->e)),
						(t->mask + 1) * 2 - 1, 0 };
		size_t k;

		if (!bigger.e)
			return NULL;
		for (k = 0; k <= t->mask; k++)
			if (t->e[k].size)
				*jf_rec_code_table_find(&bigger, t->e[k].pc, t->e[k].key, 1) = t->e[k];
		free(t->e);
		*t = bigger;
		return jf_rec_code_table_find(t, pc, key, 1);
	}
	t->used++;
	t->e[i].pc = pc;
	t->e[i].key = key;
	return &t->e[i];
}

void jf_rec_code_table_free(struct jf_rec_code_table *t)
{
	size_t i;

	if (!t->e)
		return;
	for (i = 0; i <= t->mask; i++)
		free(t->e[i].bytes);
	free(t->e);
	t->e = NULL;
}

uint64_t jf_rec_code_hash(const uint8_t *b, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}
