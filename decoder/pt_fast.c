/* Intel PT fast path: libipt's packet decoder and a TNT payload cache (pt_fast_packets.c,
 * "following packets", with libipt's time estimation kept beside it: pt_fast_time.c),
 * libipt's query decoder only to synchronise at the first PSB; a block cache for the
 * code; and libipt's block decoder (pt_decoder.c) for everything else.
 *
 * libipt's block decoder spends most of its time per block: finding the section, its
 * block cache, the event checks. For counting, a block's instructions only depend on its
 * start address and the code map version, so they are decoded once (pt_fast_blocks.c) and
 * each later visit costs one lookup and the TNT bit or TIP that ends it, read from the
 * packets as libipt's query decoder would read them. Return compression keeps libipt's
 * call stack rules; tracing on/off, execution mode and timing events are handled where
 * they occur, exactly as the block decoder handles them, and returned as it returns them;
 * so are overflows (the block decoder goes on where the overflow resolved, with its return
 * stack).
 *
 * Exactness comes from handing over rather than guessing: whatever this path does not
 * model (an interrupt, paging, PTWRITE, a code map change...) makes it drop what it
 * decoded since the last PSB and let jf_pt_decoder_new's decoder decode on from that PSB
 * (pt_fast_handover.c), until it resynchronises after an error, where this path takes
 * over again (resume), or, returning blocks, until its records join those of a fast
 * decoder started at a later PSB (pt_fast_join.c). To make that possible, nothing decoded after a PSB is returned (or
 * counted) before the next PSB is reached. What the consistency checks libipt 2.0
 * lacks (pt_status_check.c) find, this path hands over on itself: a TIP.PGE while tracing
 * (jf_fast_apply_event), a PSB+ whose FUP says tracing is on while it is off
 * (jf_fast_reach_psb_fup); after an overflow the checks know less than this path (tracing
 * unknown until a FUP, PSB+ or TIP.PGE says), so they find nothing it accepts. Where
 * libipt reports an error, the checks say at which PSB its block decoder synchronises
 * again (pt_fast_resync.c). */
#include "jitflow/pt_fast.h"
#include "decoder_internal.h"
#include "pt_events.h"
#include "pt_fast_bad_packet.h"
#include "pt_fast_internal.h"
#include "pt_libipt_config.h"
#include "pt_status_check.h"

#include <intel-pt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitflow/insn.h"

uint64_t jf_fast_psb_after(struct fast *f, uint64_t offset)
{
	uint64_t at;

	if (offset + 1 >= f->cfg.size || pt_pkt_sync_set(f->psbs, offset + 1) < 0 ||
	    pt_pkt_sync_forward(f->psbs) < 0 || pt_pkt_get_sync_offset(f->psbs, &at) < 0)
		return f->cfg.size;
	return at;
}

/* A pooled array for empty queue q, if the pool has one (the largest: the PSB
 * stretches of one trace are alike), of at most max records used. */
static void take_pooled(struct jf_fast_queue_pool *pool, struct queue *q, size_t max)
{
	unsigned i, best = 0;

	if (!pool || !pool->n || q->flows)
		return;
	for (i = 1; i < pool->n; i++)
		if (pool->cap[i] > pool->cap[best])
			best = i;
	q->flows = pool->flows[best];
	q->cap = pool->cap[best] < max ? pool->cap[best] : max;
	pool->n--;
	pool->flows[best] = pool->flows[pool->n];
	pool->cap[best] = pool->cap[pool->n];
}

/* Queue q's array to the pool (freed if there is none, or it is full); q left empty. */
static void release_queue(struct jf_fast_queue_pool *pool, struct queue *q)
{
	if (q->flows && pool && pool->n < QUEUE_POOL) {
		pool->flows[pool->n] = q->flows;
		pool->cap[pool->n++] = q->cap;
	} else {
		free(q->flows);
	}
	q->flows = NULL;
	q->n = q->pos = q->cap = 0;
}

void jf_fast_release_queues(struct fast *f)
{
	release_queue(f->queues, &f->pending);
	release_queue(f->queues, &f->ready);
}

static void queue_pool_free(struct jf_fast_queue_pool *pool)
{
	if (!pool)
		return;
	while (pool->n)
		free(pool->flows[--pool->n]);
	free(pool);
}

/* Twice the room, up to max records (-1: no more). A first growth takes a pooled array
 * (pool may be NULL), which may hold more already. */
static int grow_queue(struct jf_fast_queue_pool *pool, struct queue *q, size_t max)
{
	size_t cap;
	struct jf_flow *flows;

	take_pooled(pool, q, max);
	if (q->cap > q->n)
		return 0;
	cap = q->cap ? 2 * q->cap : QUEUE_FIRST;
	if (q->cap >= max)
		return -1;
	if (cap > max)
		cap = max;
	flows = realloc(q->flows, cap * sizeof(*flows)); /* cleared as used */
	if (!flows)
		return -1;
	q->flows = flows;
	q->cap = cap;
	return 0;
}

int jf_fast_queue_grow(struct fast *f)
{
	/* Returning blocks, a stretch holds every block between two PSBs. */
	return grow_queue(f->queues, &f->pending, f->emit ? QUEUE_MAX_BLOCKS : QUEUE_MAX);
}

/* Give the pages of a mapped trace well behind the last PSB back to the kernel, so that
 * resident memory does not grow with the trace (a hand-over reads them again). */
static void release_behind(struct fast *f, uint64_t offset)
{
	enum { STEP = 8 << 20, LAG = 1 << 20 };
	uintptr_t page, from, to;

	if (!f->cfg.release_consumed || offset < f->released + STEP + LAG)
		return;
	page = (uintptr_t)sysconf(_SC_PAGESIZE);
	from = ((uintptr_t)f->cfg.trace + f->released + page - 1) & ~(page - 1);
	to = ((uintptr_t)f->cfg.trace + offset - LAG) & ~(page - 1);
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
	f->released = offset - LAG;
}

