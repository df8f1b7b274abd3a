/* The growing table under the fast path's caches (pt_fast_table.h). */
#include "pt_fast_table.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

struct jf_fast_retired {
	struct jf_fast_retired *next;
	void *mem;
	size_t mapped;
};

enum { FIRST_LOG2 = 9, GROWTH_LOG2 = 3, LINE = 64, MAP_MIN = 64 << 10 };

/* A huge page (x86-64's transparent huge pages). */
#define HUGE_PAGE ((size_t)2 << 20)

/* Fault in the pages of a new mapping for writing now: a cache's first touch of a slot is
 * a read (is it taken?), which maps the zero page and faults again at the write, flushing
 * the other threads' TLBs each time (`stat -j 16` spent 14% of its time in those
 * flushes). Where the kernel cannot (before Linux 5.14), the pages fault as they are used. */
static void populate(void *mem, size_t size)
{
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
	(void)madvise(mem, size, MADV_POPULATE_WRITE);
}

/* A zeroed mapping of at least bytes, on a huge page's boundary in whole huge pages where it
 * is at least half of one (then with the advice to back it with them): NULL where it could
 * not be mapped, else its size in *mapped. */
static void *map_slots(size_t bytes, size_t *mapped)
{
	size_t align = bytes >= HUGE_PAGE / 2 ? HUGE_PAGE : (size_t)sysconf(_SC_PAGESIZE);
	size_t size = (bytes + align - 1) & ~(align - 1);
	size_t slack = align > (size_t)sysconf(_SC_PAGESIZE) ? align : 0;
	char *map = mmap(NULL, size + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	char *from;

	if (map == MAP_FAILED)
		return NULL;
	from = (char *)(((uintptr_t)map + align - 1) & ~(uintptr_t)(align - 1));
	/* The slack before and after the aligned pages goes back. */
	if (from > map)
		munmap(map, (size_t)(from - map));
	if (map + size + slack > from + size)
		munmap(from + size, (size_t)(map + size + slack - (from + size)));
#ifdef MADV_HUGEPAGE
	if (slack)
		(void)madvise(from, size, MADV_HUGEPAGE);
#endif
	*mapped = size;
	return from;
}

/* n zeroed entries from a line's start in *mem (NULL if out of memory), *mapped its size
 * where it is a mapping of its own (else 0: calloc's). A table is grown into only when it
 * is in heavy use: one of 64 KiB or more then is mapped and faulted in at once (populate).
 * A lookup in a table of a megabyte or more lands on a page of its own each time: with 4
 * KiB pages it also missed the TLB, and each thread of `stat -j N` faulted in every page
 * of its tables one by one (a payload table of 1.7 MiB, 425 faults): such a table is
 * mapped in huge pages (map_slots), at first too; where the kernel gives none (THP off), it
 * is as calloc's was, its untouched pages out of the process's memory. */
static void *alloc_slots(size_t n, size_t entry_size, int grown, void **mem, size_t *mapped)
{
	size_t bytes = n * entry_size;
	uintptr_t at;

	*mapped = 0;
	/* (A mapping starts on a page's boundary, so on a line's.) */
	if (bytes >= HUGE_PAGE / 2 || (grown && bytes >= MAP_MIN)) {
		void *map = map_slots(bytes, mapped);

		if (map) {
			if (grown)
				populate(map, *mapped);
			*mem = map;
			return map;
		}
	}
	*mem = calloc(bytes + LINE - 1, 1);
	if (!*mem)
		return NULL;
	at = ((uintptr_t)*mem + LINE - 1) & ~(uintptr_t)(LINE - 1);
	return (void *)at;
}

static void free_slots(void *mem, size_t mapped)
{
	if (mapped)
		munmap(mem, mapped);
	else
		free(mem);
}

int jf_fast_table_init(struct jf_fast_table *t, size_t entry_size, unsigned max_log2)
{
	t->entry_size = entry_size;
	t->max_log2 = max_log2;
	t->log2 = max_log2 < FIRST_LOG2 ? max_log2 : FIRST_LOG2;
	t->shift = 64 - t->log2;
	t->conflicts = 0;
	t->retired = NULL;
	t->slots = alloc_slots((size_t)1 << t->log2, entry_size, 0, &t->mem, &t->mapped);
	return t->slots ? 0 : -1;
}

void jf_fast_table_fini(struct jf_fast_table *t)
{
	while (t->retired) {
		struct jf_fast_retired *r = t->retired;

		t->retired = r->next;
		free_slots(r->mem, r->mapped);
		free(r);
	}
	free_slots(t->mem, t->mapped);
	t->slots = t->mem = NULL;
	t->mapped = 0;
}

void *jf_fast_table_grow(struct jf_fast_table *t, size_t *n)
{
	unsigned log2 = t->log2 + GROWTH_LOG2 < t->max_log2 ? t->log2 + GROWTH_LOG2 : t->max_log2;
	void *mem;
	size_t mapped;
	void *slots = alloc_slots((size_t)1 << log2, t->entry_size, 1, &mem, &mapped);
	struct jf_fast_retired *r = malloc(sizeof(*r));
	void *old = t->slots;

	t->conflicts = 0;
	if (!slots || !r) {
		if (slots)
			free_slots(mem, mapped);
		free(r);
		t->max_log2 = t->log2;
		return NULL;
	}
	*n = (size_t)1 << t->log2;
	r->mem = t->mem;
	r->mapped = t->mapped;
	r->next = t->retired;
	t->retired = r;
	t->slots = slots;
	t->mem = mem;
	t->mapped = mapped;
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
