/* libipt 2.0's time estimation, kept beside the fast path's packet following
 * (pt_fast_time.h says why it is not libipt's own). */
#include "pt_fast_time.h"

#include <string.h>

enum {
	JF_PT_FCR_SHIFT = 8,     /* fixed-point bits of the calibration ratio */
	MTC_BITS = 8,            /* an MTC's payload: 8 bits of the crystal clock */
	TMA_CTC_BITS = 16,       /* a TMA's: its low 16 bits */
	TSC_BITS = 56,           /* a TSC's payload */
};

void jf_pt_time_config_from(struct jf_pt_time_config *c, const struct pt_config *config)
{
	memset(c, 0, sizeof(*c));
	c->cpuid_0x15_eax = config->cpuid_0x15_eax;
	c->cpuid_0x15_ebx = config->cpuid_0x15_ebx;
	c->mtc_freq = config->mtc_freq;
	c->nom_freq = config->nom_freq;
	c->skl168 = config->errata.skl168;
}

static void calibration_reset(struct jf_pt_time *t)
{
	t->fcr = t->max_fcr = t->cal_tsc = t->cyc_tsc = t->cyc_mtc = 0;
	t->min_fcr = UINT64_MAX;
	t->cal_ctc = t->cal_lost_mtc = 0;
	t->cal_have_mtc = t->check_skl168 = 0;
}

void jf_pt_time_init(struct jf_pt_time *t)
{
	memset(t, 0, sizeof(*t));
	calibration_reset(t);
}

void jf_pt_time_overflow(struct jf_pt_time *t)
{
	calibration_reset(t);
}

static int calibrated(const struct jf_pt_time *t)
{
	return t->min_fcr <= t->max_fcr;
}

static void set_fcr(struct jf_pt_time *t, uint64_t fcr)
{
	t->fcr = fcr;
	if (fcr < t->min_fcr)
		t->min_fcr = fcr;
	if (fcr > t->max_fcr)
		t->max_fcr = fcr;
}

/* Whether libipt 2.0's crystal clock arithmetic is defined at this MTC frequency: it
 * shifts 32-bit values by up to mtc_freq + 8 bits. IA32_RTIT_CTL.MTCFreq has 4 bits; with
 * a larger frequency (a damaged perf.data, an option) C leaves libipt's shifts undefined,
 * which this does not model (fuzz_perf_data): the TMA or MTC hands over, and libipt's block
 * decoder decodes there. */
static int ctc_arithmetic_defined(const struct jf_pt_time_config *c)
{
	return c->mtc_freq + MTC_BITS < 32;
}

/* Crystal clock ticks from last to now, across one wrap of the bits MTCs give. */
static int ctc_delta(uint32_t *delta, uint32_t now, uint32_t last,
		     const struct jf_pt_time_config *c)
{
	if (now < last) {
		now += 1u << (c->mtc_freq + MTC_BITS);
		if (now < last)
			return -pte_bad_packet;
	}
	*delta = now - last;
	return 0;
}

/* Crystal clock ticks in fast-counter (TSC) ticks, by CPUID leaf 0x15's ratio. */
static int ctc_to_fc(uint64_t *fc, uint64_t ctc, const struct jf_pt_time_config *c)
{
	if (!c->cpuid_0x15_eax || !c->cpuid_0x15_ebx)
		return -pte_bad_config;
	*fc = (ctc * c->cpuid_0x15_ebx) / c->cpuid_0x15_eax;
	return 0;
}

/* libipt lets configuration errors pass (they make the estimate coarser); others stop
 * its query decoder. */
static int stops(int errcode)
{
	return errcode < 0 && errcode != -pte_bad_config ? errcode : 0;
}

int jf_pt_time_psb(struct jf_pt_time *t, const struct jf_pt_time_config *c)
{
	if (c->skl168)
		t->check_skl168 = 1;
	return 0;
}

/* The calibration at a TSC: one in a PSB+ calibrates from the cycles since the last TSC
 * (unless MTCs do), one outside only marks the start of a new count. */
static int calibrate_tsc(struct jf_pt_time *t, uint64_t tsc, int header)
{
	uint64_t last = t->cal_tsc, cyc = t->cyc_tsc, delta;

	t->cal_tsc = tsc;
	t->cyc_tsc = 0;
	if (!header || !last || !cyc || t->cal_have_mtc)
		return 0;
	if (tsc < last) {
		tsc += 1ull << TSC_BITS;
		if (tsc < last)
			return -pte_bad_packet;
	}
	delta = tsc - last;
	if (delta & ~(~0ull >> JF_PT_FCR_SHIFT))
		return -pte_internal;
	set_fcr(t, (delta << JF_PT_FCR_SHIFT) / cyc);
	return 0;
}

int jf_pt_time_tsc(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint64_t tsc,
		   int header)
{
	int errcode = stops(calibrate_tsc(t, tsc, header));

	(void)c;
	if (errcode)
		return errcode;
	t->have_tsc = 1;
	t->have_tma = 0;
	t->have_mtc = 0;
	t->tsc = t->base = tsc;
	t->ctc = 0;
	t->fc = 0;
	t->lost_mtc = 0;
	t->lost_cyc = 0;
	return 0;
}

int jf_pt_time_cbr(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint8_t ratio,
		   int header)
{
	/* Outside a PSB+ a CBR is a change of frequency: the calibration starts over. */
	if (!header)
		calibration_reset(t);
	if (c->nom_freq) {
		if (!ratio)
			return -pte_bad_packet;
		set_fcr(t, ((uint64_t)c->nom_freq << JF_PT_FCR_SHIFT) / ratio);
	}
	if (!ratio)
		return -pte_bad_packet;
	t->have_cbr = 1;
	t->cbr = ratio;
	return 0;
}