/* The state carried into the stretch after the PSB reached now (pt_fast_watch.h). Only
 * the return stack's entries in use are written: the rest is never read (states are
 * compared and kept up to their depth), and clearing all 64 at every PSB was most of the
 * cost of a commit told to a watcher. */
void jf_fast_fill_state(struct fast *f, struct jf_pt_fast_state *st)
{
	uint8_t i;

	memset(st, 0, offsetof(struct jf_pt_fast_state, ret));
	st->ip = f->ip;
	st->enabled = f->enabled;
	st->isa = f->isa;
	/* Following packets, this path carries only the IP, tracing state, mode and return
	 * stack (the query decoder's status and time at a PSB differ between decoders
	 * started at different PSBs), and hands over where a FUP or a MODE.exec waits at a
	 * PSB; with timing packets, also the time as libipt's query decoder carries it. A
	 * hand-over right after start()'s sync carries the query decoder's status and time
	 * there. */
	if (f->qry && !f->by_packets) {
		st->status = f->status;
		pt_qry_time(f->qry, &st->tsc, &st->lost_mtc, &st->lost_cyc);
		pt_qry_core_bus_ratio(f->qry, &st->cbr);
	} else if (f->timed) {
		st->tsc = f->last_time.tsc;
		st->lost_mtc = f->last_time.lost_mtc;
		st->lost_cyc = f->last_time.lost_cyc;
		st->cbr = f->last_time.cbr;
	}
	for (i = f->top; i != f->bottom; st->depth++) {
		i = (uint8_t)(!i ? RETSTACK_SIZE : i - 1);
		st->ret[st->depth] = f->ret[i];
	}
}

int jf_pt_fast_same_state(const struct jf_pt_fast_state *f, const struct jf_pt_fast_state *g)
{
	if (f->ip != g->ip || f->enabled != g->enabled || f->isa != g->isa ||
	    f->status != g->status || f->tsc != g->tsc || f->lost_mtc != g->lost_mtc ||
	    f->lost_cyc != g->lost_cyc || f->cbr != g->cbr || g->depth > f->depth)
		return 0;
	return !memcmp(f->ret, g->ret, (size_t)g->depth * sizeof(g->ret[0]));
}

/* pt_fast_watch.h: what the watcher is told of a commit at psb (or that the stretch from
 * psb on is not modelled), with the state carried into the next stretch. */
void jf_fast_fill_commit(struct fast *f, uint64_t psb, int unmodelled,
			 struct jf_pt_fast_commit *c)
{
	/* Every member is set below (the state by jf_fast_fill_state). */
	c->stopped_at = 0;
	c->psb = psb;
	c->unmodelled = unmodelled;
	c->fresh = !unmodelled && f->resync && f->resume_psb == psb;
	c->insns = f->insns_n;
	c->blocks = f->blocks_n;
	c->has_time = f->has_time;
	c->tmin = f->tmin;
	c->tmax = f->tmax;
	c->records = f->pending.flows;
	c->nrecords = f->pending.n;
	c->events = f->events_n;
	/* At an unmodelled stop, the records counted since the last stop too. */
	c->events_hash = f->events_hash + f->unsettled_own;
	c->timed_here = f->timed_here;
	c->popped_empty = f->popped_empty;
	if (unmodelled && f->by_packets && f->pkt)
		jf_fast_pkt_offset(f, &c->stopped_at);
	jf_fast_fill_state(f, &c->state);
}

/* Tell the watcher (1: it asks to pause). */
int jf_fast_tell_watcher(struct fast *f, uint64_t psb, int unmodelled)
{
	struct jf_pt_fast_commit c;

	jf_fast_fill_commit(f, psb, unmodelled, &c);
	return f->watch(f->watch_ctx, &c);
}

/* Counting: what the stretch ending at psb counted, and the state there, kept for the
 * last two stretches (a hand-over checks a block decoder started before them against
 * them: pt_fast_count_handover.c). */
static void keep_counted(struct fast *f, uint64_t psb)
{
	struct jf_fast_counted *c;

	if (f->ncounted == 2)
		/* As far as its return stack's depth (the rest is never read). */
		memcpy(&f->counted[0], &f->counted[1],
		       offsetof(struct jf_fast_counted, state.ret) +
			       (size_t)f->counted[1].state.depth * sizeof(f->counted[1].state.ret[0]));
	else
		f->ncounted++;
	c = &f->counted[f->ncounted - 1];
	c->from = f->restart;
	c->psb = psb;
	c->insns = f->insns_n;
	c->blocks = f->blocks_n;
	c->has_time = f->has_time;
	c->tmin = f->tmin;
	c->tmax = f->tmax;
	c->events = f->events_n;
	c->events_hash = f->events_hash;
	jf_fast_fill_state(f, &c->state);
}

/* cfg.count_plain_events: count the stretch's event records (settled by now: their times
 * and offsets are final at a commit; those counted already, waiting for the next stop's
 * offset, take their own) and keep only the others. */
static void count_plain_events(struct fast *f)
{
	size_t i, n = 0;

	f->events_hash += f->unsettled_own;
	f->nunsettled = 0;
	f->unsettled_what = f->unsettled_own = 0;

	for (i = 0; i < f->pending.n; i++) {
		const struct jf_flow *fl = &f->pending.flows[i];

		if (!jf_fast_plain_event(fl)) {
			if (n != i)
				f->pending.flows[n] = *fl;
			n++;
			continue;
		}
		f->events_n++;
		if (fl->flags & JF_FLOW_HAS_TIME)
			jf_fast_note_time(f, fl->time);
		/* Two decoders' stretches are compared (pt_parallel_count.c, a counting
		 * hand-over): by where and what these records were (a full jf_flow_hash of
		 * each cost -j 2 as much as the rest of this). */
		f->events_hash += jf_fast_event_hash(fl->offset, fl->kind, fl->ip);
	}
	/* A hand-over skips the block decoder's records by number: these count too, with
	 * those counted where they were made. */
	f->committed_records += f->events_n;
	f->pending.n = n;
}

