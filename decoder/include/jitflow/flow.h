/* Flow events: what every decoder backend (Intel PT via libipt, CoreSight via OpenCSD)
 * produces, and all that the analysis ever sees. Backend-neutral by design: nothing here
 * names a packet.
 *
 * A decode is a sequence of `struct jf_flow` records in trace order. Blocks carry the
 * executed instructions; everything else says why the flow is not simply contiguous
 * (tracing switched on or off, an interrupt, lost data, an error) or annotates it (time,
 * PTWRITE payloads, thread context). Nothing is dropped silently: overflows, decode errors
 * and missing code are flow records of their own, located by trace offset and IP. */
#ifndef JITFLOW_FLOW_H
#define JITFLOW_FLOW_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum jf_flow_kind {
	JF_FLOW_BLOCK = 1,   /* u.block: executed instructions */
	JF_FLOW_ENABLED,     /* tracing (re)starts at ip; u.enabled.resumed */
	JF_FLOW_DISABLED,    /* tracing stops; ip = where it would resume (maybe suppressed) */
	JF_FLOW_ASYNC,       /* interrupt, exception, exception return: u.async.from -> ip */
	JF_FLOW_OVERFLOW,    /* the trace hardware dropped packets; resumes at ip */
	JF_FLOW_EXEC_MODE,   /* u.exec_mode.isa applies from ip on */
	JF_FLOW_PTWRITE,     /* u.ptwrite.payload written by the program at ip */
	JF_FLOW_CONTEXT,     /* thread / process / cpu / exception level changed: u.context */
	JF_FLOW_TIME,        /* a timestamp without other flow (time field is valid) */
	JF_FLOW_OTHER,       /* a trace event without flow meaning (paging, power, tsx...):
	                      * u.other.name and two values, kept for listings */
	JF_FLOW_LOST,        /* data lost or skipped: u.lost (bytes, instructions, reason) */
	JF_FLOW_ERROR,       /* decode error: u.error; decoding resumes at the next sync point */
	JF_FLOW_END,         /* end of the trace stream reached (with an IP, like ptxed) */
};

/* How a block ended: the class of its last instruction and, for conditional branches,
 * whether it was taken. */
enum jf_block_end {
	JF_END_UNKNOWN = 0,    /* not known (e.g. truncated by an error or an event) */
	JF_END_NONE,           /* last instruction is not a branch (block cut by an event,
	                        * section boundary or the trace stopping) */
	JF_END_COND_TAKEN,
	JF_END_COND_NOT_TAKEN,
	JF_END_COND,           /* conditional branch, direction not (yet) known */
	JF_END_JUMP,           /* direct unconditional jump */
	JF_END_JUMP_INDIRECT,
	JF_END_CALL,
	JF_END_CALL_INDIRECT,
	JF_END_RETURN,
	JF_END_FAR,            /* far call/jump/return, syscall, sysret, ... */
	JF_END_OTHER,
};

enum jf_isa {
	JF_ISA_UNKNOWN = 0,
	JF_ISA_X86_16,
	JF_ISA_X86_32,
	JF_ISA_X86_64,
	JF_ISA_A64,
	JF_ISA_A32,
	JF_ISA_T32,
};

/* Flags on a block. */
enum {
	JF_BLOCK_SPECULATIVE = 1 << 0,  /* executed speculatively (TSX) */
	JF_BLOCK_TRUNCATED = 1 << 1,    /* last instruction straddles two sections */
	JF_BLOCK_LAST_FAILED = 1 << 2,  /* last instruction did not execute (A32 condition) */
};

struct jf_block {
	uint64_t start;      /* address of the first instruction */
	uint64_t last;       /* address of the last instruction */
	uint64_t next;       /* address after the last instruction (end, exclusive); 0 if
	                      * unknown */
	uint32_t ninsn;      /* instructions in [start, last] */
	uint8_t end;         /* enum jf_block_end */
	uint8_t isa;         /* enum jf_isa */
	uint8_t flags;       /* JF_BLOCK_* */
	uint8_t last_size;   /* size in bytes of the last instruction; 0 if unknown */
};

