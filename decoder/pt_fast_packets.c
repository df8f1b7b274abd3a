/* Intel PT fast path, following packets: libipt's packet decoder and the TNT
 * payload cache, for traces with and without timing packets (the sync, the stretches
 * and the hand-over are in pt_fast.c). */
#include "pt_events.h"
#include "pt_fast_bad_packet.h"
#include "pt_fast_internal.h"
#include "pt_fast_short_packets.h"

#include <endian.h>
#include <intel-pt.h>
#include <string.h>

/* Following packets: libipt's packet decoder and the TNT payload cache.
 *
 * libipt's query decoder hands out one TNT bit per call and hides the payloads, so a
 * cache of what a payload decodes to cannot sit on it. What it keeps between packets is
 * little: IP compression, a FUP or MODE.exec waiting for the TIP it binds to, a PSB+'s
 * status updates, and its time (pt_fast_time.h). This keeps the same by the rules of
 * libipt 2.0's pt_query_decoder.c and pt_last_ip.c, builds the events the query decoder
 * would give and applies them as libipt's block decoder does (jf_fast_apply_event). Any
 * other packet or combination hands over. An overflow is followed as libipt follows it:
 * no hand-over. With timing packets, what this path has not been checked on hands over:
 * resynchronisations, a PSB+ right after another, an event before the first TSC;
 * returning blocks, a block cut by the block cache's length limit before a TNT packet. */

/* Clear an event. Not memset in place: in jf_fast_next_packet, where these are made, GCC
 * clears (or copies) a pt_event with `rep stos` (`rep movs`), which cost an eighth of the
 * filtered capture's time (an event per TIP.PGE and TIP.PGD); out of line it is a few
 * vector stores. */
__attribute__((noinline)) static void clear_event(struct pt_event *ev)
{
	memset(ev, 0, sizeof(*ev));
}

/* A timing packet (p, at off), in a PSB+ (header) or not, as the query decoder reads it.
 * Returns 0, or 1 if not modelled: where libipt's query decoder fails or works around an
 * erratum. */
static int packet_timing(struct fast *f, const struct pt_packet *p, uint64_t off, int header)
{
	const struct jf_pt_time_config *c = &f->time_cfg;
	int errcode;

	switch (p->type) {
	case ppt_tsc:
		errcode = jf_pt_time_tsc(&f->time, c, p->payload.tsc.tsc, header);
		break;
	case ppt_tma:
		errcode = jf_pt_time_tma(&f->time, c, p->payload.tma.ctc, p->payload.tma.fc);
		break;
	case ppt_mtc:
		errcode = jf_pt_time_mtc(&f->time, c, p->payload.mtc.ctc);
		break;
	case ppt_cyc:
		if (f->skd007 && jf_fast_skd007_hits(f, p, off))
			return 1;
		errcode = jf_pt_time_cyc(&f->time, c, p->payload.cyc.value);
		break;
	default:
		return 1;
	}
	f->timed = 1;
	f->timed_here = 1;
	f->time_dirty = 1;
	return errcode < 0;
}

/* IP compression (pt_last_ip.c). Returns 0, or 1 for a compression libipt rejects. Inline:
 * a call for each TIP, TIP.PGE and TIP.PGD cost more than its work (clean capture). */
static inline __attribute__((always_inline)) int update_last_ip(struct fast *f, const struct pt_packet_ip *p)
{
	uint64_t keep;

	switch (p->ipc) {
	case pt_ipc_suppressed:
		f->ip_suppressed = 1;
		return 0;
	case pt_ipc_update_16: keep = ~0xffffull; break;
	case pt_ipc_update_32: keep = ~0xffffffffull; break;
	case pt_ipc_update_48: keep = ~0xffffffffffffull; break;
	case pt_ipc_full: keep = 0; break;
	case pt_ipc_sext_48:
		f->last_ip = (uint64_t)((int64_t)(p->ip << 16) >> 16);
		f->have_ip = 1;
		f->ip_suppressed = 0;
		return 0;
	default:
		return 1;
	}
	f->last_ip = (f->last_ip & keep) | (p->ip & ~keep);
	f->have_ip = 1;
	f->ip_suppressed = 0;
	return 0;
}

/* The last IP, as pt_last_ip_query gives it: 0, or 1 with *ip = 0 if there is none. */
static int last_ip(const struct fast *f, uint64_t *ip)
{
	*ip = f->have_ip && !f->ip_suppressed ? f->last_ip : 0;
	return !f->have_ip || f->ip_suppressed;
}

/* Whether a record waits for the next stop's offset (queued, or counted already:
 * count_untimed_switch). */
static inline int records_await(const struct fast *f)
{
	return f->await < f->pending.n || f->nunsettled;
}

/* settle's work (out of line: settle is asked at every stop). */
static __attribute__((noinline)) void settle_waiting(struct fast *f, uint64_t offset)
{
	for (; f->await < f->pending.n; f->await++)
		f->pending.flows[f->await].offset = f->cfg.base_offset + offset;
	/* Those counted already: their parts of the hash, at this offset. */
	if (f->nunsettled) {
		f->events_hash += f->unsettled_what * (2 * (f->cfg.base_offset + offset) + 1);
		f->nunsettled = 0;
		f->unsettled_what = f->unsettled_own = 0;
	}
	f->settle_due = 0;
}

/* Records made since the last stop take the offset libipt's query decoder is at when it
 * returns them: after each query it reads ahead, past packets that are not query-relevant
 * (PAD, FUP, a PSB+ up to its PSBEND), to the next that is (a stop). */
static inline __attribute__((always_inline)) void settle(struct fast *f, uint64_t offset)
{
	if (f->settle_due)
		settle_waiting(f, offset);
}

void jf_fast_settle(struct fast *f, uint64_t offset)
{
	settle(f, offset);
}

/* Stamp ev with libipt's time now: 1, or 0 where a timing packet came but no TSC yet. */
static int stamp_event(const struct fast *f, struct pt_event *ev)
{
	if (f->time.have_tsc) {
		ev->has_tsc = 1;
		ev->tsc = f->time.tsc;
		ev->lost_mtc = f->time.lost_mtc;
		ev->lost_cyc = f->time.lost_cyc;
		return 1;
	}
	return !f->timed;
}

/* The time an event made now gets (stamp_event), kept for one returned later. */
static void take_stamp(const struct fast *f, struct jf_fast_stamp *s)
{
	s->has_tsc = (uint8_t)f->time.have_tsc;
	s->tsc = f->time.tsc;
	s->lost_mtc = f->time.lost_mtc;
	s->lost_cyc = f->time.lost_cyc;
	s->timed = (uint8_t)f->timed;
}

/* Stamp ev with the time s kept: 0, or 1 if not modelled (no time then, but a timing
 * packet since: packet_event would stamp it anew). */
static int apply_stamp(const struct fast *f, const struct jf_fast_stamp *s, struct pt_event *ev)
{
	if (!s->has_tsc)
		return s->timed || f->timed;
	ev->has_tsc = 1;
	ev->tsc = s->tsc;
	ev->lost_mtc = s->lost_mtc;
	ev->lost_cyc = s->lost_cyc;
	return 0;
}

/* Whether the decoder has no time and none to read (no timing packets, or none that gave
 * a time yet), and no block waits with one: then every block's stamp is 0, and what the
 * time bookkeeping of a TNT or TIP leaves is the last block's wait alone, set without
 * its calls' loads and tests (a trace takes them for every TNT and TIP packet). */
static inline __attribute__((always_inline)) int no_time_yet(const struct fast *f)
{
	/* Where it holds (most TNTs and TIPs of a trace without timing packets), two tests,
	 * not three: a timed trace has a time (last_time.ns) and leaves at the first. */
	return !f->last_time.ns && !((uint64_t)(unsigned)f->time_dirty | f->block_time_then);
}

/* Whether a TIP.PGE's or TIP.PGD's event takes count_untimed_switch: counting, with no
 * time read nor any to read (no timing packet yet: no_time_yet alone allows a TSC of 0). */
static inline __attribute__((always_inline)) int counting_untimed(const struct fast *f)
{
	return !f->emit && !f->timed && !f->time.have_tsc && no_time_yet(f);
}

/* packet_event for tracing enabled (enable: at ip) or disabled (after the branch to ip,
 * unless suppressed) where counting_untimed holds and nothing binds to the packet after
 * its event (consumed: the record's offset is the next stop's): the same state and record,
 * without a pt_event, nor what has no effect then (a time to stamp, read or give a block,
 * the full conversion of an event into a record): a third of the cost of an event where
 * tracing is enabled and disabled every few blocks (the clean capture). Not inline: the
 * packet handlers' frames.
 * Where the record is counted (cfg.count_plain_events), it is counted here, not queued
 * (the queue, the settling of its offset and its count at the commit were a third of the
 * cost again): what the count gives a commit (its events, events_hash) and a hand-over
 * (records to skip, pt_fast.c's count_plain_events) is the same; only its part of the
 * hash waits for its offset (jf_fast_settle). */
