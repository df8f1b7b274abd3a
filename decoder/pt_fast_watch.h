/* Internal: the fast counting path (pt_fast.c) watched stretch by stretch, for counting a
 * trace split at PSBs on several threads (pt_parallel_count.c).
 *
 * The fast path holds back what it decodes after a PSB until it reaches the next PSB, then
 * commits it. A watched decoder tells each commit: the stretch's counts and records, and
 * its own state at that PSB (everything it carries from one stretch to the next), so that
 * two decoders that reached the same PSB from different starts can be compared. It never
 * hands over to libipt's block decoder: where the plain one would, a watched one reports
 * the stretch as not modelled and ends. A resynchronising one (jf_pt_fast_watched_resyncing_new)
 * also reports and resynchronises after the errors the plain one does (pt_fast_resync.c),
 * marking that commit fresh. */
#ifndef JITFLOW_PT_FAST_WATCH_H
#define JITFLOW_PT_FAST_WATCH_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/pt.h"

enum { JF_PT_FAST_RETSTACK = 64 };

/* What a fast decoder carries across a PSB. */
struct jf_pt_fast_state {
	uint64_t ip;                /* where execution is (the PSB+'s FUP) */
	int enabled, isa;           /* tracing on, execution mode */
	int status;                 /* the query decoder's at its sync, for a decoder that hands
				     * over before it follows packets (else 0) */
	uint64_t tsc;               /* libipt's time, as its query decoder keeps it */
	uint32_t lost_mtc, lost_cyc, cbr;
	int depth;                  /* return addresses held, latest first: */
	uint64_t ret[JF_PT_FAST_RETSTACK];
};

/* Whether g, which started later with an empty return stack, is in the state f is in: all
 * but the return stack equal, and g's return stack the top of f's. */
int jf_pt_fast_same_state(const struct jf_pt_fast_state *f, const struct jf_pt_fast_state *g);

struct jf_pt_fast_commit {
	uint64_t psb;               /* the stretch ends at this PSB (the trace size: the end) */
	uint64_t insns, blocks;
	uint64_t tmin, tmax;        /* the time span of its blocks, with has_time */
	int has_time;
	const struct jf_flow *records; /* its non-block records, in order */
	size_t nrecords;
	uint64_t events;            /* cfg.count_plain_events: event records counted, not in
				     * records (their times are in tmin, tmax)... */
	uint64_t events_hash;       /* ...and a hash of their offsets, kinds and ips */
	/* Not modelled: nothing is committed, the stretch from psb on needs the block
	 * decoder (started from the trace's beginning); the decoder ends. The counts and
	 * records above are then what it decoded of that stretch before it stopped (events
	 * not counted yet), and stopped_at where its packet decoder was (following packets;
	 * else 0). */
	int unmodelled;
	uint64_t stopped_at;
	/* The stretch ends with an error and the loss up to psb, where the decoder starts
	 * afresh: from psb on it decodes what a decoder started at psb decodes, whatever came
	 * before (resume in pt_fast.c); the plain counting path does the same there. */
	int fresh;
	struct jf_pt_fast_state state; /* at psb, before its PSB+ is applied */
	int timed_here;             /* a timing packet was read in the stretch */
	int popped_empty;           /* it stopped at a return its return stack had no entry
				     * for (a decoder started earlier may have one) */
};

/* Counting: one committed stretch, from PSB `from` to PSB `psb`, and the state at psb. */
struct jf_fast_counted {
	uint64_t from, psb;
	uint64_t insns, blocks, tmin, tmax;
	int has_time;
	uint64_t events, events_hash;
	struct jf_pt_fast_state state;
};

/* Whether b is the stretch a counted, but for where it began: the same end, counts, time
 * span, events, and a state whose return stack is the top of a's (jf_pt_fast_same_state). */
int jf_fast_same_counted(const struct jf_fast_counted *a, const struct jf_fast_counted *b);

/* Where a counting decoder stopped, not modelled, and what the one-thread decoder in its
 * state (but for a return stack that is the top of its own) had committed before, since it
 * last started afresh: what its hand-over there decides by. */
struct jf_pt_fast_stop {
	const struct jf_pt_fast_commit *at;   /* the stop (at->unmodelled) */
	int timed;                  /* a timing packet was read since it started afresh */
	const struct jf_fast_counted *counted; /* its last commits, oldest first (up to 2) */
	unsigned ncounted;
	const struct jf_flow *last_records; /* the last commit's records */
	size_t nlast;
};

/* Called at each commit; returning 1 pauses the decoder there: jf_decoder_next returns 0
 * once, and the next call goes on decoding. */
typedef int (*jf_pt_fast_watch_fn)(void *ctx, const struct jf_pt_fast_commit *c);

/* What a thread keeps from one fast decoder to the next: the instructions, blocks and TNT
 * payload paths decoded from the code bytes of one code map. A decoder started on every
 * segment with cold caches would decode the code again each time (the payload cache alone
 * is 1.7 MiB to clear). jf_pt_fast_caches_init returns -1 when out of memory (c is then
 * empty); _fini frees what init made. */
