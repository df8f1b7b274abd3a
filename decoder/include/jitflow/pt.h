/* Intel PT backend: libipt's block decoder over a jf_codemap. */
#ifndef JITFLOW_PT_H
#define JITFLOW_PT_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/codemap.h"
#include "jitflow/decoder.h"
#include "jitflow/insn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Time conversion parameters, as perf records them (TIME_CONV / AUXTRACE_INFO):
 * ns = time_zero + ((tsc * time_mult) >> time_shift), computed without overflow. */
struct jf_tsc_conversion {
	int valid;
	uint16_t time_shift;
	uint32_t time_mult;
	uint64_t time_zero;
};

struct jf_pt_config {
	const uint8_t *trace;     /* the PT bytes (mapped, not copied) */
	size_t size;
	uint64_t base_offset;     /* added to offsets in flow records (e.g. the position of
	                           * this buffer in its perf.data file); 0 for raw files */
	uint32_t source;          /* copied into every flow record's source */

	/* CPU, for errata workarounds: family/model/stepping (0 = unknown: no errata). */
	uint16_t cpu_family;
	uint8_t cpu_model, cpu_stepping;

	/* Timing parameters (libipt's names); 0 = unknown. */
	uint32_t cpuid_0x15_eax, cpuid_0x15_ebx;
	uint8_t mtc_freq, nom_freq;
	struct jf_tsc_conversion conv;
	int time_is_synthetic;

	/* libipt's block decoder follows direct calls and jumps inside a block; these end the
	 * block there instead (e.g. so that a call to the zone emitter's marker function
	 * starts a block of its own). */
	int end_on_call, end_on_jump;
	/* libipt 2.0 also ends a block where its block cache already knows the next
	 * instruction, so where such blocks end depends on what was decoded before. This joins
	 * a block that ends without a branch to the block right after it (same place in the
	 * trace, nothing between them), so that blocks end only at branches and events
	 * whatever the cache held; with end_on_call and end_on_jump, block boundaries are then
	 * the same however the trace is split (pt_parallel.h). */
	int join_cache_splits;

	/* The trace is a file mapping: let the kernel drop pages already decoded, so that
	 * resident memory does not grow with the length of the trace. */
	int release_consumed;

	/* Start at the PSB at this offset instead of at the first one (with has_sync_at): a
	 * segment of a trace split for parallel decoding (pt_parallel.h). Bytes before it are
	 * another segment's, not lost. */
	uint64_t sync_at;
	int has_sync_at;
	/* Counting decoders only (jf_pt_fast_counter_new, jf_pt_parallel_counter_new): event
	 * records other than losses and overflows (tracing on and off, modes, timing, the
	 * end...) are counted in the statistics (events, time span) instead of being
	 * returned; errors, losses and overflows still are. For `jitflow stat`, which tallies
	 * only those: foo's tracing on/off records were 3.6 M per 70 MB of trace, and copying
	 * them between threads most of what -j 2 added. Progress then comes through
	 * jf_decoder_on_progress. */
	int count_plain_events;
	/* Fast decoders returning blocks (jf_pt_fast_decoder_new) over a code map that tells
	 * where it will change (jf_codemap_set_pending): decode ahead over code that may change,
	 * each such block checked when its record is returned, the stretch decoded again from
	 * there where it changed; 0: such code is left to libipt's block decoder. */
	int decode_ahead_changing;
	/* An instruction cache over the same map to use instead of one of the decoder's own
	 * (NULL: its own), so that decoders run one after another share what they learnt. */
	struct jf_insn_cache *insns;
};

/* Parse "FAMILY/MODEL[/STEPPING]" (decimal or 0x-hex), or "none". */
int jf_pt_parse_cpu(const char *spec, struct jf_pt_config *cfg, struct jf_error *err);

/* A decoder over cfg->trace using the code in map (which must outlive the decoder; it may
 * change between calls to jf_decoder_next, e.g. when the imagemap applies a JIT code
 * update). */
struct jf_decoder *jf_pt_decoder_new(const struct jf_pt_config *cfg, struct jf_codemap *map,
				     struct jf_error *err);

/* ns from TSC with perf's parameters. */
uint64_t jf_tsc_to_ns(const struct jf_tsc_conversion *conv, uint64_t tsc);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
