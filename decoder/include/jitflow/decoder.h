/* A decoder: a pull-based stream of flow events from one trace, whatever the backend.
 *
 *     struct jf_flow f;
 *     while ((rc = jf_decoder_next(dec, &f)) > 0)
 *             consume(&f);
 *     if (rc < 0) fatal(err);   // only for unrecoverable failures; decode errors in the
 *                               // trace are JF_FLOW_ERROR records and decoding goes on
 *
 * Backends (pt.h for Intel PT, coresight.h for CoreSight, perf_session.h for perf.data)
 * construct a jf_decoder; consumers only use this header. */
#ifndef JITFLOW_DECODER_H
#define JITFLOW_DECODER_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"
#include "jitflow/flow.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What was decoded, for `jitflow stat` and every report's loss summary. */
struct jf_decode_stats {
	uint64_t trace_bytes;    /* bytes of trace data given to the decoder */
	uint64_t insns;          /* instructions in blocks */
	uint64_t blocks;
	uint64_t events;         /* non-block, non-error flow records */
	uint64_t errors;         /* JF_FLOW_ERROR records */
	uint64_t overflows;
	uint64_t lost_bytes;     /* trace bytes skipped or lost */
	uint64_t lost_insns;     /* instructions known lost (0 if unknowable) */
	uint64_t first_time, last_time; /* flow time span (valid when has_time) */
	int has_time;
	int time_is_ns;          /* time converted to ns (otherwise raw ticks) */
	int time_is_synthetic;   /* the timing packets are synthetic (recorder) */
	uint64_t errors_by_code[64]; /* by -code (backend error code), clamped to 63 */
};

struct jf_decoder_ops {
	/* Fill *flow with the next record: 1 = a record, 0 = end of trace, <0 = fatal. */
	int (*next)(void *self, struct jf_flow *flow, struct jf_error *err);
	void (*free)(void *self);
};

struct jf_decoder;

/* For backends: wrap an implementation. Takes ownership of self. */
struct jf_decoder *jf_decoder_new(const struct jf_decoder_ops *ops, void *self);
/* For backends that hold records in bulk: fn gives the next ones where they lie, as ops'
 * next would give them one by one (1 with *flows pointing at *n >= 1 records that stay
 * valid until the next call, 0 = end of trace, <0 = fatal), for jf_decoder_next_batch. */
typedef int (*jf_decoder_batch_fn)(void *self, const struct jf_flow **flows, size_t *n,
				   struct jf_error *err);
void jf_decoder_set_batch(struct jf_decoder *dec, jf_decoder_batch_fn fn);

int jf_decoder_next(struct jf_decoder *dec, struct jf_flow *flow, struct jf_error *err);
/* The next records in bulk, for a consumer that waits on whole buffers (a tracing JIT
 * decoding online): the same records in the same order as jf_decoder_next gives them, and
 * counted the same, but as many as the backend has ready at once (the fast Intel PT
 * decoder: a whole stretch between two PSBs; other backends: one), without a copy or a
 * call per record. Returns 1 with *flows pointing at *n >= 1 records, which stay valid
 * until the next call on dec or jf_decoder_free; 0 at the end of the trace; <0 fatal. */
int jf_decoder_next_batch(struct jf_decoder *dec, const struct jf_flow **flows, size_t *n,
			  struct jf_error *err);
void jf_decoder_free(struct jf_decoder *dec);

/* Counted as records pass through jf_decoder_next (or _next_batch). */
const struct jf_decode_stats *jf_decoder_stats(const struct jf_decoder *dec);
/* Backends report the bytes they were given and clock facts here. */
struct jf_decode_stats *jf_decoder_stats_mut(struct jf_decoder *dec);
/* The backend state given to jf_decoder_new, if dec was made with ops; else NULL. */
void *jf_decoder_backend(struct jf_decoder *dec, const struct jf_decoder_ops *ops);

/* Progress for decoders that return few records for much trace (the counters of pt_fast.h
 * and pt_parallel.h with count_plain_events: a clean trace gives none until its end): fn
 * is called from within jf_decoder_next, in the calling thread, each time the decode has
 * gone about a MiB further, with the trace offset reached and the statistics so far. */
typedef void (*jf_decoder_progress_fn)(void *ctx, uint64_t offset,
				       const struct jf_decode_stats *stats);
void jf_decoder_on_progress(struct jf_decoder *dec, jf_decoder_progress_fn fn, void *ctx);
/* For backends: tell the progress callback that the decode reached offset (called as often
 * as is convenient: it passes on a call per MiB). */
void jf_decoder_report_progress(struct jf_decoder *dec, uint64_t offset);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
