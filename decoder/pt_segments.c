#include "pt_segments.h"

#include "pt_libipt_config.h"

#include <intel-pt.h>
#include <stdlib.h>

struct jf_pt_psb_finder {
	struct pt_packet_decoder *pkt;
	uint64_t size;
};

struct jf_pt_psb_finder *jf_pt_psb_finder_new(const uint8_t *trace, size_t size)
{
	struct jf_pt_psb_finder *f;

	if (!size)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->pkt = jf_pt_packet_decoder(trace, size);
	if (!f->pkt) {
		free(f);
		return NULL;
	}
	f->size = size;
	return f;
}

void jf_pt_psb_finder_free(struct jf_pt_psb_finder *f)
{
	if (!f)
		return;
	pt_pkt_free_decoder(f->pkt);
	free(f);
}

int64_t jf_pt_psb_at_or_after(struct jf_pt_psb_finder *f, uint64_t offset)
{
	uint64_t at;

	/* pt_pkt_sync_forward searches from one byte past a position set by pt_pkt_sync_set
	 * (it takes that position for a PSB already found), so start one byte early. */
	if (offset == 0 || offset >= f->size || pt_pkt_sync_set(f->pkt, offset - 1) < 0)
		return -1;
	if (pt_pkt_sync_forward(f->pkt) < 0 || pt_pkt_get_sync_offset(f->pkt, &at) < 0)
		return -1;
	return (int64_t)at;
}
