/* Internal: block and TNT payload entries of the fast Intel PT path shared between threads.
 *
 * Each thread that counts segments of one trace (pt_parallel_count.c) has its own block and
 * payload caches (pt_fast_blocks.h, pt_fast_payloads.h), and each would decode the same
 * code into them: at 16 threads most of a worker's first segment went to filling them
 * (callgrind on a clean capture: 70% of a worker's instructions). An entry depends only on
 * its key and the code, and the code map does not change while such a trace is decoded, so
 * an entry any thread made serves every other: a cache's miss looks here before it decodes
 * the code, and publishes what it decoded.
 *
 * An entry is published once and never changed: a slot goes from empty to being written
 * (the one thread that claimed it) to ready, and a thread reads a slot's entry only after
 * it has seen it ready (acquire), so that no thread reads what another writes. A full set
 * of slots keeps what it has: the miss is then decoded as without this table. */
#ifndef JITFLOW_PT_FAST_SHARED_H
#define JITFLOW_PT_FAST_SHARED_H

#include <stdint.h>

#include "jitflow/insn.h"

struct jf_fast_block;
struct jf_payload_path;
struct jf_fast_shared;
struct jf_pt_fast_caches;

/* Tables for counting caches (blocks that follow direct jumps) over one code map that does
 * not change while they are used. NULL if out of memory. */
struct jf_fast_shared *jf_fast_shared_new(void);
void jf_fast_shared_free(struct jf_fast_shared *s);

/* Let counting caches made by jf_pt_fast_caches_init (pt_fast_watch.h) look up and publish
 * their misses in s (NULL: their own alone), while s lives. */
void jf_fast_shared_attach(struct jf_fast_shared *s, struct jf_pt_fast_caches *c);

/* Copy the block at ip in mode isa into *b (its gen left to the caller): 1, or 0 if no
 * thread has published it (or s is NULL). */
int jf_fast_shared_block_get(struct jf_fast_shared *s, int isa, uint64_t ip,
			     struct jf_fast_block *b);
/* Publish b (decoded from the code), unless its slots are taken; s may be NULL. */
void jf_fast_shared_block_put(struct jf_fast_shared *s, const struct jf_fast_block *b);

/* The same for a payload path keyed by (ip, isa, bits, nbits). */
int jf_fast_shared_path_get(struct jf_fast_shared *s, int isa, uint64_t ip, uint64_t bits,
			    unsigned nbits, struct jf_payload_path *p);
void jf_fast_shared_path_put(struct jf_fast_shared *s, const struct jf_payload_path *p);

#endif
