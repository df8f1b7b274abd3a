/* Internal: for decoders that pull from a decoder of their own (perf_session.c), count
 * flows on other threads (pt_parallel.c), or count what they read themselves
 * (block_stream.c). */
#ifndef JITFLOW_DECODER_INTERNAL_H
#define JITFLOW_DECODER_INTERNAL_H

#include "jitflow/decoder.h"

/* jf_decoder_next without counting the flow into dec's stats: for an inner decoder whose
 * stats nobody reads (the outer one counts what it returns), one count less per flow. */
int jf_decoder_next_uncounted(struct jf_decoder *dec, struct jf_flow *flow,
			      struct jf_error *err);

/* jf_decoder_next_batch without counting: for a reader that counts the records itself
 * (jf_decode_stats_count) in the one pass it makes over them (block_stream.c). */
int jf_decoder_next_batch_uncounted(struct jf_decoder *dec, const struct jf_flow **flows,
				    size_t *n, struct jf_error *err);

/* Where a decoder started at a later PSB takes over from one that decoded past it (a
 * parallel decode's seam, pt_parallel.c; a fast path's hand-over, pt_fast_handover.c and
 * pt_fast_join.c): their records must agree, one by one, from the later one's first block
 * on, for at least this many records; fewer are not trusted to show the same state. */
enum { JF_JOIN_MIN_RECORDS = 16 };

/* Widen s's time span to take in [first, last]. */
void jf_decode_stats_span(struct jf_decode_stats *s, uint64_t first, uint64_t last);
/* Count one flow record into s, as jf_decoder_next counts what it returns. */
void jf_decode_stats_count(struct jf_decode_stats *s, const struct jf_flow *f);
/* Add the counts of from (flows that followed or preceded to's) to to: sums, and the
 * union of the time spans; trace bytes and clock facts are left alone. */
void jf_decode_stats_add(struct jf_decode_stats *to, const struct jf_decode_stats *from);

/* pt_decoder.c: whether dec (made by jf_pt_decoder_new) has just returned the loss before
 * the PSB it synchronised at after an error, with nothing read past it: then it goes on in
 * the state of a decoder started at that PSB (cfg.sync_at = *psb), which libipt's
 * synchronisation resets whole (its return stack, time and tracing state). 0 otherwise. */
int jf_pt_decoder_resynced(struct jf_decoder *dec, uint64_t *psb);
/* pt_decoder.c: whether the last error dec returned took its IP from a block before its
 * start (it started at cfg.sync_at and had filled no block since): a decoder from the
 * trace's start may report another IP there. */
int jf_pt_decoder_error_ip_before_start(struct jf_decoder *dec);

#endif
