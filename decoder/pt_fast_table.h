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

struct jf_fast_table {
	void *slots;             /* 2^log2 entries of entry_size bytes, zeroed when made */
	size_t entry_size;
	unsigned log2, max_log2;
	unsigned shift;          /* 64 - log2: a 64-bit hash's top log2 bits index a slot */
	uint64_t conflicts;      /* evictions of current entries since the last growth */
	struct jf_fast_retired *retired;
};

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

#endif
