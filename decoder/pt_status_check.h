/* Internal: tracing-state consistency checks that libipt 2.0 does not make.
 *
 * libipt 2.1 and later reject two inconsistent packet sequences that 2.0 (Debian's) lets
 * through, and its reference decoder reports them as errors and resynchronises:
 *   - a PSB+ that carries a FUP (tracing enabled) while tracing is disabled:
 *     "bad status update", located at the PSBEND, with the FUP's IP;
 *   - a TIP.PGE while tracing is already enabled: "unexpected packet context".
 * Real captures contain both (see ../shared/traces/intel-pt/Unzip). We follow the packets
 * with libipt's packet decoder, in step with the block decoder, so that decoding gives the
 * same result whichever libipt is installed.
 *
 * A third difference: libipt 2.0's block decoder reports a TIP that suppresses its IP at an
 * indirect branch ("no ip") only while it decodes the branch itself; when its block cache
 * holds the branch, it takes the TIP as a target and goes on at the branch, so what a decode
 * gave depended on what the same image had decoded before (found by fuzz_pt_decode,
 * 2026-11-25). The check reads one PSB period ahead and says where such a TIP lies;
 * pt_decoder.c decodes that stretch without the cache. */
#ifndef JITFLOW_PT_STATUS_CHECK_H
#define JITFLOW_PT_STATUS_CHECK_H

#include <stddef.h>
#include <stdint.h>

struct jf_pt_check;

struct jf_pt_violation {
	uint64_t offset;   /* where the reference decoder reports the error */
	uint64_t ip;       /* the IP it reports (0 = use the decoder's) */
	int has_ip;
	int code;          /* -pte_bad_status_update or -pte_bad_context */
};

struct jf_pt_check *jf_pt_check_new(const uint8_t *trace, size_t size);
void jf_pt_check_free(struct jf_pt_check *check);

/* The block decoder synchronised at the PSB at offset psb: follow from there, with the
 * tracing state unknown until the PSB+ says it. */
void jf_pt_check_sync(struct jf_pt_check *check, uint64_t psb);

/* Follow the packets that start before upto. Returns 1 and fills *v at the first
 * inconsistency (the check then waits for jf_pt_check_sync), else 0. One found ahead (by
 * jf_pt_check_suppressed_tip_ahead) is returned once upto passes it. */
int jf_pt_check_advance(struct jf_pt_check *check, uint64_t upto, struct jf_pt_violation *v);

/* Whether an IP-suppressed TIP lies at or after from (the block decoder's offset, a packet
 * boundary) and before the next PSB after it, as far as one call of libipt's block decoder
 * that starts there reads; 1 too where the packets could not be followed that far (a bad
 * packet, an inconsistency: until the next sync). from must not decrease. */
int jf_pt_check_suppressed_tip_ahead(struct jf_pt_check *check, uint64_t from);

/* The offset of the first PSB after offset, or -1 if there is none. */
int64_t jf_pt_check_next_psb(struct jf_pt_check *check, uint64_t offset);

#endif
