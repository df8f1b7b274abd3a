/* Internal: the fast Intel PT path's decoder state (pt_fast.c), shared with the part that
 * returns blocks as libipt's block decoder cuts them (pt_fast_emit.c). */
#ifndef JITFLOW_PT_FAST_INTERNAL_H
#define JITFLOW_PT_FAST_INTERNAL_H

#include <intel-pt.h>
#include <stddef.h>
#include <string.h>
#include <stdint.h>

#include "jitflow/pt.h"
#include "pt_fast_block_paths.h"
#include "pt_fast_blocks.h"
#include "pt_fast_payloads.h"
#include "pt_fast_time.h"
#include "pt_fast_watch.h"
#include "pt_status_check.h"

#include "jitflow/pt_fast.h"

enum {
	RETSTACK_SIZE = 64,        /* libipt's return stack: the 64 latest calls */
	QUEUE_MAX = 16384,         /* flow records held back for one PSB stretch */
	QUEUE_MAX_BLOCKS = 1 << 17, /* ...when blocks are returned too (14 MiB each at most:
				    * a PSB period of 4 KiB holds up to ~24 Ki TNT bits, and
				    * the direct calls and jumps between them; more hands
				    * over) */
	QUEUE_FIRST = 256,         /* ...allocated at first (stat -j N makes a decoder per
				    * segment: two 1.7 MiB queues each were mapped, faulted
				    * in and unmapped every 256 KiB of trace) */
	BLOCK_CACHE_LOG2 = 17,     /* 128 Ki blocks, two per set (6 MiB; JIT code that keeps
				    * changing missed four times as often with 32 Ki) */
	PAYLOAD_CACHE_LOG2 = 14,   /* 16 Ki TNT payload paths, in pairs of slots (1.7 MiB) */
	BLOCK_PATH_CACHE_LOG2 = 16, /* ...and 64 Ki with their blocks, returning blocks (16
				     * MiB; one per code map for all of a session's buffers:
				     * a HotSpot recording's 29 M lookups followed 2.45 M
				     * paths with 32 Ki, 1.61 M with 64 Ki, 1.08 M with 128
				     * Ki, which took more time for its 32 MiB) */
	MAX_TIP_WALK = 1 << 16,    /* blocks (or payload paths) walked without trace */
	MAX_PSB_EVENTS = 16,       /* status updates of one PSB+ */
	MAX_WALK = 1 << 20,        /* instructions walked to bind one disable event */
	MAX_RESUME_BACKOFF = 63,   /* resynchronisations let pass after fruitless resumes */
};

/* What reads_ahead_cleanly (pt_fast_packets.c) found from one offset, kept for the offsets
 * it passed on the way where a read ahead from them would find the same: a run of PSB+s
 * while tracing is off asks from each PSBEND in turn, and would read the rest of the run
 * again each time. */
enum { READ_AHEAD_MARKS = 64 };
struct read_ahead_memo {
	int clean;                        /* what the read found */
	unsigned n, next;                 /* marks kept; the first not yet asked for */
	uint64_t marks[READ_AHEAD_MARKS]; /* offsets after a PSBEND it read, in order */
};

/* Flow records held back until their stretch of trace is known to decode here. */
struct queue {
	struct jf_flow *flows;
	size_t n, pos, cap;
};

/* Queue storage kept by a set of caches for the decoders that use it one after another:
 * a session makes a fast decoder per AUX buffer, and a hand-over a fresh one at each
 * join attempt; each grew its two queues again from QUEUE_FIRST to a PSB stretch's
 * blocks, copying them at every doubling (4% of a HotSpot recording's `stat`). A freed
 * decoder's queues go here (up to QUEUE_POOL of them), a new queue's first growth takes
 * one. Used by one thread at a time, as the caches are. */
enum { QUEUE_POOL = 4 };
struct jf_fast_queue_pool {
	struct jf_flow *flows[QUEUE_POOL];
	size_t cap[QUEUE_POOL];
	unsigned n;
};


/* The time libipt's query decoder gives an event where it makes it (the event may be
 * returned later, at the packet it binds to): timed (a TSC seen) or not, and whether a
 * timing packet had come then (an event without a time is not modelled then). */
struct jf_fast_stamp {
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;
	uint8_t has_tsc, timed;
};

/* The last records returned, a ring (pt_fast_realign.c): where a hand-over decodes again
 * from the trace's start and code changed since, it finds by them where it was. */
