/* Where the fast Intel PT path (pt_fast.c) meets something it does not model, libipt's
 * block decoder (pt_decoder.c) goes on from the PSB that began the stretch (f->restart):
 * what was decoded since that PSB is dropped, what was returned before it stays.
 *
 * The block decoder must be in the state the one-thread decode has at that PSB. A decoder
 * synchronised there is not (its return stack is empty, and it reads the PSB+ as a start,
 * not as status updates), so when blocks are returned the decoder starts one PSB earlier,
 * at the stretch committed last, whose records are still in f->ready: where its records
 * from its first block on are the very tail of those (as at a seam of the parallel
 * decode, pt_parallel.h), it has read what the one-thread decoder read since that PSB and
 * goes on from there. Its return stack may still lack calls made before that PSB; a
 * compressed return to one (libipt: -pte_retstack_empty; hardware never compresses
 * across a PSB, damaged traces may) sends the decode, as does every other case, to a
 * block decoder from the trace's start, which skips the records already returned (or
 * counted). A hand-over then costs one PSB period, not the trace so far; and where the
 * block decoder resynchronises after an error, the fast path takes over again at that PSB
 * (note_resync here, resume in pt_fast.c), so a decode error costs only the stretch from
 * the PSB before it to the PSB after it. Returning blocks, anything else costs the
 * stretches up to where the block decoder's records join a fast decoder's started at a
 * later PSB (pt_fast_join.c). Counting keeps no blocks to join: there the block decoder
 * starts at that stretch's PSB or one or two PSBs before, checked by a fast
 * decoder started there (pt_fast_count_handover.c). */
#include "decoder_internal.h"
#include "pt_fast_internal.h"

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/pt.h"

static int return_before(const struct jf_flow *fl)
{
	return fl->kind == JF_FLOW_ERROR && fl->u.error.code == -pte_retstack_empty;
}

/* Where the block decoder's records got[b...] from its first block on (b) hand over to
 * the stretch's records (f->ready): the index in got past the stretch's last record, or 0
 * if they do not end the same way. */
static size_t join_after_stretch(const struct fast *f, const struct jf_flow *got, size_t n)
{
	const struct jf_flow *stretch = f->ready.flows;
	size_t a, b = 0, k, len;

	while (b < n && got[b].kind != JF_FLOW_BLOCK)
		b++;
	for (a = 0; b < n && a + JF_JOIN_MIN_RECORDS <= f->stretch_n; a++) {
		len = f->stretch_n - a;
		if (b + len > n || !jf_flow_same(&stretch[a], &got[b]))
			continue;
		for (k = 1; k < len && jf_flow_same(&stretch[a + k], &got[b + k]); k++)
			;
		if (k < len)
			continue;
		for (k = b; k < n; k++)
			if (return_before(&got[k]))
				return 0;
		return b + len;
	}
	return 0;
}

/* A block decoder from the PSB before f->restart, if it joins the records returned (1),
 * else 0 (-1: out of memory). */
static int hand_over_at_psb_before(struct fast *f, struct jf_error *err)
{
	struct jf_pt_config cfg = f->cfg;
	struct jf_flow *got = NULL, fl;
	uint64_t until = f->restart;
	size_t n = 0, cap = 0, joined;
	struct jf_decoder *dec;
	int rc;

	if (!f->emit || f->stretch_n < JF_JOIN_MIN_RECORDS || f->prev_restart >= f->restart)
		return 0;
	if (f->ready.flows[f->stretch_n - 1].offset > until)
		until = f->ready.flows[f->stretch_n - 1].offset;
	cfg.has_sync_at = 1;
	cfg.sync_at = f->prev_restart;
	if (!cfg.insns)
		cfg.insns = f->insns;
	dec = jf_pt_decoder_new(&cfg, f->map, err);
	if (!dec)
		return -1;
	/* Its records up to the first past the stretch (about a stretch's worth). */
	while ((rc = jf_decoder_next_uncounted(dec, &fl, err)) > 0) {
		if (n == cap) {
			struct jf_flow *more;

			if (cap >= 2 * (size_t)QUEUE_MAX_BLOCKS)
				break;
			cap = cap ? 2 * cap : 1024;
			more = realloc(got, cap * sizeof(*got));
			if (!more) {
				rc = jf_fail(err, "out of memory");
				break;
			}
			got = more;
		}
		got[n++] = fl;
		if (fl.offset > until)
			break;
	}
	joined = rc < 0 ? 0 : join_after_stretch(f, got, n);
	if (!joined) {
		jf_decoder_free(dec);
		free(got);
		return rc < 0 ? -1 : 0;
	}
	memmove(got, got + joined, (n - joined) * sizeof(*got));
	f->held = got;
	f->held_n = n - joined;
	f->held_pos = 0;
	f->old = dec;
	f->local = 1;
	f->report.block_decoder_from = (int64_t)f->prev_restart;
	return 1;
}

