/* Intel PT backend: libipt's block decoder turned into a pull-based stream of flow events.
 *
 * The control structure follows libipt's reference decoder (ptxed's block mode) so that
 * errors are reported at the same trace offsets and IPs and decoding resynchronises at the
 * same PSBs: sync forward; drain events; decode blocks; on an error report it and sync
 * forward again; stop at the end of the trace, or when a sync error makes no progress.
 *
 * Nothing is decoded ahead of what has been returned: the next block is only decoded when
 * the consumer asks for it, so a consumer may change the code map between calls (a JIT
 * zone update at a marker) and the change applies from exactly the next block on. */
#include "jitflow/pt.h"
#include "codemap_pt.h"
#include "pt_events.h"
#include "decoder_internal.h"
#include "pt_libipt_config.h"
#include "pt_status_check.h"
#include "pt_wrap.h"

#include <intel-pt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/insn.h"
#include "jitflow/mapped_file.h"

enum state {
	ST_SYNC,      /* next: pt_blk_sync_forward */
	ST_DECODE,    /* next: drain events, then the next block */
	ST_DONE,
};

/* A time as records carry it: valid or not. */
struct moment {
	int has_time;
	uint64_t time;
};

struct pt_backend {
	struct jf_pt_config cfg;
	struct jf_codemap *map;
	uint64_t image_generation;
	struct pt_block_decoder *dec;
	struct jf_insn_cache *insns;
	int own_insns;          /* insns is ours to free (not cfg.insns) */
	enum state state;
	int status;             /* libipt status flags of the last successful call */
	/* The last block libipt filled in; the reference decoder locates errors with it, so
	 * it lives as long as one synchronised stretch of trace, exactly like ptxed's. */
	struct pt_block block;
	uint64_t sync;          /* ptxed's "sync": offset of the last failed sync */
	uint64_t unaccounted;   /* trace offset from which bytes were not decoded */
	struct jf_flow pending; /* an error to return after a partial block */
	int has_pending;
	struct jf_pt_check *check; /* the checks libipt 2.0 does not make */
	/* libipt 2.0's block cache ignores an IP-suppressed TIP (pt_status_check.h): a
	 * stretch that holds one is decoded through `bare`, an image without sections (only a
	 * read callback), where libipt has no cache. */
	struct pt_image *bare;
	int bare_on;
	/* libipt's block cache decodes in the mode of the entry it finds, whatever the
	 * decoder's, so `bare` serves too in a mode the cache cannot: while the mode is
	 * unknown (after each sync, until an exec mode event; the uncached path fails there:
	 * an unknown instruction) and in another mode than the sections' cache holds
	 * (jf_codemap_pt_cache_fits). Set where the mode changes, not per block. Damaged or
	 * hand-made traces only: real ones give the mode in their PSB+ and run each piece of
	 * code in one mode. */
	int mode_uncached;
	int64_t resync_at;      /* >= 0: synchronise at this PSB next (after a check failed) */
	/* The last record returned is the loss up to the PSB it synchronised at (synced_at)
	 * after an error: nothing is decoded past it yet (jf_pt_decoder_resynced). */
	int just_synced;
	uint64_t synced_at;
	uint64_t released;      /* trace bytes below this were given back to the kernel */
	/* libipt's trace offset, remembered until the decoder moves on: asked after each
	 * block (the status check follows it) and again before the next one. */
	uint64_t offset;
	int offset_valid;
	/* An inconsistency found but not reported yet: libipt's pending events go first. */
	struct jf_pt_violation violation;
	int has_violation;
	/* join_cache_splits: a block that may go on in the next one, and a record read after
	 * it that did not join it. */
	struct jf_flow held, after;
	int has_held, has_after;
	/* The last block ends at an instruction capstone cannot decode (its end and next are
	 * not known) and libipt does not class as a branch: libipt may have cut the block
	 * there (a block cache fill stops at an entry an earlier decode made, which may be
	 * another decoder's: the code map's sections, and their cache, are shared), so the
	 * next block may continue it. held_open: the same for the held block. */
	int last_open, held_open;
	/* Without end_on_jump: the time of the last record made, to tell a block whose time
	 * at its start is its own from one that starts at that record's (timed_at_start). */
	struct moment last_record;
	/* Started at cfg.sync_at and no block filled since: an error's IP here comes from the
	 * last block, which a decoder from the trace's start has from before that PSB (the
	 * IP libipt kept while tracing was off). error_ip_before_start: the last error's. */
	int block_before_start, synced_once, error_ip_before_start;
};

