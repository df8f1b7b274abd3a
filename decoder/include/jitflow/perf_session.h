/* One flow stream for a whole Intel PT perf.data file.
 *
 * AUX data is grouped into queues as perf groups it (by the AUXTRACE records' idx: one
 * queue per CPU with per-CPU mmaps, one per thread otherwise). Each AUXTRACE buffer is
 * decoded with the Intel PT backend straight from the file mapping, with flow offsets that
 * are FILE offsets and source = the CPU (per-CPU) or the queue index (per-thread). The
 * queues are merged in time order, by the time each queue's decoder has reached (where its
 * next flow starts), and only the chosen queue's next flow is decoded: whatever the caller
 * changes in the code map after a flow applies to every flow of every queue that starts
 * later. The sideband (MMAP, COMM, SWITCH, AUX, LOST, ...) is interleaved with them in
 * time order: the caller's on_record hook sees every sideband record before any flow
 * later than it is returned, and thread context and data loss become flow records of
 * their own.
 *
 * Without usable timestamps (no TSC in the trace, no time conversion, or sideband without
 * times) the order is the file's: a buffer's flows come after the sideband written before
 * its AUXTRACE record, as perf writes AUX data after the events that precede it. */
#ifndef JITFLOW_PERF_SESSION_H
#define JITFLOW_PERF_SESSION_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/decoder.h"
#include "jitflow/error.h"
#include "jitflow/perf_data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the caller (the imagemap) decides: which code a process runs, and what each sideband
 * record changes. All may be NULL: then every queue decodes over one empty code map. */
struct jf_perf_session_hooks {
	void *ctx;
	/* The code map of process pid (-1 when not known yet). The map must live until the
	 * decoder is freed; the session never frees it. */
	struct jf_codemap *(*codemap_for_pid)(void *ctx, int32_t pid);
	/* Every sideband record (not AUXTRACE, not FINISHED_ROUND, not unknown types), in
	 * time order, before any flow later than it is returned. */
	void (*on_record)(void *ctx, const struct jf_perf_record *rec);
	/* Optional (with fast_when_settled): whether code changes known to the caller (zone
	 * files) are all applied, so that no code bytes change from here on. The session
	 * adds its own condition: every MMAP, MMAP2, FORK and COMM record of the file has
	 * been given to on_record (which must change code maps on no other record). */
	int (*code_settled)(void *ctx);
};

/* Settings beyond what the file says. */
struct jf_perf_session_options {
	/* Override the CPU of HEADER_CPUID for errata (from --cpu); 0 = use the file's. */
	uint16_t cpu_family;
	uint8_t cpu_model, cpu_stepping;
	int cpu_override;         /* 1: use the three fields above (all 0 = no errata) */
	int end_on_call, end_on_jump, join_cache_splits; /* as in jf_pt_config */
	/* Decode a buffer with the fast path (jf_pt_fast_decoder_new: the same records,
	 * faster) when the code is settled as it starts (code_settled above), or when every
	 * MMAP, MMAP2, FORK and COMM has been delivered and the buffer's code map tells
	 * where its code will still change (jf_codemap_set_pending): the fast path reads a
	 * PSB period ahead of what it returns, which is exact where none of the code it
	 * reads changes meanwhile, and leaves code that may to libipt's block decoder.
	 * Its records are those of end_on_call, end_on_jump and join_cache_splits;
	 * the other buffers are decoded with the options above, so a caller that wants the
	 * same records throughout sets end_on_call and join_cache_splits, and cuts blocks at
	 * direct jumps itself when end_on_jump is not set (jitflow/jump_split.h). */
	int fast_when_settled;
	/* With fast_when_settled: the buffers that start with the code settled are
	 * counted, not returned as blocks (jf_pt_fast_counter_new: the same instructions,
	 * events, errors, losses and time span; blocks cut at every branch). Their
	 * instructions, blocks and time span go into the session's statistics without
	 * records (jitflow stat). Where code still changes, the fast path returns blocks
	 * (records placed at a thread's instruction count need that count after every
	 * block), and every buffer's block decoder ends blocks at jumps, as they do. */
	int count_when_fast;
	/* With fast_when_settled, where code still changes: the fast path decodes ahead over
	 * code that may change too, checking each such block when its record is returned
	 * (jf_pt_config's decode_ahead_changing). */
	int decode_ahead_changing;
};

/* How the buffers of a session (jf_perf_pt_decoder_new*) were decoded so far: decoders
 * made (a buffer's own segment, or a stitch across a cut), and how many of them, over how
 * many bytes, by the fast path (fast_when_settled). decoded_bytes: the bytes of every
 * decoder made (a stitch copies the PSB+ where two segments meet, so this is a little more
 * than the AUX data); of the fast decoders' finished so far, summed as
 * jf_pt_fast_counter_report gives them: the bytes the fast path decoded itself (the rest
 * libipt's block decoder's), its hand-overs, take-overs and resynchronisations.
 * counted_blocks: blocks counted by the consumer's count gate instead of returned
 * (jitflow/count_gate.h: stat, where code still changes). */
struct jf_perf_session_report {
	uint64_t buffers, fast_buffers, fast_bytes;
	uint64_t decoded_bytes, fast_path_bytes, hand_overs, resumes, resyncs;
	uint64_t changing_stretches, rollbacks, rollback_fallbacks; /* as jf_pt_fast_report's */
	uint64_t counted_blocks;
};
void jf_perf_session_fast_report(struct jf_decoder *session, struct jf_perf_session_report *out);

/* Open path and check it is an Intel PT session (an intel_pt AUXTRACE_INFO record).
 * Malformed records found later end the stream with jf_decoder_next returning -1 and an
 * error naming the file and the offset (after everything before them was returned). */
struct jf_decoder *jf_perf_pt_decoder_new(const char *path,
					  const struct jf_perf_session_hooks *hooks,
					  struct jf_error *err);
struct jf_decoder *jf_perf_pt_decoder_new_opts(const char *path,
					       const struct jf_perf_session_hooks *hooks,
					       const struct jf_perf_session_options *opts,
					       struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
