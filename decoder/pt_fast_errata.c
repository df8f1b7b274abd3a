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