/* A block decoder from the trace's start (or sync_at; or, returning blocks, from the PSB
 * near where the records returned last tell its place), which skips what was returned or
 * counted: past skip_insns instructions (counting) and skip_records other records. */
static int hand_over_from(struct fast *f, int has_near, uint64_t near, uint64_t skip_records,
			  struct jf_error *err)
{
	struct jf_pt_config cfg = f->cfg;

	/* Counting, the block decoder's blocks are skipped by their instructions; returning
	 * blocks, they were among the records returned. */
	f->skip_insns = f->emit ? 0 : f->stats->insns - f->insns_before;
	f->skip_records = skip_records;
	/* Returning blocks, it finds its place by the records returned last where it can
	 * (pt_fast_realign.c), else by their number. */
	f->aligning = jf_fast_tail_ends_at(f, skip_records);
	f->seen.n = f->seen.next = 0;
	f->local = 0;
	f->count_local = 0;
	f->near = has_near && f->aligning;
	if (f->near) {
		cfg.has_sync_at = 1;
		cfg.sync_at = near;
	}
	f->report.block_decoder_from = cfg.has_sync_at ? (int64_t)cfg.sync_at : 0;
	/* Counting, its blocks as they are whatever was decoded before
	 * (pt_fast_count_handover.c). */
	if (!f->emit)
		cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	/* The instructions this path decoded (and will again, if it resumes): capstone's
	 * work done once, not per hand-over. */
	if (!cfg.insns)
		cfg.insns = f->insns;
	f->old = jf_pt_decoder_new(&cfg, f->map, err);
	return f->old ? 0 : -1;
}

static int hand_over_from_start(struct fast *f, uint64_t skip_records, struct jf_error *err)
{
	return hand_over_from(f, 0, 0, skip_records, err);
}

void jf_fast_plan_resumes(struct fast *f)
{
	if (!f->report.resumes)
		return;
	if (f->report.fast_bytes == f->fast_bytes_at_resume)
		f->resume_backoff = f->resume_backoff * 2 + 1 < MAX_RESUME_BACKOFF
					    ? f->resume_backoff * 2 + 1
					    : MAX_RESUME_BACKOFF;
	else
		f->resume_backoff = 0;
	f->resumes_to_skip = f->resume_backoff;
}

/* What was decoded since the last PSB dropped, for the block decoder to decode it. */
static void drop_stretch(struct fast *f)
{
	f->pending.n = 0;
	f->retime = 0;
	f->await = 0;
	f->insns_n = f->blocks_n = f->events_n = f->events_hash = 0;
	f->has_time = 0;
	f->block_time_waits = 0;
	if (f->report.fallback_at < 0)
		f->report.fallback_at = (int64_t)f->restart;
	jf_fast_plan_resumes(f);
}

int jf_fast_hand_over(struct fast *f, struct jf_error *err)
{
	int rc = 0;

	/* A join attempt stops here: the block decoder it was to join goes on. So does the
	 * decode again of a stretch some of whose records were returned (pt_fast_optimism.c
	 * then hands over from the start). */
	if (f->join_attempt || f->rolling) {
		f->rolling = f->rolling ? 2 : 0;
		f->pending.n = 0;
		f->done = 1;
		/* Nor is a stretch it committed in the same read taken (a PSB+ commits before
		 * its updates, which may not be modelled): joined there, the decoder it became
		 * would have ended with it, having no block decoder to hand over to. */
		if (f->join_attempt)
			f->ready.n = f->ready.pos = 0;
		return 0;
	}
	if (f->watch) {
		jf_fast_tell_watcher(f, f->restart, 1);
		f->done = 1;
		return 0;
	}
	jf_fast_tail_from_stretch(f);
	/* Counting, the block decoder from the PSB of this stretch if it can be shown to
	 * decode as this path (which needs the stretch decoded so far), else from one or two
	 * PSBs before. */
	if (!f->emit)
		rc = jf_fast_count_hand_over_here(f, err);
	drop_stretch(f);
	f->report.hand_overs++;
	if (rc == 0)
		rc = f->emit ? hand_over_at_psb_before(f, err)
			     : jf_fast_count_hand_over_local(f, err);
	/* Else (a stretch too short to join, or records that do not) from that PSB still,
	 * finding its place by the records returned last, where there is one. */
	if (rc == 0)
		rc = hand_over_from(f, f->emit && f->prev_restart < f->restart, f->prev_restart,
				    f->committed_records, err);
	jf_fast_join_plan(f);
	jf_fast_free_decoders(f);
	return rc < 0 ? -1 : 0;
}

int jf_fast_hand_over_from_start(struct fast *f, uint64_t skip_records, struct jf_error *err)
{
	int rc;

	drop_stretch(f);
	f->done = f->resync = f->resume = 0;
	rc = hand_over_from_start(f, skip_records, err);
	jf_fast_join_plan(f);
	jf_fast_free_decoders(f);
	return rc;
}

