/* What the fast Intel PT path checks where libipt works around a CPU erratum, so that it
 * hands over only where the workaround may change what the block decoder does. */
#include "pt_fast_internal.h"

#include "jitflow/codemap.h"

enum { MAX_INSN = 15 };

/* Legacy prefixes, and REX (a prefix in 64-bit mode only: elsewhere those bytes are
 * instructions, and taking them for prefixes only makes this say "may be" more often). */
static int is_prefix(uint8_t b)
{
	switch (b) {
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
	case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
		return 1;
	default:
		return b >= 0x40 && b <= 0x4f;
	}
}

/* Erratum SKD022 (a VM entry that clears TraceEn may come with a FUP): libipt's block
 * decoder turns an asynchronous disable into a synchronous one where the instruction at
 * the FUP's IP decodes as VMLAUNCH (0f 01 c2) or VMRESUME (0f 01 c3), and leaves it as it
 * is elsewhere, code it cannot read included (pt_blk_handle_erratum_skd022). Whether the
 * code at ip may be either of those. */
int jf_fast_may_be_vm_entry(struct fast *f, uint64_t ip)
{
	uint8_t b[MAX_INSN];
	size_t n = jf_codemap_read(f->map, ip, b, sizeof(b)), i = 0;

	while (i < n && is_prefix(b[i]))
		i++;
	if (i + 3 > n)
		return i == n && n == sizeof(b); /* all prefixes: no telling */
	return b[i] == 0x0f && b[i + 1] == 0x01 && (b[i + 2] == 0xc2 || b[i + 2] == 0xc3);
}

/* Erratum BDM70 (a PSB+ may carry a FUP while tracing is off, just before the TIP.PGE that
 * enables it): while libipt's query decoder takes tracing for off, it ignores a PSB+'s FUP
 * where the first packet after it that is neither a PAD, a timing packet, a PSBEND nor
 * a status-only packet is a TIP.PGE (pt_qry_header_fup in libipt 2.0): that FUP then sets
 * neither the last IP nor tracing on. Whether it does so for the FUP that ends at after:
 * 1 or 0, or libipt's negative error code where that look ahead fails (the query decoder
 * then fails reading the PSB+). */
int jf_fast_bdm70_ignores_fup(struct fast *f, uint64_t after)
{
	struct pt_packet p;
	int status = pt_pkt_sync_set(f->psbs, after);

	while (status >= 0) {
		status = pt_pkt_next(f->psbs, &p, sizeof(p));
		if (status < 0)
			break;
		switch (p.type) {
		case ppt_tip_pge:
			return 1;
		case ppt_pad:
		case ppt_tsc:
		case ppt_cbr:
		case ppt_psbend:
		case ppt_pip:
		case ppt_mode:
		case ppt_vmcs:
		case ppt_tma:
		case ppt_mtc:
		case ppt_cyc:
		case ppt_mnt:
			continue;
		default:
			return 0;
		}
	}
	/* The end of the trace ends the look ahead, without an error. */
	return status == -pte_eos ? 0 : status;
}

/* Erratum SKD007 (an OVF may overlap a CYC): libipt's query decoder takes a two-byte CYC
 * whose second byte is 0x02 (an extended opcode's) followed by 0xf3 for the start of an OVF,
 * and reads that OVF from the CYC's second byte on (pt_qry_decode_cyc). Whether the CYC p
 * at off is one. */
int jf_fast_skd007_hits(const struct fast *f, const struct pt_packet *p, uint64_t off)
{
	const uint8_t *t = f->cfg.trace;

	return f->skd007 && p->size == 2 && (p->payload.cyc.value & 0xffe0) == 0x20 &&
	       off + 2 < f->cfg.size && t[off + 2] == 0xf3;
}
