/* Intel PT counted by worker threads over PSB segments with the fast counting path
 * (pt_fast.c), with the counts and records of one thread (see jitflow/pt_parallel.h).
 *
 * A worker decodes its segment with a watched fast decoder (pt_fast_watch.h) started at the
 * segment's first PSB, and goes on past the next segment's first PSB (by `overlap` bytes
 * and at least three PSBs). What it keeps is one entry per stretch between PSBs: the
 * counts, the non-block records, the decoder's state at the PSB that ends it, and whether
 * the decoder resynchronised there after an error it reported (fresh): the errors the
 * one-thread decoder reports and resynchronises after on the fast path (pt_fast_resync.c),
 * the watched decoder reports and resynchronises after in the same way.
 *
 * Seams: the previous segment's stretches are used up to a PSB P past the seam where both
 * decoders committed, their states at P agree and every stretch both decoded after P is the
 * same; the next segment's from P on. States agree when everything but the return stack is
 * equal, and the next decoder's return stack is the top of the previous one's (it started
 * with an empty stack; if it ever needs an entry from before its start it finds none,
 * which it reports as not modelled, and never decodes on with a wrong one). A decoder that
 * resynchronised is in the state of a decoder started there, so seams join past errors
 * as past any other PSB.
 * If a seam does not join, the calling thread decodes on over the next segment with the
 * previous segment's decoder (made again by decoding that segment a second time, checked
 * against the first).
 *
 * Where a stretch is not modelled by the fast path (a decode error libipt reports itself,
 * an event it does not model...), the one-thread decoder hands over to libipt's block
 * decoder (pt_fast_handover.c, pt_fast_count_handover.c) from that stretch's PSB or one or
 * two before, as checks on what it committed there decide. The segment's decoder stopped
 * there in its state (but for a return stack that is the top of its own, which the checks
 * cannot tell from the one-thread one's), and the consumer knows what it committed since
 * it last started afresh (the stretches given out since the anchor), so the same hand-over
 * (jf_pt_fast_count_from_stop) is made there: by the segment's worker ahead, with what its
 * own decoder committed since it last started afresh and a guess of the policy, taken
 * where those are what the consumer knows (pt_parallel_ahead.h); else by the calling
 * thread. The consumer gives its records up to the PSB where the block decoder
 * resynchronises and the fast path starts afresh, and goes on from there with the
 * segments' stretches (the worker's decoder goes on from there after a hand-over it made;
 * else the segment holding that PSB is decoded again from it, unless its worker started
 * there): the anchor moves there, with the one-thread decoder's policy on taking over
 * again. Where the stop cannot show the one-thread decoder's state
 * (it stopped at a return its stack had no entry for) or the hand-over needs a block
 * decoder from the trace's start, the calling thread runs the one-thread decoder from the
 * anchor (the trace's start if none) to the end, skips the records given out since
 * (checked to be the same) and gives the rest; its statistics and those given out before
 * the anchor are this decoder's. */
#include "jitflow/pt_fast.h"
#include "jitflow/pt_parallel.h"
#include "jitflow/mapped_file.h"
#include "decoder_internal.h"
#include "flow_buffer.h"
#include "pt_fast_shared.h"
#include "pt_fast_watch.h"
#include "pt_parallel_ahead.h"
#include "pt_seg_queue.h"
#include "pt_segments.h"
#include "pt_wrap.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What a fast decoder committed at one PSB. */
struct stretch {
	uint64_t psb;               /* it ends here (the trace size: at the end) */
	uint64_t insns, blocks, tmin, tmax;
	int has_time;
	uint64_t events, events_hash; /* cfg.count_plain_events: counted, not in records */
	size_t records, nrecords;   /* byte position and count in the segment's records */
	int fresh;                  /* the decoder resynchronised at psb (pt_fast_watch.h) */
	int timed;                  /* it read a timing packet in the stretch */
	size_t state;               /* its decoder's state at psb: in the segment's states */
	/* A stop: the decoder stopped in the stretch after the one before, not modelled (the
	 * segment's stops[stop], its records at `records`), and a decoder started afresh at
	 * psb (the first PSB after the stop; the trace size if none) goes on. */
	int marker;
	size_t stop;
};

struct segment {
	struct jf_seg seg;          /* where it lies (first: pt_seg_queue.h) */
	struct stretch *st;
	size_t n, cap;
	struct jf_flow_buffer records;
	/* The stretches' states, each without the unused part of its return stack: in full
	 * (0.6 KiB each, mostly that stack) a segment of 2 MiB with a PSB every 230 bytes
	 * took 6 MB, whose pages each thread faulted in (two thirds of -j 2's page faults on
	 * the errors capture). */
	unsigned char *states;
	size_t states_len, states_cap;
	int past;                   /* stretches that ended at or past end */
	int unmodelled;             /* its decoder stopped: st[n - 1] marks where */
	struct jf_pt_fast_commit *stops; /* as the decoders told them (records not kept here) */
	size_t nstops, stops_cap;
	struct jf_pt_ahead *aheads;  /* the hand-over at each stop, made ahead (stops_cap) */
	int ended;                  /* its decoder reached the end of the trace */
	int failed;                 /* out of memory, or no decoder (message in err) */
	struct jf_error err;
};

struct pt_count;

/* A watched decoder filling a segment. */
struct run {
	struct pt_count *p;
	struct segment *seg;
	/* On a worker: the hand-overs at its stops are made ahead, with this policy (the
	 * calling thread's after the last hand-over made ahead; a guess before it). */
	int ahead;
	struct jf_pt_fast_policy policy;
	size_t first;               /* the current decoder's first stretch in seg... */
	uint64_t first_from;        /* ...and the PSB it started at, */
	int anchored;               /* where the one-thread decoder started afresh (its start,
				     * or where a hand-over made ahead took over again) */
};

struct worker {
	struct pt_count *p;
	struct jf_codemap *map;     /* a copy: code maps and libipt images are per thread */
	struct jf_pt_fast_caches caches; /* kept from one segment to the next */
	struct jf_pt_psb_finder *psbs;   /* where a decoder starts afresh after a stop */
};

/* A worker goes on to at least the third PSB from its segment's end: the first is where
 * the next decoder starts (it does not know the execution mode there yet), the second the
 * first where their states can agree, the third ends a stretch both decoded after it. */
enum { RELEASE_STEP = 4 << 20, RELEASE_LAG = 1 << 20, MIN_PAST = 3 };

/* Segments alive at a time: this many per thread, and two more (below). */
enum { SEGMENTS_PER_JOB = 4 };

struct pt_count {
	struct jf_pt_config cfg;
	struct jf_codemap *map;
	struct jf_pt_parallel_options opt;
	struct jf_pt_parallel_report *report, own_report;
	struct jf_decode_stats *stats;  /* this decoder's */
	struct jf_decoder *dec;         /* (for its progress) */

