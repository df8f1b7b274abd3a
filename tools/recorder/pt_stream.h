/* One thread's Intel PT packet stream, written with libipt's encoder.
 *
 * The recorder tells the stream what the thread did (a conditional branch went this way,
 * an indirect branch went there, the thread left or re-entered user space, ...) and the
 * stream chooses the packets a real processor tracing user space with return compression
 * would have written: TNT bits (flushed before any packet that needs ordering), TIP with
 * IP compression against the last IP, compressed returns for returns that match the call
 * stack (64 entries, cleared at every PSB and trace disable, exactly as decoders expect),
 * TIP.PGD/TIP.PGE around system calls and signals, FUP for asynchronous events, PSB+ (with
 * TSC, TMA, CBR, MODE.EXEC and FUP) every psb_period bytes, MTC and CYC timing, and PTW.
 *
 * Timing is synthetic: the "TSC" is an instruction-count clock supplied by the recorder.
 * Complete chunks of bytes go to a sink as they fill; nothing grows with the trace. */
#ifndef JITFLOW_RECORDER_PT_STREAM_H
#define JITFLOW_RECORDER_PT_STREAM_H

#include <stddef.h>
#include <stdint.h>

struct pt_encoder;

/* Receives complete chunks of the stream, in order. Returns 0, or -1 to fail. */
typedef int (*jf_pt_sink_fn)(void *ctx, const uint8_t *bytes, size_t size);

/* Synthetic clock: one instruction = JF_PT_TSC_PER_INSN TSC ticks = one core cycle = one
 * crystal clock (CTC) tick. The core ratio (CBR) is therefore JF_PT_TSC_PER_INSN times
 * slower than the TSC's nominal ratio (JF_PT_NONTURBO_RATIO). */
enum {
	JF_PT_TSC_PER_INSN = 8,
	JF_PT_NONTURBO_RATIO = 32,
	JF_PT_CBR = JF_PT_NONTURBO_RATIO / JF_PT_TSC_PER_INSN,
	JF_PT_MTC_PERIOD = 9,     /* MTC every 2^9 CTC ticks (config mtc_period) */
	JF_PT_PSB_PERIOD = 4096,  /* bytes between PSBs (config psb_period=1: 2^(1+11)) */
	JF_PT_PSB_PERIOD_CFG = 1,
	JF_PT_CHUNK = 1 << 16,    /* bytes handed to the sink at a time */
	JF_PT_RETSTACK = 64,
};

/* The clock does not start at zero (decoders take a zero TSC for "no time yet"): the
 * recording begins one second of synthetic time after the epoch. */
#define JF_PT_CLOCK_BASE 1000000000ull

/* perf's time (ns) for an instruction-clock value: ns = TSC >> 3 = instructions. */
static inline uint64_t jf_pt_perf_time(uint64_t clock)
{
	return clock + JF_PT_CLOCK_BASE;
}

struct jf_pt_stats {
	uint64_t bytes, psb, tnt_bits, tnt_packets, tip, tip_pge, tip_pgd, fup, mode_exec,
		 tsc, mtc, cyc, ptw, ovf, ret_compressed;
};

struct jf_pt_stream {
	struct pt_encoder *enc;
	jf_pt_sink_fn sink;
	void *sink_ctx;
	int timing;              /* emit TSC/TMA/MTC/CYC/CBR */
	int enabled;             /* between TIP.PGE and TIP.PGD */
	int filtered;            /* an IP filter is set: while it keeps tracing off, no MTC
	                          * is written; the next TIP.PGE comes after a PSB+ (whose
	                          * TSC dates it) when MTCs were left out */
	int mtc_skipped;
	uint64_t last_ip;        /* for IP compression; 0 after PSB */
	uint64_t tnt_bits;       /* pending TNT bits, oldest in the highest position */
	unsigned tnt_count;
	uint64_t retstack[JF_PT_RETSTACK];
	unsigned ret_top, ret_depth;
	uint64_t since_psb;      /* bytes written since the last PSB */
	uint64_t now;            /* instruction clock of the thread's current position */
	uint64_t last_cyc;       /* instruction clock at the last CYC */
	uint64_t last_mtc;       /* CTC value covered by the last MTC */
	int error;
	struct jf_pt_stats stats;
	uint8_t buf[JF_PT_CHUNK];
};

/* timing: also emit the synthetic timing packets. Returns 0 or -1 (allocation). */
int jf_pt_stream_init(struct jf_pt_stream *s, jf_pt_sink_fn sink, void *sink_ctx, int timing);
/* Hands the remaining bytes to the sink and frees the encoder. */
int jf_pt_stream_finish(struct jf_pt_stream *s);

/* Advance the clock to `now` instructions (monotonic). Emits MTC packets as the crystal
 * clock passes their period. */
void jf_pt_advance(struct jf_pt_stream *s, uint64_t now);

/* Tracing starts (or restarts after a system call) at ip: TIP.PGE. The first call also
 * writes the stream's first PSB+. */
void jf_pt_enable(struct jf_pt_stream *s, uint64_t ip);
/* Leaving user space through a system call: TIP.PGD without an IP. */
void jf_pt_disable(struct jf_pt_stream *s);
/* A branch left the IP filter's ranges for ip (outside): TIP.PGD with ip; the branch
 * itself writes no TNT bit or TIP, as in hardware. */
void jf_pt_filter_disable(struct jf_pt_stream *s, uint64_t ip);
/* Data was lost while the IP filter keeps tracing off: OVF alone; TIP.PGE follows. */
void jf_pt_overflow_outside(struct jf_pt_stream *s);
/* Asynchronous exit at ip (a signal arrived between instructions): FUP + TIP.PGD. */
void jf_pt_async_disable(struct jf_pt_stream *s, uint64_t ip);
/* Data was lost; tracing resumes at ip: OVF + FUP. */
void jf_pt_overflow(struct jf_pt_stream *s, uint64_t ip);

void jf_pt_cond(struct jf_pt_stream *s, int taken);
void jf_pt_indirect(struct jf_pt_stream *s, uint64_t target);
void jf_pt_call(struct jf_pt_stream *s, uint64_t return_ip);
void jf_pt_return(struct jf_pt_stream *s, uint64_t target);
void jf_pt_ptwrite(struct jf_pt_stream *s, uint64_t payload);

/* Between two blocks, at ip: a PSB+ when psb_period bytes have passed. */
void jf_pt_boundary(struct jf_pt_stream *s, uint64_t ip);

#endif