static __attribute__((noinline)) int count_untimed_switch(struct fast *f, int enable,
							  uint64_t ip, int suppressed,
							  uint64_t offset)
{
	const uint16_t kind = enable ? JF_FLOW_ENABLED : JF_FLOW_DISABLED;
	struct jf_flow *fl;

	/* With no time, a record waiting for the time after this read, or a block
	 * waiting for it, gets none (jf_fast_retime, jf_fast_block_time_after_event). */
	if (f->retime)
		jf_fast_retime(f);
	f->block_time_waits = 0;
	if (enable ? jf_fast_enable_at(f, ip) : jf_fast_disable_after(f, ip, !suppressed))
		return 1;
	if (f->cfg.count_plain_events) {
		const uint64_t what = jf_fast_event_what(kind, ip);

		f->events_n++;
		f->nunsettled++;
		f->settle_due = 1;
		f->unsettled_what += what;
		f->unsettled_own += what * (2 * (f->cfg.base_offset + offset) + 1);
		return 0;
	}
	fl = jf_fast_queue_flow(f, JF_FLOW_OTHER, offset);
	if (!fl)
		return 1;
	/* As jf_pt_event_flow makes it from such an event (resumed is the emitting path's). */
	fl->kind = kind;
	fl->ip = ip;
	if (suppressed)
		fl->flags |= JF_FLOW_IP_SUPPRESSED;
	return 0;
}

/* Apply an event and queue its record: at offset if the query decoder has not consumed the
 * packet that gave it (more events are bound to it), else at the next stop's. Returns 0,
 * or 1 if not modelled. */
static int packet_event(struct fast *f, struct pt_event *ev, int consumed, uint64_t offset)
{
	struct jf_flow *fl;

	/* The query decoder stamps an event with its time where it makes it: here, unless
	 * the caller stamped it earlier (an overflow). An event without a time takes the
	 * time after the next read (pt_fast.c, retime), which this path does not model. */
	if (!ev->has_tsc && !stamp_event(f, ev))
		return 1;
	jf_fast_read_time(f);
	jf_fast_retime(f);
	jf_fast_block_time_after_event(f);
	f->emit_offset = offset;
	if (jf_fast_apply_event(f, ev))
		return 1;
	fl = jf_fast_queue_flow(f, JF_FLOW_OTHER, offset);
	if (!fl)
		return 1;
	jf_pt_event_flow(ev, &f->cfg.conv, fl);
	if (f->emit && ev->type == ptev_enabled)
		fl->u.enabled.resumed = (uint8_t)f->resumed;
	if (!consumed)
		settle(f, offset);
	return 0;
}

/* What a cached path did to the return stack, done again (inline: most paths did
 * nothing to it, and each TNT packet and TIP replays one). */
static inline void replay_returns(struct fast *f, const struct jf_payload_path *p)
{
	unsigned i;
	uint64_t ip;

	if (__builtin_expect(!p->nops, 1))
		return;
	for (i = 0; i < p->nops; i++) {
		if (p->pops & (1u << i))
			jf_fast_pop_return(f, &ip); /* a return pushed just before on the path */
		else
			jf_fast_push_return(f, p->push[i]);
	}
}

/* Counting: the blocks a cached path walks, taken as one step (its instructions, blocks and
 * return-stack changes; the decoder at its end). */
static inline __attribute__((always_inline)) void take_path(struct fast *f,
							    const struct jf_payload_path *p)
{
	replay_returns(f, p);
	f->insns_n += p->insns;
	f->blocks_n += p->blocks;
	f->ip = p->end;
}

/* Whether a returned block ends where libipt's block decoder queries a TNT bit. */
static int ends_at_tnt_bit(const struct jf_flow *fl)
{
	return fl->kind == JF_FLOW_BLOCK &&
	       (fl->u.block.end == JF_END_COND || fl->u.block.end == JF_END_RETURN);
}

/* Returning blocks: a TNT payload's blocks, timed as libipt's block decoder times them.
 * The blocks up to the first conditional branch (or compressed return) need no trace and
 * keep the time of the last query; the query at that branch reads the TNT packet, so that
 * block and those after it carry the time at the TNT packet (the query decoder's time
 * there: pt_qry_cache_tnt), and the last of them the time after the event libipt reads
 * next, if one is pending (jf_fast_retime). Returns 0, 1 if not modelled, or -1 where a
 * decode error ended the stretch. */
static int emit_timed_tnt(struct fast *f, uint64_t bits, unsigned nbits, uint64_t offset)
{
	size_t from = f->pending.n, i;
	int status;

	/* A block cut by the block cache's length limit before this packet, joined to one
	 * ended here, would take the time of its end (pt_decoder.c): not modelled. */
	if (f->timed && f->joinable)
		return 1;
	status = jf_fast_emit_tnt(f, bits, nbits, offset);
	if (status || !f->timed)
		return status;
	jf_fast_read_time(f);
	for (i = from; i < f->pending.n && !ends_at_tnt_bit(&f->pending.flows[i]); i++)
		;
	if (i == f->pending.n || !ends_at_tnt_bit(&f->pending.flows[f->pending.n - 1]))
		return 1; /* a payload whose last bit ends no block here: not modelled */
	for (; i < f->pending.n; i++) {
		struct jf_flow *fl = &f->pending.flows[i];

		fl->time = f->last_time.ns;
		fl->flags = (uint16_t)(fl->time ? fl->flags | JF_FLOW_HAS_TIME
						: fl->flags & ~JF_FLOW_HAS_TIME);
	}
	f->retime = f->pending.n;
	return 0;
}

/* Each bit of a TNT packet ends a block, stamped with the time at this packet; the last
 * bit's block with the time after the event that may come next, if one does. */
static inline __attribute__((always_inline)) void note_tnt_time(struct fast *f,
								 unsigned nbits)
{
	if (no_time_yet(f)) {
		f->block_time_waits = 1;
		return;
	}
	jf_fast_read_time(f);
	if (nbits > 1)
		jf_fast_note_block_time(f);
	jf_fast_note_query_block_time(f);
}

/* Where a payload path could not start (pt_fast_payloads.h): a compressed return to an
 * older call (a taken bit and the return stack), or a block that needs what a TNT bit
 * cannot give, taken one step here. Returns 0 with the bit consumed, 1 if not modelled,
 * or -1 where a decode error ended the stretch. */
static int tnt_bit_without_path(struct fast *f, uint64_t bits, unsigned nbits,
				uint64_t offset)
{
	const struct jf_fast_block *b = jf_fast_block_at(f->blocks, f->isa, f->ip,
							 f->generation);

	if (b->end == JF_FAST_BAD || (b->end == JF_FAST_RETURN && !((bits >> (nbits - 1)) & 1)))
		return jf_fast_fail_at_block(f, b, offset, 1) ? 1 : -1;
	if (b->end == JF_FAST_INDIRECT || b->end == JF_FAST_CALL_IND)
		return jf_fast_fail_tnt_at_indirect(f, b, offset) ? 1 : -1;
	if (b->end != JF_FAST_RETURN || jf_fast_pop_return(f, &f->ip))
		return 1;
	f->insns_n += b->ninsn;
	f->blocks_n++;
	return 0;
}

/* packet_tnt where this path does not count it in one go: tracing off, a FUP or MODE.exec
 * waiting, an unknown mode (1: not modelled) or no bits. */
static int tnt_not_counted(struct fast *f, uint64_t offset, unsigned nbits)
{
	if (!nbits || f->pend_fup || f->pend_mode || f->isa == JF_ISA_UNKNOWN)
		return 1;
	return jf_fast_fail_tnt_while_off(f, offset) ? 1 : -1;
}

/* packet_tnt's count of the bits, once it knows that it counts them in one go (counting,
 * tracing on, no FUP or MODE.exec waiting, a known mode) and has noted the time. */
static inline __attribute__((always_inline)) int count_tnt_bits(struct fast *f, uint64_t bits,
								 unsigned nbits, uint64_t offset)
{
	unsigned idle = 0; /* lookups in a row that consumed no bit (direct calls only) */
	int status;

	for (;;) {
		const struct jf_payload_path *p = jf_payload_path_at(
			f->payloads, f->isa, f->ip, f->generation, bits, nbits);

		take_path(f, p);
		if (__builtin_expect(p->used == nbits, 1))
			return 0;
		nbits -= p->used;
		bits &= (1ull << nbits) - 1;
		/* Code that calls itself forever needs no trace: hand over rather than loop. */
		idle = p->used ? 0 : idle + 1;
		if (idle > MAX_TIP_WALK)
			return 1;
		if (p->blocks)
			continue;
		status = tnt_bit_without_path(f, bits, nbits, offset);
		if (status)
			return status;
		if (!--nbits)
			return 0;
		bits &= (1ull << nbits) - 1;
	}
}

/* A TNT payload (nbits bits, the first in bit nbits-1, none above): one payload-cache
 * lookup per run of bits that does not depend on the return stack's contents. Returns 0,
 * 1 if not modelled, or -1 where a decode error ended the stretch (pt_fast_bad_packet.h).
 * Inline in the packet loop, which takes it for every TNT packet. */