	struct jf_seg_queue q;
	/* Blocks and payload paths any thread decoded, for all: each thread's caches would
	 * otherwise decode the same code again (at 16 threads, most of a worker's first
	 * segment on a clean capture). */
	struct jf_fast_shared *shared;
	struct segment *spare;          /* given out: memory kept for new ones (q's lock) */
	size_t most_stretches, most_state_bytes; /* a segment's largest yet (atomic) */
	struct worker *workers;
	int nworkers;

	/* Consumer side. */
	struct segment *cur;            /* being given out: its stretches from pos ... */
	size_t pos, until;              /* ... up to until (exclusive) */
	size_t rec_pos, rec_left;       /* the records of the stretch given out last */
	int at_marker;                  /* until is a stop's marker in cur, else... */
	int joined;                     /* ...until is where cur joins the next ... */
	size_t next_pos;                /* ... whose stretches are given from here on */
	int finished;                   /* nothing after cur */
	int rest_serial;                /* cur ends not modelled: the one-thread decoder next */
	struct jf_decoder *serial;      /* cur's decoder, after a seam did not join */
	struct run serial_run;
	struct jf_pt_fast_caches serial_caches;
	struct jf_pt_psb_finder *psbs;  /* the calling thread's */
	struct jf_flow *stop_records;   /* a stop's records, passed to its hand-over */
	size_t stop_cap;
	struct segment *serial_after;   /* ... which has decoded exactly this segment */
	struct jf_decoder *rest;        /* the one-thread decoder (from the anchor) */
	struct jf_decoder *local;       /* ...or its hand-over at cur's stop, up to where it
					 * takes over again (then back to the segments) */
	const struct jf_pt_ahead *ahead; /* ...or that hand-over made ahead by cur's worker: */
	size_t ahead_pos, ahead_left;   /* its records still to give */
	struct jf_pt_fast_policy policy; /* the one-thread decoder's at the anchor */
	int timed;                      /* a stretch given out since the anchor had a timing
					 * packet */
	/* The last stretches given out since the anchor (up to 2) and the records of the last
	 * one given, as a hand-over looks back on them: where they lie in their segment until
	 * one is needed or its segment is dropped (keep_given), copied out then, so that the
	 * stretches given out are not copied one by one (0.6 KiB each with a deep return
	 * stack; about 1% of -j 2's instructions on the errors capture, callgrind). */
	struct given_at {
		const struct segment *s; /* NULL: copied out */
		size_t i;
		uint64_t from;
	} given_at[2], last_given;
	struct jf_fast_counted counted[2];
	unsigned ncounted;
	struct jf_flow *last_records;
	size_t nlast, last_cap;
	uint64_t given_until;           /* the stretches given out end here */
	int last_fresh;                 /* the stretch given out last was fresh */
	int anchored;                   /* the one-thread decoder resynchronised at anchor... */
	uint64_t anchor;
	struct jf_decode_stats at_anchor; /* ...where these were its statistics */
	uint64_t given, skip;           /* records given out (since the anchor); still to
					 * skip from rest */
	uint64_t given_hash, skipped_hash;
	uint64_t released;
};

static int stopping(struct pt_count *p)
{
	return jf_seg_queue_stopping(&p->q);
}

static struct segment *seg_of(struct jf_seg *s)
{
	return (struct segment *)(void *)s;
}

/* Room for one more stretch: 0, or -1 when out of memory. */
static int reserve_stretch(struct segment *s)
{
	struct stretch *t;
	size_t cap;

	if (s->n < s->cap)
		return 0;
	cap = s->cap ? 2 * s->cap : 32;
	t = realloc(s->st, cap * sizeof(*t));
	if (!t)
		return -1;
	s->st = t;
	s->cap = cap;
	return 0;
}

/* The return stack is the state's last member: a state is kept as the bytes before it and
 * its entries in use. */
_Static_assert(offsetof(struct jf_pt_fast_state, ret) +
		       sizeof(((struct jf_pt_fast_state *)0)->ret) ==
	       sizeof(struct jf_pt_fast_state), "the return stack ends the state");

static size_t state_bytes(const struct jf_pt_fast_state *st)
{
	return offsetof(struct jf_pt_fast_state, ret) + (size_t)st->depth * sizeof(st->ret[0]);
}

/* Keep st in s->states: its position there, or (size_t)-1 when out of memory. */
static size_t keep_state(struct segment *s, const struct jf_pt_fast_state *st)
{
	size_t n = state_bytes(st), at = s->states_len;

	if (at + n > s->states_cap) {
		size_t cap = s->states_cap ? 2 * s->states_cap : 16 * sizeof(*st);
		unsigned char *more;

		while (cap < at + n)
			cap *= 2;
		if (!(more = realloc(s->states, cap)))
			return (size_t)-1;
		s->states = more;
		s->states_cap = cap;
	}
	memcpy(s->states + at, st, n);
	s->states_len = at + n;
	return at;
}

/* The state t's decoder was in at t->psb. */
static void state_of(const struct segment *s, const struct stretch *t,
		     struct jf_pt_fast_state *st)
{
	const unsigned char *at = s->states + t->state;

	memcpy(st, at, offsetof(struct jf_pt_fast_state, ret));
	memcpy(st->ret, at + offsetof(struct jf_pt_fast_state, ret),
	       (size_t)st->depth * sizeof(st->ret[0]));
}

/* Stretch t of s, which began at `from`, as a hand-over's checks look back on it. */
static void counted_of(const struct segment *s, const struct stretch *t, uint64_t from,
		       struct jf_fast_counted *c)
{
	c->from = from;
	c->psb = t->psb;
	c->insns = t->insns;
	c->blocks = t->blocks;
	c->has_time = t->has_time;
	c->tmin = t->tmin;
	c->tmax = t->tmax;
	c->events = t->events;
	c->events_hash = t->events_hash;
	state_of(s, t, &c->state);
}

/* Whether g's stretch b is in the state f's stretch a is in (jf_pt_fast_same_state). */
static int same_state(const struct segment *f, const struct stretch *a, const struct segment *g,
		      const struct stretch *b)
{
	struct jf_pt_fast_state sa, sb;

	state_of(f, a, &sa);
	state_of(g, b, &sb);
	return jf_pt_fast_same_state(&sa, &sb);
}

static int add_stretch(struct segment *s, const struct jf_pt_fast_commit *c)
{
	struct stretch *t;
	size_t i;

	if (reserve_stretch(s) < 0)
		return -1;
	t = &s->st[s->n++];
	t->psb = c->psb;
	t->insns = c->insns;
	t->blocks = c->blocks;
	t->tmin = c->tmin;
	t->tmax = c->tmax;
	t->has_time = c->has_time;
	t->events = c->events;
	t->events_hash = c->events_hash;
	t->records = s->records.len;
	t->nrecords = c->nrecords;
	t->fresh = c->fresh;
	t->timed = c->timed_here;
	t->marker = 0;
	if ((t->state = keep_state(s, &c->state)) == (size_t)-1)
		return -1;
	for (i = 0; i < c->nrecords; i++) {
		if (jf_flow_buffer_push(&s->records, &c->records[i]) < 0)
			return -1;
	}
	return 0;
}

