/* Zone files (jit-PID.dump) as files: which paths are one, and reading and writing them
 * whole, for the recorders that copy them into a recording (record_zones.c for x86-64,
 * etm_zones.c for AArch64). */
#ifndef JITFLOW_RECORDER_ZONE_FILES_H
#define JITFLOW_RECORDER_ZONE_FILES_H

#include <stddef.h>
#include <stdint.h>

/* Whether path names a zone file: jit-*.dump, as perf names a jitdump file. */
int jf_zone_file_name(const char *path);

/* The whole file (malloc'ed; zone files hold code and records, so they grow with the code
 * image), or NULL with errno set. */
uint8_t *jf_zone_file_read(const char *path, size_t *size);

/* Writes data to the open fd until done; on failure (a full disk: a short write, then
 * ENOSPC) -1 with errno set and *written the bytes that did go out. */
int jf_zone_file_write(int fd, const uint8_t *data, size_t size, size_t *written);

#endif
