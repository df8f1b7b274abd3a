/* The fast Intel PT path following packets (pt_fast_packets.c) where the trace contradicts
 * the tracing state in one of the two ways libipt 2.1 rejects and libipt 2.0 lets through
 * (pt_status_check.h): a PSB+ with a FUP while tracing is off ("bad status update"), a
 * TIP.PGE while it is on ("unexpected packet context"). The block decoder (pt_decoder.c,
 * raise_violation) reports the error there, counts the bytes up to the next PSB as lost and
 * synchronises at that PSB afresh. This path does the same: it queues the error and the
 * loss, commits the stretch up to that PSB and starts there as a decoder started there
 * (resume in pt_fast.c), so that such an error costs no hand-over. Real captures have them
 * every PSB period (../shared's Unzip), where a hand-over for each cost more than the block
 * decoder alone. The decode errors libipt reports itself that pt_fast_bad_packet.c models
 * (a packet it cannot read, a TIP where a TNT bit is due, a bad compressed return, no code
 * where a TIP went) resynchronise here the same way. */
#include "pt_events.h"
#include "pt_fast_internal.h"
#include "pt_libipt_config.h"

#include <intel-pt.h>
#include <string.h>

/* Its query decoder can synchronise where the block decoder cannot: the block decoder
 * also fetches the events pending after the PSB+ (fuzz_pt_decode: a MODE.exec after the
 * PSBEND, then a TNT, is "trace stream does not match query"; or then a TIP.PGE libipt
 * cannot read), reports that error and goes on to the next PSB. One block decoder
 * (without code: what the sync reads is trace) serves every check. */
int jf_fast_block_decoder_syncs(struct fast *f, uint64_t psb)
{
	if (!f->sync_check) {
		struct pt_config config;
		struct jf_error err;

		if (jf_pt_libipt_config(&f->cfg, &config, &err) < 0)
			return 0;
		f->sync_check = pt_blk_alloc_decoder(&config);
		if (!f->sync_check)
			return 0;
	}
	return pt_blk_sync_set(f->sync_check, psb) >= 0;
}

/* Where jf_pt_check_next_psb's walk stops at a packet its packet decoder cannot read (at
 * stop), it searches for the PSB pattern from there (pt_pkt_sync_forward, which starts 15
 * bytes back, or 1 byte on where the decoder has not moved): the same search, by a packet
 * decoder set so that it starts at the same byte. */
static int64_t psb_pattern_after(struct fast *f, uint64_t at, uint64_t stop)
{
	uint64_t from = stop == at ? at + 1 : stop >= 16 ? stop - 15 : 0, psb;

	/* Set at from - 1, the decoder steps 16 bytes on and 15 back. */
	if (from == 0)
		return jf_pt_check_next_psb(f->check, at);
	if (pt_pkt_sync_set(f->psbs, from - 1) < 0 || pt_pkt_sync_forward(f->psbs) < 0 ||
	    pt_pkt_get_sync_offset(f->psbs, &psb) < 0)
		return -1;
	return (int64_t)psb;
}

/* The PSB libipt's block decoder synchronises at after an error at at (raise_violation in
 * pt_decoder.c): the first one its packet decoder reaches packet by packet from at, else
 * the next PSB pattern, as jf_pt_check_next_psb finds it. The packets this path reads
 * itself are stepped over here without a call into libipt: on a trace with an error every
 * PSB period, that walk, one libipt call per packet, was 12% of `stat`'s instructions. */
static int64_t psb_after_error(struct fast *f, uint64_t at)
{
	struct pt_packet p;
	uint64_t off = at;
	int status;

	if (at >= f->cfg.size)
		return -1;
	for (;;) {
		off = jf_fast_skip_simple_packets(f, off);
		if (pt_pkt_sync_set(f->psbs, off) < 0)
			return -1;
		status = pt_pkt_next(f->psbs, &p, sizeof(p));
		if (status < 0)
			return psb_pattern_after(f, at, off);
		if (p.type == ppt_psb && off > at)
			return (int64_t)off;
		off += (uint64_t)status;
	}
}

int jf_fast_resync_after_violation(struct fast *f, uint64_t at, int code, uint64_t ip)
{
	struct jf_flow *error, *lost;
	uint64_t psb;

	/* A watched decoder's stretches are compared with another's state: it hands over,
	 * unless its watcher knows that it starts afresh here (the commit's fresh). So does a
	 * trace with a time: the error's and the loss's times are not modelled. Timing
	 * packets without a TSC before them (a damaged packet read as a CYC) give no record
	 * a time (libipt's pt_blk_time fails without one). */
	if ((f->watch && !f->watch_resyncs) || at < f->restart ||
	    (f->timed && f->time.have_tsc))
		return 1;
	psb = jf_fast_psb_after(f, at);
	/* The block decoder synchronises at the PSB its status check finds next
	 * (raise_violation in pt_decoder.c); where that is another (a PSB pattern that is
	 * not a PSB+, fuzz_pt_decode), it reports a sync error there first: not modelled. */
	if (psb_after_error(f, at) != (psb >= f->cfg.size ? -1 : (int64_t)psb))
		return 1;
	/* The loss record carries the time of the PSB+ synchronised at (none without timing
	 * packets); where libipt's block decoder cannot synchronise there, its records differ:
	 * both hand over. So does a TIP.PGE while tracing with no PSB after it: where libipt's
	 * block decoder then places the error and the loss depends on the packets after the
	 * TIP.PGE (fuzz_pt_decode). */
	if (psb >= f->cfg.size ? code == -pte_bad_context :
	    jf_fast_psb_has_timing(f, psb) || !jf_fast_block_decoder_syncs(f, psb))
		return 1;
	error = jf_fast_queue_flow(f, JF_FLOW_ERROR, at);
	lost = error ? jf_fast_queue_flow(f, JF_FLOW_LOST, at) : NULL;
	if (!lost)
		return 1;
	error = lost - 1;
	error->ip = ip;
	error->u.error.code = code;
	error->u.error.phase = JF_PHASE_DECODE;
	jf_pt_flow_text(error->u.error.text, sizeof(error->u.error.text),
			pt_errstr(pt_errcode(code)));
	lost->flags |= JF_FLOW_IP_SUPPRESSED;
	lost->u.lost.bytes = psb - at;
	lost->u.lost.reason = JF_LOST_SKIPPED;
	f->await = f->pending.n; /* their offsets are final */
	/* Set before the commit, which tells a watcher that it is fresh. */
	f->resync = psb < f->cfg.size;
	f->resume_psb = psb;
	jf_fast_commit(f, psb);
	if (psb >= f->cfg.size)
		f->done = 1;
	return 0;
}