/* Room for n records in *a (*cap of them now): 0, or -1 when out of memory. */
static int reserve_records(struct jf_flow **a, size_t *cap, size_t n)
{
	struct jf_flow *more;

	if (n <= *cap)
		return 0;
	more = realloc(*a, n * sizeof(*more));
	if (!more)
		return -1;
	*a = more;
	*cap = n;
	return 0;
}

/* Where the decoder stopped, not modelled: a marker after the stretches (its psb set where a
 * decoder starts afresh: decode_on), the stop and its records kept. */
static int add_marker(struct segment *s, const struct jf_pt_fast_commit *c)
{
	struct jf_pt_fast_commit *stop;
	struct stretch *t;
	size_t i;

	if (s->nstops == s->stops_cap) {
		size_t cap = s->stops_cap ? 2 * s->stops_cap : 8;
		struct jf_pt_ahead *aheads;

		stop = realloc(s->stops, cap * sizeof(*stop));
		if (!stop)
			return -1;
		s->stops = stop;
		aheads = realloc(s->aheads, cap * sizeof(*aheads));
		if (!aheads)
			return -1;
		memset(aheads + s->stops_cap, 0, (cap - s->stops_cap) * sizeof(*aheads));
		s->aheads = aheads;
		s->stops_cap = cap;
	}
	jf_pt_ahead_clear(&s->aheads[s->nstops]);
	if (reserve_stretch(s) < 0)
		return -1;
	stop = &s->stops[s->nstops];
	*stop = *c;
	stop->records = NULL;
	t = &s->st[s->n++];
	memset(t, 0, sizeof(*t));
	t->marker = 1;
	t->stop = s->nstops++;
	t->records = s->records.len;
	t->nrecords = c->nrecords;
	for (i = 0; i < c->nrecords; i++) {
		if (jf_flow_buffer_push(&s->records, &c->records[i]) < 0)
			return -1;
	}
	return 0;
}

/* pt_fast_watch.h: keep the stretch; pause once far enough past the segment's end. */
static int on_commit(void *ctx, const struct jf_pt_fast_commit *c)
{
	struct run *r = ctx;
	struct segment *s = r->seg;

	if (c->unmodelled) {
		s->unmodelled = 1;
		if (add_marker(s, c) < 0) {
			s->failed = 1;
			jf_fail(&s->err, "out of memory");
		}
		return 1;
	}
	if (add_stretch(s, c) < 0) {
		s->failed = 1;
		jf_fail(&s->err, "out of memory");
		return 1;
	}
	if (c->psb >= r->p->cfg.size) {
		s->ended = 1;
		return 1;
	}
	if (s->seg.last)
		return stopping(r->p);
	if (c->psb >= s->seg.end)
		s->past++;
	return (s->past >= MIN_PAST && c->psb >= s->seg.end + r->p->opt.overlap) ||
	       stopping(r->p);
}

static void clear_segment(struct segment *s)
{
	s->n = 0;
	s->past = 0;
	s->unmodelled = s->ended = s->failed = 0;
	s->nstops = 0;
	s->states_len = 0;
	jf_flow_buffer_clear(&s->records);
}

/* Decode into run->seg with dec until the watcher pauses it or it ends. */
static void decode_into(struct run *run, struct jf_decoder *dec)
{
	struct jf_flow f;
	int rc;

	while ((rc = jf_decoder_next(dec, &f, &run->seg->err)) > 0)
		; /* the watcher has the records */
	if (rc < 0)
		run->seg->failed = 1;
}

/* The configuration of a decoder on a thread with these caches. */
static struct jf_pt_config thread_cfg(const struct pt_count *p,
				      const struct jf_pt_fast_caches *caches)
{
	struct jf_pt_config cfg = p->cfg;

	cfg.insns = caches->insns;
	cfg.release_consumed = 0;       /* the consumer releases what all have passed */
	return cfg;
}

/* A decoder for run->seg starting at its first PSB `start` (first: the trace's start). */
static struct jf_decoder *segment_decoder(struct pt_count *p, uint64_t start, int first,
					  struct jf_codemap *map,
					  const struct jf_pt_fast_caches *caches, struct run *run,
					  struct jf_error *err)
{
	struct jf_pt_config cfg = thread_cfg(p, caches);

	if (!first) {
		cfg.has_sync_at = 1;
		cfg.sync_at = start;
	}
	return jf_pt_fast_watched_resyncing_new(&cfg, map, caches, on_commit, run, err);
}

/* The records of s from byte position at, n of them, copied into *a (*cap of them):
 * 0, or -1 when out of memory. */
static int copy_records(const struct segment *s, size_t at, size_t n, struct jf_flow **a,
			size_t *cap)
{
	size_t i;

	if (reserve_records(a, cap, n) < 0)
		return -1;
	for (i = 0; i < n; i++)
		at = jf_flow_buffer_get(&s->records, at, &(*a)[i]);
	return 0;
}

/* The hand-over at the stop that ends run->seg's stretches (its marker last), made ahead
 * as the calling thread would make it if the one-thread decoder had committed what this
 * decoder did since it last started afresh (hand_over, note_given and note_anchor keep
 * that on the calling thread). Returns 1 if made, 0 if not, -1 when out of memory. */
static int hand_over_ahead(struct run *run, struct jf_codemap *map,
			   const struct jf_pt_fast_caches *caches)
{
	struct segment *s = run->seg;
	size_t m = s->n - 1, from = run->first, j;
	const struct stretch *t = &s->st[m];
	struct jf_pt_fast_commit at = s->stops[t->stop];
	struct jf_fast_counted counted[2];
	struct jf_flow *records = NULL, *last = NULL;
	size_t records_cap = 0, last_cap = 0;
	struct jf_pt_fast_stop stop = { &at, at.timed_here, counted, 0, NULL, 0 };
	struct jf_pt_config cfg = thread_cfg(run->p, caches);
	uint64_t anchor;
	int rc = -1;

	if (at.popped_empty)
		return 0;
	for (j = run->first; j < m; j++) {
		if (s->st[j].fresh)
			from = j + 1;
	}
	/* Where this decoder does not know where the one-thread decoder last started afresh
	 * and has not committed the two stretches the hand-over may look back on, the calling
	 * thread makes it: made here it would most often be made with other inputs (nothing
	 * committed since a fresh start, where the calling thread has: a decoder that starts
	 * a segment just before a stop), and take over again elsewhere than the decoder of
	 * the segment before, whose seam would then not join. */
	if (from == run->first && !run->anchored && m - from < 2)
		return 0;
	anchor = from == run->first ? run->first_from : s->st[from - 1].psb;
	for (j = from; j < m; j++)
		stop.timed |= s->st[j].timed;
	for (j = m - from > 2 ? m - 2 : from; j < m; j++)
		counted_of(s, &s->st[j], j == run->first ? run->first_from : s->st[j - 1].psb,
			   &counted[stop.ncounted++]);
	run->policy.committed = m > from && s->st[m - 1].psb > anchor;
	if (copy_records(s, t->records, t->nrecords, &records, &records_cap) < 0)
		goto out;
	at.records = records;
	if (stop.ncounted) {
		const struct stretch *u = &s->st[m - 1];

		if (copy_records(s, u->records, u->nrecords, &last, &last_cap) < 0)
			goto out;
		stop.last_records = last;
		stop.nlast = u->nrecords;
	}
	rc = jf_pt_ahead_make(&s->aheads[t->stop], &cfg, map, caches, &stop, &run->policy);
out:
	free(records);
	free(last);
	return rc;
}

