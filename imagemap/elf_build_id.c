/* The GNU build-id note of an ELF file, through libelf: the notes of PT_NOTE segments
 * (what a loaded image such as the vDSO keeps) and of SHT_NOTE sections. */
#include "jitflow/buildid_cache.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

enum { NT_GNU_BUILD_ID_TYPE = 3 };

static int from_data(Elf_Data *data, uint8_t id[20], size_t *size)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID_TYPE && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
		    nh.n_descsz <= 20) {
			memcpy(id, (const char *)data->d_buf + desc_off, nh.n_descsz);
			*size = nh.n_descsz;
			return 1;
		}
	}
	return 0;
}

int jf_elf_build_id(const char *path, uint8_t id[20], size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	Elf_Scn *scn = NULL;
	size_t i, nph = 0;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
				found = from_data(elf_getdata(scn, NULL), id, size);
		}
		if (!found && elf_getphdrnum(elf, &nph) == 0) {
			for (i = 0; !found && i < nph; i++) {
				GElf_Phdr ph;
				Elf_Data *d;

				if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
					continue;
				d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
							 ELF_T_NHDR);
				found = from_data(d, id, size);
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}