enum { RELEASE_STEP = 8 << 20, RELEASE_LAG = 1 << 20 };

/* Drop decoded pages of a mapped trace well behind the decoder (it, and the status check
 * that follows it, never go back more than a packet or two). */
static void release_consumed(struct pt_backend *b, uint64_t offset)
{
	/* Called for every block: the cheap test first. */
	if (offset < b->released + RELEASE_STEP + RELEASE_LAG || !b->cfg.release_consumed)
		return;
	jf_mapped_release(b->cfg.trace, b->released, offset - RELEASE_LAG);
	b->released = offset - RELEASE_LAG;
}

static uint64_t offset_now(struct pt_backend *b)
{
	if (!b->offset_valid) {
		b->offset = 0;
		pt_blk_get_offset(b->dec, &b->offset);
		b->offset_valid = 1;
	}
	return b->offset;
}

/* The decoder's time now, as records carry it. */
static struct moment time_now(struct pt_backend *b)
{
	struct moment m = { 0, 0 };
	uint64_t tsc;
	uint32_t lost_mtc, lost_cyc;

	if (pt_blk_time(b->dec, &tsc, &lost_mtc, &lost_cyc) >= 0 && tsc) {
		m.has_time = 1;
		m.time = jf_tsc_to_ns(&b->cfg.conv, tsc);
	}
	return m;
}

static void init_flow(struct pt_backend *b, struct jf_flow *f, enum jf_flow_kind kind)
{
	struct moment now;

	/* Every field a consumer may read is set: the header here, the union's member by the
	 * caller. Zeroing the whole record (most of it a 64-byte error text) for every block
	 * cost a tenth of the decode. */
	memset(f, 0, offsetof(struct jf_flow, u));
	if (kind == JF_FLOW_BLOCK)
		memset(&f->u.block, 0, sizeof(f->u.block));
	else
		memset(&f->u, 0, sizeof(f->u));
	f->kind = (uint16_t)kind;
	f->source = b->cfg.source;
	now = time_now(b);
	if (now.has_time) {
		f->time = now.time;
		f->flags |= JF_FLOW_HAS_TIME;
	}
}

static int read_code(uint8_t *buffer, size_t size, const struct pt_asid *asid, uint64_t ip,
		     void *context)
{
	size_t n = jf_codemap_read(context, ip, buffer, size);

	(void)asid;
	return n ? (int)n : -pte_nomap;
}

/* Decode the stretch from offset on without libipt's block cache when it holds an
 * IP-suppressed TIP (pt_status_check.h) or the cache cannot serve the exec mode (see
 * `mode_uncached`), else with the code map's sections. */
static int choose_image(struct pt_backend *b, uint64_t offset, struct jf_error *err)
{
	int bare = jf_pt_check_suppressed_tip_ahead(b->check, offset) || b->mode_uncached;

	if (bare == b->bare_on)
		return 0;
	if (bare && !b->bare) {
		b->bare = pt_image_alloc("jitflow-uncached");
		if (!b->bare)
			return jf_fail(err, "out of memory (libipt image)");
		pt_image_set_callback(b->bare, read_code, b->map);
	}
	b->bare_on = bare;
	if (bare)
		pt_blk_set_image(b->dec, b->bare);
	else
		b->image_generation = (uint64_t)-1; /* the sections again: refresh_image */
	return 0;
}

