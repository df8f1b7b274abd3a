/* Returning blocks, the fast path takes over again after a hand-over (pt_fast_handover.c)
 * without waiting for libipt's block decoder to resynchronise after an error: where code
 * still to change runs (a JIT recording: pt_fast_blocks.c), it hands over with no error
 * to come, and its block decoder then decoded the rest of the buffer.
 *
 * At the PSB after the stretch handed over, a fast decoder starts afresh (the attempt).
 * The block decoder is not in a fresh decoder's state there (its return stack holds calls
 * made before that PSB, it read the PSB+ as status updates, not as a start), so the
 * attempt's records are not taken as they are: the block decoder goes on and its records
 * are returned, until they join the attempt's as the parallel decode's seams join
 * (pt_parallel.c, find_join): from one equal to the attempt's first block on, every
 * record of the attempt's committed stretches equal to the block decoder's, one by one,
 * at least JF_JOIN_MIN_RECORDS of them. Then the block decoder is dropped and this decoder
 * goes on as the attempt, from the stretch after those: the hand-over cost the stretches
 * from the PSB before the unmodelled one to the end of the one joined, not the buffer.
 *
 * The block decoder's records are compared as they are returned, never read ahead: it
 * reads the code map as the session changes it between records. The attempt decodes
 * ahead over code that may still change as the fast path does (pt_fast_optimism.c: a
 * stretch's window on such code, opened again after the empty commit of the PSB it
 * starts at), but none of its records is returned: each is compared when the block
 * decoder returns its own, after the session applied what was due before it, so one
 * decoded from bytes that changed since differs and the attempt is dropped; where the map
 * does not tell where it changes, it joins only if the map did not change. An attempt
 * that stops where it would hand over, or whose records differ, is dropped, and the next
 * starts at a later PSB (the 1st, 2nd, 4th... after failures in a row: join_backoff);
 * where none joins, the block decoder's records stand. A compressed return to a call
 * made before the PSB the attempt started at, later, hands over as anywhere else, and the
 * block decoder from the start that needs (cfg keeps this decoder's start) has the call. */
#include "decoder_internal.h"
#include "pt_fast_internal.h"

#include <stdlib.h>

void jf_fast_join_plan(struct fast *f)
{
	uint64_t at;

	f->join_at = 0;
	if (!f->emit || f->watch || f->join_attempt || !f->psbs)
		return;
	at = jf_fast_psb_after(f, f->restart);
	if (at < f->cfg.size)
		f->join_at = at;
}

void jf_fast_join_free(struct fast *f)
{
	struct fast *a = f->attempt;

	if (!a)
		return;
	a->block_paths = NULL; /* f's */
	jf_fast_optimism_free(a);
	jf_fast_free_state(a);
	jf_fast_release_queues(a);
	free(a);
	f->attempt = NULL;
	f->attempt_on = 0;
}

/* An attempt over f's trace, with f's caches, not started. */
static struct fast *attempt_new(const struct fast *f)
{
	struct fast *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->cfg = f->cfg;
	a->cfg.release_consumed = 0; /* f gives back what it has passed */
	a->map = f->map;
	a->insns = f->insns;
	a->blocks = f->blocks;
	a->payloads = f->payloads;
	a->borrowed = 1;
	a->queues = f->queues;
	a->stats = f->stats; /* not written where blocks are returned */
	a->emit = 1;
	a->join_attempt = 1;
	return a;
}

/* The attempt's next committed stretch in its ready queue (1), or 0 where it stopped
 * before one (-1 with err). */
static int attempt_stretch(struct fast *f, struct jf_error *err)
{
	struct fast *a = f->attempt;
	int rc;

	a->ready.n = a->ready.pos = 0;
	do
		rc = jf_fast_decode_stretch(a, err);
	while (rc == 0 && a->empty_commit && !a->ready.n);
	f->block_paths = a->block_paths; /* made at its first TNT if f had none */
	if (rc < 0)
		return -1;
	return a->ready.n > 0;
}

