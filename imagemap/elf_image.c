/* ELF images through libelf: PT_LOAD segments into the code map, symbols into a table. */
#include "jitflow/images.h"

#include <fcntl.h>
#include <inttypes.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "elf_functions.h"

int jf_elf_each_function(Elf *elf, jf_elf_function_fn fn, void *ctx)
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
			int rc;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (name && *name && (rc = fn(ctx, name, sym.st_value, sym.st_size)) != 0)
				return rc;
		}
	}
	return 0;
}

struct symbols_to_add {
	struct jf_symtab *symtab;
	int64_t bias;
};

static int add_symbol(void *ctx, const char *name, uint64_t addr, uint64_t size)
{
	struct symbols_to_add *to = ctx;

	return jf_symtab_add(to->symtab, addr + (uint64_t)to->bias, size, name) < 0 ? -1 : 0;
}

static int add_symbols(Elf *elf, struct jf_symtab *symtab, int64_t bias)
{
	struct symbols_to_add to = { symtab, bias };

	return jf_elf_each_function(elf, add_symbol, &to);
}

Elf *jf_elf_open(const char *path, int *fd, size_t *nphdr, struct jf_error *err)
{
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		jf_fail(err, "libelf: %s", elf_errmsg(-1));
		return NULL;
	}
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		jf_fail(err, "%s: cannot open ELF file", path);
		return NULL;
	}
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		jf_fail(err, "%s: not an ELF file (at offset 0: expected the ELF magic)", path);
	else if (elf_getphdrnum(elf, nphdr) < 0)
		jf_fail(err, "%s: bad ELF program headers: %s", path, elf_errmsg(-1));
	else
		return elf;
	jf_elf_close(elf, *fd);
	return NULL;
}

void jf_elf_close(Elf *elf, int fd)
{
	if (elf)
		elf_end(elf);
	close(fd);
}

int jf_load_elf(struct jf_codemap *map, struct jf_symtab *symtab, const char *path,
		int64_t bias, int has_base, uint64_t base, struct jf_error *err)
{
	size_t i, nphdr;
	uint64_t lowest = UINT64_MAX;
	int loaded = 0, rc = -1;
	int fd;
	Elf *elf = jf_elf_open(path, &fd, &nphdr, err);

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
	if (symtab && add_symbols(elf, symtab, bias) < 0) {
		jf_fail(err, "%s: out of memory reading symbols", path);
		goto out;
	}
	rc = 0;
out:
	jf_elf_close(elf, fd);
	return rc;
}

/* The segment that holds file offset pgoff says where the file's addresses went: bytes at
 * pgoff were mapped at addr. */
int jf_load_elf_symbols(struct jf_symtab *symtab, const char *path, uint64_t pgoff,
			uint64_t addr, struct jf_error *err)
{
	size_t i, nphdr;
	int found = 0, rc = 0;
	int64_t bias = 0;
	Elf *elf;
	int fd;

	elf = jf_elf_open(path, &fd, &nphdr, err);
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
	if (!found)
		rc = jf_fail(err, "%s: no loadable segment holds file offset %" PRIu64, path,
			     pgoff);
	else if (add_symbols(elf, symtab, bias) < 0)
		rc = jf_fail(err, "%s: out of memory reading symbols", path);
	jf_elf_close(elf, fd);
	return rc;
}
