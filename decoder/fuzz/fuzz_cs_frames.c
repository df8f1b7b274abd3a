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
#include <string.h>

#include "jitflow/coresight.h"

static struct jf_codemap *code(void)
{
	static struct jf_codemap *map;

	if (!map) {
		/* mov x0,#3; subs x0,x0,#1; b.ne -4; ret, repeated over 4 KiB */
		static const uint8_t loop[16] = { 0x60, 0x00, 0x80, 0xd2, 0x00, 0x04, 0x00, 0xf1,
						  0xe1, 0xff, 0xff, 0x54, 0xc0, 0x03, 0x5f, 0xd6 };
		static uint8_t bytes[4096];
		struct jf_error err;
		size_t i;

		for (i = 0; i < sizeof(bytes); i += sizeof(loop))
			memcpy(bytes + i, loop, sizeof(loop));
		map = jf_codemap_new();
		if (!map || jf_codemap_add_bytes(map, bytes, sizeof(bytes), 0x10000, "code", &err) < 0)
			abort();
	}
	return map;
}

static void source_for(uint8_t sel, struct jf_cs_source *src)
{
	memset(src, 0, sizeof(*src));
	strcpy(src->name, "fuzz");
	src->arch = JF_CS_ARCH_V8;
	src->profile = JF_CS_PROFILE_A;
	switch (sel & 3) {
	case 0:
		src->protocol = JF_CS_PROTO_ETMV4I;
		src->trcconfigr = 0x1 | ((sel & 0x10) ? 0x10c1 : 0); /* CID, VMID, RS */
		src->trctraceidr = 0x10;
		src->trcidr[0] = 0x28000ea1;
		src->trcidr[1] = 0x4100f403;
		src->trcidr[2] = 0x00000488;
		break;
	case 1:
		src->protocol = JF_CS_PROTO_ETE;
		src->arch = JF_CS_ARCH_AA64;
		src->trcconfigr = 0x1;
		src->trctraceidr = 0x10;
		src->trcdevarch = 0x47705a13;
		src->trcidr[0] = 0x2801cea1;
		src->trcidr[1] = 0x4100fff0;
		src->trcidr[2] = 0xd0001088;
		break;
	case 2:
		src->protocol = JF_CS_PROTO_PTM;
		src->arch = JF_CS_ARCH_V7;
		src->etmcr = 0x10001000;
		src->etmidr = 0x411cf312;
		src->etmccer = 0x34c01ac2;
		src->etmtraceidr = 0x10;
		break;
	default:
		src->protocol = JF_CS_PROTO_ETMV3;
		src->arch = JF_CS_ARCH_V7;
		src->etmcr = 0x10001860;
		src->etmidr = 0x410cf250;
		src->etmccer = 0x344008f2;
		src->etmtraceidr = 0x10;
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_cs_source src;
	struct jf_cs_buffer buf;
	struct jf_cs_config cfg;
	struct jf_error err;
	struct jf_decoder *dec;
	struct jf_flow f;
	size_t n = 0;

	if (size < 1)
		return 0;
	source_for(data[0], &src);
	memset(&buf, 0, sizeof(buf));
	buf.name = "fuzz";
	buf.data = data + 1;
	buf.size = size - 1;
	buf.formatted = (data[0] & 4) != 0;
	buf.frames = (data[0] & 8) ? JF_CS_FRAMES_FSYNCS : JF_CS_FRAMES_ALIGNED;
	buf.sources = &src;
	buf.nsources = 1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.buffers = &buf;
	cfg.nbuffers = 1;
	cfg.lookahead = (data[0] & 0x20) ? 1 : 64;
	dec = jf_cs_decoder_new(&cfg, code(), &err);
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