/* An attempt from psb, at its first block (1), or 0 where it has none (-1 with err). */
static int attempt_start(struct fast *f, uint64_t psb, struct jf_error *err)
{
	struct fast *a;
	int rc;

	if (!f->attempt && !(f->attempt = attempt_new(f)))
		return jf_fail(err, "out of memory");
	a = f->attempt;
	a->block_paths = f->block_paths;
	if (jf_fast_resume_at(a, psb, err) < 0)
		return -1;
	f->attempt_on = 1;
	f->attempt_matching = 0;
	f->attempt_matched = 0;
	rc = attempt_stretch(f, err);
	if (rc <= 0)
		return rc;
	/* Its records before (a fresh start's, at the PSB+) are not the block decoder's. */
	while (a->ready.pos < a->ready.n && a->ready.flows[a->ready.pos].kind != JF_FLOW_BLOCK)
		a->ready.pos++;
	return a->ready.pos < a->ready.n;
}

/* The attempt failed where the block decoder is at trace offset off: the next starts at
 * a PSB after it, join_backoff PSBs later. */
static void attempt_failed(struct fast *f, uint64_t off)
{
	uint64_t at = off;
	unsigned i;

	f->attempt_on = 0;
	f->join_at = 0;
	for (i = 0; i <= f->join_backoff && at < f->cfg.size; i++)
		at = jf_fast_psb_after(f->attempt, at);
	if (at < f->cfg.size)
		f->join_at = at;
	f->join_backoff = f->join_backoff * 2 + 1 < MAX_RESUME_BACKOFF ? f->join_backoff * 2 + 1
									: MAX_RESUME_BACKOFF;
}

/* The records joined: f goes on as the attempt, whose committed records the block
 * decoder has all returned. What f returned and counted stays, and its start (a hand-over
 * from the start decodes from there, skipping all it returned). */
static void adopt(struct fast *f)
{
	struct fast keep = *f, *a = f->attempt;

	jf_decoder_free(keep.old);
	free(keep.held);
	jf_fast_optimism_free(a);
	jf_fast_release_queues(&keep);
	jf_fast_free_decoders(&keep);
	*f = *a;
	free(a);
	f->cfg = keep.cfg;
	f->borrowed = keep.borrowed;
	f->paths_borrowed = keep.paths_borrowed; /* the block paths are f's (attempt_start) */
	f->stats = keep.stats;
	f->dec = keep.dec;
	f->released = keep.released;
	f->batch_one = keep.batch_one; /* the record being returned may be this */
	f->report = keep.report;
	f->report.resumes++;
	f->opt = keep.opt; /* the attempt decoded nothing ahead over code that may change */
	f->fast_bytes_at_resume = f->report.fast_bytes;
	f->resume_backoff = keep.resume_backoff;
	f->committed_records = keep.committed_records + keep.returned_after;
	f->tail = keep.tail; /* the attempt returned none */
	f->join_attempt = 0;
	f->attempt = NULL;
	f->attempt_on = 0;
	f->join_at = 0;
	f->join_backoff = 0;
}

int jf_fast_join_note(struct fast *f, const struct jf_flow *flow, struct jf_error *err)
{
	uint64_t off = flow->offset - f->cfg.base_offset;
	const struct jf_flow *want;
	struct fast *a;
	int rc;

	/* The block decoder resynchronised: this path resumes there (pt_fast.c). */
	if (f->resume) {
		f->attempt_on = 0;
		return 0;
	}
	if (!f->attempt_on) {
		if (!f->join_at || off < f->join_at)
			return 0;
		rc = attempt_start(f, f->join_at, err);
		if (rc <= 0) {
			if (rc == 0)
				attempt_failed(f, off);
			return rc;
		}
	}
	a = f->attempt;
	want = &a->ready.flows[a->ready.pos];
	if (!f->attempt_matching) {
		/* The block decoder's records before the attempt's first block stand. */
		if (flow->offset < want->offset)
			return 0;
		if (!jf_flow_same(flow, want)) {
			if (flow->offset > want->offset)
				attempt_failed(f, off);
			return 0;
		}
		f->attempt_matching = 1;
	} else if (!jf_flow_same(flow, want)) {
		attempt_failed(f, off);
		return 0;
	}
	f->attempt_matched++;
	if (++a->ready.pos < a->ready.n)
		return 0;
	if (f->attempt_matched < JF_JOIN_MIN_RECORDS) {
		rc = attempt_stretch(f, err);
		if (rc == 0)
			attempt_failed(f, off);
		return rc < 0 ? -1 : 0;
	}
	if (!jf_codemap_tells_changes(f->map) &&
	    jf_codemap_generation(f->map) != a->generation) {
		attempt_failed(f, off);
		return 0;
	}
	adopt(f);
	return 0;
}
