/* Internal: libipt 2.0's time estimation, for the fast Intel PT path when it follows
 * packets of a trace with timing packets (TSC, TMA, MTC, CYC, CBR).
 *
 * libipt keeps this state inside its query decoder and does not export it (no pt_time_*
 * symbol in libipt.so), and the query decoder hands out one TNT bit per call. Following
 * packets with the TNT payload cache needs the time the query decoder would have at each
 * packet, so this keeps the same two parts it keeps: the estimate (libipt's struct
 * pt_time: the last TSC, advanced by MTCs and, once calibrated, CYCs) and the
 * calibration (struct pt_time_cal: the fast-counter-to-cycles ratio learnt from MTCs, TSCs
 * in PSB+s or the nominal frequency). Each update follows the order of operations of
 * libipt 2.0's pt_time.c and pt_query_decoder.c (what each sets before it can fail, which
 * errors are let pass), so that the differential fuzz target finds any difference. */
#ifndef JITFLOW_PT_FAST_TIME_H
#define JITFLOW_PT_FAST_TIME_H

#include <intel-pt.h>
#include <stdint.h>

struct jf_pt_time {
	/* the estimate */
	uint64_t tsc;        /* the time now (valid with have_tsc) */
	uint64_t base;       /* the time at the last TSC or MTC */
	uint64_t fc;         /* fast-counter ticks since base (TMA's FC, CYCs) */
	uint32_t ctc;        /* the last MTC's (or TMA's) crystal clock value */
	uint32_t ctc_cyc;    /* ...where the CYCs since then started counting */
	uint32_t lost_mtc, lost_cyc;
	uint8_t cbr;
	uint8_t have_tsc, have_cbr, have_tma, have_mtc;

	/* the calibration */
	uint64_t fcr;        /* fast counter per cycle, shifted left by JF_PT_FCR_SHIFT */
	uint64_t min_fcr, max_fcr; /* min > max: not calibrated */
	uint64_t cal_tsc;    /* the last TSC, and the cycles counted since */
	uint64_t cyc_tsc;
	uint64_t cyc_mtc;    /* cycles since the last MTC */
	uint32_t cal_ctc;    /* that MTC's crystal clock value */
	uint32_t cal_lost_mtc;
	uint8_t cal_have_mtc, check_skl168;
};

/* What of libipt's configuration the estimate depends on. */
struct jf_pt_time_config {
	uint32_t cpuid_0x15_eax, cpuid_0x15_ebx;
	uint8_t mtc_freq, nom_freq;
	uint8_t skl168;      /* erratum SKL168: CYCs lost before a PSB */
};

void jf_pt_time_config_from(struct jf_pt_time_config *c, const struct pt_config *config);
void jf_pt_time_init(struct jf_pt_time *t);

/* A packet read by the query decoder, in a PSB+ (header) or not. Each returns 0, or
 * libipt's negative error code where its query decoder would fail on that packet. */
int jf_pt_time_psb(struct jf_pt_time *t, const struct jf_pt_time_config *c);
int jf_pt_time_tsc(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint64_t tsc,
		   int header);
int jf_pt_time_cbr(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint8_t ratio,
		   int header);
int jf_pt_time_tma(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint16_t ctc,
		   uint16_t fc);
int jf_pt_time_mtc(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint8_t ctc);
/* An OVF: the query decoder starts over but keeps the time (its calibration is lost). */
void jf_pt_time_overflow(struct jf_pt_time *t);
int jf_pt_time_cyc(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint64_t cyc);

#endif