/* The stretch decoded here: count it and release its records. */
void jf_fast_commit(struct fast *f, uint64_t new_restart)
{
	struct jf_decode_stats *s = f->stats;
	struct queue tmp;

	jf_fast_settle_block_time(f);
	/* Code that may change is decoded ahead only up to here: what the PSB+ reads after
	 * this commit belongs to the next stretch, which begins only then (pt_fast_optimism.c). */
	if (f->blocks && f->blocks->changing)
		f->blocks->changing->open = 0;
	if (f->cfg.count_plain_events && !f->emit)
		count_plain_events(f);
	if (f->watch) {
		/* The watcher has the records: they are not returned again. */
		f->paused = jf_fast_tell_watcher(f, new_restart, 0);
		f->pending.n = 0;
	} else if (!f->emit) {
		keep_counted(f, new_restart);
	}
	/* Returned blocks count themselves as they pass jf_decoder_next. */
	if (!f->emit) {
		s->insns += f->insns_n;
		s->blocks += f->blocks_n;
		s->events += f->events_n;
	}
	if (f->has_time && !f->emit)
		jf_decode_stats_span(s, f->tmin, f->tmax);
	f->insns_n = f->blocks_n = f->events_n = f->events_hash = 0;
	f->has_time = 0;
	f->timed_here = 0;
	f->committed_records += f->pending.n;
	f->report.fast_bytes += new_restart - f->restart;
	f->prev_restart = f->restart;
	f->restart = new_restart;
	release_behind(f, new_restart);
	/* The ready queue is empty whenever decoding runs. */
	tmp = f->ready;
	f->ready = f->pending;
	f->ready.pos = 0;
	f->stretch_n = f->ready.n; /* kept there for a hand-over (pt_fast_handover.c) */
	f->pending = tmp;
	/* Nothing to return (the first PSB of a decoder started there, say): the window on
	 * code that may change, closed above, opens again for the stretch that begins here
	 * once its PSB+ is read, as after a commit whose records are returned. */
	if (!f->ready.n && f->opt && !f->rolling && f->blocks &&
	    f->blocks->changing == &f->opt->ch)
		f->empty_commit = 1;
	f->pending.n = f->pending.pos = 0;
	f->await = 0;
	f->settle_due = 0;
	f->joinable = 0;
	f->retime = 0;
	f->committed = 1;
	if (f->dec)
		jf_decoder_report_progress(f->dec, new_restart);
}

void jf_fast_free_decoders(struct fast *f)
{
	if (f->qry)
		pt_qry_free_decoder(f->qry);
	if (f->psbs)
		pt_pkt_free_decoder(f->psbs);
	if (f->pkt)
		pt_pkt_free_decoder(f->pkt);
	if (f->sync_check)
		pt_blk_free_decoder(f->sync_check);
	jf_pt_check_free(f->check);
	f->sync_check = NULL;
	f->qry = NULL;
	f->psbs = NULL;
	f->pkt = NULL;
	f->check = NULL;
}

void jf_fast_free_state(struct fast *f)
{
	jf_fast_free_decoders(f);
	if (!f->borrowed) {
		struct jf_pt_fast_caches own = { f->insns, f->blocks, f->payloads,
						 NULL /* f->block_paths: fast_free's */,
						 NULL /* own caches keep no queues */ };

		jf_pt_fast_caches_fini(&own);
	}
	f->payloads = NULL;
	f->blocks = NULL;
	f->insns = NULL;
}

/* A return pushed by a walk, noted for the walk's entry in the payload cache (*npush
 * counts on past JF_PAYLOAD_MAX_OPS: then too many to keep). */
static void walk_push(struct fast *f, uint64_t ip, uint64_t *push, unsigned *npush)
{
	jf_fast_push_return(f, ip);
	if (*npush < JF_PAYLOAD_MAX_OPS)
		push[*npush] = ip;
	++*npush;
}

/* walk_to's walk: the instructions walked added to *n, the returns pushed noted in push
 * (walk_push). Returns 0, or 1 where it stops short. Out of line: most walks are replayed
 * (walk_to), whose frame then stays small. */
__attribute__((noinline)) static int walk(struct fast *f, uint64_t to, int has_to, int bind_branch, uint64_t *n,
		uint64_t *push, unsigned *npush)
{
	struct jf_insn_info in;
	int inside = 0; /* to may lie ahead in the block being walked: step by instruction */

	for (;;) {
		if (has_to && f->ip == to)
			break;
		if (!inside) {
			/* Whole cached blocks at once where the walk cannot stop inside them. */
			const struct jf_fast_block *b =
				jf_fast_block_at(f->blocks, f->isa, f->ip, f->generation);
			int end = b->end;

			/* to may lie inside if it is in the range of a straight block, or anywhere
			 * along a block that follows jumps. */
			inside = has_to && (!b->straight || (to > b->start && to <= b->last));
			if (!inside && end != JF_FAST_BAD && end != JF_FAST_UNHANDLED) {
				if (end != JF_FAST_CALL && end != JF_FAST_CONTINUE && !bind_branch)
					return 1;
				*n += b->ninsn;
				if (end == JF_FAST_CONTINUE) {
					f->ip = b->next;
					continue;
				}
				if ((end == JF_FAST_CALL && b->target != b->next) ||
				    end == JF_FAST_CALL_IND)
					walk_push(f, b->next, push, npush);
				if (end == JF_FAST_CALL) {
					f->ip = b->target;
					continue;
				}
				f->ip = b->last;
				break;
			}
		}
		if (*n >= MAX_WALK || jf_insn_at(f->insns, f->isa, f->ip, &in) < 0)
			return 1;
		++*n;
		switch ((enum jf_insn_class)in.cls) {
		case JF_INSN_OTHER:
			f->ip += in.size;
			continue;
		case JF_INSN_JUMP:
			f->ip = in.target;
			inside = 0;
			continue;
		case JF_INSN_CALL:
			if (in.target != f->ip + in.size)
				walk_push(f, f->ip + in.size, push, npush);
			f->ip = in.target;
			inside = 0;
			continue;
		case JF_INSN_CALL_INDIRECT:
			walk_push(f, f->ip + in.size, push, npush);
			/* fall through */
		case JF_INSN_COND:
		case JF_INSN_RETURN:
		case JF_INSN_JUMP_INDIRECT:
		case JF_INSN_FAR:
			if (!bind_branch)
				return 1;
			break;
		default:
			return 1;
		}
		break;
	}
	return 0;
}

