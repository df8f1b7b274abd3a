/* The table of distinct call stacks (call_stack_table.h): open addressing over the rows,
 * keyed by (parent row, thread, top frame). */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "call_stack_table.h"

static uint64_t key_hash(const struct call_stack_key *k)
{
	uint64_t h = k->parent * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)(uint32_t)k->tid << 32 | (uint32_t)k->region) * 0xc2b2ae3d27d4eb4full;
	h ^= (k->addr + k->kind) * 0x165667b19e3779f9ull;
	return h ^ (h >> 29);
}

static int key_is(const struct jf_call_stack *s, const struct call_stack_key *k)
{
	return s->parent == k->parent && s->tid == k->tid && s->region == k->region &&
	       s->kind == k->kind && s->addr == k->addr;
}

static int grow_slots(struct call_stack_table *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024, i;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -1;
	for (i = 0; i < t->n; i++) {
		struct call_stack_key k = { t->rows[i].parent, t->rows[i].tid,
				       t->rows[i].region, t->rows[i].kind,
				       t->rows[i].addr };
		size_t j = key_hash(&k) & (n - 1);

		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

uint32_t jf_call_stack_intern(struct call_stack_table *t, const struct call_stack_key *k)
{
	struct jf_call_stack *s;
	size_t j;

	if ((t->n + 1) * 2 > t->nslots && grow_slots(t) < 0)
		return JF_NO_STACK;
	for (j = key_hash(k) & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
		if (key_is(&t->rows[t->slots[j] - 1], k))
			return t->slots[j] - 1;
	if (t->n >= JF_NO_STACK - 1 ||
	    jf_grow((void **)&t->rows, &t->cap, t->n, sizeof(*t->rows)) < 0)
		return JF_NO_STACK;
	s = &t->rows[t->n];
	memset(s, 0, sizeof(*s));
	s->parent = k->parent;
	s->depth = k->parent == JF_NO_STACK ? 1 : t->rows[k->parent].depth + 1;
	s->tid = k->tid;
	s->kind = k->kind;
	s->region = k->region;
	s->addr = k->addr;
	t->slots[j] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

void jf_call_stack_table_free(struct call_stack_table *t)
{
	free(t->rows);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
