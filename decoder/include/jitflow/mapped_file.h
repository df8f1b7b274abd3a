/* Read-only views of input files. Traces are mapped, never copied whole, so memory does not
 * grow with trace length (the kernel pages them in and out as decoding streams through). */
#ifndef JITFLOW_MAPPED_FILE_H
#define JITFLOW_MAPPED_FILE_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"

struct jf_mapped_file {
	const uint8_t *data; /* NULL for an empty file */
	size_t size;
	char *path;
};

/* Map the whole file read-only. Fails with "PATH: <reason>". */
int jf_map_file(struct jf_mapped_file *file, const char *path, struct jf_error *err);
void jf_unmap_file(struct jf_mapped_file *file);

/* Tell the kernel the mapping is read front to back (larger read-ahead, early reclaim). */
void jf_mapped_file_sequential(const struct jf_mapped_file *file);

/* Let the kernel drop the whole pages of [data + from, data + to) of a file mapping (read
 * again from the file if touched later), so that resident memory does not grow with the
 * part of a trace already decoded. */
void jf_mapped_release(const uint8_t *data, uint64_t from, uint64_t to);

#pragma GCC visibility pop

#endif
