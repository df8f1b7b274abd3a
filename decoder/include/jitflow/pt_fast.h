/* Intel PT fast counting path: the counts `jitflow stat` prints, without
 * libipt's block decoder on the common path. */
#ifndef JITFLOW_PT_FAST_H
#define JITFLOW_PT_FAST_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include "jitflow/pt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A decoder over cfg->trace that gives the same instruction count, events, errors, losses
 * and time span as jf_pt_decoder_new, but does not return blocks: it adds their
 * instructions and number to the decoder's statistics (jf_decoder_stats) instead. Every
 * other flow record (events, errors, losses, the end) is returned as
 * jf_pt_decoder_new returns it.
 *
 * It follows the trace with libipt's packet decoder, a cache of what each TNT payload
 * decodes to and a cache of blocks decoded from the code bytes, and keeps the time of
 * timing packets as libipt's query decoder estimates it. Each stretch between two PSBs is
 * held back until the next PSB; whatever it does not model (an error, an event other than
 * tracing on/off, execution mode and timing, a change of the code map unless the map
 * tells where it changes, code that the map says may still change: jitflow/codemap.h)
 * makes it decode
 * from the last PSB it reached on with jf_pt_decoder_new's decoder, so that the result
 * stays that of the block decoder; where that decoder resynchronises at a PSB after an
 * error, its state is that of a decoder started there, and this path takes over again
 * from that PSB. Blocks are counted as this path cuts them (at every conditional, indirect
 * and far branch and direct call), which is not always where libipt's block decoder cuts
 * them. */
struct jf_decoder *jf_pt_fast_counter_new(const struct jf_pt_config *cfg,
					  struct jf_codemap *map, struct jf_error *err);

/* A decoder over cfg->trace that returns exactly the flow records jf_pt_decoder_new
 * returns (every block, event, error and the end, with their offsets and times), faster:
 * it follows the trace as jf_pt_fast_counter_new does and returns the blocks it follows,
 * cut where libipt's block decoder cuts them. That holds with cfg->end_on_call,
 * end_on_jump and join_cache_splits set; without them this is jf_pt_decoder_new. What the
 * fast path does not model is handed over to libipt's block decoder from the last PSB, as
 * the counter does. jf_pt_fast_counter_report tells how it went. */
struct jf_decoder *jf_pt_fast_decoder_new(const struct jf_pt_config *cfg,
					  struct jf_codemap *map, struct jf_error *err);

/* How the last decode went: trace bytes decoded by the fast path (the rest were libipt's
 * block decoder's), and where (trace offset) it first handed over to libipt's block
 * decoder (-1: never). For `stat`, tests and benchmarks. */
struct jf_pt_fast_report {
	int is_fast;             /* the decoder was made here (else all is zero or -1) */
	uint64_t fast_bytes;
	int64_t fallback_at;
	uint64_t hand_overs;     /* times it handed over... */
	uint64_t resumes;        /* ...and took over again at the PSB where the block decoder
				  * resynchronised after an error, or (returning blocks) where
				  * its records joined a fast decoder's (pt_fast_join.c) */
	uint64_t resyncs;        /* decode errors it reported itself as the block decoder
				  * does, resynchronising at the next PSB */
	/* ...where libipt's block decoder started to decode at the last hand-over (it returns
	 * its records from there on): the PSB before when it agreed there with the records
	 * already returned, else the trace's start (or sync_at, or the PSB resumed at last);
	 * -1 if none did */
	int64_t block_decoder_from;
	uint64_t blocks_decoded; /* blocks decoded from code bytes (cache misses) */
	uint64_t tnt_packets;    /* TNT packets followed with the payload cache... */
	uint64_t tnt_payloads;   /* ...its lookups (a packet takes one per run of bits that
				  * does not return to a call made before it)... */
	uint64_t tnt_payload_hits; /* ...and how many found their path cached */
	/* Returning blocks: lookups of the TNT path cache (with the paths' blocks), how many
	 * found their path cached, and how many found it cached from an older code map
	 * version and kept it, since no change touched its blocks. Counted over the cache's
	 * life: decoders given the same caches (jf_pt_fast_decoder_cached) share it. */
	uint64_t tnt_paths, tnt_path_hits, tnt_paths_kept;
	/* Returning blocks over code that may still change (jf_pt_config's
	 * decode_ahead_changing): stretches committed with blocks decoded ahead from such code;
	 * rollbacks (one of those blocks had changed when its record was asked for: the stretch
	 * decoded again from there); and rollbacks that fell back to libipt's block decoder
	 * from the trace's start (the decode again did not give the records returned, or met
	 * what this path does not model). */
	uint64_t changing_stretches, rollbacks, rollback_fallbacks;
};
void jf_pt_fast_counter_report(struct jf_decoder *dec, struct jf_pt_fast_report *out);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