int jf_pt_time_tma(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint16_t ctc,
		   uint16_t fc)
{
	uint32_t hi = c->mtc_freq + MTC_BITS;

	if (!ctc_arithmetic_defined(c))
		return -pte_not_supported;
	if (!t->have_tsc || t->have_tma)
		return -pte_bad_context;
	if (t->have_mtc)
		return -pte_internal;
	t->have_tma = 1;
	t->base -= fc;
	t->fc += fc;
	/* Where the TMA gives all the bits MTCs give, it counts as an MTC. */
	if (hi <= TMA_CTC_BITS)
		t->have_mtc = 1;
	t->ctc = t->ctc_cyc = ctc & ((1u << hi) - 1u);
	return 0;
}

/* The calibration at an MTC: the cycles counted over the MTC periods since the last one. */
static int calibrate_mtc(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint32_t ctc)
{
	uint32_t last = t->cal_ctc, delta;
	uint64_t cyc = t->cyc_mtc, fc, fcr;
	int check = t->check_skl168, errcode;

	t->check_skl168 = 0;
	if (!t->cal_have_mtc) {
		t->cyc_mtc = 0;
		t->cal_ctc = ctc;
		t->cal_have_mtc = 1;
		return 0;
	}
	if (!cyc)
		return 0;
	t->cyc_mtc = 0;
	t->cal_ctc = ctc;
	t->cal_lost_mtc++; /* undone below once calibrated */
	errcode = ctc_delta(&delta, ctc, last, c);
	if (!errcode)
		errcode = ctc_to_fc(&fc, delta, c);
	if (errcode)
		return errcode;
	if (fc & ~(~0ull >> JF_PT_FCR_SHIFT))
		return -pte_internal;
	fcr = (fc << JF_PT_FCR_SHIFT) / cyc;
	/* SKL168: a CYC before the PSB may have been dropped; this MTC does not calibrate if
	 * MTCs were lost or the cycles look short by a CYC counter wrap. */
	if (check) {
		if ((1u << c->mtc_freq) < delta)
			return 0;
		if (c->mtc_freq < 10 && calibrated(t) &&
		    ((t->fcr * (cyc + 0xf00)) >> JF_PT_FCR_SHIFT) < fc)
			return 0;
	}
	set_fcr(t, fcr);
	t->cal_lost_mtc = 0;
	return 0;
}

int jf_pt_time_mtc(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint8_t payload)
{
	uint32_t ctc, last, delta;
	uint64_t fc;
	int had_mtc, errcode;

	if (!ctc_arithmetic_defined(c))
		return -pte_not_supported;
	ctc = (uint32_t)payload << c->mtc_freq;
	errcode = stops(calibrate_mtc(t, c, ctc));
	if (errcode)
		return errcode;
	/* MTCs between a TSC and its TMA are ignored. */
	if (t->have_tsc && !t->have_tma)
		return 0;
	last = t->ctc;
	had_mtc = t->have_mtc;
	if (t->fc || t->lost_cyc || !had_mtc)
		t->ctc_cyc = ctc;
	t->have_mtc = 1;
	t->fc = 0;
	t->ctc = ctc;
	t->lost_cyc = 0;
	if (!had_mtc) {
		uint32_t lo = ctc & 0xffffu, hi = ctc & ~0xffffu;

		/* The first MTC: without a TMA, where in its period tracing started is unknown;
		 * with one, the TMA gave the low bits and this MTC the high ones (one period
		 * back if the low bits wrapped in between). */
		if (!t->have_tma)
			return 0;
		if (last & ~0xffffu)
			return -pte_internal;
		if (lo < last) {
			hi -= 1u << TMA_CTC_BITS;
			hi &= 0xffu << c->mtc_freq;
		}
		last |= hi;
	}
	errcode = ctc_delta(&delta, ctc, last, c);
	if (errcode) {
		t->lost_mtc++;
		return errcode;
	}
	errcode = ctc_to_fc(&fc, delta, c);
	if (errcode)
		return stops(errcode);
	t->base += fc;
	t->tsc = t->base;
	return 0;
}

int jf_pt_time_cyc(struct jf_pt_time *t, const struct jf_pt_time_config *c, uint64_t cyc)
{
	uint64_t fc;

	t->cyc_mtc += cyc;
	t->cyc_tsc += cyc;
	if (!calibrated(t) || !t->fcr) {
		t->lost_cyc++;
		return 0;
	}
	fc = t->fc;
	if (!fc && t->ctc != t->ctc_cyc) {
		/* The first CYC in a new MTC period: the cycles counted before that MTC
		 * (estimated by the calibration) are already in base. */
		uint32_t delta;
		uint64_t old_fc, old_cyc;
		int errcode = ctc_delta(&delta, t->ctc, t->ctc_cyc, c);

		if (!errcode)
			errcode = ctc_to_fc(&old_fc, delta, c);
		if (errcode)
			return stops(errcode);
		old_cyc = (old_fc << JF_PT_FCR_SHIFT) / t->fcr;
		cyc = cyc < old_cyc ? 0 : cyc - old_cyc;
	}
	fc += (cyc * t->fcr) >> JF_PT_FCR_SHIFT;
	t->fc = fc;
	t->tsc = t->base + fc;
	return 0;
}
