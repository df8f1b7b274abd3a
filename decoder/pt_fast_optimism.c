/* The fast Intel PT path returning blocks over code that may still change (a JIT's zone
 * record still to apply touches its bytes: jf_codemap_may_change).
 *
 * libipt's block decoder, as the session drives it, decodes a block when the session asks
 * for its record, from the code map as it is then; between records the session applies
 * zone records that change the map. This path decodes a whole stretch (PSB to PSB) ahead.
 * Over code that cannot change that is the same; over code that may, a block is decoded
 * from the bytes as they are now and its record checked when the session asks for it: the
 * block decoded again from the map then must be equal in every field (unless no change
 * since touched its bytes: holds_now). A batch ends before
 * each such record (fast_next_batch), so that the check comes exactly when libipt would
 * decode it. Where one changed (record q), the records before it were returned and were
 * right: the stretch is decoded again from the decoder as it began (a snapshot taken
 * before each stretch), with the blocks of those records served as they were decoded
 * (the block cache's log, replayed in order), and every block from record q on decoded
 * from the map as it is now. The first q records of that decode must be those returned;
 * it goes on from record q. Where they are not, or the decode again meets what this path
 * does not model, libipt's block decoder from the trace's start takes over, skipping the
 * records returned (exact and slow; counted in the report).
 *
 * Why blocks of records returned are served as they were and not read again: the code
 * changed since (a patch applied between records) and libipt read them before it did. The
 * rest of the stretch's code cannot change (may_change said no for it, and says no for
 * good once it does): decoding it again reads the same. And the replay meets the fills in
 * the order the first decode made them: the same state and trace, the same bytes, the
 * same steps, up to record q.
 *
 * What is decoded ahead only where it is plain to place: a block that makes a record of
 * its own (not joined to the one before) after a record that pt_decoder.c returns without
 * reading the next (one that cannot go on: with join_cache_splits, after a block ending
 * without a branch libipt's next block is read as that block is returned); elsewhere, such
 * code is libipt's block decoder's, as before. */
#include "pt_fast_internal.h"

#include <stdlib.h>
#include <string.h>

#include "jitflow/codemap.h"

/* A replay's own block cache: the shared one may hold blocks of code that changed since,
 * decoded by other decoders as it is now (a replay serves its blocks as they were). */
enum { REPLAY_BLOCKS_LOG2 = 14 };

static int wanted(const struct fast *f)
{
	return f->emit && f->cfg.decode_ahead_changing && !f->watch &&
	       jf_codemap_tells_changes(f->map);
}

/* The decoder as this stretch begins: its state, the packet decoder's offset (which lives
 * in libipt's decoder unless pkt_ahead), and the records queued already (an event read
 * after the last commit). 0, or -1 where it cannot be kept. */
static int snapshot(struct fast *f, struct jf_fast_optimism *o)
{
	uint64_t off;

	if (f->pending.n > JF_SNAP_PENDING_MAX || !f->by_packets || !f->pkt)
		return -1;
	if (!o->snap && !(o->snap = malloc(sizeof(*o->snap))))
		return -1;
	if (!f->pkt_ahead && pt_pkt_get_offset(f->pkt, &off) < 0)
		return -1;
	*o->snap = *f;
	if (!f->pkt_ahead) {
		o->snap->pkt_pos = off;
		o->snap->pkt_ahead = 1;
	}
	o->snap_pending_n = f->pending.n;
	/* (A decoder that queued nothing yet may have no queue at all.) */
	if (f->pending.n)
		memcpy(o->snap_pending, f->pending.flows, f->pending.n * sizeof(*f->pending.flows));
	return 0;
}

/* Whether a record pt_decoder.c may join to the block after it (join_cache_splits): it
 * then reads that block as it returns this record. */
static int may_go_on(const struct jf_flow *fl)
{
	return fl->kind == JF_FLOW_BLOCK && fl->u.block.end == JF_END_NONE && fl->u.block.next &&
	       !(fl->u.block.flags & JF_BLOCK_TRUNCATED);
}

static void begin(struct fast *f)
{
	struct jf_fast_optimism *o = f->opt;

	f->empty_commit = 0;
	if (!o) {
		if (!wanted(f) || !(o = f->opt = calloc(1, sizeof(*o))))
			return;
	}
	o->ch.n = 0;
	o->ch.failed = 0;
	o->ch.marker = NULL;
	o->ch.nkept = 0;
	o->check = 0;
	o->counted = 0;
	/* The record before this stretch's first, as pt_decoder.c returned it; unknown after
	 * the block decoder's (it may go on, for all this path knows). */
	o->before_goes_on = !f->stretch_n || may_go_on(&f->ready.flows[f->stretch_n - 1]);
	/* The records returned last, where a fall-back to a block decoder from the start
	 * looks for its place (roll_back). */
	jf_fast_tail_from_stretch(f);
	o->snapped = snapshot(f, o) == 0;
	o->ch.open = o->snapped;
	f->blocks->changing = &o->ch;
}