/* walk_to's walk where none is kept: walked, and kept if it reached its end (kind: as
 * walk_to's). Not inline: walk_to, on every TIP.PGD, then keeps a small frame. */
static __attribute__((noinline)) int walk_and_keep(struct fast *f, uint64_t to, int has_to,
						   int bind_branch, unsigned kind,
						   uint64_t *n)
{
	uint64_t start = f->ip, push[JF_PAYLOAD_MAX_OPS];
	unsigned npush = 0;

	if (walk(f, to, has_to, bind_branch, n, push, &npush))
		return 1;
	if (f->payloads && npush <= JF_PAYLOAD_MAX_OPS)
		jf_payload_walk_keep(f->payloads, f->isa, start, f->generation, to, kind, f->ip,
				     *n, push, npush);
	return 0;
}

/* Walk without trace, as libipt's block decoder does to bind an event: to the IP to (if
 * has_to), or, if bind_branch, to the first instruction that would need trace (which
 * executed). Returns 0, or 1 if neither is reached (not modelled). A walk that reached
 * its end is kept in the payload cache and replayed from there the next time (the same
 * start, end and kind: pt_fast_payloads.h). Inline (its walk is not, walk_and_keep): each
 * TIP.PGD takes it, where the call's frame was a sixth of its cost (clean capture). */
static inline __attribute__((always_inline)) int walk_to(struct fast *f, uint64_t to, int has_to,
							  int bind_branch)
{
	const struct jf_payload_path *kept = NULL;
	uint64_t n = 0;
	unsigned kind = (has_to ? 2u : 0u) | (bind_branch ? 1u : 0u), i;

	if (f->emit)
		return jf_fast_emit_walk(f, to, has_to, bind_branch, f->emit_offset);
	if (!has_to)
		to = 0;
	else if (f->ip == to)
		return 0; /* nothing to walk (an IP-filtered trace's TIP.PGD after a TIP, say) */
	if (f->payloads)
		kept = jf_payload_walk_at(f->payloads, f->isa, f->ip, f->generation, to, kind);
	if (kept) {
		for (i = 0; i < kept->nops; i++)
			jf_fast_push_return(f, kept->push[i]);
		f->ip = kept->end;
		n = kept->insns;
	} else if (walk_and_keep(f, to, has_to, bind_branch, kind, &n)) {
		return 1;
	}
	/* After a disable, where tracing resumes is told by the enable event; libipt's
	 * guess is not needed for counting. */
	f->insns_n += n;
	/* No instruction walked, no block: libipt's block decoder stamps no time then (the
	 * query decoder may have read a time a block would have had; fuzz_pt_decode). */
	if (n) {
		f->blocks_n++;
		jf_fast_note_block_time(f);
	}
	return 0;
}

/* Before PSB+'s status updates, libipt's block decoder walks (without trace) to the IP
 * they are bound to, the FUP's (fup: whether the PSB+ has one; ip: its IP); a decoder
 * synchronising at that PSB starts there. So those instructions belong before the PSB.
 * Returns 0, or 1 if not modelled. */
int jf_fast_reach_psb_fup(struct fast *f, int fup, uint64_t ip)
{
	if (fup < 0 || fup != f->enabled)
		return 1;
	return fup ? walk_to(f, ip, 1, 0) : 0;
}

/* An event with an IP applies there: walk to it while tracing (libipt errs if that needs
 * trace; so do we, by handing over). Returns 0, or 1 if not modelled. */
static int bind_to_ip(struct fast *f, const struct pt_event *ev, uint64_t ip)
{
	if (ev->ip_suppressed)
		return 0;
	return !f->enabled || walk_to(f, ip, 1, 0);
}

int jf_fast_enable_at(struct fast *f, uint64_t ip)
{
	if (f->enabled)
		return 1;
	/* libipt's block decoder says whether tracing resumed where it stopped. */
	f->resumed = ip == f->ip;
	if (f->emit && f->resumed && f->resume_unsure)
		return 1;
	f->resume_unsure = 0;
	/* libipt's block starts there (pt_fast_bad_packet.c: no code there) */
	f->ip = f->tip_target = ip;
	f->enabled = 1;
	f->off_at_ip = f->off_at_zero = 0;
	return 0;
}

int jf_fast_disable_after(struct fast *f, uint64_t ip, int has_ip)
{
	/* A TIP.PGD binds to the branch that left the traced region: its target, or the
	 * first instruction that needs trace. One whose IP is where the decode is, nothing
	 * run in between, libipt's block decoder ends an empty block at (a record of no
	 * instructions before the event): not modelled (fuzz_pt_decode). */
	if (!f->enabled || (has_ip && f->ip == ip) || walk_to(f, ip, has_ip, 1))
		return 1;
	f->enabled = 0;
	f->off_at_ip = 0;
	f->off_at_zero = 1;
	return 0;
}

