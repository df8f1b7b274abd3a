#include "cs_synthetic.h"

#include "test_support.h"

#include <stdio.h>
#include <string.h>

/* Version A, at 0x10000:
 *   10000  d2800060  mov  x0, #3
 *   10004  f1000400  subs x0, x0, #1     <- loop
 *   10008  54ffffe1  b.ne 10004
 *   1000c  d65f03c0  ret                (to 0x10000: the caller runs it again)
 * b.ne is taken twice (x0 = 2, 1) and falls through once (x0 = 0). */
const uint8_t cs_syn_code_a[16] = {
	0x60, 0x00, 0x80, 0xd2,
	0x00, 0x04, 0x00, 0xf1,
	0xe1, 0xff, 0xff, 0x54,
	0xc0, 0x03, 0x5f, 0xd6,
};

/* Version B, written over A at the same address:
 *   10000  d2800040  mov  x0, #2
 *   10004  d503201f  nop                 <- loop
 *   10008  d503201f  nop
 *   1000c  f1000400  subs x0, x0, #1
 *   10010  54ffffa1  b.ne 10004
 * b.ne is taken once (x0 = 1) and falls through once (x0 = 0). */
const uint8_t cs_syn_code_b[20] = {
	0x40, 0x00, 0x80, 0xd2,
	0x1f, 0x20, 0x03, 0xd5,
	0x1f, 0x20, 0x03, 0xd5,
	0x00, 0x04, 0x00, 0xf1,
	0xa1, 0xff, 0xff, 0x54,
};

/* ETMv4 instruction trace packets (ARM IHI 0064, "Trace packet types"). Addresses in
 * "long address, 64-bit, IS0" packets: byte 1 = address bits [8:2], byte 2 = bits [15:9],
 * bytes 3..8 = bits [23:16] .. [63:56]. Atom bits are oldest first from bit 0, 1 = E
 * (executed / branch taken), 0 = N. */
#define ADDR64_IS0(a)                                                          \
	0x9d, (uint8_t)(((a) >> 2) & 0x7f), (uint8_t)(((a) >> 9) & 0x7f),      \
	(uint8_t)((a) >> 16), (uint8_t)((a) >> 24), (uint8_t)((uint64_t)(a) >> 32), \
	(uint8_t)((uint64_t)(a) >> 40), (uint8_t)((uint64_t)(a) >> 48),        \
	(uint8_t)((uint64_t)(a) >> 56)

const uint8_t cs_syn_trace[] = {
	/* 0: A-Sync: eleven 0x00 then 0x80 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,
	/* 12: Trace Info, PLCTL = 0 (no optional fields) */
	0x01, 0x00,
	/* 14: Trace On */
	0x04,
	/* 15: Context: EL1, AArch64 (SF), non-secure (NS); no VMID, no context ID */
	0x81, 0x31,
	/* 17: Address 0x10000: execution starts there */
	ADDR64_IS0(CS_SYN_BASE),
	/* 26: Atom format 3, E E N: b.ne taken, taken, not taken */
	0xfb,
	/* 27: Atom format 1, E: ret executed (an indirect branch: its target follows) */
	0xf7,
	/* 28 = part 2: Address 0x10000, where ret went. The code there was rewritten while
	 * the caller ran (untraced work of a JIT), without any break in the trace. */
	ADDR64_IS0(CS_SYN_BASE),
	/* 37: Atom format 2, E N */
	0xd9,
};
const size_t cs_syn_trace_size = sizeof(cs_syn_trace);
const size_t cs_syn_part2 = 28;

/* CoreSight formatter frames (CoreSight Architecture, "Trace formatter"): 16 bytes, of
 * which byte 15 holds one flag bit for each even byte 0, 2, .., 14. An even byte with bit 0
 * set is a trace ID change (ID = byte >> 1; flag 0: it applies from the next byte on);
 * otherwise it is data whose bit 0 is its flag bit. Odd bytes 1..13 are plain data. Here
 * each frame starts with the ID, followed by 14 data bytes. */
