/* Internal: how the instruction cache (insn_walk.c) answered, for tests. */
#ifndef JITFLOW_INSN_CACHE_STATS_H
#define JITFLOW_INSN_CACHE_STATS_H

#include <stdint.h>

struct jf_insn_cache;

/* Lookups answered by the small table of hot instructions (not the big one behind it,
 * nor capstone). */
uint64_t jf_insn_cache_recent_hits(const struct jf_insn_cache *c);

#endif
