/* The fast Intel PT path where libipt's block decoder fails on a trace it cannot follow (a
 * packet it cannot read after a TNT or a TIP, packets a query does not expect, no code:
 * pt_fast_bad_packet.h): the block decoder's error, reported here. */
#include "pt_fast_bad_packet.h"
#include "pt_fast_internal.h"

#include <intel-pt.h>
#include <pthread.h>
#include <string.h>

#include "jitflow/insn.h"

uint8_t jf_fast_maybe_bad_first[256];
/* Second bytes of the extended opcodes libipt's packet decoder rejects. */
static uint8_t maybe_bad_ext[256];
static pthread_once_t maybe_bad_once = PTHREAD_ONCE_INIT;

/* Whether the packet at offset at of trace (the packet decoder's buffer) is one libipt's
 * query decoder fails on as it reads ahead: an unknown opcode, or a FUP it cannot read (a
 * reserved IP compression), which it decodes there; the other packets libipt cannot read
 * (a TIP's, an event's) it decodes only when a query or an event wants them. */
static int bad_in_read_ahead(struct pt_packet_decoder *pkt, const uint8_t *trace, uint64_t at,
			     struct pt_packet *p, int *code)
{
	*code = pt_pkt_sync_set(pkt, at);
	if (*code < 0)
		return 0;
	*code = pt_pkt_next(pkt, p, sizeof(*p));
	return *code == -pte_bad_opc ||
	       (*code == -pte_bad_packet && (trace[at] & 0x1f) == 0x1d); /* FUP */
}

/* Ask libipt's packet decoder which first bytes, and which second bytes of an extended
 * opcode, it rejects as an unknown opcode, or as a FUP it cannot read (followed by zeros:
 * no opcode libipt knows is cut short by them). */
static void fill_maybe_bad(void)
{
	uint8_t buf[32];
	struct pt_config config;
	struct pt_packet_decoder *pkt;
	unsigned b;

	jf_fast_maybe_bad_first[0x00] = JF_FAST_MAYBE_PAD;
	jf_fast_maybe_bad_first[0x02] = JF_FAST_MAYBE_EXT;
	memset(&config, 0, sizeof(config));
	config.size = sizeof(config);
	config.begin = buf;
	config.end = buf + sizeof(buf);
	pkt = pt_pkt_alloc_decoder(&config);
	for (b = 1; b < 256; b++) {
		struct pt_packet p;
		int code;

		if (b == 0x02)
			continue; /* the extended opcodes: above */
		memset(buf, 0, sizeof(buf));
		buf[0] = (uint8_t)b;
		/* Without a decoder, every byte is looked at closer. */
		if (!pkt || bad_in_read_ahead(pkt, buf, 0, &p, &code))
			jf_fast_maybe_bad_first[b] = JF_FAST_MAYBE_BAD;
		else if (code >= 0 && (p.type == ppt_cyc || p.type == ppt_mtc))
			jf_fast_maybe_bad_first[b] = JF_FAST_MAYBE_TIMING;
	}
	for (b = 0; b < 256; b++) {
		struct pt_packet p;

		memset(buf, 0, sizeof(buf));
		buf[0] = 0x02;
		buf[1] = (uint8_t)b;
		maybe_bad_ext[b] = !pkt || pt_pkt_sync_set(pkt, 0) < 0 ||
			pt_pkt_next(pkt, &p, sizeof(p)) == -pte_bad_opc;
	}
	if (pkt)
		pt_pkt_free_decoder(pkt);
}

int jf_fast_bad_packet_may_be_at(const uint8_t *trace, uint64_t size, uint64_t at,
				 int have_tsc)
{
	unsigned v;

	while (at < size && trace[at] == 0x00)
		at++; /* PADs */
	if (at >= size)
		return 0;
	v = jf_fast_maybe_bad_first[trace[at]];
	if (v == JF_FAST_MAYBE_EXT)
		return at + 1 < size && maybe_bad_ext[trace[at + 1]];
	return v == JF_FAST_MAYBE_BAD || (v == JF_FAST_MAYBE_TIMING && !have_tsc);
}

