/* Parsing of the --raw and --elf image options (ptxed's syntax). */
#include "jitflow/images.h"
#include "jitflow/mapped_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Split "REST:NUMBER" at the last ':' when what follows is a number. */
static int split_number(char *arg, uint64_t *value)
{
	char *sep = strrchr(arg, ':'), *end;

	if (!sep || !sep[1])
		return 0;
	errno = 0;
	*value = strtoull(sep + 1, &end, 0);
	if (errno || *end)
		return 0;
	*sep = 0;
	return 1;
}

/* Split "FILE:FROM[-TO]" when the part after the last ':' is a range. */
static int split_range(char *arg, uint64_t *from, uint64_t *to, int *has_to)
{
	char *sep = strrchr(arg, ':'), *end;

	*has_to = 0;
	if (!sep || !sep[1])
		return 0;
	errno = 0;
	*from = strtoull(sep + 1, &end, 0);
	if (errno || end == sep + 1)
		return 0;
	if (*end == '-') {
		const char *t = end + 1;

		*to = strtoull(t, &end, 0);
		if (errno || end == t)
			return -1;
		*has_to = 1;
	}
	if (*end)
		return *has_to ? -1 : 0;
	*sep = 0;
	return 1;
}

int jf_load_raw_spec(struct jf_codemap *map, const char *spec, struct jf_error *err)
{
	char *arg = strdup(spec);
	uint64_t base, from = 0, to = 0, size;
	int has_to = 0, rc;
	struct jf_mapped_file probe;

	if (!arg)
		return jf_fail(err, "out of memory");
	if (!split_number(arg, &base)) {
		free(arg);
		return jf_fail(err, "--raw %s: expected FILE[:FROM[-TO]]:BASE (BASE missing)", spec);
	}
	rc = split_range(arg, &from, &to, &has_to);
	if (rc < 0 || (has_to && to <= from)) {
		free(arg);
		return jf_fail(err, "--raw %s: expected a file range FROM-TO with FROM < TO", spec);
	}
	if (has_to) {
		size = to - from;
	} else {
		/* Up to the end of the file: find its size. */
		if (jf_map_file(&probe, arg, err) < 0) {
			free(arg);
			return -1;
		}
		size = probe.size > from ? probe.size - from : 0;
		jf_unmap_file(&probe);
		if (!size) {
			jf_fail(err, "%s: nothing to load at file offset 0x%llx", arg,
				(unsigned long long)from);
			free(arg);
			return -1;
		}
	}
	rc = jf_codemap_add_file(map, arg, from, size, base, NULL, err);
	free(arg);
	return rc;
}

int jf_load_elf_spec(struct jf_codemap *map, struct jf_symtab *symtab, const char *spec,
		     struct jf_error *err)
{
	char *arg = strdup(spec);
	uint64_t base = 0;
	int has_base, rc;

	if (!arg)
		return jf_fail(err, "out of memory");
	has_base = split_number(arg, &base);
	rc = jf_load_elf(map, symtab, arg, 0, has_base, base, err);
	free(arg);
	return rc;
}
