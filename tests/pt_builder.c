/* Intel PT streams for tests, written packet by packet with libipt's encoder. */
#include "pt_builder.h"
#include "test_support.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Test streams are a few hundred bytes; a fixed buffer keeps the encoder simple. */
enum { PTB_CAPACITY = 1 << 16 };

struct jf_ptb {
	struct pt_encoder *enc;
	uint8_t *buf;
};

struct jf_ptb *jf_ptb_new(void)
{
	struct jf_ptb *b = calloc(1, sizeof(*b));
	struct pt_config config;

	if (!b)
		fail_msg("out of memory");
	b->buf = calloc(1, PTB_CAPACITY);
	if (!b->buf)
		fail_msg("out of memory");
	pt_config_init(&config);
	config.begin = b->buf;
	config.end = b->buf + PTB_CAPACITY;
	b->enc = pt_alloc_encoder(&config);
	if (!b->enc)
		fail_msg("pt_alloc_encoder failed");
	return b;
}

void jf_ptb_free(struct jf_ptb *b)
{
	if (!b)
		return;
	pt_free_encoder(b->enc);
	free(b->buf);
	free(b);
}

uint64_t jf_ptb_offset(const struct jf_ptb *b)
{
	uint64_t off = 0;

	if (pt_enc_get_offset(b->enc, &off) < 0)
		fail_msg("pt_enc_get_offset failed");
	return off;
}

const uint8_t *jf_ptb_bytes(const struct jf_ptb *b) { return b->buf; }
uint8_t *jf_ptb_bytes_mut(struct jf_ptb *b) { return b->buf; }
size_t jf_ptb_size(const struct jf_ptb *b) { return (size_t)jf_ptb_offset(b); }

void jf_ptb_packet(struct jf_ptb *b, const struct pt_packet *p)
{
	int rc = pt_enc_next(b->enc, p);

	if (rc < 0)
		fail_msg("libipt cannot encode packet type %d: %s", p->type,
			 pt_errstr(pt_errcode(rc)));
}

static void simple(struct jf_ptb *b, enum pt_packet_type type)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	jf_ptb_packet(b, &p);
}

void jf_ptb_psb(struct jf_ptb *b) { simple(b, ppt_psb); }
void jf_ptb_psbend(struct jf_ptb *b) { simple(b, ppt_psbend); }

void jf_ptb_start_64(struct jf_ptb *b, uint64_t ip)
{
	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, ip);
}
void jf_ptb_pad(struct jf_ptb *b) { simple(b, ppt_pad); }
void jf_ptb_ovf(struct jf_ptb *b) { simple(b, ppt_ovf); }

void jf_ptb_bad_packet(struct jf_ptb *b)
{
	uint64_t at = jf_ptb_offset(b);

	/* Written as two PADs, then overwritten: libipt's encoder writes only good packets. */
	simple(b, ppt_pad);
	simple(b, ppt_pad);
	b->buf[at] = 0x02;
	b->buf[at + 1] = 0xff;
}

void jf_ptb_mode_exec(struct jf_ptb *b, enum pt_exec_mode mode)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(mode);
	jf_ptb_packet(b, &p);
}

static void ip_packet(struct jf_ptb *b, enum pt_packet_type type, enum pt_ip_compression ipc,
		      uint64_t ip)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.payload.ip.ipc = ipc;
	/* The payload holds only the bytes the compression keeps. */
	switch (ipc) {
	case pt_ipc_update_16: ip &= 0xffffull; break;
	case pt_ipc_update_32: ip &= 0xffffffffull; break;
	case pt_ipc_sext_48:
	case pt_ipc_update_48: ip &= 0xffffffffffffull; break;
	case pt_ipc_suppressed: ip = 0; break;
	default: break;
	}
	p.payload.ip.ip = ip;
	jf_ptb_packet(b, &p);
}

void jf_ptb_tip(struct jf_ptb *b, enum pt_ip_compression ipc, uint64_t ip)
{
	ip_packet(b, ppt_tip, ipc, ip);
}

void jf_ptb_tip_pge(struct jf_ptb *b, enum pt_ip_compression ipc, uint64_t ip)
{
	ip_packet(b, ppt_tip_pge, ipc, ip);
}

