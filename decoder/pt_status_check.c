#include "pt_status_check.h"

#include "pt_libipt_config.h"

#include <intel-pt.h>
#include <stdlib.h>

enum tracing { TRACING_UNKNOWN, TRACING_OFF, TRACING_ON };

struct jf_pt_check {
	struct pt_packet_decoder *pkt;
	uint64_t size;
	int active;          /* following packets (after a sync, until a violation, a bad
	                      * packet or the end) */
	int ended;           /* the end of the trace was read */
	uint64_t next;       /* while active: the offset of the next packet (asked per block,
	                      * kept here rather than asked of libipt) */
	enum tracing tracing;
	int in_psb, psb_fup; /* inside PSB+, and whether it carried a FUP */
	uint64_t fup_ip;
	/* Packets are read ahead of jf_pt_check_advance (jf_pt_check_suppressed_tip_ahead):
	 * an inconsistency found there waits until the decoder passes it. */
	int held;
	struct jf_pt_violation violation;
	uint64_t psb;        /* the last PSB read */
	int has_tip;         /* the last IP-suppressed TIP read, and the PSB before it */
	uint64_t tip, tip_psb;
};

struct jf_pt_check *jf_pt_check_new(const uint8_t *trace, size_t size)
{
	struct jf_pt_check *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->pkt = jf_pt_packet_decoder(trace, size);
	if (!c->pkt) {
		free(c);
		return NULL;
	}
	c->size = size;
	return c;
}

void jf_pt_check_free(struct jf_pt_check *c)
{
	if (!c)
		return;
	pt_pkt_free_decoder(c->pkt);
	free(c);
}

void jf_pt_check_sync(struct jf_pt_check *c, uint64_t psb)
{
	c->active = pt_pkt_sync_set(c->pkt, psb) >= 0;
	c->next = psb;
	c->tracing = TRACING_UNKNOWN;
	c->in_psb = 0;
	c->held = 0;
	c->has_tip = 0;
	c->ended = 0;
	c->psb = psb;
}

static void hold(struct jf_pt_check *c, uint64_t offset, int code, int has_ip, uint64_t ip)
{
	c->violation.offset = offset;
	c->violation.code = code;
	c->violation.has_ip = has_ip;
	c->violation.ip = ip;
	c->held = 1;
	c->active = 0;
}

/* Read the next packet and follow the tracing state. */
static void step(struct jf_pt_check *c)
{
	struct pt_packet p;
	uint64_t off = c->next;
	int size = pt_pkt_next(c->pkt, &p, sizeof(p));

	if (size < 0) {
		/* Bad packets are the block decoder's to report. */
		c->active = 0;
		c->ended = size == -pte_eos;
		return;
	}
	c->next = off + (uint64_t)size;
	switch (p.type) {
	case ppt_psb:
		c->in_psb = 1;
		c->psb_fup = 0;
		c->psb = off;
		break;
	case ppt_fup:
		if (c->in_psb) {
			c->psb_fup = 1;
			c->fup_ip = p.payload.ip.ip;
		} else if (c->tracing == TRACING_UNKNOWN) {
			c->tracing = TRACING_ON; /* resuming after an overflow */
		}
		break;
	case ppt_psbend:
		c->in_psb = 0;
		if (c->psb_fup && c->tracing == TRACING_OFF) {
			hold(c, off, -pte_bad_status_update, 1, c->fup_ip);
			break;
		}
		c->tracing = c->psb_fup ? TRACING_ON : TRACING_OFF;
		break;
	case ppt_tip:
		if (p.payload.ip.ipc == pt_ipc_suppressed) {
			c->has_tip = 1;
			c->tip = off;
			c->tip_psb = c->psb;
		}
		break;
	case ppt_tip_pge:
		if (c->tracing == TRACING_ON) {
			hold(c, off, -pte_bad_context, 0, 0);
			break;
		}
		c->tracing = TRACING_ON;
		break;
	case ppt_tip_pgd:
		c->tracing = TRACING_OFF;
		break;
	case ppt_ovf:
		c->tracing = TRACING_UNKNOWN;
		break;
	default:
		break;
	}
}

int jf_pt_check_advance(struct jf_pt_check *c, uint64_t upto, struct jf_pt_violation *v)
{
	while (c->active && c->next < upto)
		step(c);
	if (!c->held || c->violation.offset >= upto)
		return 0;
	*v = c->violation;
	c->held = 0;
	return 1;
}

int jf_pt_check_suppressed_tip_ahead(struct jf_pt_check *c, uint64_t from)
{
	/* Up to the first PSB after from: libipt's block decoder stops at a PSB+. */
	for (;;) {
		if (c->has_tip && c->tip < from)
			c->has_tip = 0; /* passed */
		if (c->has_tip || !c->active || c->psb > from)
			break;
		step(c);
	}
	if (c->has_tip)
		return c->tip_psb <= from; /* else that PSB comes first */
	/* Not followed as far as that PSB (a bad packet, an inconsistency): perhaps. */
	return !c->ended && c->psb <= from;
}

int64_t jf_pt_check_next_psb(struct jf_pt_check *c, uint64_t offset)
{
	struct pt_packet p;
	uint64_t at;

	/* offset is a packet boundary: walk packets from there to the next PSB; after a bad
	 * packet, fall back to searching for the PSB pattern. */
	if (offset >= c->size || pt_pkt_sync_set(c->pkt, offset) < 0)
		return -1;
	for (;;) {
		if (pt_pkt_get_offset(c->pkt, &at) < 0)
			return -1;
		if (pt_pkt_next(c->pkt, &p, sizeof(p)) < 0)
			break;
		if (p.type == ppt_psb && at > offset)
			return (int64_t)at;
	}
	if (pt_pkt_sync_forward(c->pkt) < 0 || pt_pkt_get_sync_offset(c->pkt, &at) < 0)
		return -1;
	return (int64_t)at;
}
