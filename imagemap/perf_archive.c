/* `perf archive` tarballs, unpacked with libarchive into a temporary build-id cache.
 * perf writes PERF.DATA.tar.bz2 with the .build-id/ links and the files they point to
 * (relative links inside the tarball); unpacking them keeps that layout, so the folder is
 * read like any build-id cache (buildid_cache.c). */
#define _XOPEN_SOURCE 700
#include "jitflow/buildid_cache.h"

#include <archive.h>
#include <archive_entry.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Far above a real archive (a kernel's kallsyms and a few libraries), far below a disk. */
#define UNPACKED_MAX (8ull << 30)

/* Only relative names that stay inside the folder. */
static int safe_name(const char *name)
{
	const char *p = name;

	if (!name || !*name || name[0] == '/')
		return 0;
	while (p) {
		if (!strncmp(p, "..", 2) && (p[2] == '/' || p[2] == 0))
			return 0;
		p = strchr(p, '/');
		if (p)
			p++;
	}
	return 1;
}

static int entry_error(struct archive *a, const char *archive, const char *what,
		       const char *name, struct jf_error *err)
{
	return jf_fail(err, "%s: entry '%s': %s%s%s", archive, name ? name : "?", what,
		       a ? ": " : "", a ? archive_error_string(a) : "");
}

static int unpack(struct archive *in, struct archive *out, const char *archive,
		  const char *dir, struct jf_error *err)
{
	struct archive_entry *e;
	unsigned long long total = 0;
	char path[4096];
	int rc;

	while ((rc = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
		char name[1024];
		const char *hard = archive_entry_hardlink(e);
		const char *sym = archive_entry_symlink(e);
		mode_t type = archive_entry_filetype(e);

		/* A copy: setting the entry's path below frees the string it gave. */
		snprintf(name, sizeof(name), "%s",
			 archive_entry_pathname(e) ? archive_entry_pathname(e) : "");
		if (!safe_name(name))
			return entry_error(NULL, archive, "path outside the archive's folder",
					   name, err);
		if (type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK)
			continue; /* devices, fifos: never part of a build-id cache */
		/* The kernel's entry is its symbol table (kallsyms), no code: megabytes to
		 * unpack for nothing. */
		if (!strncmp(name, "[kernel.kallsyms]/", 18))
			continue;
		if (sym && sym[0] == '/')
			return entry_error(NULL, archive, "absolute symbolic link", name, err);
		if (archive_entry_size(e) > 0)
			total += (unsigned long long)archive_entry_size(e);
		if (total > UNPACKED_MAX)
			return entry_error(NULL, archive, "archive unpacks to more than 8 GiB",
					   name, err);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		archive_entry_set_pathname(e, path);
		if (hard) {
			if (!safe_name(hard))
				return entry_error(NULL, archive, "hard link outside the folder",
						   name, err);
			snprintf(path, sizeof(path), "%s/%s", dir, hard);
			archive_entry_set_hardlink(e, path);
		}
		if (archive_write_header(out, e) < ARCHIVE_WARN)
			return entry_error(out, archive, "cannot unpack", name, err);
		if (type == AE_IFREG && archive_entry_size(e) > 0) {
			const void *buf;
			size_t size;
			la_int64_t off;
			int r;

			while ((r = archive_read_data_block(in, &buf, &size, &off)) == ARCHIVE_OK)
				if (archive_write_data_block(out, buf, size, off) < ARCHIVE_WARN)
					return entry_error(out, archive, "cannot write", name, err);
			if (r != ARCHIVE_EOF)
				return entry_error(in, archive, "corrupt data", name, err);
		}
		if (archive_write_finish_entry(out) < ARCHIVE_WARN)
			return entry_error(out, archive, "cannot finish", name, err);
	}
	if (rc != ARCHIVE_EOF)
		return jf_fail(err, "%s: not a readable tar archive (expected perf archive's "
			       "FILE.tar.bz2): %s", archive, archive_error_string(in));
	return 0;
}

int jf_perf_archive_unpack(const char *archive, char *dir, size_t cap, struct jf_error *err)
{
	const char *tmp = getenv("TMPDIR");
	struct archive *in, *out;
	int rc;

	if (snprintf(dir, cap, "%s/jitflow-archive-XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
		    (int)cap ||
	    !mkdtemp(dir))
		return jf_fail(err, "%s: cannot make a temporary folder to unpack it", archive);
	in = archive_read_new();
	out = archive_write_disk_new();
	if (!in || !out) {
		archive_read_free(in);
		archive_write_free(out);
		jf_perf_archive_remove(dir);
		dir[0] = 0;
		return jf_fail(err, "%s: out of memory", archive);
	}
	archive_read_support_filter_all(in);
	archive_read_support_format_tar(in);
	/* Names are checked above (relative, no ".."), then put under dir: absolute. */
	archive_write_disk_set_options(out, ARCHIVE_EXTRACT_SECURE_NODOTDOT |
						    ARCHIVE_EXTRACT_SECURE_SYMLINKS);
	if (archive_read_open_filename(in, archive, 1 << 16) != ARCHIVE_OK)
		rc = jf_fail(err, "%s: not a readable tar archive (expected perf archive's "
			     "FILE.tar.bz2): %s", archive, archive_error_string(in));
	else
		rc = unpack(in, out, archive, dir, err);
	archive_read_free(in);
	archive_write_free(out);
	if (rc < 0) {
		jf_perf_archive_remove(dir);
		dir[0] = 0;
	}
	return rc;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void jf_perf_archive_remove(const char *dir)
{
	if (dir && *dir)
		nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