static inline __attribute__((always_inline)) int packet_tnt(struct fast *f, uint64_t bits,
							     unsigned nbits, uint64_t offset)
{
	if (f->emit)
		return emit_timed_tnt(f, bits, nbits, offset);
	if (__builtin_expect(!nbits || f->pend_fup || f->pend_mode ||
			     f->isa == JF_ISA_UNKNOWN || !f->enabled, 0))
		return tnt_not_counted(f, offset, nbits);
	f->report.tnt_packets++;
	note_tnt_time(f, nbits);
	return count_tnt_bits(f, bits, nbits, offset);
}

/* The branch that needed a TIP (at offset) went to to. */
static inline __attribute__((always_inline)) int tip_taken(struct fast *f, uint64_t to,
							    uint64_t offset)
{
	f->ip = f->tip_target = to;
	settle(f, offset);
	if (no_time_yet(f)) {
		f->block_time_waits = 1;
	} else {
		jf_fast_read_time(f);
		jf_fast_note_query_block_time(f);
	}
	/* The block the TIP ends (the last queued) carries the time at the TIP
	 * (pt_qry_indirect_branch), or that after the event libipt reads next. */
	if (f->emit && f->timed) {
		f->retime = f->pending.n;
		jf_fast_retime(f);
		f->retime = f->pending.n;
	}
	return 0;
}

/* packet_tip (to: its IP) where it is not counted in one lookup: an asynchronous branch
 * after a FUP, returning blocks, or from where the TIP's cached path stopped. Out of line:
 * its frame (an event, the walk) cost a counted TIP a sixth of its instructions. */
static __attribute__((noinline)) int tip_slowly(struct fast *f, uint64_t to, uint64_t offset)
{
	struct pt_event ev;
	int n;

	if (f->pend_fup) {
		clear_event(&ev);
		ev.type = ptev_async_branch;
		ev.variant.async_branch.from = f->fup_ip;
		ev.variant.async_branch.to = to;
		f->pend_fup = 0;
		/* The event was made at the FUP, with the time then (pt_qry_decode_fup). */
		if (apply_stamp(f, &f->fup_stamp, &ev))
			return 1;
		return packet_event(f, &ev, 1, offset);
	}
	/* Block by block from where the TIP's path stopped (or returning blocks). */
	for (n = 0; n < MAX_TIP_WALK; n++) {
		const struct jf_fast_block *b = jf_fast_changing_block(
			f, jf_fast_block_at(f->blocks, f->isa, f->ip, f->generation));

		if (b->end == JF_FAST_BAD)
			return jf_fast_fail_at_block(f, b, offset, 0);
		f->insns_n += b->ninsn;
		f->blocks_n++;
		/* Blocks up to the TIP start with the query decoder at it (settled already). */
		if (f->emit && jf_fast_emit_block(f, b, offset))
			return 1;
		switch ((enum jf_fast_end)b->end) {
		case JF_FAST_CALL:
			if (b->target != b->next)
				jf_fast_push_return(f, b->next);
			f->ip = b->target;
			continue;
		case JF_FAST_JUMP:
			f->ip = b->target;
			continue;
		case JF_FAST_CONTINUE:
			f->ip = b->next;
			continue;
		case JF_FAST_CALL_IND:
			jf_fast_push_return(f, b->next);
			/* fall through */
		case JF_FAST_RETURN: /* not compressed: no TNT bit came */
		case JF_FAST_INDIRECT:
		case JF_FAST_FAR:
		case JF_FAST_FAR_CALL:
			return tip_taken(f, to, offset);
		case JF_FAST_COND:
			/* No TNT bit for it: libipt's query finds the TIP ("trace stream does
			 * not match query"), the branch counted. */
			return jf_fast_fail_at_query(f, offset, -pte_bad_query, b->last);
		default:
			/* Bad code. */
			return 1;
		}
	}
	return 1;
}

/* A TIP: an asynchronous branch after a FUP, else the target of the next indirect branch,
 * return or far transfer (the blocks up to it need no trace). Inline in the packet loop. */
static inline __attribute__((always_inline)) int packet_tip(struct fast *f,
							     const struct pt_packet_ip *ipp,
							     uint64_t offset)
{
	uint64_t to;

	if (update_last_ip(f, ipp) || last_ip(f, &to) || f->pend_mode || !f->enabled ||
	    f->isa == JF_ISA_UNKNOWN)
		return 1;
	if (!f->pend_fup && !f->emit) {
		/* Counting: the blocks up to the one that needs this TIP, in one lookup. */
		const struct jf_payload_path *p =
			jf_payload_tip_path_at(f->payloads, f->isa, f->ip, f->generation);

		take_path(f, p);
		if (p->used)
			return tip_taken(f, to, offset);
	}
	return tip_slowly(f, to, offset);
}

static inline unsigned ip_packet(const struct fast *f, uint64_t off, struct pt_packet *p);

/* The little-endian value of the n (< 8) bytes at off in t (size bytes), as libipt's
 * pt_pkt_read_value reads it: one load where eight bytes lie there (a PSB+'s PIP and
 * VMCS, byte by byte, were a tenth of reading one on the errors capture). */
static uint64_t read_le(const uint8_t *t, uint64_t off, unsigned n, uint64_t size)
{
	uint64_t v = 0;

	if (off + sizeof(v) <= size) {
		memcpy(&v, t + off, sizeof(v));
		return le64toh(v) & ((1ull << (8 * n)) - 1);
	}
	while (n--)
		v = v << 8 | t[off + n];
	return v;
}

/* A packet of a PSB+ at off, read as libipt's packet decoder reads it (pt_packet.c's
 * pt_pkt_read_psb, _psbend, _cbr, _pip, _vmcs, _mode), or one ip_packet reads (a FUP, a
 * MODE.exec), into p: its size, or 0 for any other packet, or one cut by the trace's end
 * or not whole (libipt's packet decoder is to read it: it fails there). A PSB+ has a
 * handful of these, each a call into libipt before (a quarter of `stat` on a capture
 * with a decode error every few PSB periods, whose resynchronisations read them again). */
static unsigned psb_plus_packet(const struct fast *f, uint64_t off, struct pt_packet *p)
{
	const uint8_t *t = f->cfg.trace;
	const uint64_t size = f->cfg.size;

	if (off + 2 > size)
		return ip_packet(f, off, p);
	if (t[off] == 0x99 && (t[off + 1] & 0xe0) == 0x20) {
		memset(&p->payload.mode, 0, sizeof(p->payload.mode));
		p->type = ppt_mode;
		p->payload.mode.leaf = pt_mol_tsx;
		p->payload.mode.bits.tsx.intx = t[off + 1] & 0x01;
		p->payload.mode.bits.tsx.abrt = (t[off + 1] & 0x02) >> 1;
		return p->size = 2;
	}
	if (t[off] != 0x02)
		return ip_packet(f, off, p);
	switch (t[off + 1]) {
	case 0x82: { /* PSB: 02 82 eight times (compared in two loads, not byte by byte) */
		static const uint8_t psb[16] = { 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
						 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82 };

		if (off + 16 > size || memcmp(t + off, psb, sizeof(psb)) != 0)
			return 0;
		p->type = ppt_psb;
		return p->size = 16;
	}
	case 0x23:
		p->type = ppt_psbend;
		return p->size = 2;
	case 0x03:
		if (off + 4 > size)
			return 0;
		p->type = ppt_cbr;
		p->payload.cbr.ratio = t[off + 2];
		return p->size = 4;
	case 0x43: {
		/* PIP: bit 0 of the 6-byte payload is NR, the rest CR3 bits 5 and up. */
		uint64_t v;

		if (off + 8 > size)
			return 0;
		v = read_le(t, off + 2, 6, size);
		memset(&p->payload.pip, 0, sizeof(p->payload.pip));
		p->type = ppt_pip;
		p->payload.pip.nr = v & 1;
		p->payload.pip.cr3 = (v >> 1) << 5;
		return p->size = 8;
	}
	case 0xc8: /* VMCS: the base address's bits 12 and up */
		if (off + 7 > size)
			return 0;
		p->type = ppt_vmcs;
		p->payload.vmcs.base = read_le(t, off + 2, 5, size) << 12;
		return p->size = 7;
	default:
		return 0;
	}
}

/* The next packet but PADs, from the packet decoder's offset, which *at is set to (where
 * that packet starts, or where the read failed). PADs (one byte, which libipt's packet
 * decoder reads without fail) are stepped over here without a call into libipt: PSB+s and
 * the packets around them are padded (28% of the bytes of a real capture, ../shared's
 * Unzip), and the reads ahead of a PSB+ read them one call each. The packets of a PSB+
 * are read here too (psb_plus_packet), the packet decoder moved past them only where it
 * is used next (jf_fast_pkt_offset). */