enum { JF_TAIL_MAX = 16 };
struct jf_fast_tail {
	struct jf_flow flows[JF_TAIL_MAX];
	unsigned n, next;           /* how many it holds, where the next goes */
	uint64_t end;               /* records returned in all after its last */
};

/* pt_fast_optimism.c's state, per decoder. */
enum { JF_SNAP_PENDING_MAX = 32 };
struct jf_fast_optimism {
	struct jf_fast_changing ch; /* the stretch's fills (the block cache's while decoding) */
	size_t check;               /* the next of them whose record is checked when returned */
	struct jf_fast_changing_fill *kept; /* a replay's: the fills of the decode it replays */
	size_t kept_cap;
	uint64_t *kept_set;         /* ...and their addresses (jf_fast_changing) */
	size_t kept_set_size;
	int snapped;                /* snap holds the decoder as the stretch in ready began... */
	struct fast *snap;
	struct jf_flow snap_pending[JF_SNAP_PENDING_MAX]; /* ...with its first records */
	size_t snap_pending_n;
	struct jf_fast_block taken; /* the block last taken (jf_fast_take_changing) */
	struct jf_fast_blocks *replay_blocks; /* a replay's block cache (see pt_fast_optimism.c) */
	int counted;                /* the stretch is counted among changing_stretches */
	int before_goes_on;         /* the record before the stretch may go on (may_go_on) */
};

struct fast {
	struct jf_pt_config cfg;
	struct jf_codemap *map;
	uint64_t generation;        /* the code map version decoding started with */
	struct pt_query_decoder *qry;
	struct pt_packet_decoder *pkt; /* the packets this path follows... */
	uint64_t pkt_pos;           /* ...which are at this offset, if pkt_ahead: the counting
				     * loop reads IP packets itself and moves pkt only where it
				     * is used again (jf_fast_pkt_offset) */
	int pkt_ahead;
	struct jf_payloads *payloads;
	int by_packets;             /* following packets: start() has synchronised */
	struct pt_packet_decoder *psbs; /* finds PSBs (restart points) */
	struct pt_block_decoder *sync_check; /* whether libipt syncs at a PSB (pt_fast_resync.c) */
	struct jf_pt_check *check;
	struct jf_insn_cache *insns;
	struct jf_fast_blocks *blocks;
	struct jf_decode_stats *stats;
	struct jf_decoder *dec;     /* the handle stats belong to (for its progress) */

	/* libipt's block decoder state, for what this path models */
	uint64_t ip;
	int enabled;
	int skd022;                 /* the CPU has erratum SKD022 (async disables) */
	int bdm70;                  /* ...BDM70 (FUPs in PSB+ while tracing is off) */
	int skd010, apl12;          /* ...SKD010 and APL12 (the binding of an overflow) */
	enum jf_isa isa;
	int status;                 /* the status of the query decoder's sync (start()) */
	uint64_t ret[RETSTACK_SIZE + 1];
	uint8_t top, bottom;

	/* Following packets of a trace with timing: libipt's time estimation as the query
	 * decoder keeps it
	 * (pt_fast_time.h), and the time as pt_qry_time gives it, read at the last packet a
	 * query consumed (a TNT, a TIP, an event's): the time of the records made now. */
	struct jf_pt_time time;
	struct jf_pt_time_config time_cfg;
	int timed;                  /* a timing packet was read since decoding started... */
	int timed_here;             /* ...since the stretch began */
	int time_dirty;             /* time changed since last_time was read */
	struct {
		uint64_t tsc, ns;   /* ns: 0 where libipt has no time */
		uint32_t lost_mtc, lost_cyc;
		uint8_t cbr;
	} last_time;
	int skd007;                 /* erratum SKD007 (a CYC that may hide an OVF) */
	/* The time span of a stretch: a block that ended at a query waits for the next read,
	 * which gives it its time if it is an event's (jf_fast_note_query_block_time). */
	int block_time_waits;
	uint64_t block_time_then;   /* ...else the time it had when it ended */

	/* what libipt's query decoder keeps between packets, when following packets */
	uint64_t last_ip;           /* IP compression: the last IP packet's full address */
	int have_ip, ip_suppressed;
	int pend_fup;               /* a FUP whose TIP or TIP.PGD has not come yet... */
	uint64_t fup_ip;            /* ...and its IP */
	struct jf_fast_stamp fup_stamp; /* ...and the time its event has (taken at the FUP) */
	int pend_mode;              /* a MODE.exec whose TIP.PGE has not come yet... */
	enum pt_exec_mode mode;     /* ...and its mode */
	struct jf_fast_stamp mode_stamp;
	size_t await;               /* pending records from here on get the next stop's offset */
	int settle_due;             /* one may (queued since the last stop, or counted:
				     * nunsettled): the one test at every stop
				     * (pt_fast_packets.c, settle) */