/* The block decoder's record just read (not one held) is the loss up to the PSB it
 * resynchronised at after an error, and all it returned before was returned or counted:
 * this path resumes at that PSB (pt_fast.c) unless the code map changed since its caches
 * were filled. */
static void note_resync(struct fast *f, const struct jf_flow *flow)
{
	uint64_t psb;

	if (flow->kind == JF_FLOW_LOST && !f->skip_records && !f->skip_insns &&
	    f->held_pos == f->held_n && jf_codemap_generation(f->map) == f->generation &&
	    jf_pt_decoder_resynced(f->old, &psb)) {
		if (f->resumes_to_skip) {
			f->resumes_to_skip--;
			return;
		}
		f->resume = 1;
		f->resume_psb = psb;
	}
}

/* The next record of the block decoder started at the PSB before: held ones first. */
static int next_local(struct fast *f, struct jf_flow *flow, struct jf_error *err)
{
	int rc;

	if (f->held_pos < f->held_n) {
		*flow = f->held[f->held_pos++];
		return 1;
	}
	rc = jf_decoder_next_uncounted(f->old, flow, err);
	if (rc > 0)
		note_resync(f, flow);
	return rc;
}

/* The next record of the block decoder handed over to (or of its successor from the
 * start). */
static int next_from_block_decoder(struct fast *f, struct jf_flow *flow, struct jf_error *err)
{
	int rc;

	if (f->gave_up)
		return 0;
	if (f->local) {
		rc = next_local(f, flow, err);
		if (rc <= 0 || !return_before(flow)) {
			if (rc > 0)
				jf_fast_tail_push(&f->tail, flow,
						  f->committed_records + ++f->returned_after);
			return rc;
		}
		/* A return to a call before the PSB it started at: only a decoder from the
		 * start has it. Everything returned so far was that decoder's too. */
		jf_decoder_free(f->old);
		f->old = NULL;
		free(f->held);
		f->held = NULL;
		f->held_n = f->held_pos = 0;
		if (hand_over_from_start(f, f->committed_records + f->returned_after, err) < 0)
			return -1;
	}
	/* Its own statistics are not read: what it gives is counted here, or by the caller. */
	while ((rc = jf_decoder_next_uncounted(f->old, flow, err)) > 0 || f->aligning) {
		if (f->aligning) {
			int at = rc > 0 ? jf_fast_realign(f, flow) : -1;

			if (at > 0) {
				f->aligning = 0;
				f->skip_records = 0;
			} else if (at < 0 && rc >= 0) {
				/* Not found: skipping by number, from the start again. */
				jf_decoder_free(f->old);
				f->old = NULL;
				f->tail.n = 0;
				if (hand_over_from_start(f, f->skip_records, err) < 0)
					return -1;
			}
			if (rc < 0)
				return rc;
			continue;
		}
		if (f->emit || flow->kind != JF_FLOW_BLOCK) {
			if (f->skip_records) {
				f->skip_records--;
				continue;
			}
			if ((f->count_local || f->near) &&
			    (return_before(flow) || (flow->kind == JF_FLOW_ERROR &&
						     jf_pt_decoder_error_ip_before_start(f->old)))) {
				/* From a PSB near the hand-over (counting, or returning blocks
				 * where the stretch before was too short to join): a return to a
				 * call before it, or an error located by a block before it, needs
				 * a decoder from the start, which skips all counted or returned so
				 * far (which jf_pt_fast_count_from_stop's counter does not know:
				 * its caller decodes from an earlier start). */
				if (f->local_only) {
					f->gave_up = 1;
					return 0;
				}
				jf_decoder_free(f->old);
				f->old = NULL;
				if (hand_over_from_start(f, f->committed_records + f->returned_after,
							 err) < 0)
					return -1;
				continue;
			}
			f->returned_after++;
			note_resync(f, flow);
			if (f->emit)
				jf_fast_tail_push(&f->tail, flow,
						  f->committed_records + f->returned_after);
			if (f->emit || !f->cfg.count_plain_events || !jf_fast_plain_event(flow))
				return rc;
			/* Counted, as jf_decoder_next would count it returned. */
			jf_decode_stats_count(f->stats, flow);
		} else if (flow->u.block.ninsn <= f->skip_insns) {
			f->skip_insns -= flow->u.block.ninsn;
		} else {
			/* Only with a PSB inside a block, which libipt does not decode. */
			flow->u.block.ninsn -= (uint32_t)f->skip_insns;
			f->skip_insns = 0;
			/* Counted, not returned, as the fast path counts its blocks. */
			jf_decode_stats_count(f->stats, flow);
		}
	}
	return rc;
}

int jf_fast_next_after_hand_over(struct fast *f, struct jf_flow *flow, struct jf_error *err)
{
	int rc = next_from_block_decoder(f, flow, err);

	/* Returning blocks, a fast decoder started at a later PSB may take over again
	 * (pt_fast_join.c). */
	if (rc > 0 && f->emit && jf_fast_join_note(f, flow, err) < 0)
		return -1;
	return rc;
}
