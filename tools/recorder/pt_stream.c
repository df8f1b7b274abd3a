/* One thread's Intel PT stream (see pt_stream.h). Every byte comes from pt_enc_next. */
#include "pt_stream.h"

#include <intel-pt.h>
#include <string.h>

/* Room kept free in the buffer so that a whole packet group (PSB+ is the largest, well
 * under 100 bytes) always fits before the buffer is handed to the sink. */
enum { GROUP_ROOM = 256 };
/* At a block boundary with less than this left, the chunk ends (see jf_pt_boundary). One
 * block's packets are far fewer bytes, so chunks nearly never end elsewhere. */
enum { CHUNK_TAIL = 4 * GROUP_ROOM };

static void flush_buffer(struct jf_pt_stream *s)
{
	uint64_t offset = 0;

	if (pt_enc_get_offset(s->enc, &offset) < 0 || offset == 0)
		return;
	/* Chunks end on 8 bytes, as perf.data wants AUX data, with PAD packets (as hardware
	 * pads): then consecutive chunks are exactly contiguous in the stream's offsets. */
	while (offset % 8) {
		struct pt_packet pad;
		int size;

		memset(&pad, 0, sizeof(pad));
		pad.type = ppt_pad;
		size = pt_enc_next(s->enc, &pad);
		if (size <= 0)
			break;
		s->stats.bytes += (uint64_t)size;
		s->since_psb += (uint64_t)size;
		offset += (uint64_t)size;
	}
	if (s->sink(s->sink_ctx, s->buf, (size_t)offset))
		s->error = -1;
	pt_enc_sync_set(s->enc, 0);
}

static void emit(struct jf_pt_stream *s, struct pt_packet *pkt)
{
	uint64_t offset = 0;
	int size;

	pt_enc_get_offset(s->enc, &offset);
	if (offset + GROUP_ROOM > sizeof(s->buf))
		flush_buffer(s);
	size = pt_enc_next(s->enc, pkt);
	if (size < 0) {
		s->error = -1;
		return;
	}
	s->stats.bytes += (uint64_t)size;
	s->since_psb += (uint64_t)size;
}

int jf_pt_stream_init(struct jf_pt_stream *s, jf_pt_sink_fn sink, void *sink_ctx, int timing)
{
	struct pt_config config;

	memset(s, 0, sizeof(*s));
	pt_config_init(&config);
	config.begin = s->buf;
	config.end = s->buf + sizeof(s->buf);
	s->enc = pt_alloc_encoder(&config);
	if (!s->enc)
		return -1;
	s->sink = sink;
	s->sink_ctx = sink_ctx;
	s->timing = timing;
	return 0;
}

static void flush_tnt(struct jf_pt_stream *s);

int jf_pt_stream_finish(struct jf_pt_stream *s)
{
	if (!s->enc)
		return s->error;
	flush_tnt(s);
	flush_buffer(s);
	pt_free_encoder(s->enc);
	s->enc = NULL;
	return s->error;
}

/* The cycles since the last CYC, before a packet that marks a point in the flow. */
static void cyc(struct jf_pt_stream *s)
{
	struct pt_packet pkt;

	if (!s->timing || s->now == s->last_cyc)
		return;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_cyc;
	pkt.payload.cyc.value = s->now - s->last_cyc; /* one cycle per instruction */
	s->last_cyc = s->now;
	emit(s, &pkt);
	s->stats.cyc++;
}

static void flush_tnt(struct jf_pt_stream *s)
{
	struct pt_packet pkt;

	if (!s->tnt_count)
		return;
	cyc(s);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tnt_8;
	pkt.payload.tnt.bit_size = (uint8_t)s->tnt_count;
	pkt.payload.tnt.payload = s->tnt_bits;
	emit(s, &pkt);
	s->stats.tnt_packets++;
	s->tnt_bits = 0;
	s->tnt_count = 0;
}

static void add_tnt(struct jf_pt_stream *s, int taken)
{
	s->tnt_bits = (s->tnt_bits << 1) | (taken ? 1u : 0u);
	s->tnt_count++;
	s->stats.tnt_bits++;
	if (s->tnt_count == 6) /* a short TNT holds six bits */
		flush_tnt(s);
}

/* The cheapest IP compression that reproduces ip from the last IP. */
static enum pt_ip_compression compress(uint64_t last, uint64_t ip)
{
	uint64_t upper = ip >> 47;

	if (((ip ^ last) >> 16) == 0)
		return pt_ipc_update_16;
	if (((ip ^ last) >> 32) == 0)
		return pt_ipc_update_32;
	if (upper == 0 || upper == 0x1ffff)
		return pt_ipc_sext_48;
	if (((ip ^ last) >> 48) == 0)
		return pt_ipc_update_48;
	return pt_ipc_full;
}

