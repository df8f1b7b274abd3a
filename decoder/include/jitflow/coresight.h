/* CoreSight backend: OpenCSD's decode trees (ETMv4, ETE, PTM, ETMv3) over a jf_codemap,
 * producing the same flow events as the Intel PT backend.
 *
 * A trace is one or more buffers. A buffer is either CoreSight-formatted (16-byte frames
 * that interleave several sources, told apart by trace ID) or the raw stream of a single
 * source. Each buffer gets its own OpenCSD decode tree with one decoder per source,
 * configured from the source's registers. Sources OpenCSD 1.3.3 cannot turn into
 * instruction flow (STM, ITM, or a source without a known core) are reported with a
 * JF_FLOW_ERROR record (phase JF_PHASE_CONTAINER, text naming the source) and skipped;
 * decoding of the others goes on, and their bytes are counted as lost (JF_LOST_SKIPPED
 * at the end of the buffer, from OpenCSD's demultiplexer statistics).
 *
 * Flow records: flow.source is the trace ID, flow.offset the byte index in the buffer
 * (plus the buffer's base_offset). What each OpenCSD element becomes:
 *   INSTR_RANGE     -> JF_FLOW_BLOCK (start, last, next = end exclusive, ninsn, isa, how it
 *                      ended; JF_BLOCK_LAST_FAILED when the last instruction did not execute)
 *   I_RANGE_NOPATH  -> JF_FLOW_LOST (insns known executed, path unknown)
 *   ADDR_NACC       -> JF_FLOW_LOST(JF_LOST_NO_IMAGE), ip = the address without code
 *   EXCEPTION       -> JF_FLOW_ASYNC, u.async.kind = exception number, u.async.from = the
 *                      preferred return address (ip is suppressed: the next block starts at
 *                      the handler)
 *   EXCEPTION_RET   -> JF_FLOW_ASYNC, u.async.kind = JF_CS_ASYNC_EXCEPTION_RETURN
 *   TRACE_ON        -> JF_FLOW_ENABLED (after an overflow: JF_FLOW_OVERFLOW)
 *   NO_SYNC         -> JF_FLOW_LOST(JF_LOST_NO_SYNC) at the start of a stream or after a
 *                      reset, JF_FLOW_ERROR after a bad packet, JF_FLOW_OVERFLOW after an
 *                      overflow
 *   EO_TRACE        -> JF_FLOW_DISABLED (the source's data in this buffer ends)
 *   PE_CONTEXT      -> JF_FLOW_CONTEXT (context ID as tid, -1 when not traced; EL; VMID)
 *   TIMESTAMP       -> JF_FLOW_TIME; later records carry that time (JF_FLOW_HAS_TIME)
 *   CYCLE_COUNT     -> JF_FLOW_OTHER "cycles": a = the cycles the element counts, b = the
 *                      source's cycles so far; a block with a cycle count is followed by
 *                      such a record too. (Cycle counts are in core clock cycles, a clock
 *                      of their own, so they do not go into the timestamp field.)
 *   EVENT, SWTRACE, SYNC_MARKER, MEMTRANS, CUSTOM -> JF_FLOW_OTHER, named after the element
 * Decode failures reported by OpenCSD become JF_FLOW_ERROR records with the trace offset;
 * the tree is reset and decoding goes on at the next frame (formatted) or byte (raw).
 * OpenCSD crashing is handled the same way when the decoder runs isolated (isolate.h):
 * the crashing frame or byte is skipped (JF_FLOW_LOST, JF_LOST_DECODER_CRASH).
 *
 * Memory: code is read from the code map through OpenCSD's callback accessor. OpenCSD
 * 1.3.3 caches memory pages by address only, so whenever jf_codemap_generation() changes
 * the accessor is removed and added again (which drops the cache) before more trace is
 * decoded. Decoding is lazy: with lookahead 1 (the default), an element is decoded only
 * when the previous one has been consumed, so a code-map change made after a record was
 * returned applies to every record returned after it (up to the OpenCSD packet in
 * progress: elements of one packet that were already resolved are not decoded again). */
#ifndef JITFLOW_CORESIGHT_H
#define JITFLOW_CORESIGHT_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/decoder.h"