static int next_but_pads(struct fast *f, struct pt_packet *p, uint64_t *at)
{
	const uint8_t *t = f->cfg.trace;
	uint64_t off, from;
	unsigned size;

	if (f->pkt_ahead)
		off = f->pkt_pos;
	else if (pt_pkt_get_offset(f->pkt, &off) < 0)
		return -pte_internal;
	from = off;
	off = past_pads(t, off, f->cfg.size);
	*at = off;
	if ((size = psb_plus_packet(f, off, p)) != 0) {
		f->pkt_pos = off + size;
		f->pkt_ahead = 1;
		return (int)size;
	}
	if ((off != from || f->pkt_ahead) && jf_fast_pkt_seek(f, off) < 0)
		return -pte_internal;
	return pt_pkt_next(f->pkt, p, sizeof(*p));
}

static int reads_ahead_cleanly(struct fast *f);

/* Whether the query decoder reads ahead without an error from here: through PADs and a
 * FUP to the TIP or TIP.PGD it binds to, or as reads_ahead_cleanly says. The packet decoder
 * is left where it is. */
static int read_ahead_ok(struct fast *f)
{
	struct pt_packet p;
	uint64_t at, from;
	int ok, status;

	if (jf_fast_pkt_offset(f, &at) < 0)
		return 0;
	status = next_but_pads(f, &p, &from);
	if (status >= 0 && p.type == ppt_fup) {
		uint64_t next;

		status = next_but_pads(f, &p, &next);
		ok = status >= 0 && (p.type == ppt_tip || p.type == ppt_tip_pgd);
	} else {
		ok = jf_fast_pkt_seek(f, from) >= 0 && reads_ahead_cleanly(f);
	}
	return jf_fast_pkt_seek(f, at) >= 0 && ok;
}

/* TIP.PGE: tracing enabled, and a MODE.exec before it applies at its IP. While tracing is
 * on, libipt 2.1 rejects it ("unexpected packet context"); the block decoder reports that
 * with the IP of the last block it decoded, known here only when it decoded none since it
 * synchronised (fresh): 0. It sees the TIP.PGE only if the query decoder reads on past it
 * without an error; else that error is the one reported (fuzz_pt_decode: an unknown packet
 * after it). */
static int packet_pge(struct fast *f, const struct pt_packet_ip *ipp, uint64_t offset, int fresh)
{
	struct pt_event ev;
	uint64_t ip;

	if (update_last_ip(f, ipp) || last_ip(f, &ip) || f->pend_fup)
		return 1;
	f->ovf_off = 0;
	if (f->enabled)
		return !fresh || !read_ahead_ok(f) ||
		       jf_fast_resync_after_violation(f, offset, -pte_bad_context, 0);
	if (!f->pend_mode && counting_untimed(f))
		return count_untimed_switch(f, 1, ip, 0, offset);
	clear_event(&ev);
	ev.type = ptev_enabled;
	ev.variant.enabled.ip = ip;
	if (packet_event(f, &ev, !f->pend_mode, offset))
		return 1;
	if (!f->pend_mode)
		return 0;
	clear_event(&ev);
	ev.type = ptev_exec_mode;
	ev.variant.exec_mode.mode = f->mode;
	ev.variant.exec_mode.ip = ip;
	f->pend_mode = 0;
	/* Made at the MODE.exec, with the time then (pt_qry_decode_mode). */
	if (apply_stamp(f, &f->mode_stamp, &ev))
		return 1;
	return packet_event(f, &ev, 1, offset);
}

/* TIP.PGD: tracing disabled, asynchronously at a FUP's IP if one came before it. */
static int packet_pgd(struct fast *f, const struct pt_packet_ip *ipp, uint64_t offset)
{
	struct pt_event ev;

	if (update_last_ip(f, ipp) || f->pend_mode)
		return 1;
	if (!f->pend_fup && counting_untimed(f)) {
		uint64_t ip;
		int suppressed = last_ip(f, &ip);

		return count_untimed_switch(f, 0, ip, suppressed, offset);
	}
	clear_event(&ev);
	if (f->pend_fup) {
		ev.type = ptev_async_disabled;
		ev.variant.async_disabled.at = f->fup_ip;
		ev.ip_suppressed = last_ip(f, &ev.variant.async_disabled.ip);
		f->pend_fup = 0;
		if (apply_stamp(f, &f->fup_stamp, &ev))
			return 1;
	} else {
		ev.type = ptev_disabled;
		ev.ip_suppressed = last_ip(f, &ev.variant.disabled.ip);
	}
	return packet_event(f, &ev, 1, offset);
}

/* OVF at offset: libipt's query decoder forgets what it kept between packets (IP
 * compression, the time's calibration; a FUP or MODE.exec waiting is not modelled) and
 * looks ahead for the FUP the overflow binds to, which says tracing is on where it
 * resolved (the overflow's IP); a packet that cannot come before that FUP says tracing was
 * off (pt_qry_decode_ovf in libipt 2.0). Here only PADs and a few TSCs, TMAs, MTCs and
 * CYCs may come between: the overflow has the time at the OVF, the FUP the time after
 * them. The errata libipt works around there (SKD010, APL12) are not modelled. Returns 0,
 * or 1 if not modelled. */
static int packet_ovf(struct fast *f, uint64_t offset)
{
	struct pt_packet p, timing[8];
	struct pt_event ev;
	uint64_t at, after, timing_at[8];
	int status, ntiming = 0, i;

	if (f->pend_fup || f->pend_mode || jf_fast_pkt_offset(f, &after) < 0)
		return 1;
	f->have_ip = f->ip_suppressed = 0;
	f->last_ip = 0;
	jf_pt_time_overflow(&f->time);
	clear_event(&ev);
	ev.type = ptev_overflow;
	if (!stamp_event(f, &ev))
		return 1;
	for (;;) {
		if (jf_fast_pkt_offset(f, &at) < 0)
			return 1;
		status = pt_pkt_next(f->pkt, &p, sizeof(p));
		if (status < 0 || (p.type != ppt_pad && p.type != ppt_tsc && p.type != ppt_tma &&
				   p.type != ppt_mtc && p.type != ppt_cyc))
			break;
		if (p.type != ppt_pad) {
			if (ntiming == (int)(sizeof(timing) / sizeof(timing[0])))
				return 1;
			timing_at[ntiming] = at;
			timing[ntiming++] = p;
		}
	}
	if (status >= 0 && p.type == ppt_fup) {
		if (f->apl12 || update_last_ip(f, &p.payload.ip) ||
		    last_ip(f, &ev.variant.overflow.ip))
			return 1;
		for (i = 0; i < ntiming; i++) {
			if (packet_timing(f, &timing[i], timing_at[i], 0))
				return 1;
		}
		return packet_event(f, &ev, 1, offset);
	}
	if (f->skd010)
		return 1;
	if (status < 0) {
		/* An overflow at the very end of the trace stands alone. */
		if (status != -pte_eos || at != f->cfg.size)
			return 1;
	} else {
		switch (p.type) {
		case ppt_psb:
		case ppt_tip_pge:
		case ppt_mode:
		case ppt_pip:
		case ppt_vmcs:
		case ppt_stop:
		case ppt_ovf:
		case ppt_exstop:
		case ppt_mwait:
		case ppt_pwre:
		case ppt_pwrx:
		case ppt_ptw:
			break;
		default:
			return 1; /* timing packets, or an error libipt reports */
		}
	}
	/* The packets after the OVF are read next, as the query decoder reads on from it. */
	if (jf_fast_pkt_seek(f, after) < 0)
		return 1;
	ev.ip_suppressed = 1;
	f->ovf_off = 1;
	return packet_event(f, &ev, 1, offset);
}

/* A CBR outside a PSB+ (ratio, at offset): the core's frequency changed. libipt's query
 * decoder stops before it as before any event packet (its read ahead ends there), and its
 * next event query decodes it (pt_qry_decode_cbr): the ratio applied to the time and its
 * calibration started over (pt_tcal_update_cbr), a standalone cbr event stamped with the
 * time then, the packet consumed. The block decoder returns that event at once, bound to
 * no IP, after the block whose query left it pending, as it returns a PSB+'s CBR update.
 * A HotSpot recording has one every few PSB periods (the JIT threads' frequency changes):
 * handing each over cost more than half of its hand-overs. Not modelled while a FUP or a
 * MODE.exec waits for its TIP (the event would come between them). Returns 0, or 1 if not
 * modelled. */
static int packet_cbr(struct fast *f, uint8_t ratio, uint64_t offset)
{
	struct pt_event ev;

	/* libipt rejects a zero ratio (pt_time_update_cbr): the block decoder's to report. */
	if (!ratio || f->pend_fup || f->pend_mode)
		return 1;
	jf_pt_time_cbr(&f->time, &f->time_cfg, ratio, 0);
	f->time_dirty = 1;
	clear_event(&ev);
	ev.type = ptev_cbr;
	ev.variant.cbr.ratio = ratio;
	return packet_event(f, &ev, 1, offset);
}

