/* IP-suppressed TIPs ahead of the block decoder (pt_tip_scan.h). */
#include "pt_tip_scan.h"

#include "pt_libipt_config.h"

#include <intel-pt.h>
#include <stdlib.h>

struct jf_pt_tip_scan {
	struct pt_packet_decoder *pkt;
	int synced;          /* the packet decoder is at a packet boundary */
	int ended;           /* nothing more to read */
	uint64_t psb;        /* the last PSB read */
	int has_tip;         /* the last suppressed TIP read, not yet passed: */
	uint64_t tip, tip_psb; /* its offset and the PSB before it */
};

struct jf_pt_tip_scan *jf_pt_tip_scan_new(const uint8_t *trace, size_t size, uint64_t start)
{
	struct jf_pt_tip_scan *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pkt = jf_pt_packet_decoder(trace, size);
	if (!s->pkt) {
		free(s);
		return NULL;
	}
	s->synced = start && pt_pkt_sync_set(s->pkt, start) >= 0;
	return s;
}

void jf_pt_tip_scan_free(struct jf_pt_tip_scan *s)
{
	if (!s)
		return;
	pt_pkt_free_decoder(s->pkt);
	free(s);
}

int jf_pt_tip_scan_ahead(struct jf_pt_tip_scan *s, uint64_t from)
{
	if (s->has_tip && s->tip < from)
		s->has_tip = 0;
	while (!s->has_tip && !s->ended) {
		struct pt_packet p;
		uint64_t at;

		/* From a PSB on; after a bad packet, from the next PSB. */
		if (!s->synced) {
			s->ended = pt_pkt_sync_forward(s->pkt) < 0;
			s->synced = !s->ended;
			continue;
		}
		if (pt_pkt_get_offset(s->pkt, &at) < 0 || pt_pkt_next(s->pkt, &p, sizeof(p)) < 0) {
			s->synced = 0;
			continue;
		}
		if (p.type == ppt_psb) {
			s->psb = at;
			if (at > from)
				return 0; /* read up to here: the next call goes on after it */
		} else if (p.type == ppt_tip && p.payload.ip.ipc == pt_ipc_suppressed && at >= from) {
			s->has_tip = 1;
			s->tip = at;
			s->tip_psb = s->psb;
		}
	}
	/* A PSB between from and the TIP ends the decoder's call before it. */
	return s->has_tip && s->tip_psb <= from;
}
