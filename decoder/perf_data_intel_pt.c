/* The intel_pt AUXTRACE_INFO private array, in the order perf writes it (see
 * tools/perf/util/intel-pt.h in Linux). Entries were added over the years; a file from an
 * older perf has fewer, and perf requires at least those up to PER_CPU_MMAPS. */
#include "jitflow/perf_intel_pt.h"

#include <stdio.h>
#include <string.h>

enum {
	PRIV_PMU_TYPE,
	PRIV_TIME_SHIFT,
	PRIV_TIME_MULT,
	PRIV_TIME_ZERO,
	PRIV_CAP_USER_TIME_ZERO,
	PRIV_TSC_BIT,
	PRIV_NORETCOMP_BIT,
	PRIV_HAVE_SCHED_SWITCH,
	PRIV_SNAPSHOT_MODE,
	PRIV_PER_CPU_MMAPS,
	PRIV_MTC_BIT,
	PRIV_MTC_FREQ_BITS,
	PRIV_TSC_CTC_N,
	PRIV_TSC_CTC_D,
	PRIV_CYC_BIT,
	PRIV_MAX_NONTURBO_RATIO,
	PRIV_FILTER_STR_LEN,
	PRIV_COUNT,
};

int jf_perf_parse_cpuid(const char *cpuid, uint16_t *family, uint8_t *model,
			uint8_t *stepping)
{
	unsigned f, m, s;
	const char *comma = cpuid ? strchr(cpuid, ',') : NULL;

	if (!comma || sscanf(comma + 1, "%u,%u,%u", &f, &m, &s) != 3 || f > 0xffff ||
	    m > 0xff || s > 0xff)
		return -1;
	*family = (uint16_t)f;
	*model = (uint8_t)m;
	*stepping = (uint8_t)s;
	return 0;
}

/* The configured value of the bits in mask (shifted down). */
static uint64_t field(uint64_t config, uint64_t mask)
{
	if (!mask)
		return 0;
	return (config & mask) >> __builtin_ctzll(mask);
}

static void derive_from_attrs(const struct jf_perf_data *data, struct jf_perf_intel_pt *pt)
{
	size_t i, n = jf_perf_data_nattrs(data);
	int sideband_has_time = n > 0;

	for (i = 0; i < n; i++) {
		const struct jf_perf_attr *a = jf_perf_data_attr(data, i);

		if (!(a->sample_type & JF_PERF_SAMPLE_TIME))
			sideband_has_time = 0;
		if (pt->have_attr || a->type != pt->pmu_type)
			continue;
		pt->have_attr = 1;
		pt->config = a->config;
	}
	/* As perf: return compression is on unless the noretcomp bit is known and set. */
	pt->return_compression = !(pt->noretcomp_bit && (pt->config & pt->noretcomp_bit));
	pt->tsc = pt->tsc_bit && (pt->config & pt->tsc_bit);
	pt->mtc = pt->mtc_bit && (pt->config & pt->mtc_bit);
	pt->cyc = pt->cyc_bit && (pt->config & pt->cyc_bit);
	pt->mtc_period = (uint8_t)field(pt->config, pt->mtc_freq_bits);
	pt->timeless = !pt->tsc || !pt->cap_user_time_zero || !sideband_has_time;
}

int jf_perf_intel_pt_parse(const struct jf_perf_data *data, const struct jf_perf_record *info,
			   struct jf_perf_intel_pt *pt, struct jf_error *err)
{
	const uint8_t *p = info->u.auxtrace_info.priv;
	uint64_t n = info->u.auxtrace_info.nr_priv;

