/* Finding a perf.data's files by build-id, as perf does: in build-id caches (perf
 * buildid-cache, ~/.debug by default), in `perf archive` tarballs, under a sysroot
 * (--symfs), and checking that a file found by name is the one that was recorded.
 *
 * Cache layout (perf's): DIR/.build-id/ab/cdef... (the hex id split after two digits) is a
 * symbolic link to DIR/<recorded path>/<hex id>/, which holds "elf" (a user file),
 * "vdso" ([vdso]) or "kallsyms" ([kernel.kallsyms], symbols only: no code). Older perf
 * linked DIR/.build-id/ab/cdef... to the file itself; both are read. */
#ifndef JITFLOW_BUILDID_CACHE_H
#define JITFLOW_BUILDID_CACHE_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file the cache at dir holds for (hex id, recorded name), in found (cap bytes):
 * 1 found, 0 not there. [kernel.kallsyms] entries are never returned (they hold no
 * code). */
int jf_buildid_cache_find(const char *dir, const char *hex, const char *name, char *found,
			  size_t cap);

/* The build-id note of an ELF file (NT_GNU_BUILD_ID): 1 with id/size set, 0 if the file is
 * not ELF or has no such note. */
int jf_elf_build_id(const char *path, uint8_t id[20], size_t *size);

/* A `perf archive` tarball (FILE.tar.bz2: the build-id cache entries of a recording)
 * unpacked with libarchive into a fresh temporary folder, which is a build-id cache to
 * look in. Entries that would land outside the folder are refused; total unpacked size
 * is bounded. jf_perf_archive_remove deletes the folder and what is in it. */
int jf_perf_archive_unpack(const char *archive, char *dir, size_t cap, struct jf_error *err);
void jf_perf_archive_remove(const char *dir);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
