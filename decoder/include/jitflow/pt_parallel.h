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
 * calling thread, until a later seam joins. A segment whose decoder meets a compressed
 * return without its call (a damaged trace: hardware compresses only returns to calls made
 * since the last PSB) never joins; the calling thread then decodes on with a decoder that
 * started at the trace's beginning, which has the call wherever it lies. Blocks must end
 * at every direct call and jump (end_on_call, end_on_jump) so that where a block ends
 * does not depend on libipt's block cache, which each worker has its own of. */
#ifndef JITFLOW_PT_PARALLEL_H
#define JITFLOW_PT_PARALLEL_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdint.h>

#include "jitflow/block_stream.h"
#include "jitflow/pt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Work done on the flows of a part of the trace, on the thread that decoded it, whose
 * results join in trace order (e.g. an analysis: jf_analysis_merge). See
 * jf_pt_parallel_run. */
struct jf_pt_part_ops {
	/* A new, empty part (NULL: out of memory), on any thread; map: a copy of the code
	 * map that thread decodes with (the same code). */
	void *(*part_new)(void *ctx, struct jf_codemap *map);
	/* The part's next flow record (<0: out of memory), on the thread that made it. */
	int (*part_flow)(void *part, const struct jf_flow *f);
	/* On the calling thread, in trace order: part's flows are the next ones of the
	 * trace (they reach trace offset `reached`). The part is the callee's from now on;
	 * <0 stops the decode (message in err). */
	int (*part_take)(void *ctx, void *part, uint64_t reached, struct jf_error *err);
	/* A part that is not taken (its flows were decoded again on another path). */
	void (*part_free)(void *part);
	/* Optional (NULL: part_flow for each): the part's next n flow records at once, as
	 * part_flow takes them one by one; given the runs inside a segment (most of its
	 * records), so that a part can work through a run in one loop. */
	int (*part_flows)(void *part, const struct jf_flow *f, size_t n);
};

struct jf_pt_parallel_options {
	int jobs;               /* worker threads (<= 1: a plain single decoder) */
	uint64_t segment_size;  /* trace bytes per segment, at least (0: the default) */
	uint64_t segment_max;   /* counting: > segment_size, segments cut guided by the trace
	                         * left, from this down to segment_size (with segment_size 0:
	                         * JF_PT_COUNT_SEGMENT_MAX); else all of segment_size */
	uint64_t overlap;       /* bytes decoded twice at each seam (0: the default) */
	int no_joins;           /* for tests: treat every seam as not joining, so that the
	                         * caller's thread decodes on over each next segment */
	int fast;               /* decode with jf_pt_fast_decoder_new (pt_fast.h: the same
	                         * records) instead of jf_pt_decoder_new */
	/* With parts: each worker gives its segment's flows to a part of its own as it
	 * decodes them (the flows from its first block on up to its first block past its
	 * end: where the next segment's are taken when the seam joins); drive the decoder
	 * with jf_pt_parallel_run, not jf_decoder_next. */
	const struct jf_pt_part_ops *parts;
	void *parts_ctx;
};

/* What the parallel decode did, updated as it goes (for `stat`). */
struct jf_pt_parallel_report {
	uint64_t segments;      /* segments decoded by workers */
	uint64_t joins;         /* seams where the next worker's flows were taken */
	uint64_t serial;        /* seams where they differed: decoded on by the caller */
	/* Counting (jf_pt_parallel_counter_new): where the fast path hands over to the block
	 * decoder, the calling thread decodes from that stretch's PSB to where the fast path
	 * takes over again, and the segments go on from there (local_hand_overs); where that
	 * cannot be shown to be the one-thread decode, one thread counts the rest, from the
	 * PSB at rest_from on. ahead_hand_overs: those of them made ahead by the worker whose
	 * segment met them, which the calling thread only checked and gave out. */
	uint64_t local_hand_overs, ahead_hand_overs;
	int rest_one_thread;
	uint64_t rest_from;
};

/* A segment's flows are held in memory until handed out (about 100 bytes per byte of
 * trace; jobs + 2 segments at a time). */
enum { JF_PT_SEGMENT_DEFAULT = 64 * 1024, JF_PT_OVERLAP_DEFAULT = 2048 };

/* Parts keep only the records seams compare, so segments may be larger: fewer seams, less
 * trace decoded twice and fewer parts to make and merge (report -j 2 on foo x100 under
 * callgrind: 5.3% more instructions than one thread at 64 KiB, 1.0% at 256 KiB). */
