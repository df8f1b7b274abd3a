/* Build-ids in a perf.data file: the HEADER_BUILD_ID feature section (perf record writes it
 * at the end of a normal file) and, in pipe mode, the HEADER_BUILD_ID records (type 67).
 * Each entry names a file as its MMAP records do ("/usr/bin/x", "[vdso]",
 * "[kernel.kallsyms]") and the build-id perf saw for it, which is how perf finds the file
 * in its build-id cache (~/.debug/.build-id/ab/cdef...) and in a `perf archive` tarball.
 *
 * An entry (perf's build_id_event): the 8-byte record header (type, misc, size: the whole
 * entry), pid (s32), 24 bytes of build-id (20 used; with misc bit 15 set, byte 20 holds the
 * id's real size), then the NUL-padded file name up to size. */
#ifndef JITFLOW_PERF_BUILDID_H
#define JITFLOW_PERF_BUILDID_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"
#include "jitflow/perf_data.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { JF_BUILD_ID_MAX = 20, JF_PERF_RECORD_HEADER_BUILD_ID = 67 };

struct jf_perf_build_id {
	int32_t pid;              /* -1 for user files of any process; the kernel's pid */
	uint16_t cpumode;         /* misc & 7: 1 kernel, 2 user, 3 hypervisor, 4 guest kernel */
	uint8_t size;             /* bytes of id used (20 for SHA-1, 16 for MD5 ids) */
	uint8_t id[JF_BUILD_ID_MAX];
	const char *filename;     /* NUL-terminated inside the file mapping */
	uint64_t offset;          /* file offset of the entry */
};

/* Every build-id entry of the file into a malloc'd array (*out, *n; both 0/NULL when the
 * file has none). A malformed entry is an error naming its offset. */
int jf_perf_build_ids(const struct jf_perf_data *data, struct jf_perf_build_id **out,
		      size_t *n, struct jf_error *err);

/* Parse entries from bytes[0, size) (located at file offset base, for messages). */
int jf_perf_build_ids_parse(const uint8_t *bytes, uint64_t size, uint64_t base,
			    const char *path, struct jf_perf_build_id **out, size_t *n,
			    struct jf_error *err);

/* Lower-case hex of the id (2 * size characters) into out (at least 41 bytes). */
void jf_build_id_hex(const uint8_t *id, size_t size, char *out);

/* Whether two ids name the same file: equal over the shorter length, and the longer one
 * only zeros beyond it (perf pads 16-byte ids to 20 with zeros). */
int jf_build_id_same(const uint8_t *a, size_t asize, const uint8_t *b, size_t bsize);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