#ifdef __cplusplus
extern "C" {
#endif

enum jf_cs_protocol {
	JF_CS_PROTO_UNKNOWN = 0,
	JF_CS_PROTO_ETMV4I,
	JF_CS_PROTO_ETE,
	JF_CS_PROTO_ETMV3,
	JF_CS_PROTO_PTM,
	JF_CS_PROTO_STM,     /* not decoded (reported) */
	JF_CS_PROTO_ITM,     /* not decoded (reported) */
};

/* Architecture and profile of the traced core (how OpenCSD decodes its instructions). */
enum jf_cs_arch {
	JF_CS_ARCH_UNKNOWN = 0,
	JF_CS_ARCH_V7,
	JF_CS_ARCH_V8,
	JF_CS_ARCH_V8R3,
	JF_CS_ARCH_AA64,
};

enum jf_cs_profile {
	JF_CS_PROFILE_UNKNOWN = 0,
	JF_CS_PROFILE_A,
	JF_CS_PROFILE_R,
	JF_CS_PROFILE_M,
};

/* u.async.kind of an exception return (exceptions use their exception number). */
#define JF_CS_ASYNC_EXCEPTION_RETURN 0xffffffffu

enum { JF_CS_NAME_MAX = 64 };

/* One trace source and its programming. Only the registers of its protocol are used. */
struct jf_cs_source {
	char name[JF_CS_NAME_MAX]; /* e.g. "ETM_0", for messages */
	char core[JF_CS_NAME_MAX]; /* core type, e.g. "Cortex-A57" ("" if none) */
	uint8_t protocol;          /* enum jf_cs_protocol */
	uint8_t arch;              /* enum jf_cs_arch */
	uint8_t profile;           /* enum jf_cs_profile */
	/* ETMv4 and ETE: TRCCONFIGR, TRCTRACEIDR, TRCIDRn (n = 0, 1, 2, 8..13), TRCDEVARCH */
	uint32_t trcconfigr, trctraceidr, trcdevarch;
	uint32_t trcidr[14];
	/* ETMv3 and PTM */
	uint32_t etmcr, etmidr, etmccer, etmtraceidr;
	/* STM (STMTCSR) and ITM (ITMTCR): only their trace IDs, to report them */
	uint32_t stmtcsr, itmtcr;
};

/* The trace ID a source writes under (0 when it has none). */
uint8_t jf_cs_source_trace_id(const struct jf_cs_source *src);
const char *jf_cs_protocol_name(enum jf_cs_protocol protocol);

/* Map a core type name ("Cortex-A53", "ARMv8.3-A", "ARM-AA64", ...) to what OpenCSD
 * needs. Returns 0, or -1 when the name is not known. */
int jf_cs_core_arch(const char *core, uint8_t *arch, uint8_t *profile);

enum {
	JF_CS_FRAMES_ALIGNED = 0,  /* formatted frames, 16-byte aligned (ETB/ETF/ETR dumps) */
	JF_CS_FRAMES_FSYNCS = 1,   /* formatted frames with frame syncs (DSTREAM captures) */
};

struct jf_cs_buffer {
	const char *name;          /* for messages (copied) */
	const uint8_t *data;       /* must outlive the decoder (e.g. a mapped file) */
	size_t size;
	int formatted;             /* 1: CoreSight frames; 0: the raw stream of sources[0] */
	int frames;                /* JF_CS_FRAMES_* when formatted */
	uint64_t base_offset;      /* added to every flow offset from this buffer */
	int release_consumed;      /* data is a file mapping: give pages already decoded back
	                            * to the kernel, so resident memory does not grow with
	                            * the length of the trace */
	const struct jf_cs_source *sources; /* copied */
	size_t nsources;
};

struct jf_cs_config {
	const struct jf_cs_buffer *buffers; /* decoded one after another (copied) */
	size_t nbuffers;
	/* Flow records decoded ahead of the consumer (0 = 1). 1 is exact for code-map changes
	 * (see above); larger values trade that for fewer OpenCSD calls. */
	unsigned lookahead;
};

struct jf_decoder *jf_cs_decoder_new(const struct jf_cs_config *cfg, struct jf_codemap *map,
				     struct jf_error *err);

/* A snapshot folder (snapshot.ini, device .ini files, trace.ini): its memory dumps are
 * added to map (newest wins, in device and dump order) and every buffer in trace.ini is
 * decoded in order. Errors name the file, the line and what was expected.
 *
 * A snapshot's memory is fixed before decoding starts, so this decodes ahead
 * (JF_CS_SNAPSHOT_LOOKAHEAD records): answering OpenCSD's every element with WAIT costs
 * about a third of the speed (juno_r1_1 x200: 8.1 MB/s at lookahead 1, 12.5 MB/s at 256,
 * per CPU second). A caller that changes map while decoding passes lookahead 1 to
 * jf_cs_snapshot_decoder_open. */
enum { JF_CS_SNAPSHOT_LOOKAHEAD = 256 };

struct jf_decoder *jf_cs_snapshot_decoder_new(const char *dir, struct jf_codemap *map,
					      struct jf_error *err);
struct jf_decoder *jf_cs_snapshot_decoder_open(const char *dir, struct jf_codemap *map,
					       unsigned lookahead, struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