/* A FUP's IP compression that gives an IP after a PSB (which resets the last IP). */
static int whole_ip(enum pt_ip_compression ipc)
{
	return ipc == pt_ipc_update_16 || ipc == pt_ipc_update_32 || ipc == pt_ipc_update_48 ||
	       ipc == pt_ipc_sext_48 || ipc == pt_ipc_full;
}

/* From just after a PSBEND: whether libipt's query decoder reads ahead without an error
 * through what follows (PADs, PSB+s as this path follows them, a MODE.exec) to the next
 * packet it stops at (a TNT, TIP, TIP.PGE, TIP.PGD, OVF) or the end of the trace. */
static int read_ahead(struct fast *f);

/* The packet decoder is left anywhere: the callers set it back. */
static int reads_ahead_cleanly(struct fast *f)
{
	struct read_ahead_memo *m = &f->read_ahead;
	uint64_t from;

	if (jf_fast_pkt_offset(f, &from) < 0)
		return 0;
	/* A read from an earlier offset passed here in the state a read starts in: not in a
	 * PSB+, no MODE counted. Packets decode the same from an offset however it was
	 * reached, so this read finds what that one found. */
	while (m->next < m->n && m->marks[m->next] < from)
		m->next++;
	if (m->next < m->n && m->marks[m->next] == from)
		return m->clean;
	m->n = m->next = 0;
	m->clean = read_ahead(f);
	return m->clean;
}

/* reads_ahead_cleanly's read, marking the offsets after the PSBENDs it reads. */
static int read_ahead(struct fast *f)
{
	struct read_ahead_memo *m = &f->read_ahead;
	struct pt_packet p;
	uint64_t at = 0;
	int in_psb = 0, updates = 0, modes = 0;

	for (;;) {
		if (next_but_pads(f, &p, &at) < 0)
			return !in_psb && at == f->cfg.size;
		if (in_psb) {
			switch (p.type) {
			case ppt_psbend:
				in_psb = 0;
				if (!modes && m->n < READ_AHEAD_MARKS)
					m->marks[m->n++] = at + p.size;
				continue;
			case ppt_fup:
				if (!whole_ip(p.payload.ip.ipc))
					return 0;
				continue;
			case ppt_cbr:
				if (!p.payload.cbr.ratio)
					return 0;
				break;
			case ppt_mode:
			case ppt_pip:
			case ppt_vmcs:
				break;
			default:
				return 0;
			}
			/* libipt queues a few events per PSB+ (pt_event_queue.h): stay below. */
			if (++updates > 7)
				return 0;
			continue;
		}
		switch (p.type) {
		case ppt_psb:
			in_psb = 1;
			updates = 0;
			continue;
		case ppt_mode:
			if (p.payload.mode.leaf != pt_mol_exec || ++modes > 1)
				return 0;
			continue;
		case ppt_tnt_8:
		case ppt_tnt_64:
		case ppt_tip:
		case ppt_tip_pge:
		case ppt_tip_pgd:
		case ppt_ovf:
			return 1;
		default:
			return 0;
		}
	}
}

/* Whether libipt's query decoder, reading ahead past a PSBEND, reads on past a packet of
 * this type as past a PAD: timing packets, and a stray PSBEND (with no PSB+ update left to
 * return, pt_qry_decode_psbend skips it; fuzz_pt_decode). One bit test: this runs at every
 * PSB+. */
static inline int read_on_past(enum pt_packet_type type)
{
	enum {
		PAST = 1u << ppt_tsc | 1u << ppt_tma | 1u << ppt_mtc | 1u << ppt_cyc | 1u << ppt_psbend
	};

	/* Every type is below 32 (ppt_ptw is the last): & 63 keeps the shift defined at no
	 * cost (x86 masks the count so). */
	return (int)((uint64_t)PAST >> ((unsigned)type & 63) & 1);
}

/* Whether another PSB follows the PSBEND just read (PADs between; timing packets between
 * are not modelled), and the PSB+ just read has status updates: libipt's query decoder
 * returns its last update only once it has read on past the PSBEND, and with a PSB right
 * after it, through that PSB+ to the next packet it stops at, and the block decoder
 * fetches the next update before it returns this one; a read that fails there and the
 * update is never returned (fuzz_pt_decode: a bad packet after two PSB+s, also with a
 * CYC between them). So this path goes on through such PSB+s only when the read ahead
 * succeeds (chained is then set: the next PSB+'s updates are fetched with this one's);
 * else (1) the caller hands over. */
static int psb_follows(struct fast *f)
{
	struct pt_packet p;
	uint64_t after, at;
	int psb = 0, clean = 1, between = 0;

	if (jf_fast_pkt_offset(f, &after) < 0)
		return 1;
	while (next_but_pads(f, &p, &at) >= 0) {
		/* A PSB after timing packets or a stray PSBEND: a read that can fail there, a
		 * chain read_ahead does not follow, not modelled (fuzz_pt_decode: a stray
		 * PSBEND, a PSB+, a bad packet). */
		if (read_on_past(p.type)) {
			between = 1;
			continue;
		}
		psb = p.type == ppt_psb;
		break;
	}
	if (psb && between)
		return 1;
	if (psb) {
		if (jf_fast_pkt_seek(f, after) < 0)
			return 1;
		clean = reads_ahead_cleanly(f);
		f->chained = clean;
	}
	return jf_fast_pkt_seek(f, after) < 0 || !clean;
}

/* A PSB+ without status updates (psb, its PSBEND at off), as while tracing is off: the
 * query decoder reads on past the PSBEND to the next stop, where the records that wait for
 * an offset take theirs. If none waits, the stretch before it is committed here; else it
 * goes on through this PSB to the next (a hand-over then costs one PSB period more). With
 * a FUP (tracing on) it is not modelled. */
static int packet_quiet_psb(struct fast *f, uint64_t psb, uint64_t off, int fup)
{
	if (fup)
		return 1;
	if (psb == 0) {
		/* The first PSB: decoding starts here, tracing off. */
		f->enabled = 0;
		f->ip = 0;
		return 0;
	}
	f->emit_offset = off;
	if (jf_fast_reach_psb_fup(f, 0, 0))
		return 1;
	/* A block waiting for the time of the event read next stays too (jf_fast_retime). */
	if (!records_await(f) && !f->retime)
		jf_fast_commit(f, psb);
	return 0;
}

/* A PSB+'s status update, bound to its FUP's IP (fup: whether there is one). */
static void bind_update(struct pt_event *ev, int fup, uint64_t fup_ip)
{
	ev->status_update = 1;
	ev->ip_suppressed = ev->type != ptev_cbr && !fup;
	if (ev->type == ptev_exec_mode)
		ev->variant.exec_mode.ip = fup_ip;
	else if (ev->type == ptev_async_paging)
		ev->variant.async_paging.ip = fup_ip;
	else if (ev->type == ptev_async_vmcs)
		ev->variant.async_vmcs.ip = fup_ip;
	else if (ev->type == ptev_tsx)
		ev->variant.tsx.ip = fup_ip;
}

/* Whether the query decoder's read past the PSBEND just read fails where this path sees
 * it: a packet libipt's packet decoder cannot read after the packets it reads on past
 * (read_on_past; fuzz_pt_decode: a walk to the FUP, then a stray PSBEND and a bad packet),
 * or a packet cut by the trace's end. The packet decoder is left where it is. */
static int read_past_psbend_fails(struct fast *f)
{
	struct pt_packet p;
	uint64_t at, from = 0;
	int status;

	if (jf_fast_pkt_offset(f, &at) < 0)
		return 1;
	do {
		status = next_but_pads(f, &p, &from);
	} while (status >= 0 && read_on_past(p.type));
	if (jf_fast_pkt_seek(f, at) < 0)
		return 1;
	return status < 0 && (status != -pte_eos || from != f->cfg.size);
}

/* A PSB+ (its n status updates evs, its PSBEND at off) with a FUP while tracing is off,
 * which libipt 2.1 rejects ("bad status update", at the PSBEND, with the FUP's payload as
 * IP). The block decoder finds it once the query decoder has read past the PSBEND, which
 * it does as it hands out the last update; libipt's block decoder fetches one event ahead
 * of the one it returns, so the updates but the last two are returned first and the
 * last but one is replaced by the error (../shared's Unzip: three of five). Modelled
 * where tracing is known to be off (not after an overflow, which libipt 2.1 takes for
 * unknown), not right after another PSB+ with updates (chained: the updates of both are
 * fetched in one run), and where libipt's IP is the FUP's (tracing stopped there
 * asynchronously): elsewhere libipt 2.0 walks to the FUP's IP without trace and may fail
 * first. Nor where that read past the PSBEND fails: its error is the one reported
 * (fuzz_pt_decode: PADs, then an unknown packet). Returns 0, or 1 if not modelled. */
