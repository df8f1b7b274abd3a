/* Blocks cut at direct jumps after the decode rather than in it.
 *
 * The analysis needs a block to start wherever control arrives at a trace's entry or loop
 * header, and that is often by a direct jump. libipt's block decoder can end its blocks
 * there (end_on_jump), but each extra block costs a whole pt_blk_next and the per-record
 * work of every layer above it (status check, zone filter, session merge): about a
 * thousand instructions per jump taken. A consumer that decodes without end_on_jump gets
 * the same blocks from here: each block cut at its direct jumps, from the instructions of
 * the code map. The cuts are remembered per block start; when the code map changes, a
 * remembered block is checked against the bytes now at its parts (a hash) and walked
 * again only if they changed, so a loop's blocks are walked once.
 *
 * The parts are the records the decoder would have given with end_on_jump: the same ip,
 * start, last, count, end and next; the parts before the last end at their jump
 * (JF_END_JUMP) and carry the time of their source's previous record, or none when it
 * had none (libipt reads no packet between them), or the block's own time when the block
 * is marked JF_FLOW_TIMED_AT_START (its decoder read the packets that set it before the
 * block: flow.h), and not the truncated or last-failed flag; the last part keeps the
 * block's own end, flags and time. No part keeps JF_FLOW_TIMED_AT_START; a block left
 * whole keeps it. (The offset stays the block's.) A block whose
 * instructions cannot be walked (no bytes, or a walk that does not end at its last
 * instruction after its count) is left whole, and counted. */
#ifndef JITFLOW_JUMP_SPLIT_H
#define JITFLOW_JUMP_SPLIT_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/flow.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_jump_split;

/* Over map, which must outlive it and be the map the blocks were decoded with. NULL: out
 * of memory. */
struct jf_jump_split *jf_jump_split_new(struct jf_codemap *map);
void jf_jump_split_free(struct jf_jump_split *s);

/* Give every record of the stream, in order (the parts take their source's time from the
 * records before them). Returns how many parts f is: 1 for a record that is not cut
 * (not a block, no direct jump inside, or not walkable), more for a block cut at its
 * jumps, each part then given by jf_jump_split_part. */
uint32_t jf_jump_split_record(struct jf_jump_split *s, const struct jf_flow *f);

/* Part k (from 0) of block, the record jf_jump_split_record was last given, into *out,
 * which holds a copy of block or of one of its parts: only the fields in which the parts
 * differ are written, so that a consumer copies a cut block once, not once per part. */
void jf_jump_split_part(const struct jf_jump_split *s, const struct jf_flow *block, uint32_t k,
			struct jf_flow *out);

/* Blocks left whole because their instructions could not be walked. */
uint64_t jf_jump_split_unwalked(const struct jf_jump_split *s);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