/* Switch libipt to the code map's current sections if they changed. */
static int refresh_image(struct pt_backend *b, struct jf_error *err)
{
	struct pt_image *image;

	if (b->bare_on || b->image_generation == jf_codemap_generation(b->map))
		return 0;
	image = jf_codemap_pt_image(b->map, err);
	if (!image)
		return -1;
	pt_blk_set_image(b->dec, image);
	b->image_generation = jf_codemap_generation(b->map);
	return 0;
}

static int same_moment(struct moment a, int has_time, uint64_t time)
{
	return a.has_time == has_time && (!has_time || a.time == time);
}

/* Block f, decoded from the decoder's time start on, without end_on_jump: libipt's
 * end_on_jump parts before its last jump would carry start, the time at the block's first
 * instruction. jump_split.h gives them the previous record's time, which is start unless
 * that record is an event: an event carries its own time, and the call that returned it
 * may have read on (the next event's packets, with their timing packets) before this
 * block began, reading nothing in it (libipt's block decoder goes to the event's place
 * without trace). Such a block is marked; its time is start. */
static void mark_timed_at_start(struct pt_backend *b, struct jf_flow *f, struct moment start)
{
	int has_time = (f->flags & JF_FLOW_HAS_TIME) != 0;

	if (same_moment(start, has_time, f->time) &&
	    !same_moment(b->last_record, has_time, f->time))
		f->flags |= JF_FLOW_TIMED_AT_START;
}

/* ip_of_block: ip is error_ip's (the last block's), which may come from before the start. */
static void error_flow(struct pt_backend *b, struct jf_flow *f, enum jf_error_phase phase,
		       int code, uint64_t ip, int ip_of_block)
{
	b->error_ip_before_start = ip_of_block && b->block_before_start;
	init_flow(b, f, JF_FLOW_ERROR);
	f->offset = b->cfg.base_offset + offset_now(b);
	f->ip = ip;
	f->u.error.code = code;
	f->u.error.phase = (uint8_t)phase;
	jf_pt_flow_text(f->u.error.text, sizeof(f->u.error.text), pt_errstr(pt_errcode(code)));
}

/* The IP at which ptxed reports an error: the last instruction of the block decoded so far,
 * or for fetch/decode failures the instruction after it (where decoding failed), or the
 * block's own IP when it is empty. */
static uint64_t error_ip(struct pt_backend *b, int code)
{
	const struct pt_block *blk = &b->block;
	uint64_t ip;

	if (!blk->ninsn)
		return blk->ip;
	ip = blk->end_ip;
	if (code == -pte_nomap || code == -pte_bad_insn)
		jf_insn_next_ip(b->insns, jf_pt_isa(blk->mode), blk->end_ip, &ip);
	return ip;
}

static void block_flow(struct pt_backend *b, struct jf_flow *f, uint64_t offset)
{
	const struct pt_block *blk = &b->block;
	struct jf_insn_info last;
	struct jf_block *out = &f->u.block;

	init_flow(b, f, JF_FLOW_BLOCK);
	f->offset = b->cfg.base_offset + offset;
	f->ip = blk->ip;
	out->start = blk->ip;
	out->last = blk->end_ip;
	out->ninsn = blk->ninsn;
	out->isa = (uint8_t)jf_pt_isa(blk->mode);
	if (blk->speculative)
		out->flags |= JF_BLOCK_SPECULATIVE;
	if (blk->truncated)
		out->flags |= JF_BLOCK_TRUNCATED;
	/* libipt's iclass cannot tell direct from indirect jumps and calls, and is not always
	 * filled in for cached blocks: classify the last instruction from its bytes. */
	b->last_open = 0;
	if (jf_insn_at(b->insns, (enum jf_isa)out->isa, blk->end_ip, &last) == 0) {
		out->end = (uint8_t)jf_insn_class_to_end((enum jf_insn_class)last.cls);
		out->last_size = last.size;
		out->next = blk->end_ip + last.size;
	} else {
		b->last_open = blk->iclass == ptic_other || blk->iclass == ptic_error;
	}
}

