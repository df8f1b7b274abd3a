/* Internal: IP-suppressed TIPs in the stretch of trace the block decoder is about to decode.
 *
 * libipt 2.0's block decoder reports a TIP that suppresses its IP at an indirect branch
 * ("no ip") only while it decodes the branch itself; when its block cache holds the branch,
 * it takes the TIP as a target and goes on at the branch, so what a decode gives depends on
 * what the same image decoded before (found by fuzz_pt_decode, 2026-11-25). pt_decoder.c
 * decodes a stretch that holds one without the cache. */
#ifndef JITFLOW_PT_TIP_SCAN_H
#define JITFLOW_PT_TIP_SCAN_H

#include <stddef.h>
#include <stdint.h>

struct jf_pt_tip_scan;

/* Packets are read from the PSB at trace offset start on (the first PSB if there is none
 * there). */
struct jf_pt_tip_scan *jf_pt_tip_scan_new(const uint8_t *trace, size_t size, uint64_t start);
void jf_pt_tip_scan_free(struct jf_pt_tip_scan *s);

/* Whether an IP-suppressed TIP lies at or after trace offset `from` (a packet boundary)
 * and before the next PSB after it: as far as one call of libipt's block decoder that
 * starts there can read. `from` must not decrease between calls: each packet is read
 * once, at most one PSB period ahead of the decoder. */
int jf_pt_tip_scan_ahead(struct jf_pt_tip_scan *s, uint64_t from);

#endif