/* Where the decoder that stopped at run->seg's last stretch (a marker) takes over again:
 * on a worker, where the hand-over made ahead does; else the first PSB past the stop
 * (where the one-thread decoder's hand-over most often takes over again: the block
 * decoder resynchronises at the first PSB past its error). -1: at the trace's end. */
static int64_t decode_on_at(struct run *run, struct jf_codemap *map,
			    const struct jf_pt_fast_caches *caches, struct jf_pt_psb_finder *psbs)
{
	struct segment *s = run->seg;
	const struct stretch *t = &s->st[s->n - 1];
	const struct jf_pt_fast_commit *stop = &s->stops[t->stop];
	int rc = run->ahead ? hand_over_ahead(run, map, caches) : 0;

	if (rc < 0) {
		s->failed = 1;
		jf_fail(&s->err, "out of memory");
		return -1;
	}
	if (rc > 0) {
		const struct jf_pt_ahead *a = &s->aheads[t->stop];

		if (!a->resumes)
			return -1;
		run->policy = a->after;
		run->anchored = 1;
		return (int64_t)a->psb;
	}
	run->anchored = 0;
	return jf_pt_psb_at_or_after(psbs, (stop->stopped_at > stop->psb ? stop->stopped_at
									  : stop->psb) + 1);
}

/* Decode into run->seg with *dec, and after each stop with a decoder started afresh where
 * the fast path takes over again (decode_on_at), which becomes *dec, until the watcher
 * pauses or the trace ends. */
static void decode_on(struct run *run, struct jf_decoder **dec, struct jf_codemap *map,
		      const struct jf_pt_fast_caches *caches, struct jf_pt_psb_finder *psbs)
{
	struct segment *s = run->seg;

	for (;;) {
		struct stretch *t;
		int64_t next;

		decode_into(run, *dec);
		if (!s->unmodelled || s->failed || stopping(run->p))
			return;
		next = decode_on_at(run, map, caches, psbs);
		if (s->failed)
			return;
		t = &s->st[s->n - 1];
		s->unmodelled = 0;
		if (next < 0) {
			t->psb = run->p->cfg.size;
			s->ended = 1;
			return;
		}
		t->psb = (uint64_t)next;
		/* The seam needs as many stretches past the end from the new decoder. */
		s->past = 0;
		jf_decoder_free(*dec);
		run->first = s->n;
		run->first_from = t->psb;
		*dec = segment_decoder(run->p, t->psb, 0, map, caches, run, &s->err);
		if (!*dec) {
			s->failed = 1;
			return;
		}
	}
}

/* pt_seg_queue.h: a new segment, with the memory of one given out if there is one. */
static struct jf_seg *new_segment(void *ctx)
{
	struct pt_count *p = ctx;
	struct segment *s = p->spare;

	if (s) {
		/* Its stretches and records keep their memory (not faulted in again). */
		struct segment kept = *s;

		p->spare = seg_of(s->seg.next);
		memset(s, 0, sizeof(*s));
		s->st = kept.st;
		s->cap = kept.cap;
		s->stops = kept.stops;
		s->aheads = kept.aheads;
		s->stops_cap = kept.stops_cap;
		s->states = kept.states;
		s->states_cap = kept.states_cap;
		s->records = kept.records;
		jf_flow_buffer_clear(&s->records);
	} else if (!(s = calloc(1, sizeof(*s)))) {
		return NULL;
	}
	return &s->seg;
}

static void recycle_segment(void *ctx, struct jf_seg *s)
{
	struct pt_count *p = ctx;

	s->next = p->spare ? &p->spare->seg : NULL;
	p->spare = seg_of(s);
}

/* w's code map and caches, made on the thread that decodes with them when it first does:
 * the calling thread would otherwise make every worker's (a copy of the map, and caches
 * whose first pages are faulted in) before any worker starts, work no other thread can
 * share. The map does not change while decoding (jf_pt_parallel_counter_new), so threads
 * may copy it at the same time. 0, or -1 with err. */
static int worker_ready(struct worker *w, struct jf_error *err)
{
	if (w->caches.payloads)
		return 0;
	if (!w->map && !(w->map = jf_codemap_clone(w->p->map, err)))
		return -1;
	if (!w->psbs && !(w->psbs = jf_pt_psb_finder_new(w->p->cfg.trace, w->p->cfg.size)))
		return jf_fail(err, "out of memory");
	if (jf_pt_fast_caches_init(&w->caches, w->map) < 0)
		return jf_fail(err, "out of memory");
	jf_fast_shared_attach(w->p->shared, &w->caches);
	return 0;
}

/* Room in s, before it is decoded, for as many stretches and state bytes as a segment has
 * held yet: segments are cut ever smaller, so that the arrays of most do not grow while
 * they fill, copied at each doubling (up to 1 MB each on the errors capture: 11.2 M
 * instructions of copies at -j 2, 5.8 M with this, callgrind). Too little room is made as
 * the arrays fill. */
static void presize_segment(struct pt_count *p, struct segment *s)
{
	size_t n = __atomic_load_n(&p->most_stretches, __ATOMIC_RELAXED);
	size_t bytes = __atomic_load_n(&p->most_state_bytes, __ATOMIC_RELAXED);

	/* Nothing in them yet to keep: new arrays, not copies of the old. */
	if (n > s->cap) {
		free(s->st);
		s->st = malloc(n * sizeof(*s->st));
		s->cap = s->st ? n : 0;
	}
	if (bytes > s->states_cap) {
		free(s->states);
		s->states = malloc(bytes);
		s->states_cap = s->states ? bytes : 0;
	}
}

