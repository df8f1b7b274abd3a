/* libFuzzer target: the ELF readers behind --elf, --kernel, --sysroot/--symfs and the
 * build-id lookups, on arbitrary bytes: the file loaded into a code map (program headers,
 * segments, symbol tables) as an executable and as a shared object at a base, its symbols
 * alone placed as a perf mapping of file offset 0x1000 would place them, its build-id
 * note read, and functions looked up by name for their file offsets. libelf parses; what
 * jitflow does with what libelf returns (segment
 * bounds, symbol names, note lengths) is what this looks at. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "../../decoder/fuzz/fuzz_input_file.h"
#include "jitflow/buildid_cache.h"
#include "jitflow/codemap.h"
#include "jitflow/images.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void load(const char *path, int has_base, uint64_t base)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_symtab *symtab = jf_symtab_new();
	struct jf_error err;
	uint64_t offset;

	if (map && symtab && jf_load_elf(map, symtab, path, 0, has_base, base, &err) == 0)
		(void)jf_symtab_lookup(symtab, base + 0x1000, &offset);
	jf_symtab_free(symtab);
	jf_codemap_free(map);
}

static void load_symbols(const char *path)
{
	struct jf_symtab *symtab = jf_symtab_new();
	struct jf_error err;
	uint64_t offset;

	if (symtab && jf_load_elf_symbols(symtab, path, 0x1000, 0x555555555000ull, &err) == 0)
		(void)jf_symtab_lookup(symtab, 0x555555556000ull, &offset);
	jf_symtab_free(symtab);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	uint8_t id[20];
	size_t idsize;
	int fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	load(path, 0, 0);
	load(path, 1, 0x7f0000000000ull);
	load_symbols(path);
	(void)jf_elf_build_id(path, id, &idsize);
	{
		static const char *const names[] = { "main", "_start", "f" };
		uint64_t offsets[3];
		struct jf_error err;

		(void)jf_elf_function_offsets(path, names, 3, offsets, &err);
	}
	close(fd);
	return 0;
}