	/* the stretch since the last PSB reached: not public yet */
	uint64_t restart;           /* its PSB: where the block decoder would take over */
	uint64_t next_psb;          /* the PSB after it (the trace size if none) */
	uint64_t insns_n, blocks_n; /* instructions and blocks decoded in it */
	uint64_t tmin, tmax;        /* time span of its blocks (and counted events) */
	int has_time;
	uint64_t events_n;          /* cfg.count_plain_events: its event records counted... */
	uint64_t events_hash;       /* ...and, watched, a hash of their offsets, kinds, ips
				     * (jf_fast_event_hash)... */
	/* ...where those counted as they were made (pt_fast_packets.c,
	 * count_untimed_switch) wait for the offset a queued record would take: the next
	 * stop's (jf_fast_settle), or at a commit before that stop (a
	 * resynchronisation's), their own, as queued ones keep theirs. nunsettled of them,
	 * the sum of their jf_fast_event_what, and of their parts at their own offsets. */
	unsigned nunsettled;
	uint64_t unsettled_what, unsettled_own;
	struct queue pending, ready;

	uint64_t prev_restart;      /* the PSB of the stretch committed last... */
	size_t stretch_n;           /* ...whose records stay in ready.flows (returned) */

	struct jf_decoder *old;     /* after handing over: the block decoder... */
	uint64_t skip_insns;        /* ...whose first instructions and non-block records... */
	uint64_t skip_records;      /* ...were already counted here */
	uint64_t committed_records; /* non-block records released (or counted) so far */
	struct jf_fast_counted counted[2]; /* counting: the last two stretches committed */
	unsigned ncounted;
	int count_local;            /* counting: old started at restart or a stretch or two
				     * before (pt_fast_count_handover.c) */
	int near;                   /* returning blocks: old started at the PSB before the
				     * records it skips, which it finds by the records
				     * returned last (pt_fast_handover.c, hand_over_from) */
	int local;                  /* old started at prev_restart (pt_fast_handover.c)... */
	struct jf_flow *held;       /* ...its records read past the join, returned first */
	size_t held_n, held_pos;
	uint64_t returned_after;    /* records returned from old (or held) */
	/* Returning blocks, the records returned last (tail) and, while a decoder from the
	 * start looks for them (aligning), the last it skipped (seen). */
	struct jf_fast_tail tail, seen;
	int aligning;
	int resume;                 /* old resynchronised after an error at resume_psb: this
				     * path goes on from there (pt_fast.c) */
	uint64_t resume_psb;
	int resync;                 /* ...or this path found an error there is no need to hand
				     * over for, and synchronises at resume_psb (pt_fast_resync.c) */
	int fresh;                  /* following packets: nothing but the PSB+ decoding started
				     * at (and PADs, MODE.exec) read so far */
	int ovf_off;                /* following packets: tracing off since an overflow, which
				     * libipt 2.1 takes for unknown (no status check applies) */
	int off_at_ip;              /* tracing off since an asynchronous disable: libipt's IP is
				     * where it stopped (f->ip) */
	int off_at_zero;            /* ...since a TIP.PGD alone, bound to the branch at f->ip:
				     * libipt's IP is 0 but after a far branch or an
				     * indirect call (pt_fast_bad_packet.c) */
	int chained;                /* following packets: the PSB+ just read has updates and
				     * another PSB+ follows it (pt_fast_packets.c, psb_follows) */
	struct read_ahead_memo read_ahead;
	/* Where the errors come one PSB period apart, taking over again costs more than it
	 * saves (the stretch up to the next error is decoded twice): after a resume that
	 * committed nothing, the next resume_backoff resynchronisations are let pass (1, 3,
	 * 7... up to MAX_RESUME_BACKOFF; back to 0 once one commits). */
	uint64_t resume_backoff, resumes_to_skip;
	uint64_t fast_bytes_at_resume;
	uint64_t insns_before;      /* instructions counted before the PSB this path started
				     * at (a hand-over from there skips only those after) */
	uint64_t released;          /* trace bytes below this were given back to the kernel */
	int done;
	int popped_empty;           /* a return found the return stack empty */
	int local_only;             /* jf_pt_fast_count_from_stop: never a block decoder from
				     * the start... */
	int gave_up;                /* ...where one was needed: the decode ended there */
	struct jf_pt_fast_report report;