/* What s held, for the segments decoded after it (presize_segment). */
static void note_size(struct pt_count *p, const struct segment *s)
{
	size_t n = __atomic_load_n(&p->most_stretches, __ATOMIC_RELAXED);
	size_t bytes = __atomic_load_n(&p->most_state_bytes, __ATOMIC_RELAXED);

	while (s->n > n && !__atomic_compare_exchange_n(&p->most_stretches, &n, s->n, 1,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	while (s->states_len > bytes &&
	       !__atomic_compare_exchange_n(&p->most_state_bytes, &bytes, s->states_len, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* A worker's run over segment s, which makes the hand-overs at its stops ahead. Its first
 * hand-over's policy is guessed: the first in the trace takes over again for the first
 * time; later ones most often follow a hand-over that took over again and committed
 * stretches after it (pt_fast_handover.c, jf_fast_plan_resumes). */
static void worker_run(struct run *run, struct pt_count *p, struct segment *s)
{
	memset(run, 0, sizeof(*run));
	run->p = p;
	run->seg = s;
	run->ahead = 1;
	run->policy.resumed = !s->seg.first;
	run->anchored = s->seg.first;
	run->first_from = s->seg.first ? 0 : s->seg.start;
}

/* Decode segment b with w's code map and caches (a worker thread's, or the caller's when it
 * helps: pt_seg_queue.h). */
static void decode_segment(void *worker, struct jf_seg *b)
{
	struct worker *w = worker;
	struct pt_count *p = w->p;
	struct segment *s = seg_of(b);
	struct run run;
	struct jf_decoder *dec = NULL;

	worker_run(&run, p, s);
	presize_segment(p, s);
	if (worker_ready(w, &s->err) == 0)
		dec = segment_decoder(p, s->seg.start, s->seg.first, w->map, &w->caches, &run,
				      &s->err);
	if (dec)
		decode_on(&run, &dec, w->map, &w->caches, w->psbs);
	else
		s->failed = 1;
	jf_decoder_free(dec);
	note_size(p, s);
	jf_seg_queue_job_done(&p->q, b, &p->report->segments);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct jf_seg *b;

	while ((b = jf_seg_queue_next_job(&w->p->q)))
		decode_segment(w, b);
	/* Freed here, in parallel, rather than by the calling thread once all are done. */
	jf_pt_fast_caches_fini(&w->caches);
	jf_codemap_free(w->map);
	w->map = NULL;
	jf_pt_psb_finder_free(w->psbs);
	w->psbs = NULL;
	return NULL;
}

static int same_stretch(const struct segment *f, const struct stretch *a, const struct segment *g,
			const struct stretch *b)
{
	size_t i, pa = a->records, pb = b->records;

	/* Two decoders that stopped in the same stretch both go on afresh at the next PSB. */
	if (a->marker || b->marker)
		return a->marker && b->marker && a->psb == b->psb;
	if (a->psb != b->psb || a->fresh != b->fresh || a->insns != b->insns ||
	    a->blocks != b->blocks ||
	    a->has_time != b->has_time || a->nrecords != b->nrecords ||
	    a->events != b->events || a->events_hash != b->events_hash ||
	    (a->has_time && (a->tmin != b->tmin || a->tmax != b->tmax)) ||
	    !same_state(f, a, g, b))
		return 0;
	for (i = 0; i < a->nrecords; i++) {
		if (!jf_flow_buffer_same(&f->records, pa, &g->records, pb))
			return 0;
		pa += jf_flow_record_size(jf_flow_buffer_at(&f->records, pa));
		pb += jf_flow_record_size(jf_flow_buffer_at(&g->records, pb));
	}
	return 1;
}

/* Where f's stretches (from `from` on) hand over to g's: f's up to and including *fa, then
 * g's after *gb. 0 if no PSB past the seam qualifies. */
static int find_join(const struct segment *f, size_t from, const struct segment *g, size_t *fa,
		     size_t *gb)
{
	size_t a, b = 0;

	if (f->failed || g->failed)
		return 0;
	for (a = from; a < f->n; a++) {
		size_t i, j;

		if (f->st[a].psb < g->seg.start || f->st[a].marker)
			continue;
		while (b < g->n && (g->st[b].psb < f->st[a].psb || g->st[b].marker))
			b++;
		if (b == g->n)
			return 0;
		if (g->st[b].psb != f->st[a].psb || g->st[b].marker ||
		    !same_state(f, &f->st[a], g, &g->st[b]))
			continue;
		/* Every stretch both decoded after the PSB must agree, and there must be one. */
		for (i = a + 1, j = b + 1; i < f->n && j < g->n; i++, j++) {
			if (!same_stretch(f, &f->st[i], g, &g->st[j]))
				break;
		}
		if (i == a + 1 || (i < f->n && j < g->n))
			continue;
		/* One stopped where the other went on: their states differ after all. */
		if ((i == f->n && j < g->n && f->unmodelled) ||
		    (j == g->n && i < f->n && g->unmodelled))
			continue;
		*fa = a;
		*gb = b;
		return 1;
	}
	return 0;
}

static void release_before(struct pt_count *p, uint64_t offset)
{
	if (!p->cfg.release_consumed || offset < p->released + RELEASE_STEP + RELEASE_LAG)
		return;
	jf_mapped_release(p->cfg.trace, p->released, offset - RELEASE_LAG);
	p->released = offset - RELEASE_LAG;
}

static void free_segment(struct segment *s)
{
	size_t i;

	free(s->st);
	for (i = 0; s->aheads && i < s->stops_cap; i++)
		jf_pt_ahead_fini(&s->aheads[i]);
	free(s->aheads);
	free(s->stops);
	free(s->states);
	jf_flow_buffer_fini(&s->records);
	free(s);
}

/* The stretches given out that a hand-over looks back on (given_at), copied out of their
 * segment: 0, or -1 when out of memory. */
static int keep_given(struct pt_count *p)
{
	const struct segment *s = p->last_given.s;
	unsigned k;

	for (k = 0; k < p->ncounted; k++) {
		struct given_at *g = &p->given_at[k];

		if (g->s)
			counted_of(g->s, &g->s->st[g->i], g->from, &p->counted[k]);
		g->s = NULL;
	}
	if (s) {
		const struct stretch *t = &s->st[p->last_given.i];

		if (copy_records(s, t->records, t->nrecords, &p->last_records, &p->last_cap) < 0)
			return -1;
		p->nlast = t->nrecords;
		p->last_given.s = NULL;
	}
	return 0;
}

/* 0, or -1 when out of memory. */
static int drop_head(struct pt_count *p)
{
	uint64_t start = p->cur->seg.start;

	if (keep_given(p) < 0)
		return -1;
	if (p->serial_after == p->cur)
		p->serial_after = NULL;
	/* A worker may cut a new segment from it as soon as it is dropped. */
	jf_seg_queue_drop_first(&p->q);
	release_before(p, start);
	return 0;
}

/* cur's stretches are ready: how far they go before the next segment's take over. */
static int plan_segment(struct pt_count *p, struct jf_error *err)
{
	struct segment *cur = p->cur, *next;
	size_t fa, gb;

	size_t m;

	p->until = cur->n;
	p->joined = 0;
	p->at_marker = 0;
	if (cur->failed) {
		*err = cur->err;
		return -1;
	}
	/* The stretches up to a stop first: its hand-over is decided when they are given. */
	for (m = p->pos; m < cur->n && !cur->st[m].marker; m++)
		;
	if (m < cur->n) {
		p->until = m;
		p->at_marker = 1;
		return 0;
	}
	if (cur->ended || (cur->seg.last && !cur->unmodelled)) {
		p->finished = 1;
		return 0;
	}
	next = cur->seg.last ? NULL : seg_of(jf_seg_queue_wait_next(&p->q, &cur->seg));
	if (next)
		jf_seg_queue_wait_done(&p->q, &next->seg);
	if (next && !p->opt.no_joins && find_join(cur, p->pos, next, &fa, &gb)) {
		p->until = fa + 1;
		p->next_pos = gb + 1;
		p->joined = 1;
		p->report->joins++;
	} else if (cur->unmodelled) {
		/* Decoding cur again would stop at the same stretch. */
		p->rest_serial = 1;
	}
	return 0;
}

/* The calling thread's caches, made when it first decodes. */
static int caller_caches(struct pt_count *p)
{
	if (p->serial_caches.payloads)
		return 0;
	if (jf_pt_fast_caches_init(&p->serial_caches, p->map) < 0)
		return -1;
	jf_fast_shared_attach(p->shared, &p->serial_caches);
	return 0;
}

/* The consumer's own decoder, in the state cur's worker left: cur decoded again (the
 * same stretches, checked). */
static int serial_decoder_at(struct pt_count *p, struct segment *cur, struct jf_error *err)
{
	struct segment *again = calloc(1, sizeof(*again));
	size_t i;
	int rc = 0;

	if (!again)
		return jf_fail(err, "out of memory");
	*again = *cur;
	memset(&again->records, 0, sizeof(again->records));
	again->st = NULL;
	again->cap = 0;
	again->stops = NULL;
	again->aheads = NULL;
	again->stops_cap = 0;
	again->states = NULL;
	again->states_cap = 0;
	again->seg.next = NULL;
	clear_segment(again);
	jf_decoder_free(p->serial);
	/* As its worker decoded it: the hand-overs at its stops made ahead, so that its
	 * decoders go on after them where the worker's did. */
	worker_run(&p->serial_run, p, again);
	if (caller_caches(p) < 0) {
		free_segment(again);
		return jf_fail(err, "out of memory");
	}
	p->serial = segment_decoder(p, cur->seg.start, cur->seg.first, p->map, &p->serial_caches,
				   &p->serial_run, err);
	if (!p->serial) {
		free_segment(again);
		return -1;
	}
	decode_on(&p->serial_run, &p->serial, p->map, &p->serial_caches, p->psbs);
	for (i = 0; i < cur->n && i < again->n; i++) {
		if (!same_stretch(cur, &cur->st[i], again, &again->st[i]))
			break;
	}
	if (again->failed)
		rc = -1, *err = again->err;
	else if (i < cur->n || again->n != cur->n || again->unmodelled != cur->unmodelled)
		rc = jf_fail(err, "parallel count: segment at trace offset 0x%llx decodes "
			     "differently a second time (at its stretch %zu)",
			     (unsigned long long)cur->seg.start, i);
	free_segment(again);
	p->serial_after = cur;
	return rc;
}

/* Every record of the fresh stretch given out last has been given: the one-thread decoder
 * started afresh at its end, which becomes the anchor. Before the first stretch that is not
 * modelled, the one-thread decoder has never handed over to libipt's block decoder, so
 * the only state it carries past the PSB it resynchronised at is that PSB: a counter
 * started there is, from there on, the one-thread decoder (resume in pt_fast.c). */
static void note_anchor(struct pt_count *p)
{
	if (!p->last_fresh)
		return;
	p->last_fresh = 0;
	p->anchored = 1;
	p->anchor = p->given_until;
	p->at_anchor = *p->stats;
	p->given = 0;
	p->given_hash = 0;
	p->timed = 0;
	p->ncounted = 0;
}

/* The stretch t of s is given out: the one-thread decoder commits it (as keep_counted in
 * pt_fast.c). */
static void note_given(struct pt_count *p, const struct segment *s, const struct stretch *t)
{
	struct given_at at = { s, (size_t)(t - s->st), p->given_until };

	if (p->ncounted == 2) {
		p->given_at[0] = p->given_at[1];
		if (!p->given_at[0].s)
			p->counted[0] = p->counted[1];
	} else {
		p->ncounted++;
	}
	p->given_at[p->ncounted - 1] = at;
	p->last_given = at;
	p->timed |= t->timed;
	p->given_until = t->psb;
	p->last_fresh = t->fresh;
}

/* From here on, the one-thread decoder: the rest of the trace as it gives it, from the
 * anchor on (the trace's start if none). */
static int start_rest(struct pt_count *p, struct jf_error *err)
{
	struct jf_pt_config cfg = p->cfg;

	jf_seg_queue_join(&p->q);
	note_anchor(p);
	p->report->rest_one_thread = 1;
	p->report->rest_from = p->given_until;
	if (p->anchored) {
		cfg.has_sync_at = 1;
		cfg.sync_at = p->anchor;
	}
	p->rest = jf_pt_fast_counter_policy_new(&cfg, p->map, &p->policy, err);
	p->skip = p->given;
	return p->rest ? 0 : -1;
}

/* cur's stretches are given out up to its stop (the marker at until), where the
 * one-thread decoder hands over to libipt's block decoder: where the stop shows what that
 * decoder does there (jf_pt_fast_count_from_stop: the stop's state is the one-thread
 * decoder's but for a return stack that is the top of its own, and it did not stop for
 * want of an older entry), the same hand-over, until the block decoder resynchronises and
 * the fast path takes over again; else the one-thread decoder from the anchor. */
static int hand_over(struct pt_count *p, struct jf_error *err)
{
	struct segment *cur = p->cur;
	const struct stretch *t = &cur->st[p->until];
	struct jf_pt_fast_commit at = cur->stops[t->stop];
	int rc = 0;

	note_anchor(p);
	if (keep_given(p) < 0)
		return jf_fail(err, "out of memory");
	if (!at.popped_empty && at.psb == p->given_until) {
		struct jf_pt_fast_stop stop = {
			&at, p->timed || at.timed_here, p->counted, p->ncounted, p->last_records,
			p->nlast
		};
		struct jf_pt_config cfg;

		if (copy_records(cur, t->records, t->nrecords, &p->stop_records, &p->stop_cap) < 0)
			return jf_fail(err, "out of memory");
		at.records = p->stop_records;

		/* Whether the one-thread decoder committed since it last started afresh. */
		p->policy.committed = p->given_until > (p->anchored ? p->anchor : 0);
		if (jf_pt_ahead_fits(&cur->aheads[t->stop], &stop, &p->policy)) {
			p->ahead = &cur->aheads[t->stop];
			p->ahead_pos = 0;
			p->ahead_left = p->ahead->records.count;
			p->report->ahead_hand_overs++;
			p->report->local_hand_overs++;
			return 1;
		}
		if (caller_caches(p) < 0)
			return jf_fail(err, "out of memory");
		cfg = thread_cfg(p, &p->serial_caches);
		rc = jf_pt_fast_count_from_stop(&cfg, p->map, &p->serial_caches, &stop, &p->policy,
						&p->local, err);
	}
	if (rc < 0)
		return -1;
	if (rc == 0)
		return start_rest(p, err) < 0 ? -1 : 1;
	p->report->local_hand_overs++;
	return 1;
}

/* The segment that holds psb becomes cur, its stretches from psb on those of a decoder
 * started there (its worker's, if it started there; else decoded here). */
static int segments_from(struct pt_count *p, uint64_t psb, struct jf_error *err)
{
	struct segment *cur = p->cur;

	/* Most often where cur's decoders went on after the stop. */
	if (p->at_marker && cur->st[p->until].psb == psb) {
		p->pos = p->until + 1;
		return plan_segment(p, err);
	}
	while (!cur->seg.last && psb >= cur->seg.end) {
		struct segment *next = seg_of(jf_seg_queue_wait_next(&p->q, &cur->seg));

		jf_seg_queue_wait_done(&p->q, &next->seg);
		if (drop_head(p) < 0)
			return jf_fail(err, "out of memory");
		p->cur = cur = next;
	}
	jf_seg_queue_wait_done(&p->q, &cur->seg);
	if (psb != cur->seg.start || cur->seg.first || p->serial_after == cur) {
		if (caller_caches(p) < 0)
			return jf_fail(err, "out of memory");
		jf_decoder_free(p->serial);
		clear_segment(cur);
		memset(&p->serial_run, 0, sizeof(p->serial_run));
		p->serial_run.p = p;
		p->serial_run.seg = cur;
		p->serial = segment_decoder(p, psb, 0, p->map, &p->serial_caches, &p->serial_run,
					    err);
		if (!p->serial)
			return -1;
		decode_on(&p->serial_run, &p->serial, p->map, &p->serial_caches, p->psbs);
		p->serial_after = cur;
	}
	p->pos = 0;
	return plan_segment(p, err);
}

/* The hand-over (its statistics added) takes over again at psb, afresh, with policy: the
 * anchor, and the segments' stretches from there on. */
static int back_to_segments(struct pt_count *p, uint64_t psb,
			    const struct jf_pt_fast_policy *policy, struct jf_error *err)
{
	p->policy = *policy;
	p->given_until = psb;
	p->last_fresh = 1;
	note_anchor(p);
	return segments_from(p, psb, err);
}

/* cur is given out: go on with the next segment. 1 = more, 0 = the end. */
static int advance(struct pt_count *p, struct jf_error *err)
{
	struct segment *cur = p->cur, *next;

	if (p->at_marker)
		return hand_over(p, err);
	if (p->rest_serial)
		return start_rest(p, err) < 0 ? -1 : 1;
	if (p->finished)
		return 0;
	/* Only now: the next segment was waited for (under the lock) in plan_segment where
	 * it is given out next; before these returns, a worker may still be cutting it after
	 * cur (a data race, ThreadSanitizer on test_pt_parallel_count). */
	next = seg_of(cur->seg.next);
	if (p->joined) {
		p->pos = p->next_pos;
		jf_decoder_free(p->serial);
		p->serial = NULL;
		p->serial_after = NULL;
	} else {
		/* The seam did not join: cur's decoder state is the right one, so decode the
		 * next segment on with it. */
		if (p->serial_after != cur && serial_decoder_at(p, cur, err) < 0)
			return -1;
		p->report->serial++;
		clear_segment(next);
		p->serial_run.seg = next;
		decode_on(&p->serial_run, &p->serial, p->map, &p->serial_caches, p->psbs);
		p->serial_after = next;
		p->pos = 0;
	}
	if (drop_head(p) < 0)
		return jf_fail(err, "out of memory");
	p->cur = next;
	return plan_segment(p, err) < 0 ? -1 : 1;
}

/* The one-thread decoder's next record past those already given out. */
static int next_from_rest(struct pt_count *p, struct jf_flow *f, struct jf_error *err)
{
	int rc;

	while ((rc = jf_decoder_next(p->rest, f, err)) > 0) {
		if (!p->skip)
			return rc;
		p->skipped_hash = jf_flow_hash(p->skipped_hash, f);
		if (--p->skip == 0 && p->skipped_hash != p->given_hash)
			break;
	}
	if (rc < 0)
		return rc;
	if (p->skip || p->skipped_hash != p->given_hash)
		return jf_fail(err, "parallel count: the records given out before offset "
			       "0x%llx differ from one thread's", (unsigned long long)f->offset);
	/* The end: its statistics and those at the anchor are the whole trace's. */
	if (p->anchored) {
		*p->stats = p->at_anchor;
		jf_decode_stats_add(p->stats, jf_decoder_stats(p->rest));
	} else {
		*p->stats = *jf_decoder_stats(p->rest);
	}
	jf_seg_queue_join(&p->q);
	return 0;
}

static int count_next(void *self, struct jf_flow *f, struct jf_error *err);

/* The hand-over's next record; back to the segments where it takes over again. */
static int next_from_local(struct pt_count *p, struct jf_flow *f, struct jf_error *err)
{
	struct jf_pt_fast_policy policy;
	uint64_t psb;
	int rc;

	/* Its last record (the loss up to psb) has been counted by now. */
	if (jf_pt_fast_counter_resuming(p->local, &psb, &policy)) {
		jf_decode_stats_add(p->stats, jf_decoder_stats(p->local));
		jf_decoder_free(p->local);
		p->local = NULL;
		if (back_to_segments(p, psb, &policy, err) < 0)
			return -1;
		return count_next(p, f, err);
	}
	rc = jf_decoder_next_uncounted(p->local, f, err);
	if (rc > 0) {
		p->given++;
		p->given_hash = jf_flow_hash(p->given_hash, f);
		return rc;
	}
	if (rc < 0)
		return rc;
	if (jf_pt_fast_counter_gave_up(p->local)) {
		jf_decoder_free(p->local);
		p->local = NULL;
		if (start_rest(p, err) < 0)
			return -1;
		return next_from_rest(p, f, err);
	}
	/* The end. */
	jf_decode_stats_add(p->stats, jf_decoder_stats(p->local));
	jf_seg_queue_join(&p->q);
	return 0;
}

/* The next record of the hand-over made ahead, as next_from_local gives the hand-over's. */
static int next_from_ahead(struct pt_count *p, struct jf_flow *f, struct jf_error *err)
{
	const struct jf_pt_ahead *a = p->ahead;
	struct jf_pt_fast_policy policy = a->after;
	uint64_t psb = a->psb;

	if (p->ahead_left) {
		p->ahead_pos = jf_flow_buffer_get(&a->records, p->ahead_pos, f);
		p->ahead_left--;
		p->given++;
		p->given_hash = jf_flow_hash(p->given_hash, f);
		return 1;
	}
	p->ahead = NULL;
	jf_decode_stats_add(p->stats, &a->stats);
	if (!a->resumes) {
		jf_seg_queue_join(&p->q);
		return 0;
	}
	/* a lies in cur, which the segments from psb on may drop. */
	if (back_to_segments(p, psb, &policy, err) < 0)
		return -1;
	return count_next(p, f, err);
}

static int count_next(void *self, struct jf_flow *f, struct jf_error *err)
{
	struct pt_count *p = self;

	if (p->rest)
		return next_from_rest(p, f, err);
	if (p->local)
		return next_from_local(p, f, err);
	if (p->ahead)
		return next_from_ahead(p, f, err);
	if (!p->cur) {
		p->cur = seg_of(jf_seg_queue_first(&p->q));
		jf_seg_queue_wait_done(&p->q, &p->cur->seg);
		p->pos = 0;
		if (plan_segment(p, err) < 0)
			return -1;
	}
	while (!p->rec_left) {
		const struct stretch *t;
		struct jf_decode_stats *s = p->stats;

		while (p->pos >= p->until) {
			int rc = advance(p, err);

			if (rc == 0)
				jf_seg_queue_join(&p->q); /* the report is final */
			if (rc <= 0)
				return rc;
			if (p->rest)
				return next_from_rest(p, f, err);
			if (p->local)
				return next_from_local(p, f, err);
			if (p->ahead)
				return next_from_ahead(p, f, err);
		}
		note_anchor(p);
		t = &p->cur->st[p->pos++];
		note_given(p, p->cur, t);
		s->insns += t->insns;
		s->blocks += t->blocks;
		s->events += t->events;
		if (t->has_time)
			jf_decode_stats_span(s, t->tmin, t->tmax);
		p->rec_pos = t->records;
		p->rec_left = t->nrecords;
		jf_decoder_report_progress(p->dec, t->psb);
	}
	p->rec_pos = jf_flow_buffer_get(&p->cur->records, p->rec_pos, f);
	p->rec_left--;
	p->given++;
	p->given_hash = jf_flow_hash(p->given_hash, f);
	return 1;
}

static void count_free(void *self)
{
	struct pt_count *p = self;
	int i;

	jf_seg_queue_join(&p->q);
	for (i = 0; i < p->nworkers; i++) {
		jf_pt_fast_caches_fini(&p->workers[i].caches);
		jf_codemap_free(p->workers[i].map);
		jf_pt_psb_finder_free(p->workers[i].psbs);
	}
	jf_pt_psb_finder_free(p->psbs);
	free(p->stop_records);
	free(p->workers);
	jf_seg_queue_fini(&p->q);
	while (p->spare) {
		struct segment *s = p->spare;

		p->spare = seg_of(s->seg.next);
		free_segment(s);
	}
	jf_decoder_free(p->serial);
	jf_pt_fast_caches_fini(&p->serial_caches);
	jf_fast_shared_free(p->shared);
	jf_decoder_free(p->rest);
	jf_decoder_free(p->local);
	free(p->last_records);
	free(p);
}

static const struct jf_decoder_ops count_ops = { count_next, count_free };

static int start_workers(struct pt_count *p, struct jf_error *err)
{
	int i;

	p->workers = calloc((size_t)p->opt.jobs, sizeof(*p->workers));
	p->psbs = jf_pt_psb_finder_new(p->cfg.trace, p->cfg.size);
	p->shared = jf_fast_shared_new();
	if (!p->workers || !p->psbs || !p->shared)
		return jf_fail(err, "out of memory");
	p->nworkers = p->opt.jobs;
	for (i = 0; i < p->nworkers; i++) {
		struct worker *w = &p->workers[i];

		w->p = p;
		/* the last one is the calling thread's, when it waits */
		if (i + 1 == p->nworkers)
			jf_seg_queue_set_helper(&p->q, decode_segment, w);
		else if (jf_seg_queue_start_worker(&p->q, work, w, err) < 0)
			return -1;
	}
	return 0;
}

/* The bytes a segment's decoder goes on past its end: what its seam needs to join
 * (JF_PT_COUNT_OVERLAP), whatever the segment's size; a small segment's a sixteenth of it,
 * at least JF_PT_OVERLAP_DEFAULT. */
static uint64_t count_overlap(uint64_t segment_size)
{
	uint64_t overlap = segment_size / JF_PT_COUNT_OVERLAP_SHARE;

	if (overlap > JF_PT_COUNT_OVERLAP)
		overlap = JF_PT_COUNT_OVERLAP;
	return overlap > JF_PT_OVERLAP_DEFAULT ? overlap : JF_PT_OVERLAP_DEFAULT;
}

struct jf_decoder *jf_pt_parallel_counter_new(const struct jf_pt_config *cfg,
					      struct jf_codemap *map,
					      const struct jf_pt_parallel_options *opt,
					      struct jf_pt_parallel_report *report,
					      struct jf_error *err)
{
	uint64_t segment_size = opt->segment_size ? opt->segment_size
						  : JF_PT_COUNT_SEGMENT_DEFAULT;
	uint64_t segment_max = opt->segment_size || opt->segment_max ? opt->segment_max
								       : JF_PT_COUNT_SEGMENT_MAX;
	struct jf_decoder *dec;
	struct pt_count *p;

	if (opt->jobs <= 1 || cfg->size <= segment_size)
		return jf_pt_fast_counter_new(cfg, map, err);
	p = calloc(1, sizeof(*p));
	if (!p) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	p->cfg = *cfg;
	p->cfg.insns = NULL;
	p->map = map;
	p->opt = *opt;
	p->opt.segment_size = segment_size;
	if (!p->opt.overlap)
		p->opt.overlap = count_overlap(segment_size);
	p->report = report ? report : &p->own_report;
	/* Room for every thread to run segments ahead of those waiting to be given out: with
	 * jobs + 2, a thread that finished two small segments while another decoded a larger
	 * one before them waited for it, idle, and the other thread did more of the work
	 * (callgrind, fair scheduling, timed capture at -j 2: the busier thread 1.13x the
	 * other's instructions with jobs + 2, 1.05x with 2 jobs + 2). With 2 jobs + 2 at
	 * -j 16, while the calling thread decoded a segment instead of giving out the ones
	 * done, the window filled and workers waited (interp capture: the busiest thread
	 * decoded 4 segments, others 2; 115 M instructions against 104 M with 4 jobs + 2). */
	if (jf_seg_queue_init(&p->q, cfg->trace, cfg->size, segment_size, SEGMENTS_PER_JOB *
			      (size_t)opt->jobs + 2, p, new_segment, recycle_segment) < 0) {
		jf_fail(err, "out of memory");
		count_free(p);
		return NULL;
	}
	if (segment_max > segment_size) {
		jf_seg_queue_set_guided(&p->q, segment_max,
					JF_PT_COUNT_SHARE_PER_JOB * (unsigned)opt->jobs);
		jf_seg_queue_set_tail(&p->q, segment_size / JF_PT_COUNT_TAIL_SHARE,
				      (unsigned)opt->jobs);
	}
	if (start_workers(p, err) < 0) {
		count_free(p);
		return NULL;
	}
	dec = jf_pt_wrap(&count_ops, p, cfg, err);
	if (dec) {
		p->stats = jf_decoder_stats_mut(dec);
		p->dec = dec;
	}
	return dec;
}
