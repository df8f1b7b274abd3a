/* Reads the program's ELF headers and symbols (see program_image.h). */
#include "program_image.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char marker_symbol[] = "jf_emitter_marker";

static void find_marker(struct jf_program_image *img, Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (name && !strcmp(name, marker_symbol) && sym.st_value) {
				img->marker_addr = sym.st_value;
				return;
			}
		}
	}
}

int jf_program_image_load(struct jf_program_image *img, const char *path,
			  struct jf_error *err)
{
	return jf_program_image_load_for(img, path, EM_X86_64, err);
}

int jf_program_image_load_for(struct jf_program_image *img, const char *path, int machine,
			      struct jf_error *err)
{
	GElf_Ehdr ehdr;
	size_t i, nphdr;
	Elf *elf;
	int fd, rc = 0, has_interp = 0;

	memset(img, 0, sizeof(*img));
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return jf_fail(err, "%s: cannot open: %m", path);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
	    elf_getphdrnum(elf, &nphdr)) {
		rc = jf_fail(err, "%s: offset 0: expected an ELF file", path);
		goto out;
	}
	if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != machine) {
		rc = jf_fail(err, "%s: offset 0: expected an %s ELF program", path,
			     machine == EM_X86_64 ? "x86-64" : "AArch64");
		goto out;
	}
	for (i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP) {
			size_t len = 0;
			char *raw = elf_rawfile(elf, &len);

			has_interp = 1;
			if (raw && ph.p_offset < len && ph.p_filesz < sizeof(img->interp) &&
			    ph.p_filesz <= len - ph.p_offset) {
				memcpy(img->interp, raw + ph.p_offset, ph.p_filesz);
				img->interp[ph.p_filesz] = '\0';
			}
		}
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    img->nsegments < JF_IMAGE_MAX_SEGMENTS) {
			struct jf_image_segment *s = &img->segments[img->nsegments++];
			uint64_t page = 4096, start = ph.p_vaddr & ~(page - 1);

			s->addr = start;
			s->len = ((ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1)) - start;
			s->pgoff = ph.p_offset & ~(page - 1);
			s->prot = PROT_EXEC | ((ph.p_flags & PF_R) ? PROT_READ : 0) |
				  ((ph.p_flags & PF_W) ? PROT_WRITE : 0);
		}
	}
	img->is_static_exec = ehdr.e_type == ET_EXEC && !has_interp;
	img->is_pie = ehdr.e_type == ET_DYN;
	img->entry = ehdr.e_entry;
	find_marker(img, elf);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}