/* Why data was lost (JF_FLOW_LOST). */
enum jf_lost_reason {
	JF_LOST_SKIPPED = 1, /* trace bytes skipped while resynchronising after an error */
	JF_LOST_AUX_TRUNCATED, /* perf: the AUX buffer was full (PERF_AUX_FLAG_TRUNCATED) */
	JF_LOST_AUX_COLLISION, /* perf: AUX data collided / was overwritten */
	JF_LOST_NO_SYNC,     /* bytes before the first sync point of a buffer */
	JF_LOST_NO_IMAGE,    /* code at ip not in any image (CoreSight ADDR_NACC, missing
	                      * file) */
	JF_LOST_OVERFLOW,    /* hardware overflow */
	JF_LOST_RECORDS,     /* perf: PERF_RECORD_LOST(_SAMPLES) */
	JF_LOST_FILE_CUT,    /* the file ends before its data does (offset: where it ends;
	                      * bytes: how many more its header promised, 0 if unknown) */
	JF_LOST_DECODER_CRASH, /* the decoding library crashed on these bytes (isolated in a
	                      * child process, see isolate.h): skipped to the next sync point */
};

enum jf_error_phase {
	JF_PHASE_DECODE = 0, /* while decoding ("error" in ptxed's words) */
	JF_PHASE_SYNC,       /* while synchronising ("sync error") */
	JF_PHASE_IMAGE,      /* the image does not fit the trace (mismatch) */
	JF_PHASE_CONTAINER,  /* the container (perf.data, snapshot) is malformed */
};

/* Flags on any flow record. */
enum {
	JF_FLOW_IP_SUPPRESSED = 1 << 0, /* ip is not known */
	JF_FLOW_HAS_TIME = 1 << 1,      /* time is valid */
	JF_FLOW_STATUS_UPDATE = 1 << 2, /* an event that restates what is already known (PSB+);
	                                 * listings leave these out, as ptxed does */
	/* A block whose decoder's time was already the block's own when it began, and not
	 * the previous record's: the packets that set it (an event's, read after that
	 * event's record got its own time) came before the block, and none in it. Set only by
	 * a decoder that leaves direct jumps inside its blocks (libipt's without
	 * end_on_jump), for the parts jump_split.h cuts them into; they do not keep it. */
	JF_FLOW_TIMED_AT_START = 1 << 3,
};

enum { JF_FLOW_NAME_MAX = 24 };

struct jf_flow {
	uint16_t kind;       /* enum jf_flow_kind */
	uint16_t flags;      /* JF_FLOW_* */
	uint32_t source;     /* which trace stream: cpu, AUX queue or CoreSight trace id */
	uint64_t offset;     /* byte offset in that stream (or in its container file, see
	                      * jf_decoder's documentation) where this was decoded */
	uint64_t time;       /* in the decoder's clock (ns when a conversion is known,
	                      * otherwise TSC/timestamp ticks); valid with JF_FLOW_HAS_TIME */
	uint64_t ip;         /* the record's main address (see each kind) */
	union {
		struct jf_block block;
		struct { uint8_t resumed; } enabled;
		struct { uint64_t at; } disabled; /* async disable: the interrupted ip, or 0 */
		struct { uint64_t from; uint32_t kind; } async; /* kind: backend-specific code */
		struct { uint8_t isa; } exec_mode;
		struct { uint64_t payload; uint8_t size; } ptwrite;
		struct {
			int32_t pid, tid, cpu;
			uint32_t vmid;
			uint8_t el;       /* exception level / privilege (0 = user) */
		} context;
		struct {
			char name[JF_FLOW_NAME_MAX]; /* e.g. "paging", "cbr" */
			uint64_t a, b;
		} other;
		struct {
			uint64_t bytes;  /* trace bytes lost (0 if unknown) */
			uint64_t insns;  /* instructions known lost (0 if unknown) */
			uint32_t reason; /* enum jf_lost_reason */
		} lost;
		struct {
			int32_t code;        /* backend error code (negative) */
			uint8_t phase;       /* enum jf_error_phase */
			char text[64];       /* the backend's message, e.g. "bad status update" */
		} error;
	} u;
};

/* 1 if a and b are the same record (every field their kind uses), else 0. Records are
 * compared as decoders make them: with the union's unused bytes cleared, except after a
 * block. */
int jf_flow_same(const struct jf_flow *a, const struct jf_flow *b);

/* Names for listings and JSON. */
const char *jf_flow_kind_name(enum jf_flow_kind kind);
const char *jf_block_end_name(enum jf_block_end end);
const char *jf_isa_name(enum jf_isa isa);
const char *jf_lost_reason_name(enum jf_lost_reason reason);
const char *jf_error_phase_name(enum jf_error_phase phase);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
