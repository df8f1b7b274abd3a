/* Internal: the segments of an Intel PT stream split for parallel decoding, cut at PSBs as
 * worker threads need them, and handed to the calling thread in trace order
 * (pt_parallel.c decodes them into flows, pt_parallel_count.c counts them). At most
 * max_alive segments exist at a time, so memory depends on the segment size, not the
 * trace. */
#ifndef JITFLOW_PT_SEG_QUEUE_H
#define JITFLOW_PT_SEG_QUEUE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"
#include "pt_segments.h"

enum jf_seg_state { JF_SEG_QUEUED, JF_SEG_RUNNING, JF_SEG_DONE };

/* The first member of each user's segment. */
struct jf_seg {
	uint64_t start;         /* its first PSB (the first segment: 0, a normal start) */
	uint64_t end;           /* the next segment's start; the trace size for the last */
	int first, last;
	enum jf_seg_state state; /* under the lock */
	struct jf_seg *next;    /* under the lock */
};

struct jf_seg_queue {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct jf_pt_psb_finder *psbs;
	struct jf_seg *head, *tail; /* alive segments, in trace order */
	size_t alive, max_alive;
	uint64_t cut_at;            /* where the next segment starts */
	uint64_t size, segment_size;
	/* Guided (jf_seg_queue_set_guided): a segment is cut at share_of_rest-th of the bytes
	 * not cut yet, between segment_size and max_size. */
	uint64_t max_size;
	unsigned share_of_rest;
	/* The tail (jf_seg_queue_set_tail): once the rest no longer gives each of tail_share
	 * threads a segment of segment_size, a tail_share-th of it, at least tail_size. */
	uint64_t tail_size;
	unsigned tail_share;
	int all_cut;
	int stopping;               /* atomic: workers take no more segments */
	pthread_t *threads;         /* the workers (at most max_alive) */
	int nthreads;
	/* A cleared segment of the user's (called with the lock held); NULL: no memory. */
	struct jf_seg *(*new_seg)(void *ctx);
	/* Take back a segment given out (lock held): its memory may serve a new one. */
	void (*recycle)(void *ctx, struct jf_seg *s);
	void *ctx;
	/* The calling thread, instead of sleeping while it waits for a segment, decodes one
	 * that no worker has taken (as a worker does: it ends with jf_seg_queue_job_done).
	 * NULL: it only waits. */
	void (*help)(void *help_ctx, struct jf_seg *s);
	void *help_ctx;
};

int jf_seg_queue_init(struct jf_seg_queue *q, const uint8_t *trace, uint64_t size,
		      uint64_t segment_size, size_t max_alive, void *ctx,
		      struct jf_seg *(*new_seg)(void *ctx),
		      void (*recycle)(void *ctx, struct jf_seg *s));
/* Stops the workers; segments still alive are recycled. */
void jf_seg_queue_fini(struct jf_seg_queue *q);

/* The calling thread decodes segments with help(help_ctx, s) while it waits for one: with
 * it, N threads decode with N - 1 workers, and none sleeps while there is work (three
 * threads on two cores made the caller preempt a worker at every segment it gave out). */
void jf_seg_queue_set_helper(struct jf_seg_queue *q, void (*help)(void *help_ctx, struct jf_seg *s),
			     void *help_ctx);

/* Segments cut large while much of the trace is left and ever smaller towards its end,
 * down to segment_size: the bytes each segment's decoder decodes past its end are a small
 * share of a large segment, and the threads still end together (each is at most a small
 * segment behind). Call before the first segment is cut. */
void jf_seg_queue_set_guided(struct jf_seg_queue *q, uint64_t max_size, unsigned share_of_rest);

/* With guided segments, the last ones cut smaller than segment_size, down to tail_size:
 * once the rest would no longer give each of `threads` a segment of segment_size, a
 * segment is a threads-th of it. The threads then end within a small segment of each
 * other: at 16 threads on a 7 MB capture, with 256 KiB the smallest, each thread got one
 * or two segments, and the busiest decoded 1.35x the threads' mean (1.18x with a tail
 * down to 64 KiB; callgrind, threads in turn). Call before the first cut. */
void jf_seg_queue_set_tail(struct jf_seg_queue *q, uint64_t tail_size, unsigned threads);

/* Start a worker thread: fn(arg), which takes segments with jf_seg_queue_next_job. */
int jf_seg_queue_start_worker(struct jf_seg_queue *q, void *(*fn)(void *), void *arg,
			      struct jf_error *err);
/* Stop the workers and wait until they have (what they count is then final). */
void jf_seg_queue_join(struct jf_seg_queue *q);

/* Workers: the next segment to decode (marked running), or NULL once stopping. */
struct jf_seg *jf_seg_queue_next_job(struct jf_seg_queue *q);
/* Workers: s is decoded; *counter (e.g. a report's) is counted under the lock. */
void jf_seg_queue_job_done(struct jf_seg_queue *q, struct jf_seg *s, uint64_t *counter);
void jf_seg_queue_stop(struct jf_seg_queue *q);
int jf_seg_queue_stopping(struct jf_seg_queue *q);

/* The calling thread: the first segment, the one after s (NULL: s is the last), each
 * waited for until it exists; and until s is decoded. */
struct jf_seg *jf_seg_queue_first(struct jf_seg_queue *q);
struct jf_seg *jf_seg_queue_wait_next(struct jf_seg_queue *q, struct jf_seg *s);
void jf_seg_queue_wait_done(struct jf_seg_queue *q, struct jf_seg *s);
/* The calling thread is done with the first segment: recycled (workers may reuse it at
 * once). */
void jf_seg_queue_drop_first(struct jf_seg_queue *q);

#endif