	jf_pt_fast_watch_fn watch;  /* pt_fast_watch.h: told of each commit; never hands over */
	void *watch_ctx;
	int watch_resyncs;          /* ...but resynchronises as the plain path does */
	int paused;                 /* the watcher asked to stop after the last commit */
	int committed;              /* a commit since the packet loop last asked
				     * jf_fast_decoding (pt_fast_packets.c, goes_on) */
	int borrowed;               /* insns, blocks and payloads are the watcher's */

	/* jf_pt_fast_decoder_new: blocks are returned as records (pt_fast_emit.c) */
	int emit;
	int joinable;               /* the last record queued is a block the next one continues */
	uint64_t emit_offset;       /* the offset of blocks walked to an event's IP */
	int resumed;                /* the last enable resumed where tracing stopped */
	size_t retime;              /* a pending record (index + 1) whose time is that after
				     * the next event is read (libipt reads it eagerly) */
	int resume_unsure;          /* stopped at a far branch: a far call resumes after it */

	uint64_t tip_target;        /* the last TIP's, TIP.PGE's or FUP+TIP's target
				     * (pt_fast_bad_packet.c: whether libipt's block starts at
				     * f->ip) */
	struct jf_flow batch_one;   /* jf_decoder_next_batch's record after a hand-over */

	/* Returning blocks after a hand-over: a fast decoder started afresh at a later PSB,
	 * which takes over again where the block decoder's records join its own
	 * (pt_fast_join.c) */
	uint64_t join_at;           /* the PSB the next attempt starts at (0: none planned) */
	unsigned join_backoff;      /* PSBs let pass after an attempt that failed */
	struct fast *attempt;       /* the attempt (kept between attempts for its decoders)... */
	int attempt_on;             /* ...under way: its ready records are being compared... */
	int attempt_matching;       /* ...the block decoder's have met its first block... */
	uint64_t attempt_matched;   /* ...and this many of them were equal to its */
	int join_attempt;           /* this decoder is an attempt: it stops where it would hand
				     * over (the block decoder it is to join goes on) */
	struct jf_block_paths *block_paths; /* TNT payload paths with their blocks (the
					     * caches', or made at the first TNT; NULL if out
					     * of memory)... */
	struct jf_fast_queue_pool *queues; /* the borrowed caches' queue storage, or NULL */
	int paths_borrowed;         /* ...the caches' (kept from one decoder to the next) */

	/* Returning blocks over code that may change (pt_fast_optimism.c): the blocks decoded
	 * ahead from such code, checked as their records are returned, and the decoder as the
	 * stretch being returned began (NULL until needed)... */
	struct jf_fast_optimism *opt;
	int rolling;                /* ...decoding that stretch again: 1, 2 where that met
				     * what it does not model (jf_fast_hand_over)... */
	int empty_commit;           /* ...and a commit left nothing to return: decoding stops
				     * there, so that the stretch after it begins as any other
				     * (jf_fast_decode_stretch), not with the one before's window
				     * on such code closed */
};

/* The packet path's offset, the packet decoder moved there first where the counting loop
 * went on without it (each repositioning is a call into libipt: 5% of `stat` on a trace
 * with a TIP every few packets). */
static inline int jf_fast_pkt_offset(struct fast *f, uint64_t *off)
{
	if (f->pkt_ahead) {
		if (pt_pkt_sync_set(f->pkt, f->pkt_pos) < 0)
			return -1;
		f->pkt_ahead = 0;
		*off = f->pkt_pos;
		return 0;
	}
	return pt_pkt_get_offset(f->pkt, off);
}

/* Move the packet decoder to off. */
static inline int jf_fast_pkt_seek(struct fast *f, uint64_t off)
{
	f->pkt_ahead = 0;
	return pt_pkt_sync_set(f->pkt, off);
}

/* The offset of the first packet from off on that is not one this path reads itself, as
 * libipt's packet decoder reads it (a PAD, TNT-8, TIP, TIP.PGE, TIP.PGD, FUP, MODE.exec,
 * CYC or MTC), or of one libipt's packet decoder is to read (pt_fast_packets.c); the
 * trace's size if all are. One call for a run of them: a walk to the next PSB after an
 * error steps over a packet per byte there, mostly TNT-8s. */
uint64_t jf_fast_skip_simple_packets(const struct fast *f, uint64_t off);

