/* Internal: state of a perf.data Intel PT session, shared by perf_session.c (queues and the
 * merge), perf_session_sideband.c (sideband order and the flows made from it) and
 * perf_session_count.c (blocks counted by the consumer's count gate). */
#ifndef JITFLOW_PERF_SESSION_INTERNAL_H
#define JITFLOW_PERF_SESSION_INTERNAL_H

#include "jitflow/count_gate.h"
#include "jitflow/perf_intel_pt.h"
#include "jitflow/perf_session.h"
#include "pt_fast_watch.h"

/* Where a queue is between buffers. */
enum queue_state {
	Q_IDLE,      /* no buffer: look for the next AUXTRACE record of this queue */
	Q_LOCATED,   /* next buffer found, its start key known; decoder not made yet (so that
	              * sideband up to its start is applied first) */
	Q_DECODING,  /* decoding a buffer */
	Q_DONE,      /* no more buffers */
};

/* A piece of the file copied into a stitch. */
struct stitch_part {
	const uint8_t *bytes;
	uint64_t size, file_off;
};

struct queue {
	uint32_t idx;             /* AUXTRACE idx */
	uint32_t cpu;
	int32_t pid, tid;         /* current context (-1 = unknown) */
	uint32_t source;          /* flow source: cpu (per-CPU) or idx (per-thread) */
	enum queue_state state;
	struct jf_perf_cursor scan; /* where to look for the next AUXTRACE of this queue */
	struct jf_perf_record buf;  /* the located buffer's AUXTRACE record */
	uint64_t buf_skip;        /* bytes at buf's start already decoded through a stitch */
	uint64_t buf_lost_from;   /* < buf_skip: [buf_lost_from, buf_skip) was skipped */
	struct jf_perf_record next; /* the queue's following buffer, when looked ahead */
	int have_next;
	uint64_t next_skip;       /* what the stitch into next decodes of it */
	uint64_t next_lost_from;
	uint64_t next_head;       /* the stitch takes [0, next_head) of next */
	struct jf_decoder *dec;
	int dec_counts;           /* dec is the fast path's counter (count_when_fast) */
	/* Counting by a gate: dec's records in bulk, where it keeps them (its next batch
	 * call moves on), so that counted blocks are not copied (pull). */
	const struct jf_flow *batch;
	size_t batch_n, batch_pos;
	/* Stitching consecutive buffers (see perf_session.c): the segment being decoded. */
	int pending_stitch;       /* after this segment: decode the stitch into next */
	uint64_t tail_from;       /* the stitch's part of buf: [tail_from, size) */
	int in_stitch;            /* the decoder runs over stitch[] */
	uint8_t *stitch;
	size_t stitch_cap;
	struct stitch_part *parts; /* what stitch[] holds, in order */
	size_t nparts, cap_parts;
	int stitch_target;        /* the stitch ends in next's first PSB+ (next follows) */
	int continues;            /* a stitch follows: this segment's end is not the trace's */
	uint64_t seg_end;         /* end of buf's own segment (after its last PSB+) */
	uint64_t overlap_from;    /* file offset of the PSB+ the next segment starts with */
	int overlap_error;        /* an error there: the next segment must skip that PSB */
	uint64_t key;             /* merge key of the last flow (or of the buffer start) */
	int have_peek;
	struct jf_flow peek;
};

/* A sideband record waiting for its turn (the record is re-read when delivered). */
struct sb_entry {
	uint64_t key, seq, offset;
};

enum { OUT_MAX = 4 };

/* An instruction cache and the code map it reads (see insns_for in perf_session.c). */
struct map_insns {
	struct jf_codemap *map;
	struct jf_insn_cache *cache;
};

/* The fast path's caches over one code map (see new_decoder in perf_session.c). */
struct map_fast {
	struct jf_codemap *map;
	int counting;             /* the counting path's caches, else those of returned blocks */
	struct jf_pt_fast_caches caches;
};

