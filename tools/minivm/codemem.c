/* minivm's code memory: one arena mapped once, filled from the start, and reset as a whole
 * when the JIT flushes its traces, so that later traces reuse the same addresses. Pages are
 * writable only while the JIT writes them (W^X). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vm.h"

struct mvm_codemem {
	uint8_t *base;
	size_t mapped;   /* whole pages */
	size_t size;     /* usable bytes, as asked (small sizes make flushes easy to test) */
	size_t used;
};

struct mvm_codemem *mvm_codemem_new(size_t size)
{
	struct mvm_codemem *cm = calloc(1, sizeof(*cm));
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!cm)
		return NULL;
	cm->size = size;
	cm->mapped = (size + page - 1) / page * page;
	cm->base = mmap(NULL, cm->mapped, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cm->base == MAP_FAILED) {
		perror("minivm: mapping code memory");
		free(cm);
		return NULL;
	}
	return cm;
}

/* 16-byte aligned like a function; 0 when full. */
uint64_t mvm_codemem_alloc(struct mvm_codemem *cm, size_t size)
{
	size_t at = (cm->used + 15) & ~(size_t)15;

	if (size > cm->size || at > cm->size - size)
		return 0;
	cm->used = at + size;
	return (uint64_t)(uintptr_t)(cm->base + at);
}

int mvm_codemem_write(struct mvm_codemem *cm, uint64_t addr, const void *bytes, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = ((uintptr_t)addr + size + page - 1) & ~(page - 1);

	if (addr < (uint64_t)(uintptr_t)cm->base || addr + size > (uint64_t)(uintptr_t)cm->base + cm->size)
		return -1;
	if (mprotect((void *)start, end - start, PROT_READ | PROT_WRITE))
		return -1;
	memcpy((void *)(uintptr_t)addr, bytes, size);
	/* AArch64's instruction cache does not follow data writes (x86's does: a no-op there) */
	__builtin___clear_cache((char *)(uintptr_t)addr, (char *)(uintptr_t)(addr + size));
	return mprotect((void *)start, end - start, PROT_READ | PROT_EXEC);
}

size_t mvm_codemem_used(const struct mvm_codemem *cm)
{
	return cm->used;
}

void mvm_codemem_reset(struct mvm_codemem *cm)
{
	if (cm)
		cm->used = 0;
}

void mvm_codemem_free(struct mvm_codemem *cm)
{
	if (!cm)
		return;
	munmap(cm->base, cm->mapped);
	free(cm);
}
