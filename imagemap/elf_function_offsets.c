/* Where named functions' code is in an ELF file (images.h: jf_elf_function_offsets): a
 * symbol's address turned into a file offset through the PT_LOAD segment that holds it,
 * so that a caller can find the functions in a mapping of the file at any address. */
#include "jitflow/images.h"

#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "elf_functions.h"

/* vaddr's offset in the file, 0 when no PT_LOAD segment's file contents hold it. */
static uint64_t file_offset_of(Elf *elf, size_t nphdr, uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz)
			return ph.p_offset + (vaddr - ph.p_vaddr);
	}
	return 0;
}

struct wanted {
	Elf *elf;
	size_t nphdr;
	const char *const *names;
	size_t n;
	uint64_t *offsets;
	int found;
};

static int match(void *ctx, const char *name, uint64_t addr, uint64_t size)
{
	struct wanted *w = ctx;
	size_t k;

	(void)size;
	for (k = 0; k < w->n; k++) {
		if (w->offsets[k] || strcmp(name, w->names[k]) != 0)
			continue;
		w->offsets[k] = file_offset_of(w->elf, w->nphdr, addr);
		w->found += w->offsets[k] != 0;
	}
	return 0;
}

int jf_elf_function_offsets(const char *path, const char *const *names, size_t n,
			    uint64_t *offsets, struct jf_error *err)
{
	struct wanted w = { NULL, 0, names, n, offsets, 0 };
	int fd;

	memset(offsets, 0, n * sizeof(*offsets));
	w.elf = jf_elf_open(path, &fd, &w.nphdr, err);
	if (!w.elf)
		return -1;
	jf_elf_each_function(w.elf, match, &w);
	jf_elf_close(w.elf, fd);
	return w.found;
}
