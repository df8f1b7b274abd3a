#include "etm_stream.h"

#include <stdlib.h>
#include <string.h>

/* Packet headers (ARM IHI 0064, "Trace packet types"). */
enum {
	HDR_TRACE_INFO = 0x01,
	HDR_TIMESTAMP = 0x02, /* 0000001N: N = 0, no cycle count */
	HDR_TRACE_ON = 0x04,
	HDR_EXCEPTION = 0x06,
	HDR_ADDR_CTXT_64_IS0 = 0x85,
	HDR_ADDR_SHORT_IS0 = 0x95,
	HDR_ADDR_LONG_32_IS0 = 0x9a,
	HDR_ADDR_LONG_64_IS0 = 0x9d,
	HDR_ATOM_F1 = 0xf6, /* 1111011A */
	HDR_ATOM_F2 = 0xd8, /* 110110AA */
	HDR_ATOM_F3 = 0xf8, /* 11111AAA */
	/* Context information byte: EL in bits [1:0], SF (AArch64) bit 4, NS bit 5,
	 * C (a context ID follows) bit 7. */
	CTXT_SF = 0x10,
	CTXT_NS = 0x20,
	CTXT_C = 0x80,
	/* Exception packet, first information byte: E0 bit 0, TYPE[4:0] bits [5:1], E1
	 * bit 6. E1:E0 = 0b01: the preferred return address follows in an address packet. */
	EXC_E0 = 0x01,
};

void jf_etm_init(struct jf_etm_stream *s)
{
	memset(s, 0, sizeof(*s));
}

void jf_etm_free(struct jf_etm_stream *s)
{
	free(s->buf);
	free(s->sync_at);
	memset(s, 0, sizeof(*s));
}

static void put(struct jf_etm_stream *s, const uint8_t *bytes, size_t n)
{
	if (s->failed)
		return;
	if (s->size + n > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1 << 16;
		uint8_t *nb;

		while (cap < s->size + n)
			cap *= 2;
		nb = realloc(s->buf, cap);
		if (!nb) {
			s->failed = 1;
			return;
		}
		s->buf = nb;
		s->cap = cap;
	}
	memcpy(s->buf + s->size, bytes, n);
	s->size += n;
}

static void put_byte(struct jf_etm_stream *s, uint8_t b)
{
	put(s, &b, 1);
}

/* The 8 address bytes of a 64-bit IS0 address: bits [8:2], [15:9], then a byte each for
 * [23:16] .. [63:56]. */
static void put_address64(struct jf_etm_stream *s, uint64_t addr)
{
	uint8_t b[8];
	int i;

	b[0] = (uint8_t)((addr >> 2) & 0x7f);
	b[1] = (uint8_t)((addr >> 9) & 0x7f);
	for (i = 2; i < 8; i++)
		b[i] = (uint8_t)(addr >> (8 * i));
	put(s, b, sizeof(b));
}

void jf_etm_flush(struct jf_etm_stream *s)
{
	switch (s->natoms) {
	case 1:
		put_byte(s, (uint8_t)(HDR_ATOM_F1 | s->atoms));
		break;
	case 2:
		put_byte(s, (uint8_t)(HDR_ATOM_F2 | s->atoms));
		break;
	case 3:
		put_byte(s, (uint8_t)(HDR_ATOM_F3 | s->atoms));
		break;
	}
	s->natoms = 0;
	s->atoms = 0;
}

void jf_etm_sync(struct jf_etm_stream *s)
{
	static const uint8_t async[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80 };
	static const uint8_t info[2] = { HDR_TRACE_INFO, 0x00 /* PLCTL: no fields */ };

	jf_etm_flush(s);
	s->last_sync = s->size;
	if (s->nsync == s->sync_cap) {
		size_t cap = s->sync_cap ? s->sync_cap * 2 : 64;
		size_t *n = realloc(s->sync_at, cap * sizeof(*n));

		if (!n) {
			s->failed = 1;
			return;
		}
		s->sync_at = n;
		s->sync_cap = cap;
	}
	s->sync_at[s->nsync++] = s->size;
	put(s, async, sizeof(async));
	put(s, info, sizeof(info));
	/* The decoder forgets its addresses and timestamp at a Trace Info. */
	s->have_last_address = 0;
	s->have_last_timestamp = 0;
	s->syncs++;
}

int jf_etm_sync_due(const struct jf_etm_stream *s)
{
	return s->size - s->last_sync >= JF_ETM_SYNC_PERIOD;
}

void jf_etm_trace_on(struct jf_etm_stream *s)
{
	jf_etm_flush(s);
	put_byte(s, HDR_TRACE_ON);
}

static void address_context(struct jf_etm_stream *s, uint64_t addr, unsigned el,
			    const uint32_t *context_id)
{
	jf_etm_flush(s);
	put_byte(s, HDR_ADDR_CTXT_64_IS0);
	put_address64(s, addr);
	s->last_address = addr;
	s->have_last_address = 1;
	put_byte(s, (uint8_t)(el | CTXT_SF | CTXT_NS | (context_id ? CTXT_C : 0)));
	if (context_id) {
		uint8_t b[4] = { (uint8_t)*context_id, (uint8_t)(*context_id >> 8),
				 (uint8_t)(*context_id >> 16), (uint8_t)(*context_id >> 24) };

		put(s, b, sizeof(b));
	}
}

