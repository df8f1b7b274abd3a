/* The growing table under the fast path's caches (pt_fast_table.h). */
#include "pt_fast_table.h"

#include <stdlib.h>
#include <sys/mman.h>

struct jf_fast_retired {
	struct jf_fast_retired *next;
	void *mem;
};

enum { FIRST_LOG2 = 9, GROWTH_LOG2 = 3, LINE = 64 };

/* A huge page (x86-64's transparent huge pages). */
#define HUGE_PAGE ((uintptr_t)2 << 20)

/* Ask for huge pages under the whole huge pages of [mem, mem + size). A lookup in a
 * table of many megabytes lands on a page of its own each time: with 4 KiB pages every
 * lookup of the TNT path table (16 MiB) also missed the TLB, and with 2 MiB pages its
 * page walk is gone (hs-small's stat took 8% less time). Advice only: where the kernel
 * gives none (THP off), the table is as it was. */
static void advise_huge_pages(void *mem, size_t size)
{
	uintptr_t from = ((uintptr_t)mem + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t to = ((uintptr_t)mem + size) & ~(HUGE_PAGE - 1);

#ifdef MADV_HUGEPAGE
	if (to > from)
		(void)madvise((void *)from, to - from, MADV_HUGEPAGE);
#else
	(void)from;
	(void)to;
#endif
}

/* n zeroed entries from a line's start in *mem (NULL if out of memory). calloc, not an
 * aligned allocation and memset: a large table's pages stay untouched, and so out of the
 * process's memory, until an entry on them is used (a huge page's 2 MiB at once). */
static void *alloc_slots(size_t n, size_t entry_size, void **mem)
{
	uintptr_t at;

	*mem = calloc(n * entry_size + LINE - 1, 1);
	if (!*mem)
		return NULL;
	advise_huge_pages(*mem, n * entry_size + LINE - 1);
	at = ((uintptr_t)*mem + LINE - 1) & ~(uintptr_t)(LINE - 1);
	return (void *)at;
}

int jf_fast_table_init(struct jf_fast_table *t, size_t entry_size, unsigned max_log2)
{
	t->entry_size = entry_size;
	t->max_log2 = max_log2;
	t->log2 = max_log2 < FIRST_LOG2 ? max_log2 : FIRST_LOG2;
	t->shift = 64 - t->log2;
	t->conflicts = 0;
	t->retired = NULL;
	t->slots = alloc_slots((size_t)1 << t->log2, entry_size, &t->mem);
	return t->slots ? 0 : -1;
}

void jf_fast_table_fini(struct jf_fast_table *t)
{
	while (t->retired) {
		struct jf_fast_retired *r = t->retired;

		t->retired = r->next;
		free(r->mem);
		free(r);
	}
	free(t->mem);
	t->slots = t->mem = NULL;
}

void *jf_fast_table_grow(struct jf_fast_table *t, size_t *n)
{
	unsigned log2 = t->log2 + GROWTH_LOG2 < t->max_log2 ? t->log2 + GROWTH_LOG2 : t->max_log2;
	void *mem;
	void *slots = alloc_slots((size_t)1 << log2, t->entry_size, &mem);
	struct jf_fast_retired *r = malloc(sizeof(*r));
	void *old = t->slots;

	t->conflicts = 0;
	if (!slots || !r) {
		free(mem);
		free(r);
		t->max_log2 = t->log2;
		return NULL;
	}
	*n = (size_t)1 << t->log2;
	r->mem = t->mem;
	r->next = t->retired;
	t->retired = r;
	t->slots = slots;
	t->mem = mem;
	t->log2 = log2;
	t->shift = 64 - log2;
	return old;
}

void *jf_fast_path_cache_new(struct jf_fast_blocks *blocks, size_t entry_size,
			     unsigned max_log2, size_t self_size)
{
	struct jf_fast_path_cache *c = calloc(1, self_size);

	if (!c)
		return NULL;
	if (jf_fast_table_init(&c->table, entry_size, max_log2) < 0) {
		free(c);
		return NULL;
	}
	c->blocks = blocks;
	return c;
}

void jf_fast_path_cache_free(struct jf_fast_path_cache *c)
{
	if (!c)
		return;
	jf_fast_table_fini(&c->table);
	free(c);
}