static void event_flow(struct pt_backend *b, struct jf_flow *f, const struct pt_event *ev,
		       uint64_t offset)
{
	init_flow(b, f, JF_FLOW_OTHER);
	f->offset = b->cfg.base_offset + offset;
	jf_pt_event_flow(ev, &b->cfg.conv, f);
}

static void lost_flow(struct pt_backend *b, struct jf_flow *f, enum jf_lost_reason why,
		      uint64_t from, uint64_t to)
{
	init_flow(b, f, JF_FLOW_LOST);
	f->offset = b->cfg.base_offset + from;
	f->flags |= JF_FLOW_IP_SUPPRESSED;
	f->u.lost.bytes = to - from;
	f->u.lost.reason = why;
}

/* Report a decode failure and go back to synchronising, as ptxed does. */
static int fail(struct pt_backend *b, struct jf_flow *f, int code)
{
	if (code == -pte_eos) {
		b->state = ST_DONE;
		return 0;
	}
	error_flow(b, f, JF_PHASE_DECODE, code, error_ip(b, code), 1);
	b->unaccounted = offset_now(b);
	b->state = ST_SYNC;
	return 1;
}

static int do_sync(struct pt_backend *b, struct jf_flow *f, struct jf_error *err)
{
	uint64_t at;
	int status;

	if (refresh_image(b, err) < 0)
		return -1;
	memset(&b->block, 0, sizeof(b->block));
	if (b->synced_once)
		b->block_before_start = 0; /* a decoder from the start syncs here too */
	b->synced_once = 1;
	b->has_violation = 0;
	if (b->resync_at >= 0)
		status = pt_blk_sync_set(b->dec, (uint64_t)b->resync_at);
	else
		status = pt_blk_sync_forward(b->dec);
	b->offset_valid = 0;
	b->resync_at = -1;
	if (status < 0) {
		uint64_t new_sync;

		if (status == -pte_eos) {
			b->state = ST_DONE;
			if (b->unaccounted < b->cfg.size) {
				/* Nothing decoded yet: the trace has no sync point at all. */
				lost_flow(b, f, b->unaccounted ? JF_LOST_SKIPPED : JF_LOST_NO_SYNC,
					  b->unaccounted, b->cfg.size);
				b->unaccounted = b->cfg.size;
				return 1;
			}
			return 0;
		}
		error_flow(b, f, JF_PHASE_SYNC, status, 0, 0);
		/* No progress since the last failed sync: we never will make any. */
		if (pt_blk_get_offset(b->dec, &new_sync) < 0 || new_sync <= b->sync)
			b->state = ST_DONE;
		b->sync = new_sync;
		return 1;
	}
	b->status = status;
	b->state = ST_DECODE;
	b->mode_uncached = 1;
	pt_blk_get_sync_offset(b->dec, &at);
	jf_pt_check_sync(b->check, at);
	if (at > b->unaccounted) {
		lost_flow(b, f, b->unaccounted ? JF_LOST_SKIPPED : JF_LOST_NO_SYNC,
			  b->unaccounted, at);
		b->unaccounted = at;
		b->just_synced = 1;
		b->synced_at = at;
		return 1;
	}
	return -2; /* synchronised, nothing to report: go on decoding */
}

/* Follow the packets the last libipt call consumed, noting the first inconsistency. */
static void look_for_violation(struct pt_backend *b)
{
	if (!b->has_violation && jf_pt_check_advance(b->check, offset_now(b), &b->violation))
		b->has_violation = 1;
}

/* Fill *f with the error the reference decoder reports for the inconsistency and
 * resynchronise at the next PSB. */
static void raise_violation(struct pt_backend *b, struct jf_flow *f)
{
	const struct jf_pt_violation *v = &b->violation;
	int64_t psb;

	b->has_violation = 0;
	error_flow(b, f, JF_PHASE_DECODE, v->code, v->has_ip ? v->ip : error_ip(b, v->code),
		   !v->has_ip);
	f->offset = b->cfg.base_offset + v->offset;
	b->unaccounted = v->offset;
	psb = jf_pt_check_next_psb(b->check, v->offset);
	/* Without a PSB after it, synchronising finds the end of the trace and reports the
	 * rest as lost. */
	b->resync_at = psb;
	b->state = ST_SYNC;
}