	memset(pt, 0, sizeof(*pt));
	if (info->u.auxtrace_info.type != JF_PERF_AUXTRACE_INTEL_PT)
		return jf_fail(err,
			       "%s: offset %llu: AUXTRACE_INFO of type %u; expected 1 (intel_pt)",
			       jf_perf_data_path(data), (unsigned long long)info->offset,
			       info->u.auxtrace_info.type);
	if (n <= PRIV_PER_CPU_MMAPS)
		return jf_fail(err,
			       "%s: offset %llu: intel_pt AUXTRACE_INFO has %llu entries; expected "
			       "at least %d",
			       jf_perf_data_path(data), (unsigned long long)info->offset,
			       (unsigned long long)n, PRIV_PER_CPU_MMAPS + 1);
	pt->nr_priv = n;
	pt->pmu_type = (uint32_t)jf_perf_u64(p, PRIV_PMU_TYPE);
	/* The kernel's shift is at most 32; 64 or more cannot convert anything. */
	if (jf_perf_u64(p, PRIV_TIME_SHIFT) >= 64)
		return jf_fail(err,
			       "%s: offset %llu: intel_pt AUXTRACE_INFO time_shift %llu; expected "
			       "less than 64",
			       jf_perf_data_path(data), (unsigned long long)info->offset,
			       (unsigned long long)jf_perf_u64(p, PRIV_TIME_SHIFT));
	pt->conv.time_shift = (uint16_t)jf_perf_u64(p, PRIV_TIME_SHIFT);
	pt->conv.time_mult = (uint32_t)jf_perf_u64(p, PRIV_TIME_MULT);
	pt->conv.time_zero = jf_perf_u64(p, PRIV_TIME_ZERO);
	pt->cap_user_time_zero = jf_perf_u64(p, PRIV_CAP_USER_TIME_ZERO) != 0;
	pt->conv.valid = pt->cap_user_time_zero && pt->conv.time_mult != 0;
	pt->tsc_bit = jf_perf_u64(p, PRIV_TSC_BIT);
	pt->noretcomp_bit = jf_perf_u64(p, PRIV_NORETCOMP_BIT);
	pt->have_sched_switch = (int)jf_perf_u64(p, PRIV_HAVE_SCHED_SWITCH);
	pt->snapshot_mode = jf_perf_u64(p, PRIV_SNAPSHOT_MODE) != 0;
	pt->per_cpu_mmaps = jf_perf_u64(p, PRIV_PER_CPU_MMAPS) != 0;
	if (n > PRIV_CYC_BIT) {
		pt->mtc_bit = jf_perf_u64(p, PRIV_MTC_BIT);
		pt->mtc_freq_bits = jf_perf_u64(p, PRIV_MTC_FREQ_BITS);
		pt->tsc_ctc_ratio_n = (uint32_t)jf_perf_u64(p, PRIV_TSC_CTC_N);
		pt->tsc_ctc_ratio_d = (uint32_t)jf_perf_u64(p, PRIV_TSC_CTC_D);
		pt->cyc_bit = jf_perf_u64(p, PRIV_CYC_BIT);
	}
	if (n > PRIV_MAX_NONTURBO_RATIO)
		pt->max_non_turbo_ratio = (uint32_t)jf_perf_u64(p, PRIV_MAX_NONTURBO_RATIO);
	if (n > PRIV_FILTER_STR_LEN) {
		uint64_t len = jf_perf_u64(p, PRIV_FILTER_STR_LEN);
		uint64_t room = (n - PRIV_COUNT) * 8; /* the string follows the array */

		if (len && (n < PRIV_COUNT || len >= room))
			return jf_fail(err,
				       "%s: offset %llu: intel_pt address filter of %llu bytes does "
				       "not fit its AUXTRACE_INFO record (%llu bytes left)",
				       jf_perf_data_path(data), (unsigned long long)info->offset,
				       (unsigned long long)len,
				       (unsigned long long)(n >= PRIV_COUNT ? room : 0));
		if (len) {
			pt->filter = (const char *)p + PRIV_COUNT * 8;
			pt->filter_len = (size_t)len;
		}
	}
	derive_from_attrs(data, pt);
	jf_perf_parse_cpuid(jf_perf_data_cpuid(data), &pt->family, &pt->model, &pt->stepping);
	return 0;
}

void jf_perf_intel_pt_config(const struct jf_perf_intel_pt *pt, struct jf_pt_config *cfg)
{
	cfg->cpu_family = pt->family;
	cfg->cpu_model = pt->model;
	cfg->cpu_stepping = pt->stepping;
	/* perf stores CPUID.15H as the TSC:CTC ratio n/d = EBX/EAX. */
	cfg->cpuid_0x15_eax = pt->tsc_ctc_ratio_d;
	cfg->cpuid_0x15_ebx = pt->tsc_ctc_ratio_n;
	cfg->mtc_freq = pt->mtc ? pt->mtc_period : 0;
	cfg->nom_freq = (uint8_t)(pt->max_non_turbo_ratio <= 0xff ? pt->max_non_turbo_ratio : 0);
	cfg->conv = pt->conv;
}

int jf_perf_tsc_conversion(const char *path, struct jf_tsc_conversion *conv,
			   struct jf_error *err)
{
	struct jf_perf_data *data = jf_perf_data_open(path, err);
	struct jf_perf_cursor cur, at;
	struct jf_perf_record rec;
	struct jf_perf_intel_pt pt;
	int rc;

	memset(conv, 0, sizeof(*conv));
	if (!data)
		return -1;
	jf_perf_data_begin(data, &cur);
	for (;;) {
		at = cur;
		rc = jf_perf_data_next_header(data, &cur, &rec, err);
		if (rc <= 0)
			break;
		if (rec.type != JF_PERF_RECORD_AUXTRACE_INFO)
			continue;
		rc = jf_perf_data_next(data, &at, &rec, err) < 0 ||
		     jf_perf_intel_pt_parse(data, &rec, &pt, err) < 0 ? -1 : 1;
		if (rc > 0)
			*conv = pt.conv;
		break;
	}
	jf_perf_data_close(data);
	if (rc == 0)
		return jf_fail(err, "%s: no AUXTRACE_INFO record; expected an Intel PT recording "
			       "(perf record -e intel_pt//)", path);
	return rc < 0 ? -1 : 0;
}