struct session {
	struct jf_perf_data *data;
	struct jf_perf_session_hooks hooks;
	struct jf_perf_intel_pt pt;
	struct jf_perf_session_options opts;
	struct jf_codemap *empty_map; /* for queues whose process has no map */
	struct jf_decoder *self;      /* the jf_decoder wrapping this session (for stats) */
	int timeless;

	struct queue *q;
	size_t nq;
	/* The queue the merge chose last, and the least (key, index) of the others then:
	 * while its key stays below that and nothing else is due, it is the merge's choice
	 * again (session_next). NULL once anything else happened. */
	struct queue *running;
	uint64_t rival_key;
	size_t rival_idx;
	struct map_insns *insns;      /* one per code map the queues' decoders used */
	size_t ninsns;

	/* Sideband, reordered by time within perf's rounds (see perf_session_sideband.c). */
	struct jf_perf_cursor sb_cur;
	int sb_eof;
	struct sb_entry *heap;
	size_t nheap, cap_heap;
	uint64_t seq, sb_last_key, round_max, next_flush, flush_limit;
	uint64_t reorder_overflows;   /* rounds larger than the reorder window */

	/* Flows made from sideband, returned before anything else. */
	struct jf_flow out[OUT_MAX];
	int nout, outpos;

	/* Whole-file page release behind the decode: [release_from, ...) is still mapped.
	 * Cursors that read record headers fault 64 KiB windows back in, so each range is
	 * released again one step later (release_next). */
	uint64_t release_from, release_next;

	/* Sideband records that may change code maps (MMAP, MMAP2, FORK, COMM) not given to
	 * on_record yet: counted by the prescan, down to 0 as they are delivered. */
	uint64_t map_records_left;
	/* The fast path's caches for each code map (fast_when_settled), and what it did. */
	struct map_fast *fast;
	size_t nfast;
	struct jf_perf_session_report report;
	/* The consumer's count gate (perf_session_count.c), kept where stat counts. */
	struct jf_count_gate gate;
	int has_gate;
	uint64_t unknown_records;
	struct jf_error fatal;        /* a framing error: the stream ends with it */
	int failed;
	int cut_reported;             /* the file's cut (jf_perf_data_cut_flow) */
};

/* Whether the sideband's next record goes before a flow at key k (ties go to the sideband,
 * so that an MMAP applies before code at the same time is decoded). */
static inline int jf_session_sideband_first(const struct session *s, uint64_t k)
{
	return s->nheap && s->heap[0].key <= k;
}

/* The merge key of queue q once it has returned flow f. */
static inline uint64_t jf_session_flow_key(const struct session *s, const struct queue *q,
					   const struct jf_flow *f)
{
	if (!s->timeless && (f->flags & JF_FLOW_HAS_TIME) && f->time > q->key)
		return f->time;
	return q->key;
}

/* Whether the merge would go on with q, the queue decoding (s->running), once q's key is
 * k: nothing in the sideband is due before, and q stays ahead of every other queue. */
static inline int jf_session_runs_on(const struct session *s, const struct queue *q, uint64_t k)
{
	if (jf_session_sideband_first(s, k))
		return 0;
	if (s->rival_idx == s->nq)
		return 1;
	return k < s->rival_key || (k == s->rival_key && (size_t)(q - s->q) < s->rival_idx);
}

/* Counting blocks by the consumer's count gate (perf_session_count.c), while q's decoder
 * returns records in one pull. */