static int bad_status_update(struct fast *f, const struct pt_event *evs, int n, uint64_t off,
			     int ovf_off, int chained, uint64_t fup_ip, uint64_t fup_payload)
{
	int i;

	if (ovf_off || chained || !f->off_at_ip || f->ip != fup_ip || f->timed ||
	    !read_ahead_ok(f))
		return 1;
	for (i = 0; i + 2 < n; i++) {
		struct jf_flow *fl = jf_fast_queue_flow(f, JF_FLOW_OTHER, off);

		if (!fl)
			return 1;
		jf_pt_event_flow(&evs[i], &f->cfg.conv, fl);
	}
	return jf_fast_resync_after_violation(f, off, -pte_bad_status_update, fup_payload);
}

/* A PSB+: its status updates, bound to its FUP's IP. The stretch before it decoded here
 * (apart from the walk to that IP): it is committed. */
static int packet_psb(struct fast *f, uint64_t psb)
{
	struct pt_event evs[MAX_PSB_EVENTS];
	struct pt_packet p;
	uint64_t off = psb, fup_ip = 0, fup_payload = 0;
	int n = 0, fup = 0, i, lead = 0, walks, ovf_off = f->ovf_off, chained = f->chained;

	if (f->pend_fup || f->pend_mode)
		return 1;
	f->have_ip = f->ip_suppressed = 0; /* a PSB resets IP compression */
	f->last_ip = 0;
	jf_pt_time_psb(&f->time, &f->time_cfg);
	for (;;) {
		if (next_but_pads(f, &p, &off) < 0)
			return 1;
		if (p.type == ppt_psbend)
			break;
		if (p.type == ppt_fup) {
			if (fup)
				return 1;
			/* Erratum BDM70, where the query decoder takes tracing for off as this
			 * path does: where libipt ignores the FUP (or fails looking ahead), the
			 * status checks (pt_status_check.h), which take the FUP for tracing on
			 * as libipt 2.1's ptxed does without errata, find what the block decoder
			 * then reports: not modelled. */
			if (f->bdm70 && !f->enabled && jf_fast_bdm70_ignores_fup(f, off + p.size))
				return 1;
			if (update_last_ip(f, &p.payload.ip) || last_ip(f, &fup_ip))
				return 1;
			fup_payload = p.payload.ip.ip;
			fup = 1;
			continue;
		}
		if (p.type == ppt_tsc || p.type == ppt_tma || p.type == ppt_mtc ||
		    p.type == ppt_cyc) {
			if (packet_timing(f, &p, off, 1))
				return 1;
			continue;
		}
		if (n == MAX_PSB_EVENTS)
			return 1;
		clear_event(&evs[n]);
		switch (p.type) {
		case ppt_mode:
			if (p.payload.mode.leaf == pt_mol_tsx) {
				evs[n].type = ptev_tsx;
				evs[n].variant.tsx.speculative = p.payload.mode.bits.tsx.intx;
				evs[n].variant.tsx.aborted = p.payload.mode.bits.tsx.abrt;
				break;
			}
			evs[n].type = ptev_exec_mode;
			evs[n].variant.exec_mode.mode = pt_get_exec_mode(&p.payload.mode.bits.exec);
			break;
		case ppt_pip:
			evs[n].type = ptev_async_paging;
			evs[n].variant.async_paging.cr3 = p.payload.pip.cr3;
			evs[n].variant.async_paging.non_root = p.payload.pip.nr;
			break;
		case ppt_vmcs:
			evs[n].type = ptev_async_vmcs;
			evs[n].variant.async_vmcs.base = p.payload.vmcs.base;
			break;
		case ppt_cbr:
			/* libipt rejects a zero ratio (pt_time_update_cbr): the block
			 * decoder's to report. With a nominal frequency, the CBR calibrates
			 * (pt_tcal_header_cbr), as jf_pt_time_cbr does. */
			if (!p.payload.cbr.ratio)
				return 1;
			jf_pt_time_cbr(&f->time, &f->time_cfg, p.payload.cbr.ratio, 1);
			f->time_dirty = 1;
			evs[n].type = ptev_cbr;
			evs[n].variant.cbr.ratio = p.payload.cbr.ratio;
			break;
		default:
			return 1; /* timing, maintenance... */
		}
		n++;
	}
	/* libipt's query decoder reads past the PSBEND where a record still waits for the next
	 * stop's offset (an event it returns once it has read ahead to that stop), and where
	 * its block decoder walks to the FUP's IP (it fetches the last update there). Where
	 * that read fails, libipt returns the error first: in place of the waiting record,
	 * before the walk with one update (fuzz_pt_decode). Not modelled. */
	walks = psb != 0 && fup && f->enabled && f->ip != fup_ip;
	if ((walks || records_await(f)) && read_past_psbend_fails(f))
		return 1;
	for (i = 0; i < n; i++)
		bind_update(&evs[i], fup, fup_ip);
	f->ovf_off = 0;
	f->chained = 0;
	/* No update waits to be returned: what follows the PSBEND does not matter. */
	if (!n)
		return packet_quiet_psb(f, psb, off, fup);
	if (psb_follows(f))
		return 1;
	/* The updates are read at the PSBEND, with the PSB+'s time. */
	jf_fast_read_time(f);
	jf_fast_retime(f);
	jf_fast_block_time_after_event(f);
	settle(f, off);
	if (fup && !f->enabled && psb != f->restart)
		return bad_status_update(f, evs, n, off, ovf_off, chained, fup_ip, fup_payload);
	if (psb == 0) {
		/* The first PSB: decoding starts here, as a sync does. */
		f->enabled = fup;
		f->ip = fup_ip;
	} else {
		/* libipt's block decoder returns the updates bound to no IP that come first (a
		 * CBR) at once, and fetches the first update bound to the FUP's IP before it
		 * walks there. */
		for (lead = 0; walks && f->emit && evs[lead].type == ptev_cbr; lead++) {
			if (lead == n - 1)
				return 1; /* no update bound to the IP: not modelled */
			if (packet_event(f, &evs[lead], 0, off))
				return 1;
		}
		f->emit_offset = off;
		if (jf_fast_reach_psb_fup(f, fup, fup_ip))
			return 1;
		/* The blocks of the walk take the offset after that fetch: the PSBEND's while
		 * more updates are bound to it, else the next stop's, where the only update
		 * is returned. Such blocks wait for that offset with the update, the stretch
		 * going on through this PSB. */
		if (n - lead > 1 || !records_await(f))
			jf_fast_commit(f, psb);
	}
	for (i = lead; i < n; i++) {
		/* All but the last are returned before the query decoder leaves the PSBEND. */
		if (packet_event(f, &evs[i], i == n - 1, off))
			return 1;
	}
	return 0;
}

/* A CYC or MTC at off, read as libipt's pt_pkt_read_cyc and pt_pkt_read_mtc read them
 * (the most frequent packets of a trace with cycle-accurate timing), into p: its size, or
 * 0 for another packet or one libipt's packet decoder is to read (it fails). Inline, as
 * mode_exec_packet and ip_packet below, in the counting loop that reads one per packet
 * (all three have another caller: jf_fast_skip_simple_packets). */
static inline __attribute__((always_inline)) unsigned short_timing(const struct fast *f,
								    uint64_t off,
								    struct pt_packet *p)
{
	const uint8_t *t = f->cfg.trace;
	uint64_t value, at = off;
	unsigned byte = t[at++], shl = 5, ext = byte & 0x04;

	if (byte == 0x59) {
		if (at >= f->cfg.size)
			return 0;
		p->type = ppt_mtc;
		p->payload.mtc.ctc = t[at];
		return p->size = 2;
	}
	if ((byte & 0x03) != 0x03)
		return 0;
	value = byte >> 3;
	while (ext) {
		if (at >= f->cfg.size || shl + 7 > 64)
			return 0;
		ext = t[at] & 0x01;
		value |= (uint64_t)(t[at++] >> 1) << shl;
		shl += 7;
	}
	p->type = ppt_cyc;
	p->payload.cyc.value = value;
	return p->size = (uint8_t)(at - off);
}

/* A MODE.exec at off (an IP-filtered trace has one before each TIP.PGE), read as libipt's
 * pt_pkt_read_mode reads it, into p: its size, or 0 for another packet (or leaf). */
static inline __attribute__((always_inline)) unsigned mode_exec_packet(const struct fast *f,
									uint64_t off,
									struct pt_packet *p)
{
	const uint8_t *t = f->cfg.trace;
	unsigned payload;

	if (off + 2 > f->cfg.size || t[off] != 0x99)
		return 0;
	payload = t[off + 1];
	if (payload & 0xe0)
		return 0; /* not the exec leaf */
	memset(&p->payload.mode, 0, sizeof(p->payload.mode));
	p->type = ppt_mode;
	p->payload.mode.leaf = pt_mol_exec;
	p->payload.mode.bits.exec.csl = payload & 0x01;
	p->payload.mode.bits.exec.csd = (payload & 0x02) >> 1;
	return p->size = 2;
}

/* A TIP, TIP.PGE, TIP.PGD or FUP at off (an IP-filtered trace has a TIP.PGE and a
 * TIP.PGD per call out of the range), read as libipt's pt_pkt_read_ip reads it, or a
 * MODE.exec, into p: its size, or 0 for another packet or one libipt's packet decoder is
 * to read (a reserved IP compression, a packet cut by the trace's end: it fails there). */