/* Apply one event as libipt's block decoder does. Returns 0, or 1 if not modelled. */
int jf_fast_apply_event(struct fast *f, const struct pt_event *ev)
{
	switch (ev->type) {
	case ptev_enabled:
		if (ev->status_update || ev->ip_suppressed)
			return 1;
		return jf_fast_enable_at(f, ev->variant.enabled.ip);
	case ptev_disabled:
		if (ev->status_update)
			return 1;
		return jf_fast_disable_after(f, ev->variant.disabled.ip, !ev->ip_suppressed);
	case ptev_async_disabled:
		/* FUP + TIP.PGD: tracing stopped at the FUP's IP (erratum SKD022 aside). */
		if (ev->status_update || !f->enabled ||
		    (f->skd022 && jf_fast_may_be_vm_entry(f, ev->variant.async_disabled.at)) ||
		    walk_to(f, ev->variant.async_disabled.at, 1, 0))
			return 1;
		f->enabled = 0;
		f->off_at_ip = 1;
		f->off_at_zero = 0;
		return 0;
	case ptev_async_branch:
		/* FUP + TIP: an interrupt or exception at the FUP's IP. */
		if (ev->status_update || !f->enabled ||
		    walk_to(f, ev->variant.async_branch.from, 1, 0))
			return 1;
		f->ip = f->tip_target = ev->variant.async_branch.to;
		return 0;
	case ptev_overflow:
		/* Binds to nothing: libipt's block decoder applies it where it is (after the
		 * last branch it followed) and goes on at the FUP's IP, or with tracing off if
		 * the overflow resolved so; the return stack and the execution mode stay. */
		if (ev->status_update)
			return 1;
		f->enabled = !ev->ip_suppressed;
		f->ip = f->enabled ? ev->variant.overflow.ip : 0;
		f->resume_unsure = 0;
		f->off_at_ip = f->off_at_zero = 0;
		return 0;
	case ptev_exec_mode: {
		enum jf_isa isa = jf_pt_isa(ev->variant.exec_mode.mode);

		if (bind_to_ip(f, ev, ev->variant.exec_mode.ip))
			return 1;
		/* libipt diagnoses a status update that contradicts the mode it knows. */
		if (ev->status_update && f->enabled && f->isa != JF_ISA_UNKNOWN && f->isa != isa)
			return 1;
		f->isa = isa;
		return 0;
	}
	/* These bind to their IP (libipt walks there without trace) or apply at once without
	 * one, and change nothing that is counted: the transaction state only marks blocks
	 * speculative, the address space is the code map's. */
	case ptev_tsx:
		/* Returned blocks would be marked speculative: not modelled. */
		if (f->emit && ev->variant.tsx.speculative)
			return 1;
		return bind_to_ip(f, ev, ev->variant.tsx.ip);
	case ptev_async_paging:
		return bind_to_ip(f, ev, ev->variant.async_paging.ip);
	case ptev_async_vmcs:
		return bind_to_ip(f, ev, ev->variant.async_vmcs.ip);
	case ptev_cbr:
	case ptev_mnt:
	case ptev_pwre:
	case ptev_pwrx:
		return 0;
	default:
		return 1;
	}
}

/* Stamp the record that waits for an event to be read with the time after the read. */
void jf_fast_retime(struct fast *f)
{
	struct jf_flow *fl;
	uint64_t t;

	if (!f->retime)
		return;
	fl = &f->pending.flows[f->retime - 1];
	f->retime = 0;
	t = jf_fast_time_now(f);
	fl->time = t;
	fl->flags = (uint16_t)(t ? fl->flags | JF_FLOW_HAS_TIME : fl->flags & ~JF_FLOW_HAS_TIME);
}

/* The end of the trace (the decoder at offset), as pt_decoder.c reports it. */
int jf_fast_finish(struct fast *f, uint64_t offset)
{
	if (f->enabled && !jf_fast_queue_flow(f, JF_FLOW_END, offset))
		return 1;
	jf_fast_commit(f, f->cfg.size);
	f->done = 1;
	return 0;
}

/* Decode until a stretch is committed, the trace ends or this path hands over. */
int jf_fast_decode(struct fast *f, struct jf_error *err)
{
	/* A resynchronisation's commit may leave nothing ready (a watcher took it). */
	while (jf_fast_decoding(f)) {
		if (jf_fast_next_packet(f))
			return jf_fast_hand_over(f, err);
	}
	return 0;
}

/* Synchronise at the first PSB, as pt_decoder.c does (or at cfg.sync_at), and follow the
 * packets from there; a trace without one, or an error there, is the block decoder's to
 * report. synced: libipt's block decoder is known to synchronise at cfg.sync_at (a
 * resume: it did). */
static int start(struct fast *f, int synced, struct jf_error *err)
{
	uint64_t at, first = f->cfg.has_sync_at ? f->cfg.sync_at : 0;
	int status;

	f->restart = f->prev_restart = first;
	status = f->cfg.has_sync_at ? pt_qry_sync_set(f->qry, &f->ip, f->cfg.sync_at)
				    : pt_qry_sync_forward(f->qry, &f->ip);
	if (status < 0 || pt_qry_get_sync_offset(f->qry, &at) < 0)
		return jf_fast_hand_over(f, err);
	f->status = status;
	f->enabled = !(status & pts_ip_suppressed);
	jf_pt_check_sync(f->check, at);
	/* Bytes before the first PSB: the block decoder's. Its record of them carries the
	 * time its sync reached, which the query decoder does not have here (fuzz_pt_decode
	 * found a trace whose only time was there). */
	if (at > first)
		return jf_fast_hand_over(f, err);
	/* Where the block decoder cannot synchronise here (a packet it cannot read after
	 * the PSB+), it reports a sync error and counts the bytes from here as lost: its
	 * own records, which no hand-over at a later PSB gives (fuzz_pt_decode). */
	if (!synced && !jf_fast_block_decoder_syncs(f, at))
		return jf_fast_hand_over(f, err);
	/* Follow the packets from here, PSB+ included, with or without timing packets
	 * (pt_fast_time.h). */
	f->by_packets = 1;
	f->fresh = 1;
	if (jf_fast_pkt_seek(f, at) < 0)
		return jf_fast_hand_over(f, err);
	f->next_psb = at;
	return 0;
}

static int setup(struct fast *f, struct jf_error *err);