static void ip_packet(struct jf_pt_stream *s, enum pt_packet_type type, uint64_t ip,
		      int suppressed)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	if (suppressed) {
		pkt.payload.ip.ipc = pt_ipc_suppressed;
	} else {
		pkt.payload.ip.ipc = compress(s->last_ip, ip);
		pkt.payload.ip.ip = ip;
		s->last_ip = ip;
	}
	emit(s, &pkt);
}

static void mode_exec(struct jf_pt_stream *s)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mode;
	pkt.payload.mode.leaf = pt_mol_exec;
	pkt.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	emit(s, &pkt);
	s->stats.mode_exec++;
}

static void simple(struct jf_pt_stream *s, enum pt_packet_type type)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	emit(s, &pkt);
}

static uint64_t tsc_now(const struct jf_pt_stream *s)
{
	return (s->now + JF_PT_CLOCK_BASE) * JF_PT_TSC_PER_INSN;
}

/* TSC, TMA and CBR: the whole time, now; MTC and CYC count on from here. Outside PSB+ the
 * CBR also makes decoders forget the MTC they calibrate cycles against (libipt), which
 * lies too many periods back to be told apart from a later one. */
static void full_time(struct jf_pt_stream *s)
{
	struct pt_packet pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tsc;
	pkt.payload.tsc.tsc = tsc_now(s);
	emit(s, &pkt);
	s->stats.tsc++;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_tma;
	pkt.payload.tma.ctc = (uint16_t)(s->now + JF_PT_CLOCK_BASE); /* 1 tick/insn */
	pkt.payload.tma.fc = 0;
	emit(s, &pkt);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_cbr;
	pkt.payload.cbr.ratio = JF_PT_CBR;
	emit(s, &pkt);
	s->last_cyc = s->now;
	s->last_mtc = (s->now + JF_PT_CLOCK_BASE) >> JF_PT_MTC_PERIOD;
}

/* PSB+: PSB, TSC, TMA, CBR, MODE.EXEC, FUP (when tracing), PSBEND. */
static void psb(struct jf_pt_stream *s, uint64_t ip)
{
	flush_tnt(s);
	simple(s, ppt_psb);
	s->stats.psb++;
	if (s->timing)
		full_time(s);
	s->last_ip = 0;
	/* Decoders start a fresh call stack at every PSB: never compress across one. */
	s->ret_depth = 0;
	if (s->enabled) {
		mode_exec(s);
		ip_packet(s, ppt_fup, ip, 0);
		s->stats.fup++;
	}
	simple(s, ppt_psbend);
	s->since_psb = 0;
}

void jf_pt_advance(struct jf_pt_stream *s, uint64_t now)
{
	uint64_t period, boundary;
	struct pt_packet pkt;

	if (now < s->now)
		return;
	if (!s->timing || !s->stats.psb) {
		s->now = now;
		return;
	}
	period = (now + JF_PT_CLOCK_BASE) >> JF_PT_MTC_PERIOD;
	if (period == s->last_mtc) {
		s->now = now;
		return;
	}
	if (s->filtered && !s->enabled) {
		/* Hardware goes on writing MTCs outside the filter (2 bytes per 512
		 * instructions: most of a filtered recording); one PSB+ at the next TIP.PGE
		 * carries the time instead. */
		s->now = now;
		s->mtc_skipped = 1;
		return;
	}
	/* Branches before now go out with the time they had. */
	flush_tnt(s);
	s->now = now;
	/* A thread that waited while others ran: an MTC's 8 bits cannot say how many periods
	 * went by (decoders correct one wrap-around), so the whole time. */
	if (period - s->last_mtc >= (1u << 7)) {
		full_time(s);
		return;
	}
	/* MTC whenever CTC bit mtc_period changes, carrying CTC[period+7:period]. libipt
	 * counts the cycles of the CYC packets after an MTC from the MTC's time, the moment
	 * the bit changed: so a CYC first brings the cycle count to that moment, which this
	 * thread may have slept through. Without it the cycles of the wait counted twice,
	 * and the thread's blocks were dated late by up to the wait, behind other threads'
	 * blocks that ran after them (test_recorder_units, test_jit_threads). */
	boundary = (period << JF_PT_MTC_PERIOD) - JF_PT_CLOCK_BASE;
	if (boundary > s->last_cyc) {
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = ppt_cyc;
		pkt.payload.cyc.value = boundary - s->last_cyc;
		emit(s, &pkt);
		s->stats.cyc++;
		s->last_cyc = boundary;
	}
	s->last_mtc = period;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_mtc;
	pkt.payload.mtc.ctc = (uint8_t)period;
	emit(s, &pkt);
	s->stats.mtc++;
}