static inline __attribute__((always_inline)) unsigned ip_packet(const struct fast *f,
								 uint64_t off,
								 struct pt_packet *p)
{
	/* By the opcode's low five bits: the packet's type, 0 (ppt_invalid) for the others. By
	 * its IP compression (the top three): the packet's size (1 + pt_pkt_ip_size; 0:
	 * reserved), and the bits of the eight bytes after the opcode that are its payload.
	 * Tables, not a switch and shifts: these are read for every TIP, TIP.PGE and TIP.PGD. */
	static const uint8_t ip_type[32] = { [0x01] = ppt_tip_pgd, [0x0d] = ppt_tip,
					     [0x11] = ppt_tip_pge, [0x1d] = ppt_fup };
	static const uint8_t ip_size[8] = { 1, 3, 5, 7, 7, 0, 9, 0 };
	static const uint64_t ip_bits[8] = { 0, 0xffffull, 0xffffffffull, 0xffffffffffffull,
					     0xffffffffffffull, 0, ~0ull, 0 };
	const uint8_t *t = f->cfg.trace;
	unsigned byte, type, n, i;
	uint64_t ip = 0;

	if (off >= f->cfg.size)
		return 0;
	byte = t[off];
	type = ip_type[byte & 0x1f];
	if (!type)
		return mode_exec_packet(f, off, p);
	p->type = (enum pt_packet_type)type;
	n = ip_size[byte >> 5];
	if (!n || off + n > f->cfg.size)
		return 0;
	if (off + 9 <= f->cfg.size) {
		/* One load of the 8 bytes after the opcode, the payload's kept (little-endian, as
		 * the packet stores it). */
		memcpy(&ip, t + off + 1, sizeof(ip));
		ip = le64toh(ip) & ip_bits[byte >> 5];
	} else {
		for (i = 1; i < n; i++)
			ip |= (uint64_t)t[off + i] << (8 * (i - 1));
	}
	p->payload.ip.ipc = (enum pt_ip_compression)(byte >> 5);
	p->payload.ip.ip = ip;
	return p->size = (uint8_t)n;
}

/* Whether the eight bytes of w are each a PAD or a TNT-8 (even, and not 0x02). */
static inline int pads_or_tnt8s(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, x = w ^ 0x0202020202020202ull;

	/* x has a zero byte where w has 0x02 (the usual test for a zero byte). */
	return !(w & ones) && !((x - ones) & ~x & 0x8080808080808080ull);
}

uint64_t jf_fast_skip_simple_packets(const struct fast *f, uint64_t off)
{
	const uint8_t *t = f->cfg.trace;
	struct pt_packet p;
	unsigned byte, size;
	uint64_t w;

	for (; off < f->cfg.size; off += size) {
		if (off + sizeof(w) <= f->cfg.size) {
			memcpy(&w, t + off, sizeof(w));
			if (pads_or_tnt8s(w)) {
				size = sizeof(w);
				continue;
			}
		}
		byte = t[off];
		/* PADs and TNT-8s (even bytes but 0x02, which starts the extended opcodes):
		 * most of the bytes between an error and the next PSB, one byte each. */
		if (!(byte & 1)) {
			if (byte == 0x02)
				break;
			size = 1;
			continue;
		}
		size = (byte & 0x03) == 0x03 || byte == 0x59 ? short_timing(f, off, &p)
							     : ip_packet(f, off, &p);
		if (!size)
			break;
	}
	return off;
}

/* Where tnt8_run stopped: at the last TNT-8 it read, with count_tnt_bits's status there
 * (0 if it counted them all). Returned by value: the packet loop's offset stays in a
 * register (its address taken, every call in the loop stored and loaded it). */
struct tnt8_run_end {
	uint64_t off;
	int status;
};

/* The most TNT-8s a run joins into one payload (tnt8_run): up to 6 bits each, 42 in all (a
 * payload path takes up to 47). The path of their bits joined is the one the packets'
 * paths make one after the other (nothing between them changes what it depends on), so
 * where the cache holds it, one lookup counts them all: the lookup, a hash and a compare
 * of five fields, was most of a TNT-8's instructions (errors capture: 44% of `stat`). */
enum { TNT8_GROUP = 7 };

/* The TNT-8s from at on that tnt8_run takes (at most TNT8_GROUP: each a TNT-8 that no
 * packet libipt cannot read may follow, pt_fast_bad_packet.h): how many, their bits
 * joined (the first packet's first) into *bits, *nbits. */
static inline unsigned tnt8_group(const uint8_t *t, uint64_t size, uint64_t at, int have_tsc,
				  uint64_t *bits, unsigned *nbits)
{
	const unsigned most = size - at < TNT8_GROUP ? (unsigned)(size - at) : TNT8_GROUP;
	uint64_t b = 0;
	unsigned i, n = 0, k;

	for (i = 0; i < most; i++) {
		unsigned byte = t[at + i], v;

		if (!tnt8(byte) || jf_fast_bad_packet_may_follow(t, size, at + i + 1, have_tsc))
			break;
		v = tnt8_bits(byte, &k);
		b = b << k | v;
		n += k;
	}
	*bits = b;
	*nbits = n;
	return i;
}

/* The TNT-8s right after the one at off that packet_tnt counted, where it counted them in
 * one go without a time to note (it is not asked otherwise): nothing between could change
 * that, nor is a record queued since (none to settle), so they are counted at once,
 * without packet_tnt's tests of the state and the time (a fifth of the instructions of a
 * TNT-8, the most frequent packet), a group of them per payload where the paths of its
 * bits can start (else that packet as packet_tnt counts it). One that a bad packet may
 * follow is left to the caller. Not inline: the packet loop's other packets paid for its
 * registers. */
static __attribute__((noinline)) struct tnt8_run_end tnt8_run(struct fast *f, uint64_t off)
{
	const uint8_t *t = f->cfg.trace;
	const uint64_t size = f->cfg.size;
	const int have_tsc = f->time.have_tsc;
	struct tnt8_run_end end = { off, 0 };
	uint64_t bits;
	unsigned n, nbits;

	if (f->emit || !no_time_yet(f))
		return end;
	while ((n = tnt8_group(t, size, end.off + 1, have_tsc, &bits, &nbits)) != 0) {
		unsigned left = nbits, k, j;

		/* The group's bits, path after path, as count_tnt_bits takes a packet's. */
		for (;;) {
			const struct jf_payload_path *p = jf_payload_path_at(
				f->payloads, f->isa, f->ip, f->generation, bits, left);

			if (!p->used)
				break;
			take_path(f, p);
			left -= p->used;
			if (!left)
				break;
			bits &= (1ull << left) - 1;
		}
		if (!left) {
			f->report.tnt_packets += n;
			end.off += n;
			continue;
		}
		/* Where no path starts (a return to an older call, a block that needs more
		 * than a bit), the packet of the next bit goes on as packet_tnt takes one: its
		 * bits left, at its offset (an error's). */
		nbits -= left; /* the bits done */
		for (j = 1; tnt8_bits(t[end.off + j], &k), nbits >= k; j++)
			nbits -= k;
		f->report.tnt_packets += j;
		end.off += j;
		end.status = count_tnt_bits(f, bits >> (left - (k - nbits)), k - nbits, end.off);
		if (end.status)
			break;
	}
	return end;
}

/* PADs and TNT-8s, the most frequent packets, read here (one byte each, as libipt's
 * pt_df_fetch and pt_pkt_read_tnt_8 read them), and CYCs and MTCs when counting: from
 * *at to the first other packet. Returns 0, 1 if not modelled, or -1 where a bad packet
 * after a TNT-8 ended the stretch (pt_fast_bad_packet.h). The offset is a local: through
 * *at, every byte stored it to memory, since the calls in the loop might read it. */
static inline __attribute__((always_inline)) int next_short_packets(struct fast *f,
								     uint64_t *at)
{
	const uint8_t *t = f->cfg.trace;
	const uint64_t size = f->cfg.size;
	uint64_t off = *at;
	int status = 0;

	for (; off < size; ++off) {
		unsigned byte = t[off], nbits, v;

		if (byte == 0x00) {
			/* PADs: a run at once (most come two or three after a packet). */
			off = past_pads(t, off, size) - 1;
			continue;
		}
		if (byte & 1) {
			struct pt_packet p;
			unsigned n;

			/* Odd bytes start other packets: CYC and MTC read here when counting (the
			 * others told apart first: IP packets, most of them, are read by the
			 * caller). */
			if ((byte & 0x03) != 0x03 && byte != 0x59)
				break;
			if (!(n = short_timing(f, off, &p)))
				break;
			f->fresh = 0;
			if (packet_timing(f, &p, off, 0)) {
				status = 1;
				break;
			}
			off += n - 1;
			continue;
		}
		if (byte == 0x02)
			break; /* 0x02 starts the extended opcodes */
		v = tnt8_bits(byte, &nbits);
		f->fresh = 0;
		settle(f, off);
		if (jf_fast_bad_packet_may_follow(t, size, off + 1, f->time.have_tsc) &&
		    !jf_fast_fail_after(f, off + 1, 0)) {
			status = -1;
			break;
		}
		status = packet_tnt(f, v, nbits, off);
		if (status)
			break;
		/* More TNT-8s right after it: counted at once where they can be. */
		if (__builtin_expect(off + 1 < size && tnt8(t[off + 1]), 0)) {
			struct tnt8_run_end end = tnt8_run(f, off);

			off = end.off;
			if ((status = end.status) != 0)
				break;
		}
	}
	*at = off;
	return status;
}