void jf_fast_bad_packet_init(void)
{
	pthread_once(&maybe_bad_once, fill_maybe_bad);
}

/* The block decoder from f->ip to the first instruction that needs trace, as it walks
 * before the query that fails: that instruction's IP in *last, the instructions and
 * blocks walked added to *insns and *blocks. Returns 0, or 1 where it stops otherwise (no
 * code, an instruction not modelled, a far branch, endless direct jumps) or, after a TIP,
 * at a conditional branch (the query there fails otherwise: "trace stream does not match
 * query"). */
static int walk_to_query(struct fast *f, int tip, uint64_t *insns, uint64_t *blocks,
			 uint64_t *last)
{
	uint64_t ip = f->ip;
	int n;

	for (n = 0; n < MAX_TIP_WALK; n++) {
		const struct jf_fast_block *b =
			jf_fast_block_at(f->blocks, f->isa, ip, f->generation);

		switch ((enum jf_fast_end)b->end) {
		case JF_FAST_CALL:
		case JF_FAST_JUMP:
			ip = b->target;
			break;
		case JF_FAST_CONTINUE:
			ip = b->next;
			break;
		case JF_FAST_COND:
			if (tip)
				return 1;
			/* fall through */
		case JF_FAST_RETURN:
		case JF_FAST_INDIRECT:
		case JF_FAST_CALL_IND:
			*insns += b->ninsn;
			++*blocks;
			*last = b->last;
			return 0;
		default:
			return 1;
		}
		*insns += b->ninsn;
		++*blocks;
	}
	return 1;
}

/* The query decoder reading ahead from *at: past PADs, and past CYCs and MTCs while no
 * TSC gave a time (applied to *time, a copy: they give no record a time then), to the
 * first other packet or one libipt cannot read (*at). Returns 0, or 1 where a timing
 * packet is not modelled (SKD007's two-byte CYC, an update libipt rejects). */
static int past_timing(struct fast *f, uint64_t *at, struct jf_pt_time *time)
{
	const uint8_t *t = f->cfg.trace;
	struct pt_packet p;

	for (;;) {
		while (*at < f->cfg.size && t[*at] == 0x00)
			(*at)++;
		if (*at >= f->cfg.size || time->have_tsc ||
		    jf_fast_maybe_bad_first[t[*at]] != JF_FAST_MAYBE_TIMING ||
		    pt_pkt_sync_set(f->psbs, *at) < 0 || pt_pkt_next(f->psbs, &p, sizeof(p)) < 0)
			return 0;
		if (p.type == ppt_cyc) {
			/* SKD007: a two-byte CYC may be an OVF's start (packet_timing). */
			if ((f->skd007 && p.size == 2) ||
			    jf_pt_time_cyc(time, &f->time_cfg, p.payload.cyc.value) < 0)
				return 1;
		} else if (p.type == ppt_mtc) {
			if (jf_pt_time_mtc(time, &f->time_cfg, p.payload.mtc.ctc) < 0)
				return 1;
		} else {
			return 0;
		}
		*at += p.size;
	}
}

int jf_fast_fail_at_query(struct fast *f, uint64_t at, int code, uint64_t ip)
{
	if (f->emit || !f->by_packets || (f->timed && f->time.have_tsc))
		return 1;
	return jf_fast_resync_after_violation(f, at, code, ip);
}

