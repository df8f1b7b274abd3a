/* --buildid-dir, --archive, --symfs, --kernel: see cli_perf_files.h. */
#include "cli_perf_files.h"
#include "cli_inputs.h"

#include "jitflow/buildid_cache.h"
#include "jitflow/perf_buildid.h"
#include "jitflow/perf_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int jf_cli_perf_files_option(struct jf_cli_inputs *in, const char *opt, const char *val,
			     struct jf_error *err)
{
	if (!strcmp(opt, "--buildid-dir")) {
		in->buildid_dir_given = 1;
		return jf_perf_images_add_buildid_dir(in->perf_images, val, err) < 0 ? -1 : 1;
	}
	if (!strcmp(opt, "--archive")) {
		in->archive = val;
		return 1;
	}
	if (!strcmp(opt, "--symfs"))
		return jf_perf_images_set_symfs(in->perf_images, val, err) < 0 ? -1 : 1;
	if (!strcmp(opt, "--kernel")) {
		in->kernel = val;
		in->nimages++;
		return 1;
	}
	return 0;
}

/* The kernel's segments at their link addresses (its MMAP then needs nothing), once its
 * build-id is checked against the recording's [kernel.kallsyms] one. */
static int load_kernel(struct jf_cli_inputs *in, const struct jf_perf_build_id *ids,
		       size_t n, struct jf_error *err)
{
	uint8_t have[JF_BUILD_ID_MAX];
	char a[41], b[41];
	size_t size, i;

	for (i = 0; i < n; i++) {
		if (strcmp(ids[i].filename, "[kernel.kallsyms]") ||
		    !jf_elf_build_id(in->kernel, have, &size) ||
		    jf_build_id_same(have, size, ids[i].id, ids[i].size))
			continue;
		jf_build_id_hex(have, size, a);
		jf_build_id_hex(ids[i].id, ids[i].size, b);
		return jf_fail(err, "--kernel %s: build-id %s, but the recording's kernel has %s",
			       in->kernel, a, b);
	}
	if (jf_load_elf_spec(in->map, in->symtab, in->kernel, err) < 0 ||
	    jf_perf_images_provided(in->perf_images, "[kernel.kallsyms]", err) < 0 ||
	    jf_perf_images_provided(in->perf_images, "[kernel.kallsyms]_text", err) < 0)
		return -1;
	return 0;
}

int jf_cli_load_kernel(struct jf_cli_inputs *in, struct jf_error *err)
{
	return in->kernel ? load_kernel(in, NULL, 0, err) : 0;
}

static int add_build_ids(struct jf_cli_inputs *in, struct jf_error *err)
{
	struct jf_perf_data *d = jf_perf_data_open(in->perf_path, err);
	struct jf_perf_build_id *ids = NULL;
	size_t n = 0, i;
	int rc = -1;

	if (!d)
		return -1;
	if (jf_perf_build_ids(d, &ids, &n, err) == 0) {
		rc = 0;
		for (i = 0; i < n && rc == 0; i++)
			rc = jf_perf_images_add_build_id(in->perf_images, ids[i].filename,
							 ids[i].id, ids[i].size, err);
		if (rc == 0 && in->kernel)
			rc = load_kernel(in, ids, n, err);
	}
	free(ids);
	jf_perf_data_close(d);
	return rc;
}

int jf_cli_perf_files_prepare(struct jf_cli_inputs *in, struct jf_error *err)
{
	char beside[4200], cache[4200];
	const char *home = getenv("HOME"), *archive;
	struct stat st;

	if (add_build_ids(in, err) < 0)
		return -1;
	/* perf archive names its tarball after the perf.data: use it when it is there. */
	snprintf(beside, sizeof(beside), "%s.tar.bz2", in->perf_path);
	archive = in->archive;
	if (!archive && stat(beside, &st) == 0 && S_ISREG(st.st_mode))
		archive = beside;
	if (archive &&
	    (jf_perf_archive_unpack(archive, in->archive_dir, sizeof(in->archive_dir), err) < 0 ||
	     jf_perf_images_add_buildid_dir(in->perf_images, in->archive_dir, err) < 0))
		return -1;
	if (!in->buildid_dir_given && home && *home) {
		snprintf(cache, sizeof(cache), "%s/.debug", home);
		if (jf_perf_images_add_buildid_dir(in->perf_images, cache, err) < 0)
			return -1;
	}
	return 0;
}

void jf_cli_perf_files_fini(struct jf_cli_inputs *in)
{
	if (in->archive_dir[0])
		jf_perf_archive_remove(in->archive_dir);
	in->archive_dir[0] = 0;
}
