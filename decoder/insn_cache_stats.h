/* Internal: how the instruction cache (insn_walk.c) answered, for tests. */
#ifndef JITFLOW_INSN_CACHE_STATS_H
#define JITFLOW_INSN_CACHE_STATS_H

#include <stdint.h>

struct jf_insn_cache;

/* Lookups the small table of hot instructions did not answer (the big one behind it or
 * capstone did). */
uint64_t jf_insn_cache_recent_misses(const struct jf_insn_cache *c);

#endif