/* A record that cfg.count_plain_events counts: its part of events_hash, what it was (kind,
 * ip: jf_fast_event_what) times where (offset, the base's added: 2 * offset + 1, odd, so
 * that neither factor is lost). The parts are summed, not chained: a TIP.PGE's or
 * TIP.PGD's record is counted as it is made, or queued and counted at the commit,
 * depending on the decoder's state (pt_fast_packets.c, count_untimed_switch), and two
 * decoders that took different ways through the same stretch compare equal; and the
 * offset, known only at the next stop, is a factor that many records' parts can take at
 * once (jf_fast_settle). */
static inline uint64_t jf_fast_event_what(uint16_t kind, uint64_t ip)
{
	return (ip ^ (uint64_t)kind << 56) * 0x9e3779b97f4a7c15ull;
}

static inline uint64_t jf_fast_event_hash(uint64_t offset, uint16_t kind, uint64_t ip)
{
	return jf_fast_event_what(kind, ip) * (2 * offset + 1);
}

/* Records that cfg.count_plain_events counts instead of returning. */
static inline int jf_fast_plain_event(const struct jf_flow *fl)
{
	return fl->kind != JF_FLOW_BLOCK && fl->kind != JF_FLOW_ERROR &&
	       fl->kind != JF_FLOW_LOST && fl->kind != JF_FLOW_OVERFLOW;
}

/* Whether the code at ip may be a VM entry, where libipt's workaround of erratum SKD022
 * applies (pt_fast_errata.c). */
int jf_fast_may_be_vm_entry(struct fast *f, uint64_t ip);
/* Where libipt's query decoder works around erratum BDM70 (a PSB+'s FUP ignored while
 * tracing is off) and SKD007 (a CYC that is an OVF's start): pt_fast_errata.c. */
int jf_fast_bdm70_ignores_fup(struct fast *f, uint64_t after);
int jf_fast_skd007_hits(const struct fast *f, const struct pt_packet *p, uint64_t off);

/* The record f->retime names (if any) takes the time now: libipt's block decoder read the
 * event pending after the query that ended that block before returning it. */
void jf_fast_retime(struct fast *f);

/* pt_fast.c's helpers that pt_fast_emit.c uses. */
/* Room for one more pending record: 0, or -1 when the stretch holds as many as it may. */
int jf_fast_queue_grow(struct fast *f);

/* f's queue arrays to its caches' pool (or freed); its queues left empty. */
void jf_fast_release_queues(struct fast *f);

/* The decoder's time in ns (0: none), as libipt's block decoder stamps a record now: the
 * time read at the last packet a query of libipt's would have consumed (0 without timing
 * packets; jf_fast_read_time). */
static inline uint64_t jf_fast_time_now(struct fast *f)
{
	return f->last_time.ns;
}

/* A record with every field cleared (jf_fast_queue_flow copies it). */
static const struct jf_flow jf_fast_no_flow;

/* Queue a record of this kind at offset, stamped with the decoder's time now; NULL if the
 * stretch is full (not modelled). Inline: a block's record is queued for every block. */
static inline struct jf_flow *jf_fast_queue_flow(struct fast *f, enum jf_flow_kind kind,
						 uint64_t offset)
{
	struct jf_flow *fl;
	uint64_t t;

	if (f->pending.n == f->pending.cap && jf_fast_queue_grow(f) < 0)
		return NULL;
	fl = &f->pending.flows[f->pending.n++];
	f->settle_due = 1;
	/* A block's record is its header and the block, which emit_range fills whole
	 * (pt_decoder.c): clearing the rest of the union too cost as much as the block. */
	if (kind == JF_FLOW_BLOCK)
		memset(fl, 0, offsetof(struct jf_flow, u));
	else
		*fl = jf_fast_no_flow; /* a copy: GCC's memset of it is `rep stos` (slow) */
	f->joinable = 0;
	fl->kind = (uint16_t)kind;
	fl->source = f->cfg.source;
	fl->offset = f->cfg.base_offset + offset;
	t = jf_fast_time_now(f);
	if (t) {
		fl->time = t;
		fl->flags |= JF_FLOW_HAS_TIME;
	}
	return fl;
}
void jf_fast_settle(struct fast *f, uint64_t offset);

/* Whether decoding goes on with the next packet: nothing committed to return, no
 * hand-over, resynchronisation or pause asked for, the trace not at its end (pt_fast.c's
 * decode loop, and the packet loop, which reads on without returning to it). */
static inline int jf_fast_decoding(const struct fast *f)
{
	return !f->old && !f->done && !f->paused && !f->resync && f->ready.n == 0 &&
	       !f->empty_commit;
}

