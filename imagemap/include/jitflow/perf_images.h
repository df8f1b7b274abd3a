/* Code images from a perf.data file's sideband: the default hooks of a perf session
 * (jitflow/perf_session.h). One code map per process; executable MMAP/MMAP2 of regular
 * files are loaded as file sections at their recorded address; a child process (FORK of a
 * new pid) starts with a copy of its parent's mappings; exec (COMM with the exec flag)
 * empties the process's map. Files are looked up as perf looks for them: by build-id (the
 * recording's HEADER_BUILD_ID, or an MMAP2's own) in the build-id caches ([vdso]
 * included), then at their recorded path (under --symfs when given), then in the user's
 * image directories (DIR/full/path, then DIR/basename). A file found by name whose ELF
 * build-id differs from the recorded one is refused. What cannot be loaded (//anon,
 * [kernel.kallsyms], missing, refused or short files) is listed with the offset of the
 * record that mapped it and its build-id, for the command to warn about. */
#ifndef JITFLOW_PERF_IMAGES_H
#define JITFLOW_PERF_IMAGES_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/error.h"
#include "jitflow/perf_session.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_perf_images;

struct jf_perf_missing_image {
	char *name;               /* the file name as recorded */
	uint64_t record_offset;   /* file offset of the first MMAP record naming it */
	int32_t pid;
	uint64_t addr, len;
	uint64_t count;           /* how many MMAP records named it */
	char build_id[41];        /* hex, "" when the recording has none for it */
	char reason[300];         /* e.g. "not found (also looked in 2 image directories)" */
};

struct jf_perf_images *jf_perf_images_new(void);
void jf_perf_images_free(struct jf_perf_images *imgs);

/* Look for files that are not at their recorded path in dir too (--image-dir). */
int jf_perf_images_add_dir(struct jf_perf_images *imgs, const char *dir, struct jf_error *err);
/* Use file for mappings recorded under name (e.g. "[vdso]" -> a saved copy). */
int jf_perf_images_add_file(struct jf_perf_images *imgs, const char *name, const char *file,
			    struct jf_error *err);

/* Find files by build-id in this perf build-id cache (--buildid-dir, an unpacked perf
 * archive): looked at before the recorded path, as perf does. */
int jf_perf_images_add_buildid_dir(struct jf_perf_images *imgs, const char *dir,
				   struct jf_error *err);
/* Recorded paths lie under dir (perf's --symfs): /usr/lib/x is read as dir/usr/lib/x. */
int jf_perf_images_set_symfs(struct jf_perf_images *imgs, const char *dir,
			     struct jf_error *err);
/* The recording's build-id for files mapped under name (its HEADER_BUILD_ID): how they are
 * found in the caches, and checked when found by name (a mismatch is reported missing). */
int jf_perf_images_add_build_id(struct jf_perf_images *imgs, const char *name,
				const uint8_t *id, size_t size, struct jf_error *err);

/* Code of files with this base name is provided otherwise (a recording's saved code
 * pieces): their mappings load nothing and are not reported missing. */
int jf_perf_images_provided(struct jf_perf_images *imgs, const char *base_name,
			    struct jf_error *err);

/* Put every process's mappings into map (owned by the caller) instead of one map per
 * process: one address space, newest mapping wins, FORK and exec change nothing. This is
 * what a listing over a single code map needs (the jitflow command), and exact for the
 * usual recording of one process. Call before decoding. */
void jf_perf_images_use_one_map(struct jf_perf_images *imgs, struct jf_codemap *map);

/* Fill hooks so that a perf session uses these images. */
void jf_perf_images_hooks(struct jf_perf_images *imgs, struct jf_perf_session_hooks *hooks);

/* The code map of pid (made empty if new). */
struct jf_codemap *jf_perf_images_codemap(struct jf_perf_images *imgs, int32_t pid);

/* The ELF symbols of every file mapped so far, placed where it was mapped, into symtab
 * (files that are not ELF, such as jitdump files, are left out). Returns how many files
 * gave symbols, -1 when out of memory. */
struct jf_symtab;
int jf_perf_images_symbols(const struct jf_perf_images *imgs, struct jf_symtab *symtab);

/* Mappings loaded, and those that could not be. */
uint64_t jf_perf_images_loaded(const struct jf_perf_images *imgs);
size_t jf_perf_images_nmissing(const struct jf_perf_images *imgs);
const struct jf_perf_missing_image *jf_perf_images_missing(const struct jf_perf_images *imgs,
							   size_t i);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
