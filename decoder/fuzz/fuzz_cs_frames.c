/* libFuzzer target for the CoreSight decode path: the input's first byte chooses the
 * protocol (ETMv4, ETE, PTM, ETMv3) and formatted frames or a raw stream; the rest goes
 * through an OpenCSD decode tree over a code map holding a small A64/A32 program. Decoding
 * must end, with bounded output, whatever the bytes.
 *
 * Known findings, all inside OpenCSD 1.3.3 and reproduced with its own trc_pkt_lister on
 * the same bytes (so not fixable here): on corrupt ETMv4/ETE streams,
 * TrcPktDecodeEtmV4I::mispredictAtom() dereferences a stale P0 stack element (segfault,
 * trc_pkt_lister exits 139), processException() reads freed memory, and cancelElements()
 * loops on an uninitialised count (valgrind: "conditional jump depends on uninitialised
 * value"). Run with -fork=1 -ignore_crashes=1 to look past them, and with
 * ASAN_OPTIONS=detect_leaks=0 or lsan.supp for OpenCSD's per-tree leak. */
#include <stdint.h>
#include <stdlib.h>

#include "cs_frames_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_error err;
	struct jf_decoder *dec;
	struct jf_flow f;
	size_t n = 0;

	if (size < 1)
		return 0;
	dec = jf_cs_frames_decoder(data, size, &err);
	if (!dec)
		abort(); /* the configuration is valid: creating must work */
	while (jf_decoder_next(dec, &f, &err) > 0) {
		/* Each trace byte yields a bounded number of records (an atom byte at most a
		 * few ranges): far more means the decoder is stuck. */
		if (++n > 64 * (size + 16))
			abort();
	}
	jf_decoder_free(dec);
	return 0;
}
