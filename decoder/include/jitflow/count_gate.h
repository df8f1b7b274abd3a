/* A count gate: how a consumer that acts on blocks only at some points of each thread
 * (the zone filter: records due at a thread's instruction count or at a time) lets the
 * decoder it pulls from count the blocks in between instead of returning them.
 *
 * A consumer that only counts what it is not given (jitflow stat: the zone filter passes
 * on the statistics the inner decoder counted without records) would otherwise take
 * every block through each layer, one call per block per layer, only to add its
 * instructions up. The decoder asks the gate before a run of blocks of one source how far
 * it may count them, counts into its own statistics (as jf_decoder_next counts a returned
 * record) the blocks that end before that limit, and tells the gate what it counted
 * before it returns the next record. Records other than blocks are always returned. */
#ifndef JITFLOW_COUNT_GATE_H
#define JITFLOW_COUNT_GATE_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdint.h>

#include "jitflow/decoder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How far the blocks of one source may be counted: while the instructions counted stay at
 * most insns and each counted block's time (blocks with one) is below time_below. Blocks
 * the consumer acts on wherever they come (calls of a marker function) are returned: those
 * that start at one of starts[nstarts], and those that end in a return at one of
 * returns[nreturns] (at any return where any_return). The arrays stay valid until the
 * consumer is given the next record. */
struct jf_count_limit {
	uint64_t insns;
	uint64_t time_below;
	const uint64_t *starts, *returns;
	size_t nstarts, nreturns;
	int any_return;
};

struct jf_count_gate {
	void *ctx;
	/* The limit for the next blocks of source: 1 with *limit filled, 0 for none (return
	 * every block). Asked after every record the consumer was given has been acted on. */
	int (*limit)(void *ctx, uint32_t source, struct jf_count_limit *limit);
	/* Blocks of source counted: insns instructions in all, last the last of them. */
	void (*counted)(void *ctx, uint32_t source, uint64_t insns, const struct jf_block *last);
};

/* For backends that can count blocks by a gate: fn keeps the gate (a copy) for the decodes
 * to come; returns 1 if it will ask it, 0 if it returns every block all the same. */
typedef int (*jf_decoder_gate_fn)(void *self, const struct jf_count_gate *gate);
void jf_decoder_set_gate(struct jf_decoder *dec, jf_decoder_gate_fn fn);

/* For consumers: offer dec the gate. 1 if dec will ask it, 0 if dec returns every block
 * (a backend without a gate function, or one that was not asked to count). */
int jf_decoder_offer_count_gate(struct jf_decoder *dec, const struct jf_count_gate *gate);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