void jf_fast_keep_resources(struct fast *f, const struct fast *keep)
{
	f->map = keep->map;
	f->insns = keep->insns;
	f->blocks = keep->blocks;
	f->payloads = keep->payloads;
	f->block_paths = keep->block_paths;
	f->paths_borrowed = keep->paths_borrowed;
	f->borrowed = keep->borrowed;
	f->queues = keep->queues;
	f->stats = keep->stats;
	f->dec = keep->dec;
	f->released = keep->released;
	f->opt = keep->opt;
	f->qry = keep->qry;
	f->psbs = keep->psbs;
	f->pkt = keep->pkt;
	f->check = keep->check;
	f->sync_check = keep->sync_check;
}

/* The block decoder handed over to resynchronised at f->resume_psb after an error, with
 * nothing decoded past it: it is from there on what a decoder started at that PSB is
 * (pt_decoder.c), so this path starts there afresh, as with cfg.sync_at, and the hand-over
 * cost the stretch from the PSB before the unmodelled one to this PSB. What was counted
 * and returned stays; the caches stay (the code map is the one they were filled from).
 * (Also how a join attempt starts again at a later PSB: pt_fast_join.c.) */
int jf_fast_resume_at(struct fast *f, uint64_t psb, struct jf_error *err)
{
	struct fast keep;

	keep = *f;
	jf_decoder_free(f->old);
	free(f->held);
	jf_fast_join_free(f);
	memset(f, 0, sizeof(*f));
	f->cfg = keep.cfg;
	f->cfg.has_sync_at = 1;
	f->cfg.sync_at = psb;
	f->join_attempt = keep.join_attempt;
	/* (A resynchronisation's libipt decoders among them, if a hand-over did not free
	 * them: each is set to an offset before it reads, and the query decoder restarts at
	 * the PSB (start), as libipt's block decoder restarts its own; allocated anew, they
	 * were 2-3% of `stat` on a capture with an error every PSB period.) */
	jf_fast_keep_resources(f, &keep);
	f->emit = keep.emit;
	f->pending.flows = keep.pending.flows;
	f->pending.cap = keep.pending.cap;
	f->ready.flows = keep.ready.flows;
	f->ready.cap = keep.ready.cap;
	f->report = keep.report;
	f->watch = keep.watch;
	f->watch_ctx = keep.watch_ctx;
	f->watch_resyncs = keep.watch_resyncs;
	f->paused = keep.paused;
	if (keep.resync)
		f->report.resyncs++;
	else
		f->report.resumes++;
	f->resume_backoff = keep.resume_backoff;
	f->fast_bytes_at_resume = f->report.fast_bytes;
	f->insns_before = f->stats->insns;
	if (setup(f, err) < 0)
		return -1;
	return start(f, 1, err);
}

static int resume(struct fast *f, struct jf_error *err)
{
	return jf_fast_resume_at(f, f->resume_psb, err);
}

/* Make records ready: 1 when ready.flows holds some, 2 when the block decoder handed
 * over to returns the next (f->old), 0 at the end (or a watcher's pause), -1 on error. */
static int refill(struct fast *f, struct jf_error *err)
{
	int rc;

	for (;;) {
		if (f->ready.pos < f->ready.n)
			return 1;
		f->ready.n = f->ready.pos = 0;
		if ((f->resume || f->resync) && resume(f, err) < 0)
			return -1;
		if (f->old)
			return 2;
		if (f->done)
			return 0;
		if (f->paused) {
			f->paused = 0;
			return 0;
		}
		rc = jf_fast_decode_stretch(f, err);
		if (rc < 0)
			return -1;
	}
}

/* refill, and where blocks decoded ahead over code that may change are among the records
 * ready, those up to the next such block (*until), the first checked
 * (pt_fast_optimism.c). */
static int refill_checked(struct fast *f, size_t *until, struct jf_error *err)
{
	int rc;

	for (;;) {
		rc = refill(f, err);
		*until = f->ready.n;
		if (rc != 1 || !jf_fast_optimism_due(f))
			return rc;
		rc = jf_fast_optimism_check(f, until, err);
		if (rc != 1 || f->ready.pos < *until)
			return rc;
	}
}

static int fast_next(void *self, struct jf_flow *flow, struct jf_error *err)
{
	struct fast *f = self;
	size_t until;
	int rc = refill_checked(f, &until, err);

	if (rc == 1) {
		*flow = f->ready.flows[f->ready.pos++];
		return 1;
	}
	return rc == 2 ? jf_fast_next_after_hand_over(f, flow, err) : rc;
}

/* The committed stretch's records where they lie (no copy), up to the next one to check
 * when it is asked for; one at a time from a hand-over's block decoder. */
static int fast_next_batch(void *self, const struct jf_flow **flows, size_t *n,
			   struct jf_error *err)
{
	struct fast *f = self;
	size_t until;
	int rc = refill_checked(f, &until, err);

	if (rc == 1) {
		*flows = &f->ready.flows[f->ready.pos];
		*n = until - f->ready.pos;
		f->ready.pos = until;
		return 1;
	}
	if (rc == 2 && (rc = jf_fast_next_after_hand_over(f, &f->batch_one, err)) > 0) {
		*flows = &f->batch_one;
		*n = 1;
	}
	return rc;
}

static void fast_free(void *self)
{
	struct fast *f = self;

	jf_fast_free_state(f);
	jf_fast_optimism_free(f);
	if (!f->paths_borrowed)
		jf_block_paths_free(f->block_paths);
	jf_decoder_free(f->old);
	free(f->held);
	jf_fast_join_free(f);
	jf_fast_release_queues(f);
	free(f);
}

static const struct jf_decoder_ops fast_ops = { fast_next, fast_free };

void jf_pt_fast_counter_report(struct jf_decoder *dec, struct jf_pt_fast_report *out)
{
	struct fast *f = jf_decoder_backend(dec, &fast_ops);

	memset(out, 0, sizeof(*out));
	out->fallback_at = out->block_decoder_from = -1;
	if (f) {
		*out = f->report;
		out->is_fast = 1;
		if (f->blocks)
			out->blocks_decoded = jf_fast_blocks_filled(f->blocks);
		if (f->payloads)
			jf_payloads_counts(f->payloads, &out->tnt_payloads, &out->tnt_payload_hits);
		if (f->block_paths) {
			jf_block_paths_counts(f->block_paths, &out->tnt_paths, &out->tnt_path_hits);
			out->tnt_paths_kept = jf_block_paths_kept(f->block_paths);
		}
	}
}

