/* A table of code bytes by address, for following what a program runs in its JIT memory:
 * open addressing keyed by (pc, key), grown to twice its size whenever it would be more
 * than half full. record_jitcode.c keeps the last bytes translated at each pc (key 0);
 * record_code_changes.c every translation's bytes (key: the translation) and what each
 * thread last ran at a pc (key: the thread). */
#ifndef JITFLOW_RECORDER_CODE_TABLE_H
#define JITFLOW_RECORDER_CODE_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct jf_rec_code_entry {
	uint64_t pc;
	uint32_t key;
	uint32_t size;     /* 0: a free slot; an entry in use never goes back to 0 */
	uint64_t hash;     /* jf_rec_code_hash of the bytes */
	uint8_t *bytes;    /* owned by the table: freed with it */
	int pending;       /* for the user: record_jitcode.c's "not run yet" */
	uint64_t stamp;    /* for the user: record_code_changes.c's description count */
};

struct jf_rec_code_table {
	struct jf_rec_code_entry *e;
	size_t mask, used;
};

/* An empty table of 2^bits slots; -1 when out of memory. */
int jf_rec_code_table_init(struct jf_rec_code_table *t, unsigned bits);
/* The entry of (pc, key); with add, a new one (size 0, to be filled) when there is none.
 * NULL when there is none and add is 0, or when growing ran out of memory. */
struct jf_rec_code_entry *jf_rec_code_table_find(struct jf_rec_code_table *t, uint64_t pc, uint32_t key,
					 int add);
/* Frees the slots and every entry's bytes. */
void jf_rec_code_table_free(struct jf_rec_code_table *t);
/* A hash of code bytes, to tell versions at one address apart. */
uint64_t jf_rec_code_hash(const uint8_t *b, size_t n);

#endif