void jf_pt_enable(struct jf_pt_stream *s, uint64_t ip)
{
	if (s->enabled)
		return;
	if (!s->stats.psb || (s->mtc_skipped && s->timing))
		psb(s, ip);
	s->mtc_skipped = 0;
	cyc(s);
	mode_exec(s);
	ip_packet(s, ppt_tip_pge, ip, 0);
	s->stats.tip_pge++;
	s->enabled = 1;
}

/* TIP.PGD (with ip, or without: suppressed), after a FUP at fup_ip when not 0. */
static void pgd(struct jf_pt_stream *s, uint64_t fup_ip, uint64_t ip, int suppressed)
{
	if (!s->enabled)
		return;
	flush_tnt(s);
	cyc(s);
	if (fup_ip) {
		ip_packet(s, ppt_fup, fup_ip, 0);
		s->stats.fup++;
	}
	ip_packet(s, ppt_tip_pgd, ip, suppressed);
	s->stats.tip_pgd++;
	s->enabled = 0;
	s->ret_depth = 0;
}

void jf_pt_disable(struct jf_pt_stream *s)
{
	pgd(s, 0, 0, 1);
}

void jf_pt_filter_disable(struct jf_pt_stream *s, uint64_t ip)
{
	pgd(s, 0, ip, 0);
}


void jf_pt_async_disable(struct jf_pt_stream *s, uint64_t ip)
{
	pgd(s, ip, 0, 1);
}

void jf_pt_overflow_outside(struct jf_pt_stream *s)
{
	flush_tnt(s);
	simple(s, ppt_ovf);
	s->stats.ovf++;
	s->ret_depth = 0;
	/* A decoder forgets the last IP at an overflow: the FUP after it must stand alone. */
	s->last_ip = 0;
	s->enabled = 0;
}

void jf_pt_overflow(struct jf_pt_stream *s, uint64_t ip)
{
	jf_pt_overflow_outside(s);
	s->enabled = 1;
	ip_packet(s, ppt_fup, ip, 0);
	s->stats.fup++;
}

void jf_pt_cond(struct jf_pt_stream *s, int taken)
{
	add_tnt(s, taken);
}

void jf_pt_indirect(struct jf_pt_stream *s, uint64_t target)
{
	flush_tnt(s);
	cyc(s);
	ip_packet(s, ppt_tip, target, 0);
	s->stats.tip++;
}

void jf_pt_call(struct jf_pt_stream *s, uint64_t return_ip)
{
	s->retstack[s->ret_top] = return_ip;
	s->ret_top = (s->ret_top + 1) % JF_PT_RETSTACK;
	if (s->ret_depth < JF_PT_RETSTACK)
		s->ret_depth++;
}

void jf_pt_return(struct jf_pt_stream *s, uint64_t target)
{
	unsigned top = (s->ret_top + JF_PT_RETSTACK - 1) % JF_PT_RETSTACK;

	if (s->ret_depth && s->retstack[top] == target) {
		s->ret_top = top;
		s->ret_depth--;
		s->stats.ret_compressed++;
		add_tnt(s, 1);
		return;
	}
	/* Not the return address of the newest call (longjmp, signal frames, hand-made
	 * stacks): the processor sends the target, and the stack stays as it is. */
	jf_pt_indirect(s, target);
}

void jf_pt_ptwrite(struct jf_pt_stream *s, uint64_t payload)
{
	struct pt_packet pkt;

	flush_tnt(s);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = ppt_ptw;
	pkt.payload.ptw.plc = 1; /* 8-byte payload */
	pkt.payload.ptw.payload = payload;
	pkt.payload.ptw.ip = 0;
	emit(s, &pkt);
	s->stats.ptw++;
}

void jf_pt_boundary(struct jf_pt_stream *s, uint64_t ip)
{
	uint64_t offset = 0;

	if (!s->enabled)
		return;
	/* A chunk handed to the sink (one AUXTRACE buffer in perf.data) ends here and the
	 * next one starts with PSB+, so that a decoder that decodes each buffer on its own
	 * from its first PSB (libipt-based ones do) loses nothing at the boundary. */
	pt_enc_get_offset(s->enc, &offset);
	if (offset + CHUNK_TAIL > sizeof(s->buf)) {
		flush_tnt(s);
		flush_buffer(s);
		psb(s, ip);
		return;
	}
	if (s->since_psb >= JF_PT_PSB_PERIOD)
		psb(s, ip);
}