struct count_run {
	int on;                   /* the gate gave a limit */
	struct jf_count_limit limit;
	/* Blocks the limit may name (jf_count_gate_acts_on answers): those that start in
	 * [starts_from, starts_from + starts_span], and those that end in a return at an
	 * instruction in [returns_from, returns_from + returns_span]. */
	uint64_t starts_from, starts_span, returns_from, returns_span;
	uint64_t insns_left;      /* instructions the gate lets count still */
	uint64_t insns_left_told; /* insns_left when the gate was last told */
	uint64_t time_below;      /* a block with a time is counted only below this: the
				   * gate's limit and the merge's (jf_session_runs_on) */
	uint64_t blocks;          /* counted since the gate was told */
	uint64_t tmin, tmax;      /* their time span; tmin > tmax while none had a time */
	struct jf_block last;     /* the last block counted */
};
/* The session's gate function (jitflow/count_gate.h): kept where stat counts. */
int jf_session_set_gate(void *self, const struct jf_count_gate *gate);
/* Before pulling q's records: the gate's limit for q's source. */
void jf_session_count_begin(struct session *s, struct queue *q, struct count_run *run);
/* Whether the gate's consumer acts on block b wherever it comes (a marker call). Out of
 * line: asked only of the blocks in the run's ranges, where inline its loads of the limit
 * were made for every batch. */
int jf_count_gate_acts_on(const struct jf_count_limit *limit, const struct jf_block *b);

/* Count the blocks that recs[0, n) (the running queue's decoder's batch, in place) begins
 * with, up to the first record the run does not let count (returned, with what follows):
 * how many. Every gated block passes here, in batches of one where libipt's block decoder
 * decodes and of a stretch where the fast path does: inline, the limit in locals, the
 * marker question asked only of blocks in the ranges the limit may name, and the run
 * written once per batch (its last block copied: the decoder's next batch may overwrite
 * the batch). */
static inline size_t jf_session_count_blocks(struct count_run *run, const struct jf_flow *recs,
					      size_t n)
{
	const uint64_t below = run->time_below;
	const uint64_t starts_from = run->starts_from, starts_span = run->starts_span;
	const uint64_t returns_from = run->returns_from, returns_span = run->returns_span;
	uint64_t left = run->insns_left, tmin = run->tmin, tmax = run->tmax;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct jf_flow *r = &recs[i];
		const struct jf_block *b = &r->u.block;
		const int timed = (r->flags & JF_FLOW_HAS_TIME) != 0;

		if (r->kind != JF_FLOW_BLOCK || b->ninsn > left || (timed && r->time >= below))
			break;
		if ((b->start - starts_from <= starts_span ||
		     (b->end == JF_END_RETURN && b->last - returns_from <= returns_span)) &&
		    jf_count_gate_acts_on(&run->limit, b))
			break;
		left -= b->ninsn;
		if (timed) {
			tmin = r->time < tmin ? r->time : tmin;
			tmax = r->time > tmax ? r->time : tmax;
		}
	}
	if (!i)
		return 0;
	run->insns_left = left;
	run->blocks += i;
	run->tmin = tmin;
	run->tmax = tmax;
	run->last = recs[i - 1].u.block;
	return i;
}

/* Before q's pull returns: the gate told what was counted. */
void jf_session_count_end(struct session *s, struct queue *q, struct count_run *run);

/* Make sure the heap's head is deliverable (or the heap is empty at the end). */
int jf_sb_fill(struct session *s);

/* Whether jf_sb_fill has anything to do: asked before every flow, mostly no. */
static inline int jf_sb_needs_fill(const struct session *s)
{
	return !s->sb_eof && (s->nheap == 0 || s->heap[0].key > s->flush_limit);
}
/* Deliver the head: on_record, context updates, flows into s->out. */
void jf_sb_deliver(struct session *s);

/* PSBs in a buffer (perf_session_psb.c). Offsets are relative to data; "none" = size. */
uint64_t jf_psb_first(const uint8_t *data, uint64_t size, uint64_t *tsc, int *have_tsc);
uint64_t jf_psb_last(const uint8_t *data, uint64_t size);
/* The offset after the PSBEND of the PSB+ at psb, 0 if it is not complete in data. */
uint64_t jf_psb_header_end(const uint8_t *data, uint64_t size, uint64_t psb);

/* The queue a sideband record belongs to (NULL if none). */
struct queue *jf_session_queue_for(struct session *s, int32_t tid, uint32_t cpu, int has_cpu);

#endif