/* Following packets, a query consumes a packet now: the time it reads (jf_fast_time_now's
 * from here on). */
static inline void jf_fast_read_time(struct fast *f)
{
	if (!f->time_dirty)
		return;
	f->time_dirty = 0;
	f->last_time.tsc = f->time.tsc;
	f->last_time.lost_mtc = f->time.lost_mtc;
	f->last_time.lost_cyc = f->time.lost_cyc;
	f->last_time.cbr = f->time.have_cbr ? f->time.cbr : 0;
	f->last_time.ns = f->time.have_tsc && f->time.tsc ? jf_tsc_to_ns(&f->cfg.conv, f->time.tsc) : 0;
}
/* pt_fast.c: the time span of a stretch. A block that ended without a query (walked to an
 * event's IP) is stamped with the time now. One that ended at a query (a TNT bit, a TIP)
 * is returned by libipt's block decoder after it has fetched the event that query left
 * pending (pt_blk_process_trailing_events): it has the time after that read, which the
 * read says (jf_fast_block_time_after_event), else the time now; either is known at the
 * next read (a query, a commit, the end). */
static inline void jf_fast_note_time(struct fast *f, uint64_t t)
{
	if (!f->has_time || t < f->tmin)
		f->tmin = t;
	if (!f->has_time || t > f->tmax)
		f->tmax = t;
	f->has_time = 1;
}

static inline void jf_fast_settle_block_time(struct fast *f)
{
	if (!f->block_time_waits)
		return;
	f->block_time_waits = 0;
	if (f->block_time_then)
		jf_fast_note_time(f, f->block_time_then);
}

/* pt_decoder.c stamps each block with the decoder's time, if it has one. (These are
 * inline: the counting loop calls them for every TNT and TIP packet.) */
static inline void jf_fast_note_block_time(struct fast *f)
{
	uint64_t t = jf_fast_time_now(f);

	jf_fast_settle_block_time(f);
	if (t)
		jf_fast_note_time(f, t);
}

static inline void jf_fast_note_query_block_time(struct fast *f)
{
	jf_fast_settle_block_time(f);
	f->block_time_waits = 1;
	f->block_time_then = jf_fast_time_now(f);
}

static inline void jf_fast_block_time_after_event(struct fast *f)
{
	uint64_t t;

	if (!f->block_time_waits)
		return;
	f->block_time_waits = 0;
	t = jf_fast_time_now(f);
	if (t)
		jf_fast_note_time(f, t);
}
/* libipt's return stack (pt_retstack.c's rules): the latest 64 return addresses. Inline:
 * the counting loop pushes and pops on every call and return it follows. */
static inline void jf_fast_push_return(struct fast *f, uint64_t ip)
{
	f->ret[f->top] = ip;
	f->top = (uint8_t)(f->top == RETSTACK_SIZE ? 0 : f->top + 1);
	if (f->bottom == f->top)
		f->bottom = (uint8_t)(f->bottom == RETSTACK_SIZE ? 0 : f->bottom + 1);
}

static inline int jf_fast_pop_return(struct fast *f, uint64_t *ip)
{
	if (f->top == f->bottom) {
		f->popped_empty = 1;
		return -1;
	}
	f->top = (uint8_t)(!f->top ? RETSTACK_SIZE : f->top - 1);
	*ip = f->ret[f->top];
	return 0;
}

/* pt_fast.c, for the packet path: the stretch decoded since the last PSB is counted and
 * its records released (new_restart: the PSB that ends it); PSB+'s status updates bound
 * to the FUP's ip (fup: whether there is one) reached by walking; one event applied as
 * libipt's block decoder applies it; the end of the trace at offset. Those returning int
 * return 0, or 1 for what this path does not model (it then hands over). */
void jf_fast_commit(struct fast *f, uint64_t new_restart);
/* pt_fast.c: the watcher told of a commit at psb, or that the stretch from psb on is not
 * modelled (pt_fast_watch.h; 1: it asks to pause). */
int jf_fast_tell_watcher(struct fast *f, uint64_t psb, int unmodelled);
/* pt_fast.c: the sync, packet and PSB decoders and the caches (unless borrowed) freed;
 * only the decoders (a hand-over keeps the caches for when this path resumes). */
void jf_fast_free_state(struct fast *f);
void jf_fast_free_decoders(struct fast *f);

/* pt_fast_handover.c: what this path does not model makes libipt's block decoder decode on
 * from the last PSB reached (0, or -1 with err); its records after that, one by one (as
 * jf_decoder_next). */
