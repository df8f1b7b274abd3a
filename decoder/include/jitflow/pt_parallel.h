/* Intel PT decoded by several threads: the stream is cut into segments at PSBs, each
 * segment is decoded by its own libipt decoder on a worker thread, and the flows come out
 * in trace order, the same records a single decoder (pt.h) gives.
 *
 * How the segments are put back together exactly: a worker decodes its segment from its
 * first PSB on past the next segment's first PSB (by `overlap` bytes of trace). At that
 * seam, the next segment's flows are used from its first block on, where the two decoders
 * give the same records for all of the overlap; until there, the first decoder's (which
 * went through the PSB+ as a single decoder does: status updates, not a new start). Where
 * they differ (an error, a resynchronisation or a tracing state that the PSB+ alone does
 * not restore), the first segment's decoder goes on over the next segment instead, on the
 * calling thread, until a later seam joins. Blocks must end at every direct call and jump
 * (end_on_call, end_on_jump) so that where a block ends does not depend on libipt's block
 * cache, which each worker has its own of. */
#ifndef JITFLOW_PT_PARALLEL_H
#define JITFLOW_PT_PARALLEL_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdint.h>

#include "jitflow/pt.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_pt_parallel_options {
	int jobs;               /* worker threads (<= 1: a plain single decoder) */
	uint64_t segment_size;  /* trace bytes per segment, at least (0: the default) */
	uint64_t overlap;       /* bytes decoded twice at each seam (0: the default) */
	int no_joins;           /* for tests: treat every seam as not joining, so that the
	                         * caller's thread decodes on over each next segment */
	int fast;               /* decode with jf_pt_fast_decoder_new (pt_fast.h: the same
	                         * records) instead of jf_pt_decoder_new */
};

/* What the parallel decode did, updated as it goes (for `stat`). */
struct jf_pt_parallel_report {
	uint64_t segments;      /* segments decoded by workers */
	uint64_t joins;         /* seams where the next worker's flows were taken */
	uint64_t serial;        /* seams where they differed: decoded on by the caller */
	/* Counting (jf_pt_parallel_counter_new): where the fast path hands over to the block
	 * decoder, one thread counts the rest, from the PSB at rest_from on. */
	int rest_one_thread;
	uint64_t rest_from;
};

/* A segment's flows are held in memory until handed out (about 100 bytes per byte of
 * trace; jobs + 2 segments at a time). */
enum { JF_PT_SEGMENT_DEFAULT = 64 * 1024, JF_PT_OVERLAP_DEFAULT = 2048 };

/* Counting keeps only counts and non-block records per segment: larger segments make the
 * stretches decoded twice at seams a smaller share (+4.6% of the instructions executed at
 * 256 KiB over one thread, +9% at 64 KiB, on foo x300 under callgrind). */
enum { JF_PT_COUNT_SEGMENT_DEFAULT = 256 * 1024 };

/* Like jf_pt_decoder_new (cfg->end_on_call and end_on_jump must be set, map must not
 * change while decoding: no zone files), with opt->jobs threads. report (may be NULL)
 * must outlive the decoder. Each worker decodes with a copy of map. */
struct jf_decoder *jf_pt_parallel_decoder_new(const struct jf_pt_config *cfg,
					      struct jf_codemap *map,
					      const struct jf_pt_parallel_options *opt,
					      struct jf_pt_parallel_report *report,
					      struct jf_error *err);

/* Like jf_pt_fast_counter_new (pt_fast.h: counts and non-block records, no blocks) with
 * opt->jobs threads, each counting segments with the fast path (pt_parallel_count.c):
 * the same records and statistics as jf_pt_fast_counter_new. Seams join where the two
 * decoders reach a PSB past the seam in the same state (the next one's return stack the
 * top of the previous one's) and agree on every stretch between PSBs both decoded after
 * it; where the fast path hands over to libipt's block decoder, the rest of the trace is
 * counted by one thread as jf_pt_fast_counter_new counts it. */
struct jf_decoder *jf_pt_parallel_counter_new(const struct jf_pt_config *cfg,
					      struct jf_codemap *map,
					      const struct jf_pt_parallel_options *opt,
					      struct jf_pt_parallel_report *report,
					      struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
