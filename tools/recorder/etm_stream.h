/* An ETMv4 instruction trace stream written packet by packet, as a trace unit that traces
 * EL0 only (perf record -e cs_etm//u) writes it: A-Sync and Trace Info at the start and
 * periodically, Trace On where tracing starts again, Address with Context (64-bit, IS0,
 * EL0, non-secure, 32-bit context ID = thread ID), E/N atoms packed three to a byte,
 * addresses after indirect branches (compressed against the one before), and Exception packets followed by their preferred
 * return address and the untraced vector the core went to.
 *
 * Timestamp packets (TRCCONFIGR.TS) carry the recorder's synthetic clock, compressed
 * against the one before as a trace unit does.
 *
 * Packet formats: ARM IHI 0064 (ETMv4 architecture specification), "Trace packet types".
 * No speculation, no cycle counts: every atom is committed at once. */
#ifndef JITFLOW_RECORDER_ETM_STREAM_H
#define JITFLOW_RECORDER_ETM_STREAM_H

#include <stddef.h>
#include <stdint.h>

/* ETMv4 exception types (the Exception packet's TYPE field). */
enum jf_etm_exception {
	JF_ETM_EXC_CALL = 0x2, /* SVC, HVC, SMC */
	JF_ETM_EXC_IRQ = 0xe,  /* what takes a core from one thread to another */
};

/* Where a core that traces EL0 only goes on an exception: the (untraced) EL1 vector for a
 * synchronous exception from AArch64 EL0 (VBAR_EL1 + 0x400), at a typical Linux VBAR_EL1,
 * and for an IRQ (VBAR_EL1 + 0x480). The trace shows them as hardware does; no atom is
 * ever decoded there. */
#define JF_ETM_VECTOR_SYNC 0xffff800008010400ull
#define JF_ETM_VECTOR_IRQ 0xffff800008010480ull

struct jf_etm_stream {
	uint8_t *buf;
	size_t size, cap;
	uint8_t atoms;             /* atoms not yet written, oldest in bit 0 (1 = E) */
	int natoms;
	size_t last_sync;          /* where the last A-Sync starts */
	uint64_t last_address;     /* the last address written, which the next is written
	                            * against */
	int have_last_address;
	uint64_t last_timestamp;   /* the last timestamp written since the last sync */
	int have_last_timestamp;
	size_t *sync_at;           /* where each A-Sync starts: a decoder can start there */
	size_t nsync, sync_cap;
	int failed;                /* out of memory: everything after is dropped */
	uint64_t atom_count, exceptions, syncs, timestamps, overflows;
};

/* Bytes between A-Syncs (TRCSYNCPR.PERIOD = 12: every 4096 bytes). */
enum { JF_ETM_SYNC_PERIOD = 4096 };

void jf_etm_init(struct jf_etm_stream *s);
void jf_etm_free(struct jf_etm_stream *s);

/* A-Sync, then Trace Info with no optional fields. The decoder then waits for an
 * address. */
void jf_etm_sync(struct jf_etm_stream *s);
/* Whether an A-Sync is due (JF_ETM_SYNC_PERIOD bytes since the last). */
int jf_etm_sync_due(const struct jf_etm_stream *s);
void jf_etm_trace_on(struct jf_etm_stream *s);
/* An Overflow packet (trace the unit could not write: what ran since the last waypoint
 * is lost), then an A-Sync and Trace Info, after which the decoder waits for an address.
 * Returns the Overflow's offset. */
size_t jf_etm_overflow(struct jf_etm_stream *s);
/* Address with Context: execution (EL0, AArch64, non-secure) continues at addr in the
 * thread whose context ID is context_id. */
void jf_etm_address_context(struct jf_etm_stream *s, uint64_t addr, uint32_t context_id);
/* An address: the target of the indirect branch whose E atom came last. */
void jf_etm_address(struct jf_etm_stream *s, uint64_t addr);
/* The outcome of one branch (waypoint): taken = E, not taken = N. */
void jf_etm_atom(struct jf_etm_stream *s, int taken);
/* An exception taken from EL0 before the instruction at return_addr (all instructions
 * before it, from the last waypoint on, executed), into the untraced vector. */
void jf_etm_exception(struct jf_etm_stream *s, enum jf_etm_exception type,
		      uint64_t return_addr, uint64_t vector);
/* A Timestamp packet: the time (perf's nanoseconds) of what comes next. */
void jf_etm_timestamp(struct jf_etm_stream *s, uint64_t time);
/* Writes atoms still held. */
void jf_etm_flush(struct jf_etm_stream *s);
/* Brings the stream to a multiple of 8 bytes with a Timestamp of time (now: the time of
 * what comes next), written as long as it takes. perf pads an AUXTRACE record's data to 8
 * bytes with zeros, which a decoder reads as an A-Sync that never completes, and OpenCSD
 * then drops what it still held (a last Timestamp): pieces that start at an A-Sync written
 * on 8 bytes and end at the next one or at an aligned end need no padding. */
void jf_etm_align(struct jf_etm_stream *s, uint64_t time);

#endif