int jf_fast_hand_over(struct fast *f, struct jf_error *err);
/* pt_fast_count_handover.c: counting, a block decoder from the PSB one or two stretches
 * before f->restart, checked against them (1), or 0 where it cannot be (-1: out of
 * memory). */
int jf_fast_count_hand_over_local(struct fast *f, struct jf_error *err);
/* pt_fast_count_handover.c: counting, a block decoder from psb, where the one-thread
 * decoder started afresh (a resynchronisation) and has committed nothing since: what its
 * hand-over from its start makes. Returns 1, -1 with err. */
int jf_fast_count_hand_over_fresh(struct fast *f, uint64_t psb, struct jf_error *err);
/* pt_fast_count_handover.c: counting, a block decoder from f->restart itself, where a
 * watched decoder started there stops where this path stops, having decoded the same (1;
 * 0 where it does not: -1 out of memory). Called before the stretch is dropped. */
int jf_fast_count_hand_over_here(struct fast *f, struct jf_error *err);
/* pt_fast.c: the state carried into the stretch after the PSB reached now; what a
 * watcher is told at psb (pt_fast_watch.h). */
void jf_fast_fill_state(struct fast *f, struct jf_pt_fast_state *st);
void jf_fast_fill_commit(struct fast *f, uint64_t psb, int unmodelled,
			 struct jf_pt_fast_commit *c);
/* pt_fast_handover.c: how many resynchronisations of the block decoder the hand-over made
 * now lets pass before the fast path takes over again (f->resumes_to_skip). */
void jf_fast_plan_resumes(struct fast *f);
/* pt_fast_count_handover.c: jf_fast_count_hand_over_here and _local for a stop made in
 * f's state (pt_fast_watch.h; f->restart is stop->psb). */
int jf_fast_count_hand_over_at_stop(struct fast *f, const struct jf_pt_fast_commit *stop,
				    struct jf_error *err);
int jf_fast_count_hand_over_before(struct fast *f, const struct jf_pt_fast_stop *stop,
				   struct jf_error *err);
int jf_fast_next_after_hand_over(struct fast *f, struct jf_flow *flow, struct jf_error *err);
/* pt_fast_realign.c: the records returned last, from the stretch committed last (at a
 * hand-over of this path) or one returned by the block decoder handed over to; whether a
 * decoder from the start skipping `skip` records can look for them (jf_fast_realign). */
void jf_fast_tail_from_stretch(struct fast *f);
void jf_fast_tail_push(struct jf_fast_tail *t, const struct jf_flow *flow, uint64_t end);
int jf_fast_tail_ends_at(const struct fast *f, uint64_t skip);
/* pt_fast_realign.c: a record the decoder from the start skips while it looks for the
 * tail: 1 when its records up to this one end as the tail does (the next is returned), 0
 * when it is to look on, -1 when it cannot be there (past the tail's last offset). */
int jf_fast_realign(struct fast *f, const struct jf_flow *flow);
int jf_fast_reach_psb_fup(struct fast *f, int fup, uint64_t ip);
int jf_fast_apply_event(struct fast *f, const struct pt_event *ev);
/* pt_fast.c: jf_fast_apply_event's TIP.PGE and TIP.PGD events (no status update), for a
 * caller without a pt_event: tracing enabled at ip; tracing disabled after the branch to ip
 * (has_ip) or at the first instruction that needs trace. 0, or 1 if not modelled. */
int jf_fast_enable_at(struct fast *f, uint64_t ip);
int jf_fast_disable_after(struct fast *f, uint64_t ip, int has_ip);
int jf_fast_finish(struct fast *f, uint64_t offset);

/* pt_fast.c: decode until a stretch is committed, the trace ends or this path hands
 * over (0, -1 with err); start afresh at psb, as after a resynchronisation, keeping the
 * caches, the queues and libipt's decoders (0, -1 with err). */
int jf_fast_decode(struct fast *f, struct jf_error *err);
int jf_fast_resume_at(struct fast *f, uint64_t psb, struct jf_error *err);
/* pt_fast.c: what a decoder keeps of keep where its decoding state starts over (a
 * resume, pt_fast_optimism.c's decode again): the code map, the caches and queue pool,
 * statistics, libipt's decoders, pt_fast_optimism.c's state. */
void jf_fast_keep_resources(struct fast *f, const struct fast *keep);

/* pt_fast_join.c: where returning blocks hands over, the PSB after the stretch handed over
 * is planned for a fast decoder that takes over again (jf_fast_join_note). */
