#include "pt_builder.h"
#include "test_support.h"

#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

void jf_ptb_init(struct jf_ptb *b, size_t cap)
{
	struct pt_config cfg;

	b->buf = calloc(1, cap);
	b->cap = cap;
	pt_config_init(&cfg);
	cfg.begin = b->buf;
	cfg.end = b->buf + cap;
	b->enc = pt_alloc_encoder(&cfg);
	assert_non_null(b->enc);
}

void jf_ptb_fini(struct jf_ptb *b)
{
	pt_free_encoder(b->enc);
	free(b->buf);
}

static void emit(struct jf_ptb *b, struct pt_packet *p)
{
	int rc = pt_enc_next(b->enc, p);

	if (rc < 0)
		fail_msg("pt_enc_next: %s", pt_errstr(pt_errcode(rc)));
}

static void mode64(struct jf_ptb *b)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
	emit(b, &p);
}

static void ip_packet(struct jf_ptb *b, enum pt_packet_type type, enum pt_ip_compression ipc,
		      uint64_t ip)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = type;
	p.payload.ip.ipc = ipc;
	p.payload.ip.ip = ip;
	emit(b, &p);
}

void jf_ptb_psb(struct jf_ptb *b)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	emit(b, &p);
	mode64(b);
	p.type = ppt_psbend;
	emit(b, &p);
}

void jf_ptb_psb_tsc(struct jf_ptb *b, uint64_t tsc)
{
	struct pt_packet p;

	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	emit(b, &p);
	mode64(b);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tsc;
	p.payload.tsc.tsc = tsc;
	emit(b, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_psbend;
	emit(b, &p);
}

void jf_ptb_pge(struct jf_ptb *b, uint64_t ip)
{
	mode64(b);
	ip_packet(b, ppt_tip_pge, pt_ipc_sext_48, ip);
}

void jf_ptb_pgd(struct jf_ptb *b)
{
	ip_packet(b, ppt_tip_pgd, pt_ipc_suppressed, 0);
}

void jf_ptb_tip(struct jf_ptb *b, uint64_t ip)
{
	ip_packet(b, ppt_tip, pt_ipc_sext_48, ip);
}

void jf_ptb_tnt(struct jf_ptb *b, const char *bits)
{
	/* TNT-8 carries up to 6 bits; the first outcome is the most significant */
	while (*bits) {
		struct pt_packet p;
		size_t n = strlen(bits), i;

		if (n > 6)
			n = 6;
		memset(&p, 0, sizeof(p));
		p.type = ppt_tnt_8;
		p.payload.tnt.bit_size = (uint8_t)n;
		for (i = 0; i < n; i++)
			p.payload.tnt.payload = p.payload.tnt.payload << 1 | (bits[i] == '1');
		emit(b, &p);
		bits += n;
	}
}

size_t jf_ptb_size(const struct jf_ptb *b)
{
	uint64_t off = 0;

	pt_enc_get_offset(b->enc, &off);
	return (size_t)off;
}