/* Whether the packet loop reads on (jf_fast_decoding), asked in full only after a commit:
 * in the loop nothing else changes the answer (a hand-over is made outside it; what
 * commits, a resynchronisation or the end, sets the rest before the loop asks). Its five
 * tests after every TIP and every other packet the loop handles were 2.7% of `stat` on
 * the clean capture. */
static inline __attribute__((always_inline)) int goes_on(struct fast *f)
{
	if (__builtin_expect(!f->committed, 1))
		return 1;
	/* Asked again until it reads on (the TIP loop asks, then the loop around it). */
	if (!jf_fast_decoding(f))
		return 0;
	f->committed = 0;
	return 1;
}

/* A TIP at off (p), the query decoder settled there: a bad packet libipt's read ahead
 * fails on right after it (pt_fast_bad_packet.h), else packet_tip. Returns 0, or 1 if not
 * modelled. Inline in the packet loop: the registers a call saved and restored were a
 * sixth of a TIP's instructions. */
static inline __attribute__((always_inline)) int tip_packet(struct fast *f,
							     const struct pt_packet *p,
							     uint64_t off)
{
	/* An IP-suppressed TIP: libipt 2.0's block cache changes what it reports
	 * (pt_status_check.h). */
	if (p->payload.ip.ipc != pt_ipc_suppressed && !f->pend_fup &&
	    jf_fast_bad_packet_may_follow(f->cfg.trace, f->cfg.size, off + p->size,
					  f->time.have_tsc) &&
	    !jf_fast_fail_after(f, off + p->size, 1))
		return 0;
	return packet_tip(f, &p->payload.ip, off);
}

/* The next packet(s). Returns 0, or 1 if not modelled. Inline in jf_fast_next_packet's
 * loop. */
static inline __attribute__((always_inline)) int next_packet(struct fast *f)
{
	struct pt_packet p;
	uint64_t off, from;
	unsigned size;
	int status, fresh;

	/* A changed code map: where it tells where it changes, none of the code this path
	 * decoded changed (pt_fast_blocks.c, may_change), and it goes on with the new one. */
	if (jf_codemap_generation(f->map) != f->generation) {
		if (!jf_codemap_tells_changes(f->map))
			return 1;
		f->generation = jf_codemap_generation(f->map);
	}
	if (f->pkt_ahead)
		off = f->pkt_pos;
	else if (pt_pkt_get_offset(f->pkt, &off) < 0)
		return 1;
	from = off;
	for (;;) {
		status = next_short_packets(f, &off);
		if (status)
			return status > 0;
		size = ip_packet(f, off, &p);
		if (!size || p.type != ppt_tip)
			break;
		/* A TIP (where code dispatches through indirect branches, the most frequent
		 * packet after TNTs and PADs): followed here, and the packets after it read on
		 * where decode() would call again at once, without the generic dispatch
		 * below. */
		f->pkt_pos = off + size;
		f->pkt_ahead = 1;
		f->fresh = 0;
		settle(f, off);
		status = tip_packet(f, &p, off);
		if (status || !goes_on(f))
			return status;
		off += size;
	}
	/* A PSB read here too (a libipt call each before: 1% of `stat` on ../shared's Unzip,
	 * a PSB every 230 bytes), and the packets of a PSB+ where they come outside one
	 * (not modelled: as libipt's packet decoder reads them). */
	if (!size)
		size = psb_plus_packet(f, off, &p);
	if (size) {
		/* Read here: the packet decoder is moved past it only where it is used next
		 * (jf_fast_pkt_offset). */
		f->pkt_pos = off + size;
		f->pkt_ahead = 1;
		status = (int)size;
	} else {
		if ((off != from || f->pkt_ahead) && jf_fast_pkt_seek(f, off) < 0)
			return 1;
		status = pt_pkt_next(f->pkt, &p, sizeof(p));
	}
	/* Whether the block decoder has decoded no block since it synchronised: only the PSB+
	 * it synchronised at, PADs and a MODE.exec (which waits for its TIP.PGE) read. */
	fresh = f->fresh;
	if (status >= 0 && p.type != ppt_pad && (p.type != ppt_psb || off != f->restart) &&
	    (p.type != ppt_mode || p.payload.mode.leaf != pt_mol_exec))
		f->fresh = 0;
	if (status < 0) {
		/* A TIP libipt cannot read: the next query decodes it (pt_fast_bad_packet.h). */
		if (status == -pte_bad_packet && (f->cfg.trace[off] & 0x1f) == 0x0d)
			return jf_fast_fail_at_bad_tip(f, off);
		/* The end of the trace (not in the middle of a packet). */
		if (status != -pte_eos || off != f->cfg.size || f->pend_fup || f->pend_mode)
			return 1;
		settle(f, off);
		return jf_fast_finish(f, off);
	}
	switch (p.type) {
	case ppt_pad:
		return 0;
	case ppt_fup:
		/* Binds to the TIP or TIP.PGD that follows; the query decoder reads past it. */
		if (update_last_ip(f, &p.payload.ip) || f->pend_fup || last_ip(f, &f->fup_ip))
			return 1;
		f->pend_fup = 1;
		take_stamp(f, &f->fup_stamp);
		return 0;
	case ppt_psb:
		return packet_psb(f, off);
	case ppt_tsc:
	case ppt_tma:
	case ppt_mtc:
	case ppt_cyc:
		/* Read ahead past, as PADs are. */
		return packet_timing(f, &p, off, 0);
	default:
		break;
	}
	settle(f, off);
	switch (p.type) {
	case ppt_tnt_8:
	case ppt_tnt_64:
		if (jf_fast_bad_packet_may_follow(f->cfg.trace, f->cfg.size, off + p.size,
						  f->time.have_tsc) &&
		    !jf_fast_fail_after(f, off + p.size, 0))
			return 0;
		return packet_tnt(f, p.payload.tnt.payload & ((1ull << p.payload.tnt.bit_size) - 1),
				  p.payload.tnt.bit_size, off) > 0;
	case ppt_tip:
		return tip_packet(f, &p, off);
	case ppt_tip_pge:
		return packet_pge(f, &p.payload.ip, off, fresh);
	case ppt_tip_pgd:
		return packet_pgd(f, &p.payload.ip, off);
	case ppt_mode:
		/* MODE.exec binds to the next TIP.PGE (or TIP: not modelled). */
		if (p.payload.mode.leaf != pt_mol_exec || f->pend_mode)
			return 1;
		f->pend_mode = 1;
		f->mode = pt_get_exec_mode(&p.payload.mode.bits.exec);
		take_stamp(f, &f->mode_stamp);
		return 0;
	case ppt_ovf:
		return packet_ovf(f, off);
	case ppt_cbr:
		return packet_cbr(f, p.payload.cbr.ratio, off);
	default:
		return 1; /* PTWRITE, power events... */
	}
}

/* Packets until one is not modelled (1) or decoding stops (0: jf_fast_decoding): the
 * caller's loop, here, where its calls (an event's TIP.PGE or TIP.PGD, one per TIP on
 * an IP-filtered trace) cost no prologue and epilogue each. */
int jf_fast_next_packet(struct fast *f)
{
	int status;

	do
		status = next_packet(f);
	while (!status && goes_on(f));
	return status;
}

/* Whether the PSB+ at psb has timing packets (or cannot be read): the loss record of a
 * resynchronisation there would carry their time, which is not modelled. */
int jf_fast_psb_has_timing(struct fast *f, uint64_t psb)
{
	const uint8_t *t = f->cfg.trace;
	struct pt_packet p;
	uint64_t off = psb;
	unsigned size;

	/* The PSB+'s packets that psb_plus_packet reads (none of them timing packets) are
	 * read here, libipt's packet decoder only from the first other one: a capture with
	 * an error every PSB period asks this at each. */
	for (;;) {
		off = past_pads(t, off, f->cfg.size);
		if (!(size = psb_plus_packet(f, off, &p)))
			break;
		if (p.type == ppt_psbend)
			return 0;
		off += size;
	}
	if (pt_pkt_sync_set(f->psbs, off) < 0)
		return 1;
	while (pt_pkt_next(f->psbs, &p, sizeof(p)) >= 0) {
		switch (p.type) {
		case ppt_psbend:
			return 0;
		case ppt_tsc:
		case ppt_tma:
		case ppt_mtc:
		case ppt_cyc:
			return 1;
		default:
			break;
		}
	}
	return 1;
}