void jf_fast_join_plan(struct fast *f);
/* pt_fast_join.c: a record the block decoder handed over to returns now (flow): compared
 * with the attempt's, which starts once that decoder reaches the planned PSB; where they
 * join, f goes on as the attempt (f->old freed). 0, or -1 with err. */
int jf_fast_join_note(struct fast *f, const struct jf_flow *flow, struct jf_error *err);
/* pt_fast_join.c: the attempt freed (with f's other state). */
void jf_fast_join_free(struct fast *f);

/* pt_fast.c: the first PSB after offset, or the trace size. */
uint64_t jf_fast_psb_after(struct fast *f, uint64_t offset);
/* pt_fast_resync.c: following packets, the error code the block decoder reports at offset at
 * (with ip) for an inconsistency libipt 2.0 lets through, or for a decode error libipt
 * reports itself (pt_fast_bad_packet.c), queued with the loss up to the next PSB, where
 * this path starts afresh. Returns 0, or 1 if not modelled. */
int jf_fast_resync_after_violation(struct fast *f, uint64_t at, int code, uint64_t ip);
/* pt_fast_resync.c: whether libipt's block decoder synchronises at psb without an error
 * (its query decoder may where it does not). */
int jf_fast_block_decoder_syncs(struct fast *f, uint64_t psb);

/* pt_fast_packets.c: following packets: the next packets while jf_fast_decoding, 0 or 1
 * if one is not modelled; and whether the PSB+ at psb has timing packets (or cannot be
 * read), where a resynchronisation is not modelled (pt_fast_resync.c). */
int jf_fast_next_packet(struct fast *f);
int jf_fast_psb_has_timing(struct fast *f, uint64_t psb);

/* pt_fast_emit.c: queue blocks as libipt's block decoder returns them (0), or 1 where
 * that is not modelled. A block b, at offset. */
int jf_fast_emit_block(struct fast *f, const struct jf_fast_block *b, uint64_t offset);
/* pt_fast.c's walk_to, returning the blocks walked. */
int jf_fast_emit_walk(struct fast *f, uint64_t to, int has_to, int bind_branch,
		      uint64_t offset);
/* pt_fast_packets.c's packet_tnt, returning the blocks (from the payload paths that keep
 * them: pt_fast_block_paths.h). */
int jf_fast_emit_tnt(struct fast *f, uint64_t bits, unsigned nbits, uint64_t offset);

/* pt_fast_optimism.c: returning blocks over code that may change (cfg.decode_ahead_changing),
 * a stretch's blocks from such code are decoded ahead from the bytes as they are, each
 * checked when the session asks for its record (when libipt's block decoder would decode
 * it), and where one changed, the stretch is decoded again from its start with the blocks
 * returned so far as they were, and from that record on as the code is now. The decode of a
 * stretch (refill, a join attempt's), its window on such code opened before it and closed
 * after it, so that no window outlives its decoder: jf_fast_decode's result. */
int jf_fast_decode_stretch(struct fast *f, struct jf_error *err);
void jf_fast_optimism_free(struct fast *f);
/* The block b, just looked up in the block cache, as this stretch takes it: where b is the
 * cache's slot for a logged fill of code that may change (jf_fast_changing) and its record
 * can be checked when returned, the block decoded ahead; else b (the block decoder's). */
const struct jf_fast_block *jf_fast_take_changing(struct fast *f, const struct jf_fast_block *b);
static inline const struct jf_fast_block *jf_fast_changing_block(struct fast *f,
								 const struct jf_fast_block *b)
{
	if (__builtin_expect(b->ninsn != 0, 1) || !f->blocks->changing)
		return b;
	return jf_fast_take_changing(f, b);
}
/* Before records are returned from ready.pos: the blocks decoded ahead among them checked
 * (the stretch decoded again where one changed). 1: return records up to *until (past
 * ready.pos, or none left in ready); 2: the block decoder handed over to returns the next
 * (f->old); -1 with err. */
int jf_fast_optimism_check(struct fast *f, size_t *until, struct jf_error *err);
/* Whether jf_fast_optimism_check has a block to check in ready (a load or two: fast_next
 * asks before every record). */
static inline int jf_fast_optimism_due(const struct fast *f)
{
	return f->opt && f->opt->check < f->opt->ch.n;
}
/* pt_fast_handover.c: libipt's block decoder from the trace's start, which skips the
 * records already returned (skip_records of them), from this stretch on (0, -1 with err). */
int jf_fast_hand_over_from_start(struct fast *f, uint64_t skip_records, struct jf_error *err);

#endif