void jf_etm_address_context(struct jf_etm_stream *s, uint64_t addr, uint32_t context_id)
{
	address_context(s, addr, 0, &context_id);
}

/* Addresses are compressed against the last one, as a trace unit does: a short address
 * replaces bits [8:2] (one byte) or [16:2] (two bytes: the first with its continuation
 * bit, then bits [16:9]), a 32-bit long address bits [31:2]. */
void jf_etm_address(struct jf_etm_stream *s, uint64_t addr)
{
	uint64_t diff = addr ^ s->last_address;

	jf_etm_flush(s);
	if (s->have_last_address && diff < (1u << 9)) {
		put_byte(s, HDR_ADDR_SHORT_IS0);
		put_byte(s, (uint8_t)((addr >> 2) & 0x7f));
	} else if (s->have_last_address && diff < (1u << 17)) {
		put_byte(s, HDR_ADDR_SHORT_IS0);
		put_byte(s, (uint8_t)(0x80 | ((addr >> 2) & 0x7f)));
		put_byte(s, (uint8_t)(addr >> 9));
	} else if (s->have_last_address && diff < (1ull << 32)) {
		uint8_t b[4] = { (uint8_t)((addr >> 2) & 0x7f), (uint8_t)((addr >> 9) & 0x7f),
				 (uint8_t)(addr >> 16), (uint8_t)(addr >> 24) };

		put_byte(s, HDR_ADDR_LONG_32_IS0);
		put(s, b, sizeof(b));
	} else {
		put_byte(s, HDR_ADDR_LONG_64_IS0);
		put_address64(s, addr);
	}
	s->last_address = addr;
	s->have_last_address = 1;
}

/* Only the low bits that changed are written: byte k (k < 8) carries bits [7k+6:7k] with a
 * continuation bit, a ninth byte bits [63:56]; the decoder keeps the bits above. Returns
 * how many value bytes time needs. */
static int timestamp_bytes(const struct jf_etm_stream *s, uint64_t time)
{
	uint64_t diff = s->have_last_timestamp ? time ^ s->last_timestamp : time;
	int n = 1;

	while (n < 9 && diff >> (7 * n))
		n++;
	return n;
}

/* A Timestamp packet with n value bytes (at least timestamp_bytes). */
static void put_timestamp(struct jf_etm_stream *s, uint64_t time, int n)
{
	uint8_t b[9];
	int i;

	for (i = 0; i < n && i < 8; i++)
		b[i] = (uint8_t)(((time >> (7 * i)) & 0x7f) | (i + 1 < n ? 0x80 : 0));
	if (n == 9)
		b[8] = (uint8_t)(time >> 56);
	jf_etm_flush(s);
	put_byte(s, HDR_TIMESTAMP);
	put(s, b, (size_t)n);
	s->last_timestamp = time;
	s->have_last_timestamp = 1;
	s->timestamps++;
}

void jf_etm_timestamp(struct jf_etm_stream *s, uint64_t time)
{
	put_timestamp(s, time, timestamp_bytes(s, time));
}

void jf_etm_align(struct jf_etm_stream *s, uint64_t time)
{
	jf_etm_flush(s);
	while (s->size % 8 && !s->failed) {
		int need = timestamp_bytes(s, time), room = (int)(8 - s->size % 8);

		/* A packet is 1 + n bytes (n <= 9): room 1 takes 9, room 2 can take 10. */
		if (room == 1 && need <= 8)
			put_timestamp(s, time, 8);
		else if (room >= 2 && need <= room - 1)
			put_timestamp(s, time, room - 1);
		else if (room == 2)
			put_timestamp(s, time, 9);
		else
			put_timestamp(s, time, need); /* then a short one fills the rest */
	}
}
size_t jf_etm_overflow(struct jf_etm_stream *s)
{
	size_t at;

	jf_etm_flush(s);
	at = s->size;
	/* An extension packet (header 0x00) whose payload 0x05 says Overflow. */
	put_byte(s, 0x00);
	put_byte(s, 0x05);
	s->overflows++;
	/* A trace unit that overflowed restarts with a Trace Info; the A-Sync before it is
	 * where a decoder finds its way back. */
	jf_etm_sync(s);
	return at;
}

void jf_etm_atom(struct jf_etm_stream *s, int taken)
{
	s->atoms |= (uint8_t)((taken ? 1 : 0) << s->natoms);
	s->natoms++;
	s->atom_count++;
	if (s->natoms == 3)
		jf_etm_flush(s);
}

void jf_etm_exception(struct jf_etm_stream *s, enum jf_etm_exception type,
		      uint64_t return_addr, uint64_t vector)
{
	jf_etm_flush(s);
	put_byte(s, HDR_EXCEPTION);
	put_byte(s, (uint8_t)(((unsigned)type & 0x1f) << 1 | EXC_E0));
	jf_etm_address(s, return_addr);
	/* The core is at EL1 now, where the trace unit does not trace: it says where it went
	 * (without a context ID, which EL1 does not change) and then stays silent. */
	address_context(s, vector, 1, NULL);
	s->exceptions++;
}

