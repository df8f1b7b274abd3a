/* Internal: a counting hand-over made ahead, by the worker whose segment's decoder stopped
 * (pt_parallel_count.c), so that libipt's block decoder over a stretch the fast path does
 * not model runs on the workers rather than on the calling thread.
 *
 * jf_pt_fast_count_from_stop decides from the stop and what the one-thread decoder
 * committed since it last started afresh (its last stretches, whether it read a timing
 * packet, its policy on taking over again). The worker knows that only from its own
 * decoder's stretches and guesses the policy; the calling thread, which knows it, takes
 * the hand-over made ahead only where it was made with exactly what the calling thread
 * would make it with, and else makes it itself. Given the same inputs the hand-over gives
 * the same records and counts on any thread: the block decoder's blocks are counted joined
 * across libipt's block cache splits (pt_fast_count_handover.c), so they do not depend on
 * what that thread's cache held. */
#ifndef JITFLOW_PT_PARALLEL_AHEAD_H
#define JITFLOW_PT_PARALLEL_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/decoder.h"
#include "flow_buffer.h"
#include "pt_fast_watch.h"

struct jf_pt_ahead {
	/* What it was made with (stop->at is the segment's own stop). */
	struct jf_pt_fast_policy policy;
	int timed;
	struct jf_fast_counted counted[2];
	unsigned ncounted;
	struct jf_flow_buffer last_records;
	/* What it gave: its records up to where the fast path takes over again (resumes: at
	 * psb, with policy `after`) or to the trace's end, and its statistics. */
	int made;
	struct jf_flow_buffer records;
	struct jf_decode_stats stats;
	int resumes;
	uint64_t psb;
	struct jf_pt_fast_policy after;
};

/* Make the hand-over at stop with policy (cfg, map and caches as for
 * jf_pt_fast_count_from_stop) and keep what it gives in a. Returns 1 if made, 0 where the
 * calling thread must make it (its checks failed, it gave up, or it met an error: the
 * calling thread meets it again), -1 when out of memory. */
int jf_pt_ahead_make(struct jf_pt_ahead *a, const struct jf_pt_config *cfg,
		     struct jf_codemap *map, const struct jf_pt_fast_caches *caches,
		     const struct jf_pt_fast_stop *stop, const struct jf_pt_fast_policy *policy);

/* Whether a was made and with exactly these inputs (those of stop but its `at`). */
int jf_pt_ahead_fits(const struct jf_pt_ahead *a, const struct jf_pt_fast_stop *stop,
		     const struct jf_pt_fast_policy *policy);

/* Forget what a holds, keeping its memory; _fini frees it. */
void jf_pt_ahead_clear(struct jf_pt_ahead *a);
void jf_pt_ahead_fini(struct jf_pt_ahead *a);

#endif
