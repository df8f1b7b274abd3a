/* Internal: the block stream's state (block_stream.c), shared with the stream decoded on
 * several threads (block_stream_parallel.c), which makes its runs from parts. */
#ifndef JITFLOW_BLOCK_STREAM_INTERNAL_H
#define JITFLOW_BLOCK_STREAM_INTERNAL_H

#include "block_ids.h"
#include "jitflow/block_stream.h"
#include "jitflow/decoder.h"

struct jf_block_stream {
	struct jf_decoder *dec;
	int owns_dec;                      /* made with the stream: freed with it */
	struct jf_block_table table;
	uint32_t *ids;                     /* the run's entries */
	struct jf_flow *records;           /* the run's records */
	size_t cap_ids, cap_records;
	struct jf_block_context context;   /* of the record given last */
	/* A stream decoded on several threads: runs dec to the end, each part's run to
	 * on_run in trace order; 1 if dec turned out to run on one thread (then its
	 * records are pulled), else as jf_block_stream_run. */
	int (*run_parts)(struct jf_block_stream *s, struct jf_error *err);
	jf_block_run_fn on_run;
	void *on_run_ctx;
	uint32_t *renumber;                /* a part's ids to the stream's, one slot on */
	size_t cap_renumber;
};

/* Room for a run of n entries and nrecords records; <0 if out of memory. */
int jf_block_stream_room(struct jf_block_stream *s, size_t n, size_t nrecords);

#endif
