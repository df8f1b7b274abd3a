/* Loading code images into a code map: raw memory dumps and ELF files, with the symbols
 * that listings use to name addresses. */
#ifndef JITFLOW_IMAGES_H
#define JITFLOW_IMAGES_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Symbols of every ELF loaded, for naming addresses in listings. */
struct jf_symtab;

struct jf_symtab *jf_symtab_new(void);
void jf_symtab_free(struct jf_symtab *tab);
int jf_symtab_add(struct jf_symtab *tab, uint64_t addr, uint64_t size, const char *name);
/* The symbol containing addr (or the nearest one below it, within the same image), and
 * the offset of addr from its start. NULL if none. */
const char *jf_symtab_lookup(struct jf_symtab *tab, uint64_t addr, uint64_t *offset);
/* The address of a symbol by name (0 if absent). */
uint64_t jf_symtab_find(struct jf_symtab *tab, const char *name);

/* `--raw FILE[:FROM[-TO]]:BASE`, as libipt's ptxed reads it: bytes FROM (default 0) up to
 * TO (exclusive; default the end of the file) of FILE, placed at address BASE. */
int jf_load_raw_spec(struct jf_codemap *map, const char *spec, struct jf_error *err);

/* `--elf FILE[:BASE]`: the PT_LOAD segments of FILE, at their own addresses or moved so
 * that the lowest one starts at BASE. Symbols go to symtab when it is not NULL. */
int jf_load_elf_spec(struct jf_codemap *map, struct jf_symtab *symtab, const char *spec,
		     struct jf_error *err);

/* The same with the parts already separated; bias is added to every address. */
int jf_load_elf(struct jf_codemap *map, struct jf_symtab *symtab, const char *path,
		int64_t bias, int has_base, uint64_t base, struct jf_error *err);

/* Only the symbols of the ELF file at path, whose bytes at file offset pgoff were mapped
 * at addr (how perf's MMAP records place a file). */
int jf_load_elf_symbols(struct jf_symtab *symtab, const char *path, uint64_t pgoff,
			uint64_t addr, struct jf_error *err);

/* Where the functions named names[0..n) (symbol names as the ELF file's .symtab and
 * .dynsym spell them, mangled for C++) begin in the file at path: offsets[i] is the file
 * offset of names[i]'s first byte, 0 when the file has no such function or no PT_LOAD
 * segment holds it. Returns how many were found, or -1 (err) when path is not a readable
 * ELF file. */
int jf_elf_function_offsets(const char *path, const char *const *names, size_t n,
			    uint64_t *offsets, struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