enum { JF_PT_PARTS_SEGMENT_DEFAULT = 256 * 1024 };

/* Counting keeps only counts and non-block records per segment: larger segments make the
 * stretches decoded twice at seams a smaller share (+4.6% of the instructions executed at
 * 256 KiB over one thread, +9% at 64 KiB, on foo x300 under callgrind). */
enum { JF_PT_COUNT_SEGMENT_DEFAULT = 256 * 1024 };
/* By default (segment_size 0) that is the smallest: a segment is cut at a
 * (JF_PT_COUNT_SHARE_PER_JOB * jobs)-th of the trace not cut yet, at most
 * JF_PT_COUNT_SEGMENT_MAX (segment_max), so that the overlap below is a small share of the
 * trace and the threads still end together, none more than a small segment behind. A
 * segment keeps one stretch (about 660 bytes with its return stack) per PSB: 2 MiB of the
 * densest capture measured (a PSB every 228 bytes) about 6 MB, 4 jobs + 2 of them alive. */
enum { JF_PT_COUNT_SEGMENT_MAX = 2 << 20, JF_PT_COUNT_SHARE_PER_JOB = 4 };
/* ...and the last segments smaller, down to a JF_PT_COUNT_TAIL_SHARE-th of the smallest,
 * once the trace left would no longer give each thread a segment of the smallest size: a
 * job's share of the rest each (pt_seg_queue.h, jf_seg_queue_set_tail), so that the
 * threads end within a small segment of each other. */
enum { JF_PT_COUNT_TAIL_SHARE = 4 };
/* ...and they decode past the next segment's start by JF_PT_COUNT_OVERLAP bytes, whatever
 * its size (a sixteenth of a smaller segment, at least JF_PT_OVERLAP_DEFAULT): a seam joins
 * at a PSB where both decoders are in one state or resynchronised after the same error,
 * and in real captures the stretches with tracing off between those errors (whose stop IP
 * the later decoder does not know) run over several KiB (Unzip x1000: 46 of 64 seams
 * joined at 2 KiB, all at 8 KiB). */
enum { JF_PT_COUNT_OVERLAP = 16 * 1024, JF_PT_COUNT_OVERLAP_SHARE = 16 };

/* Like jf_pt_decoder_new (cfg->end_on_call and end_on_jump must be set, map must not
 * change while decoding: no zone files), with opt->jobs threads. report (may be NULL)
 * must outlive the decoder. Each worker decodes with a copy of map. */
struct jf_decoder *jf_pt_parallel_decoder_new(const struct jf_pt_config *cfg,
					      struct jf_codemap *map,
					      const struct jf_pt_parallel_options *opt,
					      struct jf_pt_parallel_report *report,
					      struct jf_error *err);

/* The compact block stream (block_stream.h) of cfg's trace decoded on opt->jobs threads
 * (jf_pt_parallel_decoder_new with opt, whose parts are the stream's: opt->parts must be
 * NULL): each worker turns its segment's records into block ids of a table of its own as
 * it decodes them, and the calling thread renumbers each segment's ids into the stream's
 * table and gives its run on, in trace order. Read it with jf_block_stream_run: the same
 * entries and records, in the same order, with the same statistics, as
 * jf_block_stream_next gives over one decoder of the same kind (runs cut elsewhere; ids
 * may be numbered otherwise). The stream owns the decoder. */
struct jf_block_stream *jf_pt_parallel_block_stream_new(const struct jf_pt_config *cfg,
							struct jf_codemap *map,
							const struct jf_pt_parallel_options *opt,
							struct jf_pt_parallel_report *report,
							struct jf_error *err);

/* Run a decoder made by jf_pt_parallel_decoder_new with opt->parts to the end of the
 * trace: every flow record goes to exactly one part, and the parts are taken (part_take)
 * in trace order, so that taking them one after the other gives what one part fed with
 * every flow would have. Where a seam joins, the worker's part for the segment is taken
 * as it is; where not, the flows that the calling thread decodes on with the previous
 * segment's decoder go to parts it makes itself. The decoder's stats count every record,
 * as jf_decoder_next would have. Returns 0 at the end, -1 on failure (message in err), 1
 * if dec runs on one thread (one segment, or one job): then pull its flows with
 * jf_decoder_next. */
int jf_pt_parallel_run(struct jf_decoder *dec, struct jf_error *err);

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
