/* The code bytes a decoder reads: sections of files (or of in-memory copies) placed at
 * virtual addresses. This is mechanism only; which files go where and when is the
 * imagemap's business (ELF segments, raw dumps, perf MMAP sideband, JIT code zones).
 *
 * Sections are file-backed so that libipt's image section cache, and its block cache, stay
 * effective; bytes without a file (a patched JIT region) are copied into an anonymous
 * in-memory file first. A section added over an existing range hides the older one there
 * (newest wins, as in libipt). */
#ifndef JITFLOW_CODEMAP_H
#define JITFLOW_CODEMAP_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_codemap;

struct jf_codemap *jf_codemap_new(void);
void jf_codemap_free(struct jf_codemap *map);

/* Map bytes [offset, offset + size) of the file at path to [vaddr, vaddr + size).
 * name (may be NULL: the path's base name) is what listings call the section. */
int jf_codemap_add_file(struct jf_codemap *map, const char *path, uint64_t offset,
			uint64_t size, uint64_t vaddr, const char *name,
			struct jf_error *err);

/* Map a copy of bytes at vaddr (kept in an anonymous in-memory file). */
int jf_codemap_add_bytes(struct jf_codemap *map, const void *bytes, size_t size,
			 uint64_t vaddr, const char *name, struct jf_error *err);

/* Unmap [vaddr, vaddr + size): sections inside are removed, sections overlapping it are
 * cut. Returns the number of sections touched. */
int jf_codemap_remove(struct jf_codemap *map, uint64_t vaddr, uint64_t size);

/* Copy up to size bytes at vaddr into buf, stopping at the end of the section that holds
 * vaddr. Returns the count copied, 0 if nothing is mapped at vaddr. */
size_t jf_codemap_read(struct jf_codemap *map, uint64_t vaddr, void *buf, size_t size);
/* The same from the sections alone: 0 where none holds vaddr, whatever fill would say. */
size_t jf_codemap_read_mapped(struct jf_codemap *map, uint64_t vaddr, void *buf, size_t size);

/* The name and start address of the section holding vaddr (NULL if none). */
const char *jf_codemap_lookup(struct jf_codemap *map, uint64_t vaddr, uint64_t *section_vaddr);
/* The path of the file whose bytes are at vaddr, and the offset of vaddr's byte in it
 * (NULL if no section holds vaddr; an in-memory copy's path is a /proc/self/fd one). */
const char *jf_codemap_file_at(struct jf_codemap *map, uint64_t vaddr, uint64_t *file_offset);

/* Where no section holds an address, fill is asked for its bytes (e.g. code a JIT's
 * record announces only later): it copies up to size bytes at vaddr into buf and returns
 * how many, 0 for none. size never reaches past the gap: the next section's bytes are
 * read from the section. It may not change the map. NULL removes it. */
typedef size_t (*jf_codemap_fill_fn)(void *ctx, uint64_t vaddr, void *buf, size_t size);
void jf_codemap_set_fill(struct jf_codemap *map, jf_codemap_fill_fn fill, void *ctx);

/* Who changes the map may say where it will change it from now on: pending answers
 * whether any change still to come may change a byte of [vaddr, vaddr + size) or put a
 * section edge inside it (1) or none will (0); one that writes the range as it reads now
 * changes nothing. It may answer 1 where nothing changes, never 0 where something will;
 * once 0 for a range, 0 for good. It may not change the map. NULL removes it. A cache of
 * decoded code that uses only bytes no change will touch stays exact whatever changes
 * (pt_fast.h). */
typedef int (*jf_codemap_pending_fn)(void *ctx, uint64_t vaddr, uint64_t size);
void jf_codemap_set_pending(struct jf_codemap *map, jf_codemap_pending_fn pending, void *ctx);
/* Whether the map has such an answer... */
int jf_codemap_tells_changes(const struct jf_codemap *map);
/* ...and what it says (1 without one). */
int jf_codemap_may_change(struct jf_codemap *map, uint64_t vaddr, uint64_t size);

/* Changes whenever a section is added or removed, so caches keyed on the bytes can tell
 * that they are stale. */
uint64_t jf_codemap_generation(const struct jf_codemap *map);

/* The counter jf_codemap_generation reads, for a consumer that checks it for every block
 * (one load instead of a call). Valid as long as the map. */
const uint64_t *jf_codemap_generation_counter(const struct jf_codemap *map);

/* Whether the bytes at [vaddr, vaddr + size) are still those of generation (an earlier
 * value of jf_codemap_generation): 1 when no change since touched them or the bytes next to
 * them and one section holds them all; 0 when one did, or when that is not known (only the
 * last 255 changes are kept), or some of them lie outside the sections. For caches of
 * decoded code that keep what a change left alone. */
int jf_codemap_unchanged_since(struct jf_codemap *map, uint64_t generation, uint64_t vaddr,
			       uint64_t size);

/* The addresses [*from, *to) whose bytes the change that made generation may have
 * changed: 1, or 0 when the map no longer knows (it keeps the last 256) or never made it. */
int jf_codemap_change(const struct jf_codemap *map, uint64_t generation, uint64_t *from,
		      uint64_t *to);

/* A map with the same sections, and caches of its own, for another thread to decode with
 * (a code map is not safe to share between threads). Maps with a fill callback are not
 * copied (NULL, message in err). */
struct jf_codemap *jf_codemap_clone(const struct jf_codemap *map, struct jf_error *err);

/* Number of sections. */
size_t jf_codemap_count(const struct jf_codemap *map);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