static int caches_init(struct jf_pt_fast_caches *c, struct jf_codemap *map, int end_on_jump);

static int setup(struct fast *f, struct jf_error *err)
{
	struct pt_config config;

	if (jf_pt_libipt_config(&f->cfg, &config, err) < 0)
		return -1;
	if (!f->borrowed && !f->blocks) {
		struct jf_pt_fast_caches own;

		caches_init(&own, f->map, f->emit);
		f->insns = own.insns;
		f->blocks = own.blocks;
		f->payloads = own.payloads;
		f->block_paths = own.block_paths; /* f's own: fast_free frees it */
	}
	jf_fast_bad_packet_init();
	if (!f->check)
		f->check = jf_pt_check_new(f->cfg.trace, f->cfg.size);
	if (!f->qry)
		f->qry = pt_qry_alloc_decoder(&config);
	if (!f->psbs)
		f->psbs = pt_pkt_alloc_decoder(&config);
	if (!f->pkt)
		f->pkt = pt_pkt_alloc_decoder(&config);
	if (!f->payloads || !f->check || !f->qry ||
	    !f->psbs || !f->pkt)
		return jf_fail(err, "out of memory (fast Intel PT decoder)");
	f->generation = jf_codemap_generation(f->map);
	f->skd022 = config.errata.skd022;
	f->bdm70 = config.errata.bdm70;
	f->skd010 = config.errata.skd010;
	f->apl12 = config.errata.apl12;
	f->skd007 = config.errata.skd007;
	jf_pt_time_config_from(&f->time_cfg, &config);
	jf_pt_time_init(&f->time);
	return 0;
}

/* A fast decoder, set up but not started. */
static struct jf_decoder *make(const struct jf_pt_config *cfg, struct jf_codemap *map,
			       const struct jf_pt_fast_caches *caches, jf_pt_fast_watch_fn watch,
			       void *watch_ctx, int watch_resyncs, int emit, struct jf_error *err)
{
	struct fast *f;
	struct jf_decoder *dec;

	f = calloc(1, sizeof(*f));
	if (!f) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	f->cfg = *cfg;
	f->map = map;
	f->report.fallback_at = f->report.block_decoder_from = -1;
	f->watch = watch;
	f->watch_ctx = watch_ctx;
	f->watch_resyncs = watch_resyncs;
	f->emit = emit;
	if (caches) {
		f->insns = caches->insns;
		f->blocks = caches->blocks;
		f->payloads = caches->payloads;
		f->borrowed = 1;
		f->block_paths = caches->block_paths;
		f->paths_borrowed = caches->block_paths != NULL;
		f->queues = caches->queues;
	}
	if (setup(f, err) < 0) {
		fast_free(f);
		return NULL;
	}
	dec = jf_decoder_new(&fast_ops, f);
	if (!dec) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	jf_decoder_set_batch(dec, fast_next_batch);
	f->dec = dec;
	f->stats = jf_decoder_stats_mut(dec);
	f->stats->trace_bytes = cfg->size;
	f->stats->time_is_ns = cfg->conv.valid;
	f->stats->time_is_synthetic = cfg->time_is_synthetic;
	return dec;
}

static void set_policy(struct fast *f, const struct jf_pt_fast_policy *policy)
{
	/* Only whether there were resumes counts (pt_fast_handover.c), and whether fast
	 * bytes were committed since the last. */
	f->report.resumes = policy->resumed ? 1 : 0;
	f->resume_backoff = policy->backoff;
	f->report.fast_bytes = policy->committed ? 1 : 0;
	f->fast_bytes_at_resume = 0;
}

static struct jf_decoder *counter_new(const struct jf_pt_config *cfg, struct jf_codemap *map,
				      const struct jf_pt_fast_caches *caches,
				      jf_pt_fast_watch_fn watch, void *watch_ctx,
				      int watch_resyncs, int emit, struct jf_error *err)
{
	struct jf_decoder *dec;

	/* An empty trace has nothing to count fast. */
	if (cfg->size == 0 && !watch)
		return jf_pt_decoder_new(cfg, map, err);
	dec = make(cfg, map, caches, watch, watch_ctx, watch_resyncs, emit, err);
	if (dec && start(jf_decoder_backend(dec, &fast_ops), 0, err) < 0) {
		jf_decoder_free(dec);
		return NULL;
	}
	return dec;
}

struct jf_decoder *jf_pt_fast_counter_policy_new(const struct jf_pt_config *cfg,
						 struct jf_codemap *map,
						 const struct jf_pt_fast_policy *policy,
						 struct jf_error *err)
{
	struct jf_pt_fast_policy at_start = *policy;
	struct jf_decoder *dec;

	if (cfg->size == 0)
		return jf_pt_decoder_new(cfg, map, err);
	dec = make(cfg, map, NULL, NULL, NULL, 0, 0, err);
	if (!dec)
		return NULL;
	at_start.committed = 0;
	set_policy(jf_decoder_backend(dec, &fast_ops), &at_start);
	if (start(jf_decoder_backend(dec, &fast_ops), 0, err) < 0) {
		jf_decoder_free(dec);
		return NULL;
	}
	return dec;
}

int jf_pt_fast_count_from_stop(const struct jf_pt_config *cfg, struct jf_codemap *map,
			       const struct jf_pt_fast_caches *caches,
			       const struct jf_pt_fast_stop *stop,
			       const struct jf_pt_fast_policy *policy, struct jf_decoder **out,
			       struct jf_error *err)
{
	struct jf_decoder *dec = make(cfg, map, caches, NULL, NULL, 0, 0, err);
	struct fast *f;
	int rc;