struct jf_insn_cache;
struct jf_fast_blocks;
struct jf_payloads;
struct jf_block_paths;
struct jf_pt_fast_caches {
	struct jf_insn_cache *insns;
	struct jf_fast_blocks *blocks;   /* over insns */
	struct jf_payloads *payloads;    /* over blocks */
	struct jf_block_paths *block_paths; /* over blocks: jf_pt_fast_block_caches_init's
					     * (NULL in a counter's caches) */
	struct jf_fast_queue_pool *queues;  /* record queues a freed decoder left for the
					     * next (pt_fast_internal.h) */
};
int jf_pt_fast_caches_init(struct jf_pt_fast_caches *c, struct jf_codemap *map);
void jf_pt_fast_caches_fini(struct jf_pt_fast_caches *c);

/* The same for decoders that return blocks (their blocks end at direct jumps), with the
 * TNT paths of their blocks, and jf_pt_fast_decoder_new using such caches (over map),
 * which it keeps: so that decoders run one after another on a thread (pt_parallel.c's
 * segments, perf_session.c's buffers) share what they decoded and followed. */
int jf_pt_fast_block_caches_init(struct jf_pt_fast_caches *c, struct jf_codemap *map);
struct jf_decoder *jf_pt_fast_decoder_cached(const struct jf_pt_config *cfg,
					     struct jf_codemap *map,
					     const struct jf_pt_fast_caches *caches,
					     struct jf_error *err);

/* jf_pt_fast_counter_new using caches made by jf_pt_fast_caches_init (over map), which it
 * keeps: so that the decoders of one buffer after another (perf_session.c) share what
 * they decoded. */
struct jf_decoder *jf_pt_fast_counter_cached(const struct jf_pt_config *cfg,
					     struct jf_codemap *map,
					     const struct jf_pt_fast_caches *caches,
					     struct jf_error *err);

/* jf_pt_fast_counter_new watched by fn (cfg->has_sync_at: start at that PSB). The
 * watcher gets the records (jf_decoder_next returns none: only 0 when paused or at the
 * end); the decoder's statistics count the instructions and blocks committed. caches
 * (over map; NULL: its own) are used and kept, so that decoders run one after another on a
 * thread share what they decoded from the code bytes. */
struct jf_decoder *jf_pt_fast_watched_new(const struct jf_pt_config *cfg,
					  struct jf_codemap *map,
					  const struct jf_pt_fast_caches *caches,
					  jf_pt_fast_watch_fn fn, void *ctx, struct jf_error *err);
/* The same, resynchronising as the plain counting path does after the errors it reports
 * itself (commits marked fresh), instead of ending there as not modelled. */
struct jf_decoder *jf_pt_fast_watched_resyncing_new(const struct jf_pt_config *cfg,
						    struct jf_codemap *map,
						    const struct jf_pt_fast_caches *caches,
						    jf_pt_fast_watch_fn fn, void *ctx,
						    struct jf_error *err);

/* How a counting decoder takes over again after a hand-over (pt_fast_handover.c): where
 * the block decoder resynchronises after an error, the fast path starts afresh there unless
 * the resumes before were fruitless (then it lets some resynchronisations pass). What that
 * decision depends on, which a decoder started afresh at a PSB does not know: */
struct jf_pt_fast_policy {
	int resumed;                /* the decoder took over again after a hand-over before */
	uint64_t backoff;           /* resynchronisations the next fruitless one lets pass */
	int committed;              /* a stretch was committed since it last started afresh */
};

/* jf_pt_fast_counter_new at cfg->sync_at (a PSB where the one-thread decoder started
 * afresh) with that decoder's policy there (policy->committed is 0 there). */
struct jf_decoder *jf_pt_fast_counter_policy_new(const struct jf_pt_config *cfg,
						 struct jf_codemap *map,
						 const struct jf_pt_fast_policy *policy,
						 struct jf_error *err);

/* The counting path's hand-over where a watched decoder stopped (stop) in the one-thread
 * decoder's state but for a return stack that is the top of its own: libipt's block
 * decoder from stop->at->psb or one or two PSBs before, as the one-thread decoder chooses
 * there (pt_fast_count_handover.c), with that decoder's policy. 1 with *out, a counter
 * whose records are then the one-thread one's from stop->at->psb on, up to where it
 * takes over again (jf_pt_fast_counter_resuming) or the end, unless it gives up
 * (jf_pt_fast_counter_gave_up: a return to a call before stop->psb, which needs the
 * decoder from the start); 0 where the check fails; -1 with err. caches as for
 * jf_pt_fast_watched_new (cfg->insns: its instructions). */
int jf_pt_fast_count_from_stop(const struct jf_pt_config *cfg, struct jf_codemap *map,
			       const struct jf_pt_fast_caches *caches,
			       const struct jf_pt_fast_stop *stop,
			       const struct jf_pt_fast_policy *policy, struct jf_decoder **out,
			       struct jf_error *err);
/* Whether the record returned last was the loss up to the PSB *psb where the counter's
 * block decoder resynchronised and the fast path starts afresh next, with *policy. */
int jf_pt_fast_counter_resuming(struct jf_decoder *dec, uint64_t *psb,
				struct jf_pt_fast_policy *policy);
/* Whether jf_pt_fast_count_from_stop's counter ended because it gave up. */
int jf_pt_fast_counter_gave_up(struct jf_decoder *dec);

#endif
