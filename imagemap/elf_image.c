/* ELF images through libelf: PT_LOAD segments into the code map, symbols into a table. */
#include "jitflow/images.h"

#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

static int add_symbols(Elf *elf, struct jf_symtab *symtab, int64_t bias)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t i, count;

		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM) ||
		    !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		count = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (name && *name &&
			    jf_symtab_add(symtab, sym.st_value + (uint64_t)bias, sym.st_size, name) < 0)
				return -1;
		}
	}
	return 0;
}

/* The ELF file at path, read through libelf (its descriptor in *fd, its number of program
 * headers in *nphdr); NULL with err. */
static Elf *open_elf(const char *path, int *fd, size_t *nphdr, struct jf_error *err)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return jf_fail(err, "libelf: %s", elf_errmsg(-1)), NULL;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return jf_fail(err, "%s: cannot open ELF file", path), NULL;
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		jf_fail(err, "%s: not an ELF file (at offset 0: expected the ELF magic)", path);
		if (elf)
			elf_end(elf);
		close(*fd);
		return NULL;
	}
	if (elf_getphdrnum(elf, nphdr) < 0) {
		jf_fail(err, "%s: bad ELF program headers: %s", path, elf_errmsg(-1));
		elf_end(elf);
		close(*fd);
		return NULL;
	}
	return elf;
}

/* Add elf's symbols, moved by bias, to symtab (when not NULL); then close elf and fd. */
static int symbols_and_close(Elf *elf, int fd, struct jf_symtab *symtab, int64_t bias,
			     const char *path, struct jf_error *err)
{
	int rc = 0;

	if (symtab && add_symbols(elf, symtab, bias) < 0)
		rc = jf_fail(err, "%s: out of memory reading symbols", path);
	elf_end(elf);
	close(fd);
	return rc;
}

int jf_load_elf(struct jf_codemap *map, struct jf_symtab *symtab, const char *path,
		int64_t bias, int has_base, uint64_t base, struct jf_error *err)
{
	size_t i, nphdr;
	uint64_t lowest = UINT64_MAX;
	int loaded = 0, rc = -1;
	Elf *elf;
	int fd;

	elf = open_elf(path, &fd, &nphdr, err);
	if (!elf)
		return -1;
	for (i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < lowest)
			lowest = ph.p_vaddr;
	}
	if (has_base && lowest != UINT64_MAX)
		bias = (int64_t)(base - lowest);
	for (i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			jf_fail(err, "%s: program header %zu unreadable: %s", path, i,
				elf_errmsg(-1));
			goto out;
		}
		if (ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (jf_codemap_add_file(map, path, ph.p_offset, ph.p_filesz,
					ph.p_vaddr + (uint64_t)bias, NULL, err) < 0)
			goto out;
		loaded++;
	}
	if (!loaded) {
		jf_fail(err, "%s: no loadable (PT_LOAD) segment with file contents", path);
		goto out;
	}
	return symbols_and_close(elf, fd, symtab, bias, path, err);
out:
	elf_end(elf);
	close(fd);
	return rc;
}

/* The segment that holds file offset pgoff says where the file's addresses went: bytes at
 * pgoff were mapped at addr. */
int jf_load_elf_symbols(struct jf_symtab *symtab, const char *path, uint64_t pgoff,
			uint64_t addr, struct jf_error *err)
{
	size_t i, nphdr;
	int found = 0;
	int64_t bias = 0;
	Elf *elf;
	int fd;

	elf = open_elf(path, &fd, &nphdr, err);
	if (!elf)
		return -1;
	for (i = 0; i < nphdr && !found; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    pgoff < ph.p_offset || pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		bias = (int64_t)(addr - (ph.p_vaddr + (pgoff - ph.p_offset)));
		found = 1;
	}
	if (!found) {
		jf_fail(err, "%s: no loadable segment holds file offset %" PRIu64, path, pgoff);
		elf_end(elf);
		close(fd);
		return -1;
	}
	return symbols_and_close(elf, fd, symtab, bias, path, err);
}