/* Whether a fill of the stretch made a record. */
static int made_records(const struct jf_fast_optimism *o)
{
	size_t i;

	for (i = 0; i < o->ch.n; i++)
		if (o->ch.fills[i].record != JF_FAST_NO_RECORD)
			return 1;
	return 0;
}

static void end(struct fast *f)
{
	struct jf_fast_optimism *o = f->opt;

	if (!o)
		return;
	f->blocks->changing = NULL;
	o->ch.open = 0;
	/* Handed over (or nothing committed): no record of these fills is returned. */
	if (!f->ready.n)
		o->ch.n = 0;
	else if (!o->counted && made_records(o)) {
		o->counted = 1;
		f->report.changing_stretches++;
	}
}

int jf_fast_decode_stretch(struct fast *f, struct jf_error *err)
{
	int rc;

	begin(f);
	rc = jf_fast_decode(f, err);
	end(f);
	return rc;
}

void jf_fast_optimism_free(struct fast *f)
{
	struct jf_fast_optimism *o = f->opt;

	if (!o)
		return;
	free(o->ch.fills);
	free(o->kept);
	free(o->kept_set);
	free(o->snap);
	jf_fast_blocks_free(o->replay_blocks);
	free(o);
	f->opt = NULL;
}

const struct jf_fast_block *jf_fast_take_changing(struct fast *f, const struct jf_fast_block *b)
{
	struct jf_fast_optimism *o = f->opt;
	struct jf_fast_changing *ch = f->blocks->changing;
	struct jf_fast_changing_fill *fill;

	if (!o || b != ch->marker || !ch->open || ch->failed || f->joinable ||
	    (f->pending.n ? may_go_on(&f->pending.flows[f->pending.n - 1]) : o->before_goes_on))
		return b;
	fill = &ch->fills[ch->n - 1];
	/* A block of its own, ending at a branch (one at the length limit is joined to the
	 * next; bad code or an instruction not modelled stays the block decoder's). */
	if (fill->block.end == JF_FAST_BAD || fill->block.end == JF_FAST_UNHANDLED ||
	    fill->block.end == JF_FAST_CONTINUE || fill->block.isa != (uint8_t)f->isa)
		return b;
	fill->record = f->pending.n;
	o->taken = fill->block;
	return &o->taken;
}

/* The decoder as snap holds it, but for what it owns or shares (decoders, caches, queues,
 * what it returned), which stay f's. */
static void restore(struct fast *f, const struct fast *snap)
{
	struct fast cur = *f;

	*f = *snap;
	jf_fast_keep_resources(f, &cur);
	f->pending = cur.pending;
	f->ready = cur.ready;
	f->old = cur.old;
	f->held = cur.held;
	f->attempt = cur.attempt;
	f->tail = cur.tail;
	f->seen = cur.seen;
	f->batch_one = cur.batch_one;
	/* What the first decode counted is counted again as the stretch is: as it was then,
	 * with the rollbacks since. */
	f->report.changing_stretches = cur.report.changing_stretches;
	f->report.rollbacks = cur.report.rollbacks;
	f->report.rollback_fallbacks = cur.report.rollback_fallbacks;
}

/* The addresses of the kept fills, for the block cache to tell them (0, -1 out of
 * memory). */
static int keep_addresses(struct jf_fast_optimism *o)
{
	size_t size = 16, i, k;

	while (size < 2 * o->ch.nkept)
		size *= 2;
	if (size > o->kept_set_size) {
		uint64_t *set = realloc(o->kept_set, size * sizeof(*set));

		if (!set)
			return -1;
		o->kept_set = set;
		o->kept_set_size = size;
	}
	memset(o->kept_set, 0, size * sizeof(*o->kept_set));
	for (i = 0; i < o->ch.nkept; i++) {
		uint64_t ip = o->kept[i].block.start;

		k = jf_fast_kept_slot(ip, size - 1);
		while (o->kept_set[k] && o->kept_set[k] != ip)
			k = (k + 1) & (size - 1);
		o->kept_set[k] = ip;
	}
	o->ch.kept_set = o->kept_set;
	o->ch.kept_mask = size - 1;
	return 0;
}

/* The stretch decoded again from its start (q records of it returned), as the file's
 * comment says: 1 where its first q records are those returned (ready then holds it, from
 * record q on), 0 where not (f is then as the stretch began, nothing in ready or pending),
 * -1 with err. */
