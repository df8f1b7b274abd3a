/* Building a CoreSight decoder from a fuzz input (see cs_frames_input.h). */
#include "cs_frames_input.h"

#include <stdlib.h>
#include <string.h>

struct jf_codemap *jf_cs_frames_code(void)
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

struct jf_decoder *jf_cs_frames_decoder(const uint8_t *data, size_t size, struct jf_error *err)
{
	static struct jf_cs_source src;
	static struct jf_cs_buffer buf;
	struct jf_cs_config cfg;

	if (size < 1)
		return NULL;
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
	return jf_cs_decoder_new(&cfg, jf_cs_frames_code(), err);
}
