/* Internal: the one-byte packets of Intel PT read in place (PADs and TNT-8s, the most
 * frequent), as libipt's pt_df_fetch and pt_pkt_read_tnt_8 read them: by the packet loop
 * (pt_fast_packets.c) and by the TNT path cache's look at the packet after the one it
 * follows (pt_fast_emit.c). */
#ifndef JITFLOW_PT_FAST_SHORT_PACKETS_H
#define JITFLOW_PT_FAST_SHORT_PACKETS_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

/* The first byte from off on that is not a PAD (0x00), or size: eight bytes at a time, as
 * a PSB+ and the packets around it are padded in runs (28% of the bytes of ../shared's
 * Unzip; byte by byte, 5% of `stat`'s instructions there). */
static inline uint64_t past_pads(const uint8_t *t, uint64_t off, uint64_t size)
{
	uint64_t w;

	for (; off + sizeof(w) <= size; off += sizeof(w)) {
		memcpy(&w, t + off, sizeof(w));
		w = le64toh(w);
		if (w)
			return off + (unsigned)__builtin_ctzll(w) / 8;
	}
	while (off < size && t[off] == 0x00)
		off++;
	return off;
}

/* Whether byte is a TNT-8's (even, neither a PAD nor 0x02, which starts the extended
 * opcodes). */
static inline int tnt8(unsigned byte)
{
	return !(byte & 1) && byte != 0x00 && byte != 0x02;
}

/* The bits of a TNT-8 (byte): those below the highest set bit (the stop bit) of byte >> 1
 * (not zero: byte is even, neither 0x00 nor 0x02), and their count (*k). */
static inline unsigned tnt8_bits(unsigned byte, unsigned *k)
{
	unsigned v = byte >> 1;

	*k = 31u - (unsigned)__builtin_clz(v);
	return v & ~(1u << *k);
}

#endif
