/* The intel_pt AUXTRACE_INFO of a perf.data file, decoded exactly as perf writes it
 * (tools/perf/util/intel-pt.h: a u64 array indexed by INTEL_PT_PMU_TYPE ...
 * INTEL_PT_FILTER_STR_LEN, then the address filter string), and what follows from it and
 * from the intel_pt event's attr config: return compression, TSC/MTC/CYC, the MTC period,
 * the CPU (from HEADER_CPUID) for errata, and a libipt configuration for each buffer. */
#ifndef JITFLOW_PERF_INTEL_PT_H
#define JITFLOW_PERF_INTEL_PT_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/error.h"
#include "jitflow/perf_data.h"
#include "jitflow/pt.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { JF_PERF_AUXTRACE_INTEL_PT = 1 };

struct jf_perf_intel_pt {
	uint64_t nr_priv;             /* entries perf wrote (older perf writes fewer) */
	uint32_t pmu_type;            /* attr.type of the intel_pt event */
	struct jf_tsc_conversion conv;/* valid when cap_user_time_zero */
	int cap_user_time_zero;
	uint64_t tsc_bit, noretcomp_bit, mtc_bit, mtc_freq_bits, cyc_bit; /* config masks */
	int have_sched_switch, snapshot_mode, per_cpu_mmaps;
	uint32_t tsc_ctc_ratio_n, tsc_ctc_ratio_d; /* CPUID 0x15: EBX / EAX */
	uint32_t max_non_turbo_ratio;
	const char *filter;           /* address filter (points into the file); may be NULL */
	size_t filter_len;

	/* From the intel_pt event's attr (the first attr whose type is pmu_type). */
	int have_attr;
	uint64_t config;
	int tsc, return_compression, mtc, cyc;
	uint8_t mtc_period;           /* the encoded MTC frequency (libipt's mtc_freq) */
	int timeless;                 /* no usable time: no TSC, no time conversion, or the
	                               * sideband has no timestamps */

	/* From HEADER_CPUID ("GenuineIntel,6,142,10"); 0 when unknown. */
	uint16_t family;
	uint8_t model, stepping;
};

/* Decode an AUXTRACE_INFO record of type intel_pt. Fails (naming the file and the
 * record's offset) when it is not intel_pt or has fewer entries than perf requires. */
int jf_perf_intel_pt_parse(const struct jf_perf_data *data, const struct jf_perf_record *info,
			   struct jf_perf_intel_pt *pt, struct jf_error *err);

/* Parse perf's x86 CPUID string "VENDOR,FAMILY,MODEL,STEPPING". 0 on success. */
int jf_perf_parse_cpuid(const char *cpuid, uint16_t *family, uint8_t *model,
			uint8_t *stepping);

/* The decode parameters for one buffer (cpu, timing, conversion); trace, size,
 * base_offset and source are left to the caller. */
void jf_perf_intel_pt_config(const struct jf_perf_intel_pt *pt, struct jf_pt_config *cfg);

/* The TSC -> perf time conversion of the Intel PT perf.data at path: its AUXTRACE_INFO's,
 * which is what the decoder dates flows with, so that a TSC stamped by the traced program
 * (a JIT's log) lands on the flows' clock. 0 with *conv (conv->valid 0 when the recording
 * has none: times then stay TSC, as the flows' do), or -1 with err (unreadable, or no
 * intel_pt AUXTRACE_INFO). Reads record headers only, up to that record. */
int jf_perf_tsc_conversion(const char *path, struct jf_tsc_conversion *conv,
			   struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