size_t cs_syn_frames(const uint8_t *data, size_t size, uint8_t id, uint8_t *out, size_t cap)
{
	size_t used = 0, n = 0;

	while (used < size && n + 16 <= cap) {
		uint8_t *f = out + n, aux = 0;
		int j;

		f[0] = (uint8_t)(id << 1 | 1);
		for (j = 1; j < 15; j++) {
			uint8_t d = used < size ? data[used++] : 0x80; /* I_CTXT, no change */

			if (j & 1) {
				f[j] = d;
			} else {
				f[j] = d & 0xfe;
				aux |= (uint8_t)((d & 1) << (j / 2));
			}
		}
		f[15] = aux;
		n += 16;
	}
	return n;
}

/* An ETMv4.0 on a Cortex-A53: 64-bit instruction addresses (TRCIDR2.IASIZE = 8), 32-bit
 * context IDs, no speculation (TRCIDR8 = 0: atoms commit at once), trace ID 0x10. */
void cs_syn_source(struct jf_cs_source *src)
{
	memset(src, 0, sizeof(*src));
	snprintf(src->name, sizeof(src->name), "ETM_0");
	snprintf(src->core, sizeof(src->core), "Cortex-A53");
	src->protocol = JF_CS_PROTO_ETMV4I;
	src->arch = JF_CS_ARCH_V8;
	src->profile = JF_CS_PROFILE_A;
	src->trcconfigr = 0x1;
	src->trctraceidr = CS_SYN_TRACE_ID;
	src->trcidr[0] = 0x28000ea1;
	src->trcidr[1] = 0x4100f403;
	src->trcidr[2] = 0x00000488;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	jf_test_write_file(path, text, strlen(text));
}

void cs_syn_write_snapshot(const char *dir)
{
	char path[1024];

	put(dir, "snapshot.ini",
	    "[snapshot]\nversion=1.0\n\n[device_list]\ndevice0=cpu.ini\ndevice1=etm.ini\n\n"
	    "[trace]\nmetadata=trace.ini\n");
	put(dir, "cpu.ini",
	    "[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n\n[regs]\nPC(size:64)=0x10000\n\n"
	    "[dump1]\nfile=code_a.bin\naddress=0x10000\nlength=0x10\n");
	put(dir, "etm.ini",
	    "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n\n[regs]\n"
	    "TRCCONFIGR(0x004)=0x00000001\nTRCTRACEIDR(0x010)=0x00000010\n"
	    "TRCIDR0(0x078)=0x28000EA1\nTRCIDR1(0x079)=0x4100F403\nTRCIDR2(0x07A)=0x00000488\n"
	    "TRCIDR8(0x060)=0x00000000\n");
	put(dir, "trace.ini",
	    "[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=ETB_0\nfile=trace.bin\n"
	    "format=source_data\n\n[source_buffers]\nETM_0=ETB_0\n\n"
	    "[core_trace_sources]\ncpu_0=ETM_0\n");
	snprintf(path, sizeof(path), "%s/code_a.bin", dir);
	jf_test_write_file(path, cs_syn_code_a, sizeof(cs_syn_code_a));
	snprintf(path, sizeof(path), "%s/trace.bin", dir);
	jf_test_write_file(path, cs_syn_trace, cs_syn_trace_size);
}

struct jf_decoder *cs_syn_decoder(const uint8_t *trace, size_t size, int formatted, int frames,
				  struct jf_codemap *map)
{
	struct jf_cs_source src;
	struct jf_cs_buffer buf;
	struct jf_cs_config cfg;
	struct jf_error err;
	struct jf_decoder *dec;

	cs_syn_source(&src);
	memset(&buf, 0, sizeof(buf));
	buf.name = "synthetic";
	buf.data = trace;
	buf.size = size;
	buf.formatted = formatted;
	buf.frames = frames;
	buf.sources = &src;
	buf.nsources = 1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.buffers = &buf;
	cfg.nbuffers = 1;
	cfg.lookahead = 1;
	dec = jf_cs_decoder_new(&cfg, map, &err);
	if (!dec)
		fail_msg("%s", err.msg);
	return dec;
}
