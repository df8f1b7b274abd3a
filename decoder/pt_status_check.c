#include "pt_status_check.h"

#include "pt_libipt_config.h"

#include <intel-pt.h>
#include <stdlib.h>

enum tracing { TRACING_UNKNOWN, TRACING_OFF, TRACING_ON };

struct jf_pt_check {
	struct pt_packet_decoder *pkt;
	uint64_t size;
	int active;          /* following packets (after a sync, until a violation) */
	uint64_t next;       /* while active: the offset of the next packet (asked per block,
	                      * kept here rather than asked of libipt) */
	enum tracing tracing;
	int in_psb, psb_fup; /* inside PSB+, and whether it carried a FUP */
	uint64_t fup_ip;
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
}

static int violation(struct jf_pt_check *c, struct jf_pt_violation *v, uint64_t offset,
		     int code, int has_ip, uint64_t ip)
{
	v->offset = offset;
	v->code = code;
	v->has_ip = has_ip;
	v->ip = ip;
	c->active = 0;
	return 1;
}

int jf_pt_check_advance(struct jf_pt_check *c, uint64_t upto, struct jf_pt_violation *v)
{
	while (c->active) {
		struct pt_packet p;
		uint64_t off = c->next;
		int size;

		if (off >= upto)
			return 0;
		size = pt_pkt_next(c->pkt, &p, sizeof(p));
		if (size < 0) {
			/* Bad packets are the block decoder's to report. */
			c->active = 0;
			return 0;
		}
		c->next = off + (uint64_t)size;
		switch (p.type) {
		case ppt_psb:
			c->in_psb = 1;
			c->psb_fup = 0;
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
			if (c->psb_fup && c->tracing == TRACING_OFF)
				return violation(c, v, off, -pte_bad_status_update, 1, c->fup_ip);
			c->tracing = c->psb_fup ? TRACING_ON : TRACING_OFF;
			break;
		case ppt_tip_pge:
			if (c->tracing == TRACING_ON)
				return violation(c, v, off, -pte_bad_context, 0, 0);
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
	return 0;
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
