/* Looking a build-id up in a perf build-id cache (layout in jitflow/buildid_cache.h). */
#include "jitflow/buildid_cache.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int regular(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int jf_buildid_cache_find(const char *dir, const char *hex, const char *name, char *found,
			  size_t cap)
{
	char link[4096];
	const char *leaf = "elf";

	if (strlen(hex) < 3 || !strcmp(name, "[kernel.kallsyms]") ||
	    !strncmp(name, "[kernel.kallsyms]", 17))
		return 0;
	if (!strcmp(name, "[vdso]") || !strcmp(name, "[vdso32]") || !strcmp(name, "[vdsox32]"))
		leaf = "vdso";
	if (snprintf(link, sizeof(link), "%s/.build-id/%.2s/%s", dir, hex, hex + 2) >=
	    (int)sizeof(link))
		return 0;
	/* Old layout: the link is the file. */
	if (regular(link) && snprintf(found, cap, "%s", link) < (int)cap)
		return 1;
	return snprintf(found, cap, "%s/%s", link, leaf) < (int)cap && regular(found);
}