void jf_ptb_tip_pgd(struct jf_ptb *b, enum pt_ip_compression ipc, uint64_t ip)
{
	ip_packet(b, ppt_tip_pgd, ipc, ip);
}

void jf_ptb_fup(struct jf_ptb *b, enum pt_ip_compression ipc, uint64_t ip)
{
	ip_packet(b, ppt_fup, ipc, ip);
}

struct jf_ptb *jf_ptb_tip_loop(uint64_t ip, unsigned stretches, unsigned loops)
{
	return jf_ptb_tip_loop_ptw(ip, stretches, loops, UINT_MAX);
}

struct jf_ptb *jf_ptb_tip_loop_ptw(uint64_t ip, unsigned stretches, unsigned loops,
				   unsigned ptw_stretch)
{
	struct jf_ptb *b = jf_ptb_new();
	unsigned i, k;

	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_psbend(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, ip);
	for (k = 0; k < stretches; k++) {
		for (i = 0; i < loops; i++) {
			if (k == ptw_stretch && i == loops / 2)
				jf_ptb_ptw(b, 0x1234, 0);
			jf_ptb_tip(b, pt_ipc_update_16, ip);
		}
		jf_ptb_psb(b);
		jf_ptb_mode_exec(b, ptem_64bit);
		jf_ptb_fup(b, pt_ipc_sext_48, ip);
		jf_ptb_psbend(b);
	}
	jf_ptb_tip(b, pt_ipc_update_16, ip);
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	return b;
}

void jf_ptb_tnt(struct jf_ptb *b, const char *bits)
{
	struct pt_packet p;
	size_t n = strlen(bits), i;

	if (n < 1 || n > 47)
		fail_msg("TNT of %zu bits", n);
	memset(&p, 0, sizeof(p));
	p.type = n <= 6 ? ppt_tnt_8 : ppt_tnt_64;
	p.payload.tnt.bit_size = (uint8_t)n;
	/* libipt's payload: the oldest branch is the most significant bit. */
	for (i = 0; i < n; i++) {
		if (bits[i] != 'T' && bits[i] != 'N')
			fail_msg("TNT bit '%c' (expected T or N)", bits[i]);
		p.payload.tnt.payload = p.payload.tnt.payload << 1 | (bits[i] == 'T');
	}
	jf_ptb_packet(b, &p);
}

void jf_ptb_tsc(struct jf_ptb *b, uint64_t tsc)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_tsc;
	p.payload.tsc.tsc = tsc;
	jf_ptb_packet(b, &p);
}

void jf_ptb_tma(struct jf_ptb *b, uint16_t ctc, uint16_t fc)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_tma;
	p.payload.tma.ctc = ctc;
	p.payload.tma.fc = fc;
	jf_ptb_packet(b, &p);
}

void jf_ptb_mtc(struct jf_ptb *b, uint8_t ctc)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_mtc;
	p.payload.mtc.ctc = ctc;
	jf_ptb_packet(b, &p);
}

void jf_ptb_cyc(struct jf_ptb *b, uint64_t cycles)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_cyc;
	p.payload.cyc.value = cycles;
	jf_ptb_packet(b, &p);
}

void jf_ptb_cbr(struct jf_ptb *b, uint8_t ratio)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_cbr;
	p.payload.cbr.ratio = ratio;
	jf_ptb_packet(b, &p);
}

void jf_ptb_ptw(struct jf_ptb *b, uint64_t payload, int with_fup)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_ptw;
	p.payload.ptw.plc = 1; /* 8 bytes */
	p.payload.ptw.payload = payload;
	p.payload.ptw.ip = with_fup ? 1 : 0;
	jf_ptb_packet(b, &p);
}

struct jf_codemap *jf_ptb_codemap(const uint8_t *code, size_t size, uint64_t base)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;

	if (!map)
		fail_msg("out of memory");
	if (jf_codemap_add_bytes(map, code, size, base, "code", &err) < 0)
		fail_msg("jf_codemap_add_bytes: %s", err.msg);
	return map;
}

