/* A sorted symbol table for naming addresses in listings. */
#include "jitflow/images.h"

#include <stdlib.h>
#include <string.h>

struct symbol {
	uint64_t addr, size;
	char *name;
};

struct jf_symtab {
	struct symbol *sym;
	size_t count, cap;
	int sorted;
};

struct jf_symtab *jf_symtab_new(void)
{
	return calloc(1, sizeof(struct jf_symtab));
}

void jf_symtab_free(struct jf_symtab *tab)
{
	size_t i;

	if (!tab)
		return;
	for (i = 0; i < tab->count; i++)
		free(tab->sym[i].name);
	free(tab->sym);
	free(tab);
}

int jf_symtab_add(struct jf_symtab *tab, uint64_t addr, uint64_t size, const char *name)
{
	if (tab->count == tab->cap) {
		size_t cap = tab->cap ? tab->cap * 2 : 256;
		struct symbol *sym = realloc(tab->sym, cap * sizeof(*sym));

		if (!sym)
			return -1;
		tab->sym = sym;
		tab->cap = cap;
	}
	tab->sym[tab->count].name = strdup(name);
	if (!tab->sym[tab->count].name)
		return -1;
	tab->sym[tab->count].addr = addr;
	tab->sym[tab->count].size = size;
	tab->count++;
	tab->sorted = 0;
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

const char *jf_symtab_lookup(struct jf_symtab *tab, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi;

	if (!tab || !tab->count)
		return NULL;
	if (!tab->sorted) {
		qsort(tab->sym, tab->count, sizeof(*tab->sym), by_addr);
		tab->sorted = 1;
	}
	hi = tab->count;
	/* The last symbol starting at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tab->sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	lo--;
	/* Sized symbols only cover their size; unsized ones reach the next symbol. */
	if (tab->sym[lo].size && addr - tab->sym[lo].addr >= tab->sym[lo].size)
		return NULL;
	if (offset)
		*offset = addr - tab->sym[lo].addr;
	return tab->sym[lo].name;
}

uint64_t jf_symtab_find(struct jf_symtab *tab, const char *name)
{
	size_t i;

	for (i = 0; tab && i < tab->count; i++) {
		if (!strcmp(tab->sym[i].name, name))
			return tab->sym[i].addr;
	}
	return 0;
}