	*out = NULL;
	if (!dec)
		return -1;
	f = jf_decoder_backend(dec, &fast_ops);
	f->restart = f->prev_restart = stop->at->psb;
	f->local_only = 1;
	set_policy(f, policy);
	/* As jf_fast_hand_over chooses. */
	rc = stop->timed ? 0 : jf_fast_count_hand_over_at_stop(f, stop->at, err);
	if (rc == 0)
		rc = jf_fast_count_hand_over_before(f, stop, err);
	/* Nothing committed since the one-thread decoder started afresh at the stop's PSB
	 * (it resynchronised there after an error): its hand-over from its start is a block
	 * decoder from that PSB. */
	if (rc == 0 && !policy->committed && stop->at->psb > 0)
		rc = jf_fast_count_hand_over_fresh(f, stop->at->psb, err);
	if (rc <= 0) {
		jf_decoder_free(dec);
		return rc;
	}
	/* As jf_fast_hand_over leaves it. */
	f->report.hand_overs++;
	f->report.fallback_at = (int64_t)stop->at->psb;
	jf_fast_plan_resumes(f);
	jf_fast_free_decoders(f);
	*out = dec;
	return 1;
}

int jf_pt_fast_counter_resuming(struct jf_decoder *dec, uint64_t *psb,
				struct jf_pt_fast_policy *policy)
{
	struct fast *f = jf_decoder_backend(dec, &fast_ops);

	if (!f || !f->resume)
		return 0;
	*psb = f->resume_psb;
	policy->resumed = 1;
	policy->backoff = f->resume_backoff;
	policy->committed = 0;
	return 1;
}

int jf_pt_fast_counter_gave_up(struct jf_decoder *dec)
{
	struct fast *f = jf_decoder_backend(dec, &fast_ops);

	return f && f->gave_up;
}

struct jf_decoder *jf_pt_fast_counter_new(const struct jf_pt_config *cfg,
					  struct jf_codemap *map, struct jf_error *err)
{
	return counter_new(cfg, map, NULL, NULL, NULL, 0, 0, err);
}

struct jf_decoder *jf_pt_fast_decoder_new(const struct jf_pt_config *cfg,
					  struct jf_codemap *map, struct jf_error *err)
{
	return jf_pt_fast_decoder_cached(cfg, map, NULL, err);
}

struct jf_decoder *jf_pt_fast_decoder_cached(const struct jf_pt_config *cfg,
					     struct jf_codemap *map,
					     const struct jf_pt_fast_caches *caches,
					     struct jf_error *err)
{
	/* Its blocks end where libipt's do with these options only (pt_fast_emit.c). */
	if (!cfg->end_on_call || !cfg->end_on_jump || !cfg->join_cache_splits)
		return jf_pt_decoder_new(cfg, map, err);
	return counter_new(cfg, map, caches, NULL, NULL, 0, 1, err);
}

struct jf_decoder *jf_pt_fast_counter_cached(const struct jf_pt_config *cfg,
					     struct jf_codemap *map,
					     const struct jf_pt_fast_caches *caches,
					     struct jf_error *err)
{
	return counter_new(cfg, map, caches, NULL, NULL, 0, 0, err);
}

struct jf_decoder *jf_pt_fast_watched_new(const struct jf_pt_config *cfg,
					  struct jf_codemap *map,
					  const struct jf_pt_fast_caches *caches,
					  jf_pt_fast_watch_fn fn, void *ctx, struct jf_error *err)
{
	return counter_new(cfg, map, caches, fn, ctx, 0, 0, err);
}

struct jf_decoder *jf_pt_fast_watched_resyncing_new(const struct jf_pt_config *cfg,
						    struct jf_codemap *map,
						    const struct jf_pt_fast_caches *caches,
						    jf_pt_fast_watch_fn fn, void *ctx,
						    struct jf_error *err)
{
	return counter_new(cfg, map, caches, fn, ctx, 1, 0, err);
}

static int caches_init(struct jf_pt_fast_caches *c, struct jf_codemap *map, int end_on_jump)
{
	c->insns = jf_insn_cache_new(map);
	c->blocks = c->insns ? jf_fast_blocks_new(c->insns, map, BLOCK_CACHE_LOG2, end_on_jump)
			     : NULL;
	c->payloads = c->blocks ? jf_payloads_new(c->blocks, PAYLOAD_CACHE_LOG2) : NULL;
	c->block_paths = c->payloads && end_on_jump
				 ? jf_block_paths_new(c->blocks, BLOCK_PATH_CACHE_LOG2)
				 : NULL;
	c->queues = NULL;
	if (c->payloads && (c->block_paths || !end_on_jump))
		return 0;
	jf_pt_fast_caches_fini(c);
	return -1;
}

/* Caches for decoders that run one after another: with a pool for their queues. */
static int shared_caches_init(struct jf_pt_fast_caches *c, struct jf_codemap *map,
			      int end_on_jump)
{
	if (caches_init(c, map, end_on_jump) < 0)
		return -1;
	c->queues = calloc(1, sizeof(*c->queues));
	if (c->queues)
		return 0;
	jf_pt_fast_caches_fini(c);
	return -1;
}

int jf_pt_fast_caches_init(struct jf_pt_fast_caches *c, struct jf_codemap *map)
{
	return shared_caches_init(c, map, 0);
}

int jf_pt_fast_block_caches_init(struct jf_pt_fast_caches *c, struct jf_codemap *map)
{
	return shared_caches_init(c, map, 1);
}

void jf_pt_fast_caches_fini(struct jf_pt_fast_caches *c)
{
	jf_block_paths_free(c->block_paths);
	c->block_paths = NULL;
	queue_pool_free(c->queues);
	c->queues = NULL;
	jf_payloads_free(c->payloads);
	jf_fast_blocks_free(c->blocks);
	jf_insn_cache_free(c->insns);
	c->payloads = NULL;
	c->blocks = NULL;
	c->insns = NULL;
}