/* libipt 2.0 reads ahead: one call may decode a block or an event (a TIP.PGD's disable) and
 * also read the inconsistent packets after it. libipt 2.1 rejects the inconsistency only
 * when it processes the event those packets make: the PSB+'s status update ("bad status
 * update") or the TIP.PGE's enable ("unexpected packet context"). So once found, the
 * inconsistency waits for that event, which it replaces; the blocks and events before it
 * are delivered. If libipt 2.0 fails or ends first, the inconsistency is reported then. */
static int is_violating_event(const struct pt_backend *b, const struct pt_event *ev)
{
	if (b->violation.code == -pte_bad_status_update)
		return ev->status_update;
	return ev->type == ptev_enabled && !ev->status_update;
}

static int do_decode(struct pt_backend *b, struct jf_flow *f, struct jf_error *err)
{
	struct moment start = { 0, 0 };
	uint64_t offset;
	int status;

	if (b->status & pts_event_pending) {
		struct pt_event ev;

		offset = offset_now(b);
		status = pt_blk_event(b->dec, &ev, sizeof(ev));
		b->offset_valid = 0;
		if (status < 0 && b->has_violation) {
			/* libipt 2.0 stumbled over the inconsistency found before. */
			raise_violation(b, f);
			return 1;
		}
		if (status < 0)
			return fail(b, f, status);
		b->status = status;
		if (ev.type == ptev_exec_mode)
			b->mode_uncached = ev.variant.exec_mode.mode == ptem_unknown ||
				!jf_codemap_pt_cache_fits(b->map, ev.variant.exec_mode.mode);
		look_for_violation(b);
		if (b->has_violation && is_violating_event(b, &ev)) {
			/* The event from the inconsistent packets is replaced by the error. */
			raise_violation(b, f);
			return 1;
		}
		event_flow(b, f, &ev, offset);
		return 1;
	}
	if (b->has_violation && (b->status & pts_eos)) {
		raise_violation(b, f);
		return 1;
	}
	if (b->status & pts_eos) {
		b->state = ST_DONE;
		b->unaccounted = b->cfg.size;
		if (b->status & pts_ip_suppressed)
			return 0;
		init_flow(b, f, JF_FLOW_END);
		f->offset = b->cfg.base_offset + offset_now(b);
		return 1;
	}
	offset = offset_now(b);
	if (choose_image(b, offset, err) < 0 || refresh_image(b, err) < 0)
		return -1;
	release_consumed(b, offset);
	if (!b->cfg.end_on_jump)
		start = time_now(b);
	status = pt_blk_next(b->dec, &b->block, sizeof(b->block));
	b->offset_valid = 0;
	if (status >= 0 || b->block.ninsn)
		b->block_before_start = 0;
	if (status < 0) {
		struct jf_flow partial;

		look_for_violation(b);
		if (!b->block.ninsn) {
			if (!b->has_violation)
				return fail(b, f, status);
			raise_violation(b, f);
			return 1;
		}
		/* Even on errors some instructions may have been decoded: return them
		 * first, then the error. */
		block_flow(b, &partial, offset);
		if (!b->cfg.end_on_jump)
			mark_timed_at_start(b, &partial, start);
		if (b->has_violation) {
			raise_violation(b, &b->pending);
			b->has_pending = 1;
		} else {
			b->has_pending = fail(b, &b->pending, status);
		}
		*f = partial;
		return 1;
	}
	b->status = status;
	block_flow(b, f, offset);
	if (!b->cfg.end_on_jump)
		mark_timed_at_start(b, f, start);
	look_for_violation(b);
	return 1;
}

static int next_record_of_state(struct pt_backend *b, struct jf_flow *f,
				struct jf_error *err);

static int next_record(struct pt_backend *b, struct jf_flow *f, struct jf_error *err)
{
	int rc = next_record_of_state(b, f, err);

	if (rc > 0) {
		b->last_record.has_time = (f->flags & JF_FLOW_HAS_TIME) != 0;
		b->last_record.time = f->time;
	}
	return rc;
}