static int decode_again(struct fast *f, struct queue *returned, size_t q, struct jf_error *err)
{
	struct jf_fast_optimism *o = f->opt;
	struct jf_fast_changing_fill *swap = o->kept;
	struct jf_fast_blocks *shared;
	struct jf_block_paths *paths;
	size_t cap = o->kept_cap, i;
	int rc;

	if (!o->replay_blocks &&
	    !(o->replay_blocks = jf_fast_blocks_new(f->insns, f->map, REPLAY_BLOCKS_LOG2, 1)))
		return 0;
	/* The fills of the decode replayed are kept; this decode logs its own. */
	o->kept = o->ch.fills;
	o->kept_cap = o->ch.cap;
	o->ch.kept = o->kept;
	o->ch.nkept = o->ch.n;
	o->ch.next_kept = 0;
	o->ch.fills = swap;
	o->ch.cap = cap;
	o->ch.n = 0;
	o->ch.failed = 0;
	o->ch.marker = NULL;
	o->ch.records = &f->pending.n;
	o->ch.replay_until = q;
	if (keep_addresses(o) < 0) {
		o->ch.nkept = 0;
		return 0;
	}

	restore(f, o->snap);
	f->ready.n = f->ready.pos = 0;
	f->pending.n = 0;
	while (f->pending.cap < o->snap_pending_n)
		if (jf_fast_queue_grow(f) < 0)
			return 0;
	if (o->snap_pending_n)
		memcpy(f->pending.flows, o->snap_pending,
		       o->snap_pending_n * sizeof(*o->snap_pending));
	f->pending.n = o->snap_pending_n;

	shared = f->blocks;
	paths = f->block_paths;
	f->blocks = o->replay_blocks;
	f->block_paths = NULL;
	f->blocks->changing = &o->ch;
	o->ch.open = 1;
	f->rolling = 1;
	rc = jf_fast_decode(f, err);
	f->blocks->changing = NULL;
	f->blocks = shared;
	f->block_paths = paths;
	o->ch.open = 0;
	o->ch.nkept = 0;
	o->check = 0;
	if (rc < 0)
		return -1;
	if (f->rolling != 1 || o->ch.failed || f->ready.n < q) {
		f->rolling = 0;
		return 0;
	}
	f->rolling = 0;
	for (i = 0; i < q; i++)
		if (!jf_flow_same(&f->ready.flows[i], &returned->flows[i]))
			return 0;
	f->ready.pos = q;
	return 1;
}

/* Record q of the stretch in ready (q returned before it) was decoded ahead from code that
 * changed since: the stretch decoded again (1), or libipt's block decoder from the start
 * (2); -1 with err. */
static int roll_back(struct fast *f, struct jf_error *err)
{
	struct jf_fast_optimism *o = f->opt;
	struct queue returned = f->ready;
	size_t q = f->ready.pos, i;
	uint64_t before = f->committed_records - f->stretch_n;
	int rc = 0;

	f->report.rollbacks++;
	/* Its records stay where they are while the stretch is decoded again. */
	f->ready.flows = NULL;
	f->ready.n = f->ready.pos = f->ready.cap = 0;
	if (o->snapped)
		rc = decode_again(f, &returned, q, err);
	if (rc != 0) {
		if (!f->pending.flows) {
			f->pending.flows = returned.flows;
			f->pending.cap = returned.cap;
		} else {
			free(returned.flows);
		}
		return rc < 0 ? -1 : 1;
	}
	f->report.rollback_fallbacks++;
	/* The decoder from the start finds its place by the records returned last (those of
	 * the stretch before, begin, and these). */
	for (i = q > JF_TAIL_MAX ? q - JF_TAIL_MAX : 0; i < q; i++)
		jf_fast_tail_push(&f->tail, &returned.flows[i], before + q);
	free(returned.flows);
	if (f->ready.flows)
		f->ready.n = f->ready.pos = 0;
	f->committed_records = before;
	return jf_fast_hand_over_from_start(f, before + q, err) < 0 ? -1 : 2;
}

/* Whether the block of fill is what the code map holds at its start now: at once where no
 * change since touched its bytes, as the block cache keeps a block, else decoded again. */
static int holds_now(struct fast *f, const struct jf_fast_changing_fill *fill)
{
	const struct jf_fast_block *b = &fill->block;
	struct jf_fast_block now;

	if (jf_fast_block_unchanged_since(f->map, b, fill->gen))
		return 1;
	jf_fast_block_decode_now(f->blocks, (enum jf_isa)b->isa, b->start, &now);
	return !memcmp(&now, b, sizeof(now));
}

int jf_fast_optimism_check(struct fast *f, size_t *until, struct jf_error *err)
{
	struct jf_fast_optimism *o = f->opt;

	for (;;) {
		const struct jf_fast_changing_fill *fill;
		int rc;

		/* (Those of records returned were checked then: after a decode again, those
		 * before its record q were served as they were returned.) */
		while (o->check < o->ch.n && (o->ch.fills[o->check].record == JF_FAST_NO_RECORD ||
					      o->ch.fills[o->check].record < f->ready.pos))
			o->check++;
		if (o->check == o->ch.n) {
			*until = f->ready.n;
			return 1;
		}
		fill = &o->ch.fills[o->check];
		if (fill->record > f->ready.pos) {
			*until = fill->record < f->ready.n ? fill->record : f->ready.n;
			return 1;
		}
		if (holds_now(f, fill)) {
			o->check++;
			continue;
		}
		rc = roll_back(f, err);
		if (rc != 1)
			return rc;
	}
}