/* With JITFLOW_PT_SEED_DIR set, every stream a test decodes is also written there: the
 * seed corpus of the PT fuzz target (decoder/fuzz/corpus_pt). Named by content. */
static void write_seed(const uint8_t *trace, size_t size)
{
	const char *dir = getenv("JITFLOW_PT_SEED_DIR");
	uint64_t hash = 0xcbf29ce484222325ull; /* FNV-1a */
	char path[512];
	size_t i;

	if (!dir || !size)
		return;
	for (i = 0; i < size; i++)
		hash = (hash ^ trace[i]) * 0x100000001b3ull;
	snprintf(path, sizeof(path), "%s/seed-%016" PRIx64 ".pt", dir, hash);
	jf_test_write_file(path, trace, size);
}

void jf_ptb_decode(const uint8_t *trace, size_t size, struct jf_codemap *map,
		   const struct jf_pt_config *cfg, size_t max_flows, struct jf_ptb_decode *out)
{
	struct jf_pt_config c;
	struct jf_decoder *dec;
	struct jf_error err = { "" };
	size_t cap = 16;

	write_seed(trace, size);
	if (cfg)
		c = *cfg;
	else
		memset(&c, 0, sizeof(c));
	c.trace = trace;
	c.size = size;
	memset(out, 0, sizeof(*out));
	dec = jf_pt_decoder_new(&c, map, &err);
	if (!dec)
		fail_msg("jf_pt_decoder_new: %s", err.msg);
	out->flows = malloc(cap * sizeof(*out->flows));
	if (!out->flows)
		fail_msg("out of memory");
	for (;;) {
		if (out->count == cap) {
			cap *= 2;
			out->flows = realloc(out->flows, cap * sizeof(*out->flows));
			if (!out->flows)
				fail_msg("out of memory");
		}
		out->rc = jf_decoder_next(dec, &out->flows[out->count], &err);
		if (out->rc <= 0)
			break;
		if (++out->count > max_flows)
			fail_msg("more than %zu flow records from %zu trace bytes: the decoder "
				 "does not terminate", max_flows, size);
	}
	if (out->rc < 0)
		fail_msg("jf_decoder_next failed: %s", err.msg);
	out->stats = *jf_decoder_stats(dec);
	jf_decoder_free(dec);
}

void jf_ptb_decode_free(struct jf_ptb_decode *d)
{
	free(d->flows);
	d->flows = NULL;
	d->count = 0;
}

void jf_ptb_dump(const struct jf_ptb_decode *d)
{
	size_t i;

	for (i = 0; i < d->count; i++) {
		const struct jf_flow *f = &d->flows[i];

		printf("  #%zu %-9s off=0x%" PRIx64 " ip=0x%" PRIx64 " flags=%x",
		       i, jf_flow_kind_name(f->kind), f->offset, f->ip, f->flags);
		if (f->flags & JF_FLOW_HAS_TIME)
			printf(" time=%" PRIu64, f->time);
		switch (f->kind) {
		case JF_FLOW_BLOCK:
			printf(" [0x%" PRIx64 "..0x%" PRIx64 "] n=%u end=%s isa=%s",
			       f->u.block.start, f->u.block.last, f->u.block.ninsn,
			       jf_block_end_name(f->u.block.end), jf_isa_name(f->u.block.isa));
			break;
		case JF_FLOW_ERROR:
			printf(" code=%d phase=%s \"%s\"", f->u.error.code,
			       jf_error_phase_name(f->u.error.phase), f->u.error.text);
			break;
		case JF_FLOW_LOST:
			printf(" %s bytes=%" PRIu64, jf_lost_reason_name(f->u.lost.reason),
			       f->u.lost.bytes);
			break;
		case JF_FLOW_OTHER:
			printf(" %s a=%" PRIu64, f->u.other.name, f->u.other.a);
			break;
		case JF_FLOW_PTWRITE:
			printf(" payload=0x%" PRIx64, f->u.ptwrite.payload);
			break;
		case JF_FLOW_EXEC_MODE:
			printf(" isa=%s", jf_isa_name(f->u.exec_mode.isa));
			break;
		default:
			break;
		}
		printf("\n");
	}
}