static int next_record_of_state(struct pt_backend *b, struct jf_flow *f,
				struct jf_error *err)
{
	b->just_synced = 0;
	for (;;) {
		int rc;

		if (b->has_pending) {
			*f = b->pending;
			b->has_pending = 0;
			return 1;
		}
		switch (b->state) {
		case ST_SYNC:
			rc = do_sync(b, f, err);
			if (rc == -2)
				continue;
			return rc;
		case ST_DECODE:
			return do_decode(b, f, err);
		case ST_DONE:
			return 0;
		}
	}
}

/* A block that ended without a branch, which the next block may continue: after its last
 * instruction (next), or, open (last_open: its end is unknown), where capstone cannot
 * tell. */
static int may_go_on(const struct jf_flow *f, int open)
{
	return f->kind == JF_FLOW_BLOCK &&
	       ((f->u.block.end == JF_END_NONE && f->u.block.next) || open) &&
	       !(f->u.block.flags & JF_BLOCK_TRUNCATED);
}

/* Whether block g starts right after f's last instruction: at f's next, or, f open, within
 * an instruction's length of its last (libipt's decoder went on to g's start from there
 * without trace: the next instruction). */
static int starts_after(const struct jf_flow *f, int open, const struct jf_flow *g)
{
	if (f->u.block.next)
		return g->u.block.start == f->u.block.next;
	return open && g->u.block.start > f->u.block.last &&
	       g->u.block.start - f->u.block.last <= pt_max_insn_size;
}

/* Whether block g is the rest of block f, cut only by libipt's cache: it starts where f
 * ends, decoded at the same trace position (f consumed no packet), in the same mode. Their
 * times may differ: g ends with the query that f would have ended with uncut, and the
 * query decoder reads timing packets after it; the whole block takes g's time, as it would
 * uncut (fuzz_pt_decode found an MTC there). */
static int continues(const struct jf_flow *f, int open, const struct jf_flow *g)
{
	return g->kind == JF_FLOW_BLOCK && starts_after(f, open, g) &&
	       g->offset == f->offset &&
	       (g->flags & ~JF_FLOW_HAS_TIME) == (f->flags & ~JF_FLOW_HAS_TIME) &&
	       g->u.block.isa == f->u.block.isa &&
	       (g->u.block.flags & JF_BLOCK_SPECULATIVE) == (f->u.block.flags & JF_BLOCK_SPECULATIVE) &&
	       f->u.block.ninsn + (uint64_t)g->u.block.ninsn <= UINT32_MAX;
}

static int pt_next(void *self, struct jf_flow *f, struct jf_error *err)
{
	struct pt_backend *b = self;
	struct jf_flow *h = &b->held;
	int rc;

	if (!b->cfg.join_cache_splits)
		return next_record(b, f, err);
	if (b->has_after) {
		b->has_after = 0;
		*f = b->after;
		return 1;
	}
	if (!b->has_held) {
		rc = next_record(b, f, err);
		if (rc <= 0 || !may_go_on(f, b->last_open))
			return rc;
		*h = *f;
		b->held_open = b->last_open;
		b->has_held = 1;
	}
	for (;;) {
		rc = next_record(b, f, err);
		if (rc < 0)
			return rc;
		if (rc > 0 && continues(h, b->held_open, f)) {
			/* Timed at its start still if the rest read nothing either. */
			uint16_t at_start = h->flags & JF_FLOW_TIMED_AT_START;

			if ((h->flags & JF_FLOW_HAS_TIME) != (f->flags & JF_FLOW_HAS_TIME) ||
			    h->time != f->time)
				at_start = 0;
			h->time = f->time;
			h->flags = (uint16_t)((f->flags & ~JF_FLOW_TIMED_AT_START) | at_start);
			h->u.block.last = f->u.block.last;
			h->u.block.next = f->u.block.next;
			h->u.block.ninsn += f->u.block.ninsn;
			h->u.block.end = f->u.block.end;
			h->u.block.last_size = f->u.block.last_size;
			h->u.block.flags = f->u.block.flags;
			b->held_open = b->last_open;
			if (may_go_on(h, b->held_open))
				continue;
			b->has_held = 0;
			*f = *h;
			return 1;
		}
		/* f starts something else: the held block is whole. */
		if (rc > 0 && may_go_on(f, b->last_open)) {
			struct jf_flow whole = *h;

			*h = *f;
			b->held_open = b->last_open;
			*f = whole;
			return 1;
		}
		b->has_held = 0;
		if (rc > 0) {
			b->after = *f;
			b->has_after = 1;
		}
		*f = *h;
		return 1;
	}
}

