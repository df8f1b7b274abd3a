/* A compact block stream: a decoder's block sequence as 4-byte block ids, for a consumer
 * that wants the path and not a 104-byte record per block (a tracing JIT decoding its
 * buffers online).
 *
 *     struct jf_block_stream *s = jf_block_stream_new(dec, &err);
 *     struct jf_block_run run;
 *     while ((rc = jf_block_stream_next(s, &run, &err)) > 0) {
 *             const struct jf_block *blocks = jf_block_stream_table(s);
 *             size_t r = 0;
 *             for (size_t i = 0; i < run.n; i++)
 *                     if (run.ids[i] == JF_BLOCK_STREAM_RECORD)
 *                             consume_record(&run.records[r++]);
 *                     else
 *                             consume_block(&blocks[run.ids[i]]);
 *     }
 *
 * Each distinct block (struct jf_block, every field equal) gets an id, from 0 up in the
 * order first seen, kept until the stream is freed. The stream gives exactly the records
 * jf_decoder_next gives, in the same order, and counts them the same (jf_decoder_stats of
 * dec): a block record whose context is that of the record before it (same source, same
 * time and time flag, no other flag, ip at the block's start) is an id; every other
 * record (events, errors, losses, the end, and a block whose time or flags differ) is the
 * entry JF_BLOCK_STREAM_RECORD, standing for the next of the run's records, in full. A
 * block given as an id is that record but for its trace offset, which the stream does not
 * keep: the records around it locate it, and a consumer that needs each block's offset
 * reads jf_decoder_next_batch (decoder.h). Works over any decoder; the fast Intel PT
 * decoder (jf_pt_fast_decoder_new) gives whole stretches between PSBs per run, the
 * blocks libipt's block decoder returns where it hands over to it among them. */
#ifndef JITFLOW_BLOCK_STREAM_H
#define JITFLOW_BLOCK_STREAM_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/decoder.h"
#include "jitflow/error.h"
#include "jitflow/flow.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An entry that is not a block id: the next record of the run. */
#define JF_BLOCK_STREAM_RECORD UINT32_MAX

struct jf_block_stream;

/* What one call gives: n entries (block ids or JF_BLOCK_STREAM_RECORD) and, in order, the
 * records the JF_BLOCK_STREAM_RECORD entries stand for. Valid until the next call on the
 * stream or jf_block_stream_free. */
struct jf_block_run {
	const uint32_t *ids;
	size_t n;
	const struct jf_flow *records;
	size_t nrecords;
};

/* A stream over dec's records (dec stays the caller's and must outlive the stream). NULL
 * with err if out of memory. */
struct jf_block_stream *jf_block_stream_new(struct jf_decoder *dec, struct jf_error *err);
void jf_block_stream_free(struct jf_block_stream *s);

/* The next run: 1 with *run holding n >= 1 entries, 0 at the end of the trace, <0 fatal
 * (dec's error, or out of memory). */
int jf_block_stream_next(struct jf_block_stream *s, struct jf_block_run *run,
			 struct jf_error *err);

/* What jf_block_stream_run gives each run to, in order (run as jf_block_stream_next gives
 * it, valid during the call): <0 stops the stream, with a message in err. */
typedef int (*jf_block_run_fn)(void *ctx, const struct jf_block_stream *s,
			       const struct jf_block_run *run, struct jf_error *err);

/* Every run from here to the end of the trace, to fn: 0 at the end, <0 fatal (dec's
 * error, out of memory, or fn's). The one way to read a stream decoded on several
 * threads (jf_pt_parallel_block_stream_new, pt_parallel.h); for the others, the loop of
 * jf_block_stream_next above. */
int jf_block_stream_run(struct jf_block_stream *s, jf_block_run_fn fn, void *ctx,
			struct jf_error *err);

/* What the stream gave so far, counted as jf_decoder_stats counts records (for a stream
 * over a decoder of the caller's: that decoder's statistics). */
const struct jf_decode_stats *jf_block_stream_stats(const struct jf_block_stream *s);

/* The block with this id (start, last, next, instructions, end kind, ISA, flags), or NULL
 * if no block has it yet. */
const struct jf_block *jf_block_stream_block(const struct jf_block_stream *s, uint32_t id);
/* How many ids were given so far (ids are 0 to this - 1). */
size_t jf_block_stream_blocks(const struct jf_block_stream *s);
/* Every block by id, the jf_block_stream_blocks(s) of them: what jf_block_stream_block
 * gives, as one array that a consumer indexes with a run's ids (a load per id, not a
 * call). Valid while the run is (new blocks of the next run may move it). */
const struct jf_block *jf_block_stream_table(const struct jf_block_stream *s);

/* The record a block id of the stream stands for, for consumers and tests that want
 * records back: *out is the block's record in the context of prev (the record given
 * before it: its source, time and time flag; NULL at the start), with offset 0. */
void jf_block_stream_record(const struct jf_block_stream *s, uint32_t id,
			    const struct jf_flow *prev, struct jf_flow *out);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