int jf_fast_fail_after(struct fast *f, uint64_t next, int tip)
{
	const uint8_t *t = f->cfg.trace;
	uint64_t at = next, insns = 0, blocks = 0, ip = 0;
	uint64_t keep_insns = f->insns_n, keep_blocks = f->blocks_n;
	size_t keep_pending = f->pending.n;
	struct jf_pt_time time = f->time;
	struct pt_packet p;
	int code;

	/* Counting only, without a time (the error's and the loss's times are not modelled:
	 * pt_fast_resync.c), with tracing on and nothing waiting for the TIP (a FUP's or
	 * MODE.exec's event). */
	if (f->emit || !f->by_packets || (f->timed && f->time.have_tsc) || !f->enabled ||
	    f->pend_fup || f->pend_mode || f->isa == JF_ISA_UNKNOWN)
		return 1;
	/* The query decoder reads past PADs, CYCs and MTCs to the packet it fails at; those
	 * may fail first (a copy of the time tells). */
	if (past_timing(f, &at, &time) || !jf_fast_bad_packet_may_be_at(t, f->cfg.size, at, 0) ||
	    !bad_in_read_ahead(f->psbs, t, at, &p, &code))
		return 1;
	if (walk_to_query(f, tip, &insns, &blocks, &ip))
		return 1;
	/* Without a TSC, the timing packets read ahead give no record a time. */
	if (time.have_tsc)
		return 1;
	f->insns_n += insns;
	f->blocks_n += blocks;
	if (jf_fast_resync_after_violation(f, at, code, ip) == 0)
		return 0;
	/* Not modelled after all (no PSB where the block decoder synchronises): the TNT or
	 * TIP is read as usual, and the bad packet then hands over. */
	f->insns_n = keep_insns;
	f->blocks_n = keep_blocks;
	f->pending.n = keep_pending;
	return 1;
}

/* Where libipt's query decoder stops reading ahead after the packet that ends at next: past
 * PADs (and CYCs and MTCs while no TSC gave a time) and one FUP with a full or
 * sign-extended IP (decoded there: an asynchronous branch waiting for its TIP), at a TNT, a
 * TIP, a TIP.PGE or TIP.PGD, a MODE, an OVF (it reads on past other packets, which is not
 * modelled here: -1). */
static int64_t read_ahead_stop(struct fast *f, uint64_t next)
{
	const uint8_t *t = f->cfg.trace;
	struct jf_pt_time time = f->time;
	uint64_t at = next;
	unsigned byte;
	int fups = 0;

	for (;;) {
		if (past_timing(f, &at, &time) || at >= f->cfg.size)
			return -1;
		byte = t[at];
		if (f->pend_fup || fups || (byte != 0x7d && byte != 0xdd))
			break;
		/* FUP, IP compression 3 (6 bytes) or 6 (8): no last IP needed. */
		at += byte == 0x7d ? 7 : 9;
		fups++;
	}
	if (!(byte & 1) && byte != 0x02)
		return (int64_t)at; /* TNT-8 */
	switch (byte & 0x1f) {
	case 0x01: /* TIP.PGD */
	case 0x0d: /* TIP */
	case 0x11: /* TIP.PGE */
		return (byte >> 5) == 5 || (byte >> 5) == 7 ? -1 : (int64_t)at;
	default:
		break;
	}
	if (byte == 0x02 && at + 1 < f->cfg.size && (t[at + 1] == 0xa3 || t[at + 1] == 0xf3))
		return (int64_t)at; /* TNT-64, OVF */
	return -1;
}

int jf_fast_fail_at_block(struct fast *f, const struct jf_fast_block *b, uint64_t at, int tnt)
{
	uint8_t byte;
	int64_t stop;

	if (b->end == JF_FAST_BAD) {
		/* Nothing walked since the TIP: libipt's block is empty and its error takes its
		 * IP; an address with code that cannot be decoded is libipt's decoder's to
		 * judge ("unknown instruction"). */
		if (f->ip != f->tip_target || jf_codemap_read(f->map, f->ip, &byte, 1))
			return 1;
		return jf_fast_fail_at_query(f, at, -pte_nomap, f->ip);
	}
	if (!tnt || b->end != JF_FAST_RETURN)
		return 1;
	/* The query decoder decoded this TNT (a TNT-8's one byte, a TNT-64's eight) and
	 * read ahead. */
	stop = read_ahead_stop(f, at + (f->cfg.trace[at] == 0x02 ? 8 : 1));
	if (stop < 0)
		return 1;
	f->insns_n += b->ninsn;
	f->blocks_n++;
	return jf_fast_fail_at_query(f, (uint64_t)stop, -pte_bad_retcomp, b->last);
}