static void pt_free(void *self)
{
	struct pt_backend *b = self;

	if (b->dec)
		pt_blk_free_decoder(b->dec);
	if (b->bare)
		pt_image_free(b->bare);
	jf_pt_check_free(b->check);
	if (b->own_insns)
		jf_insn_cache_free(b->insns);
	free(b);
}

static const struct jf_decoder_ops pt_ops = { pt_next, pt_free };

int jf_pt_decoder_error_ip_before_start(struct jf_decoder *dec)
{
	struct pt_backend *b = jf_decoder_backend(dec, &pt_ops);

	return b && b->error_ip_before_start;
}

int jf_pt_decoder_resynced(struct jf_decoder *dec, uint64_t *psb)
{
	struct pt_backend *b = jf_decoder_backend(dec, &pt_ops);

	if (!b || !b->just_synced || b->state != ST_DECODE || b->has_pending || b->has_held ||
	    b->has_after || b->has_violation)
		return 0;
	*psb = b->synced_at;
	return 1;
}

struct jf_decoder *jf_pt_decoder_new(const struct jf_pt_config *cfg, struct jf_codemap *map,
				     struct jf_error *err)
{
	struct pt_backend *b = calloc(1, sizeof(*b));
	struct pt_config config;

	if (!b) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	b->cfg = *cfg;
	b->block_before_start = cfg->has_sync_at;
	b->map = map;
	b->insns = cfg->insns;
	if (!b->insns) {
		b->insns = jf_insn_cache_new(map);
		b->own_insns = 1;
	}
	if (!b->insns) {
		pt_free(b);
		jf_fail(err, "out of memory");
		return NULL;
	}
	if (jf_pt_libipt_config(cfg, &config, err) < 0) {
		pt_free(b);
		return NULL;
	}
	if (cfg->size == 0) {
		/* libipt rejects an empty buffer; an empty trace simply has no flow. */
		b->state = ST_DONE;
	} else {
		b->dec = pt_blk_alloc_decoder(&config);
		if (!b->dec) {
			pt_free(b);
			jf_fail(err, "libipt cannot create a block decoder");
			return NULL;
		}
		b->check = jf_pt_check_new(cfg->trace, cfg->size);
		if (!b->check) {
			pt_free(b);
			jf_fail(err, "out of memory");
			return NULL;
		}
		b->image_generation = (uint64_t)-1;
	}
	b->resync_at = -1;
	if (cfg->has_sync_at && cfg->size) {
		b->resync_at = (int64_t)cfg->sync_at;
		b->unaccounted = cfg->sync_at;
		b->released = cfg->sync_at;
	}
	return jf_pt_wrap(&pt_ops, b, cfg, err);
}

struct jf_decoder *jf_pt_wrap(const struct jf_decoder_ops *ops, void *self,
			      const struct jf_pt_config *cfg, struct jf_error *err)
{
	struct jf_decoder *dec = jf_decoder_new(ops, self);

	if (!dec) {
		jf_fail(err, "out of memory");
		return NULL;
	}
	jf_decoder_stats_mut(dec)->trace_bytes = cfg->size;
	jf_decoder_stats_mut(dec)->time_is_ns = cfg->conv.valid;
	jf_decoder_stats_mut(dec)->time_is_synthetic = cfg->time_is_synthetic;
	return dec;
}
