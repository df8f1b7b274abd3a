/* Where PSBs are in an AUXTRACE buffer, found with libipt's packet decoder (the same sync
 * search its instruction decoders use): the first one, the last one, and the end of a
 * PSB+ header. The session uses them to decode buffers from a sync point and to stitch
 * consecutive buffers of a queue together (perf_session.c). */
#include "perf_session_internal.h"
#include "pt_libipt_config.h"

#include <intel-pt.h>
#include <string.h>

static struct pt_packet_decoder *packets(const uint8_t *data, uint64_t size)
{
	return size ? jf_pt_packet_decoder(data, (size_t)size) : NULL;
}

uint64_t jf_psb_first(const uint8_t *data, uint64_t size, uint64_t *tsc, int *have_tsc)
{
	struct pt_packet_decoder *pd = packets(data, size);
	uint64_t sync = size;
	int i;

	*have_tsc = 0;
	if (!pd)
		return size;
	if (pt_pkt_sync_forward(pd) >= 0 && pt_pkt_get_sync_offset(pd, &sync) >= 0) {
		/* The PSB+ header holds the TSC when TSC packets are enabled. */
		for (i = 0; i < 64; i++) {
			struct pt_packet p;

			if (pt_pkt_next(pd, &p, sizeof(p)) < 0 || p.type == ppt_psbend)
				break;
			if (p.type == ppt_tsc) {
				*tsc = p.payload.tsc.tsc;
				*have_tsc = 1;
				break;
			}
		}
	}
	pt_pkt_free_decoder(pd);
	return sync;
}

uint64_t jf_psb_last(const uint8_t *data, uint64_t size)
{
	struct pt_packet_decoder *pd = packets(data, size);
	uint64_t sync = size;

	if (!pd)
		return size;
	if (pt_pkt_sync_backward(pd) < 0 || pt_pkt_get_sync_offset(pd, &sync) < 0)
		sync = size;
	pt_pkt_free_decoder(pd);
	return sync;
}

uint64_t jf_psb_header_end(const uint8_t *data, uint64_t size, uint64_t psb)
{
	struct pt_packet_decoder *pd = packets(data, size);
	uint64_t end = 0;
	int i;

	if (!pd)
		return 0;
	if (pt_pkt_sync_set(pd, psb) >= 0) {
		for (i = 0; i < 64; i++) {
			struct pt_packet p;

			if (pt_pkt_next(pd, &p, sizeof(p)) < 0)
				break;
			if (p.type == ppt_psbend) {
				pt_pkt_get_offset(pd, &end);
				break;
			}
		}
	}
	pt_pkt_free_decoder(pd);
	return end;
}