int jf_fast_fail_tnt_at_indirect(struct fast *f, const struct jf_fast_block *b, uint64_t at)
{
	/* The query decoder decoded this TNT, for an earlier bit or for the indirect branch's
	 * query itself (which takes one TNT where none is cached), and read ahead; the query
	 * fails at the packet it stopped at, a TNT or an event's. At a TIP it does not fail
	 * there (libipt 2.0 decodes the TIP first): not modelled. */
	int64_t stop = read_ahead_stop(f, at + (f->cfg.trace[at] == 0x02 ? 8 : 1));

	if (stop < 0 || (f->cfg.trace[stop] & 0x1f) == 0x0d)
		return 1;
	f->insns_n += b->ninsn;
	f->blocks_n++;
	return jf_fast_fail_at_query(f, (uint64_t)stop, -pte_bad_query, b->last);
}

/* The block decoder's IP while tracing is off, as it reports an error then (0), or 1 where
 * not modelled. Where an asynchronous disable stopped tracing; 0 after a TIP.PGD that bound
 * to a conditional branch, an indirect jump or a return (f->ip: after a far branch or an
 * indirect call, libipt keeps the IP after it, where tracing may resume (fuzz_pt_decode):
 * not modelled); after an overflow or a synchronisation with tracing off, not modelled
 * either. */
static int ip_while_off(struct fast *f, uint64_t *ip)
{
	struct jf_insn_info in;

	if (f->off_at_ip) {
		*ip = f->ip;
		return 0;
	}
	if (!f->off_at_zero || jf_insn_at(f->insns, f->isa, f->ip, &in) < 0 ||
	    (in.cls != JF_INSN_COND && in.cls != JF_INSN_RETURN &&
	     in.cls != JF_INSN_JUMP_INDIRECT))
		return 1;
	*ip = 0;
	return 0;
}

int jf_fast_fail_tnt_while_off(struct fast *f, uint64_t at)
{
	uint64_t ip;

	return ip_while_off(f, &ip) || jf_fast_fail_at_query(f, at, -pte_no_enable, ip);
}

int jf_fast_fail_at_bad_tip(struct fast *f, uint64_t at)
{
	uint64_t insns = 0, blocks = 0, ip = 0;
	int code = -pte_bad_packet;

	/* The query decoder read ahead to the TIP without decoding it (it waits for a query);
	 * the block decoder walks from where the last query left it to the next instruction
	 * that needs trace. A return's or an indirect branch's query decodes the TIP and
	 * fails; a conditional branch's finds a TIP where it wants a TNT ("trace stream does
	 * not match query", the TIP not decoded). A FUP or MODE.exec waiting for the TIP would
	 * make it an event's packet, decoded earlier: not modelled. */
	if (f->emit || !f->by_packets || (f->timed && f->time.have_tsc) || !f->enabled ||
	    f->pend_fup || f->pend_mode || f->isa == JF_ISA_UNKNOWN)
		return 1;
	if (walk_to_query(f, 1, &insns, &blocks, &ip)) {
		insns = blocks = 0;
		if (walk_to_query(f, 0, &insns, &blocks, &ip))
			return 1;
		code = -pte_bad_query;
	}
	f->insns_n += insns;
	f->blocks_n += blocks;
	if (jf_fast_resync_after_violation(f, at, code, ip) == 0)
		return 0;
	f->insns_n -= insns;
	f->blocks_n -= blocks;
	return 1;
}
