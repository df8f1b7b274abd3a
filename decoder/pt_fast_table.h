/* Internal: the growing table under the fast Intel PT path's block and payload caches.
 *
 * A direct-mapped table of fixed-size entries that starts small and grows eightfold while
 * entries of the current code evict each other. A short trace runs a few hundred blocks and
 * need not clear a large table (fuzz_pt_decode made eight decoders per input with 3.2 MiB
 * of tables each, and ran its corpus 2.2 times slower for it); a long one reaches the
 * largest after touching only a few dozen pages of the smaller ones.
 *
 * A table grown out of is kept until the cache is freed, because a caller may still read
 * the entry it was given from it. The caches move their entries into the new table
 * themselves (each knows its keys and ways). */
#ifndef JITFLOW_PT_FAST_TABLE_H
#define JITFLOW_PT_FAST_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct jf_fast_blocks;

struct jf_fast_table {
	void *slots;             /* 2^log2 entries of entry_size bytes, zeroed when made, from
				  * a cache line's start (an entry of whole lines spans no
				  * more of them than it must) */
	void *mem;               /* the allocation they lie in... */
	size_t mapped;           /* ...a mapping of this size of its own (0: calloc's) */
	size_t entry_size;
	unsigned log2, max_log2;
	unsigned shift;          /* 64 - log2: a 64-bit hash's top log2 bits index a slot */
	uint64_t conflicts;      /* evictions of current entries since the last growth */
	struct jf_fast_retired *retired;
};

/* The slot of a TNT payload's entry (the payload caches'), by its start, bits and length:
 * Fibonacci hashing of the start mixed with the payload and its length. */
static inline void *jf_fast_table_payload_slot(const struct jf_fast_table *t, uint64_t ip,
					       uint64_t bits, unsigned nbits)
{
	uint64_t h = (ip ^ (bits << 7) ^ ((uint64_t)nbits << 58)) * 0x9e3779b97f4a7c15ull;

	return (char *)t->slots + (h >> t->shift) * t->entry_size;
}

/* A table of at most 2^max_log2 entries. Returns 0, or -1 if out of memory. */
int jf_fast_table_init(struct jf_fast_table *t, size_t entry_size, unsigned max_log2);
void jf_fast_table_fini(struct jf_fast_table *t);

/* Count an eviction of an entry of the current code; 1 when the table should grow. */
static inline int jf_fast_table_conflict(struct jf_fast_table *t)
{
	return ++t->conflicts > ((uint64_t)1 << t->log2) / 16 && t->log2 < t->max_log2;
}

/* Replace the slots with a larger, empty table. Returns the old slots (kept until fini) and
 * their count in *n, for the caller to move its current entries over; NULL if out of
 * memory, and then the table stays as it is and stops growing. */
void *jf_fast_table_grow(struct jf_fast_table *t, size_t *n);

/* What both TNT payload caches (pt_fast_payloads.h, pt_fast_block_paths.h) keep: the block
 * cache their paths are followed through, their counts and their table. */
struct jf_fast_path_cache {
	struct jf_fast_blocks *blocks;
	uint64_t lookups, hits;
	struct jf_fast_table table;
};

/* A cache of at most 2^max_log2 entries of entry_size bytes, zeroed, as the first member of
 * a zeroed object of self_size bytes (which it returns); NULL if out of memory. */
void *jf_fast_path_cache_new(struct jf_fast_blocks *blocks, size_t entry_size,
			     unsigned max_log2, size_t self_size);
/* Free the object whose first member c is, and its table. */
void jf_fast_path_cache_free(struct jf_fast_path_cache *c);

#endif
