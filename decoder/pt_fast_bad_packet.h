/* Internal: decode errors libipt reports itself, reported by the fast Intel PT path
 * (following packets, counting) as libipt's block decoder reports them, so that they cost
 * no hand-over: a packet libipt cannot read after a TNT or a TIP, a TIP where a TNT bit is
 * due, TNT bits where a TIP is, a not-taken bit for a return, a TIP to an address without
 * code, a TNT while tracing is off. Each is queued
 * with the loss up to the next PSB, where this path starts afresh (pt_fast_resync.c);
 * where one is not modelled (blocks returned, a time, other packets around it), the
 * caller hands over.
 *
 * libipt 2.0's query decoder reads ahead after each TNT or TIP it decodes, to the next
 * packet a query needs; where that read fails, the query that decoded the TNT or TIP
 * returns the error and its bits or target are never used. The block decoder (pt_decoder.c)
 * has then walked from where the last query left it to the first instruction that needs
 * trace (a conditional branch, a return, an indirect branch or call), which ends the
 * partial block it returns; it reports the error there (that instruction's IP, the bad
 * packet's offset), counts the bytes up to the next PSB as lost and synchronises there
 * afresh. pt_fast_bad_packet.c does the same in place of the TNT or TIP, so that a damaged
 * packet costs no hand-over to the block decoder. */
#ifndef JITFLOW_PT_FAST_BAD_PACKET_H
#define JITFLOW_PT_FAST_BAD_PACKET_H

#include <stdint.h>

struct fast;
struct jf_fast_block;

/* First bytes of a packet that may be, or come before, one libipt cannot read (0: not):
 * JF_FAST_MAYBE_BAD for the bytes libipt's packet decoder rejects (asked of libipt itself),
 * JF_FAST_MAYBE_EXT for the extended opcodes (told by the second byte), JF_FAST_MAYBE_PAD,
 * and JF_FAST_MAYBE_TIMING for CYC and MTC, which the query decoder reads past as it reads
 * ahead (looked at only while no TSC has given a time: a damaged packet read as a CYC;
 * with a time, the error's time is not modelled). */
enum { JF_FAST_MAYBE_BAD = 1, JF_FAST_MAYBE_EXT, JF_FAST_MAYBE_PAD, JF_FAST_MAYBE_TIMING };
extern uint8_t jf_fast_maybe_bad_first[256];
/* jf_fast_bad_packet_may_follow for a packet whose first byte the table marks. */
int jf_fast_bad_packet_may_be_at(const uint8_t *trace, uint64_t size, uint64_t at,
				 int have_tsc);
void jf_fast_bad_packet_init(void);

/* The packet after the TNT or TIP that ends at next is one libipt cannot read: model the
 * block decoder's error there instead of that packet (tip: a TIP, else a TNT). Returns 0
 * where it was modelled, 1 where not (the caller reads the TNT or TIP as usual). */
int jf_fast_fail_after(struct fast *f, uint64_t next, int tip);

/* The block decoder's query at the instruction at ip failed with code, its query decoder
 * at offset at (a TIP where a conditional branch wants a TNT bit: "trace stream does not
 * match query"): the error, reported here, and the loss up to the next PSB, where this
 * path starts afresh. The instructions up to the one at ip must have been counted.
 * Returns 0, or 1 where not modelled (the caller then hands over). */
int jf_fast_fail_at_query(struct fast *f, uint64_t at, int code, uint64_t ip);

/* Walking from f->ip after the TNT (tnt) or TIP at offset at, the block decoder reaches
 * block b, which ends the walk with an error: a return where the TNT bit says not taken
 * ("bad compressed return": the return counted, the error at the packet the query decoder
 * read ahead to), or no code at all where the last TIP went ("no memory mapped at this
 * address", at the TNT or TIP: nothing walked since). The error is reported here and
 * this path resynchronises at the next PSB (0), or 1 where not modelled (the caller then
 * hands over). */
int jf_fast_fail_at_block(struct fast *f, const struct jf_fast_block *b, uint64_t at, int tnt);

/* Walking from f->ip for the TNT at offset at, the block decoder reaches block b, an
 * indirect branch or call, whose query finds TNT bits where it wants a TIP ("trace stream
 * does not match query": the branch counted, the error at the TNT or event packet the
 * query decoder read ahead to after this TNT). Returns 0 where modelled (this path
 * resynchronises at the next PSB), else 1. */
int jf_fast_fail_tnt_at_indirect(struct fast *f, const struct jf_fast_block *b, uint64_t at);

/* A TNT at offset at while tracing is off: the block decoder's "expected tracing enabled
 * event" there (its query decoder read ahead to it after the disable), the loss up to the
 * next PSB and this path starting afresh there (0), or 1 where not modelled. */
int jf_fast_fail_tnt_while_off(struct fast *f, uint64_t at);

/* A TIP libipt cannot read (a reserved IP compression) at offset at, read where a query
 * wants it: the block decoder's error at the instruction that asks for it ("unknown
 * packet", or "trace stream does not match query" at a conditional branch), as
 * jf_fast_fail_after walks to it (0), or 1 where not modelled. */
int jf_fast_fail_at_bad_tip(struct fast *f, uint64_t at);

/* Whether the packet at next (after PADs) may be one libipt cannot read, or a CYC or MTC
 * before one. Cheap enough to ask after every TNT: most packets start with a byte that
 * tells it is neither. */
static inline int jf_fast_bad_packet_may_follow(const uint8_t *trace, uint64_t size,
						uint64_t next, int have_tsc)
{
	/* With a time, no error is modelled (pt_fast_resync.c). */
	if (have_tsc || next >= size || !jf_fast_maybe_bad_first[trace[next]])
		return 0;
	/* PADs are stepped over here: a padded trace has them after many TNTs and TIPs. */
	if (trace[next] == 0x00) {
		while (++next < size && trace[next] == 0x00)
			;
		if (next >= size || !jf_fast_maybe_bad_first[trace[next]])
			return 0;
	}
	return jf_fast_bad_packet_may_be_at(trace, size, next, have_tsc);
}

#endif
