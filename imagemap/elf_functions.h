/* Opening an ELF file and walking its function symbols (.symtab and .dynsym), for the
 * readers that look at them: elf_image.c (segments, symbols for listings) and
 * elf_function_offsets.c (functions by name). */
#ifndef JITFLOW_ELF_FUNCTIONS_H
#define JITFLOW_ELF_FUNCTIONS_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"

/* path opened with libelf and its program headers counted (*nphdr): the Elf, to be given
 * back with jf_elf_close(elf, *fd); NULL with err naming the file and what is wrong. */
Elf *jf_elf_open(const char *path, int *fd, size_t *nphdr, struct jf_error *err);
void jf_elf_close(Elf *elf, int fd);

/* One function symbol: its name (never empty), address and size. A nonzero answer stops
 * the walk. */
typedef int (*jf_elf_function_fn)(void *ctx, const char *name, uint64_t addr, uint64_t size);

/* Calls fn for every function symbol with an address and a name; returns fn's first
 * nonzero answer, 0 when it saw them all. */
int jf_elf_each_function(Elf *elf, jf_elf_function_fn fn, void *ctx);

#endif
