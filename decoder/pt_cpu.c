/* Small Intel PT configuration helpers: the --cpu option and perf's TSC conversion. */
#include "jitflow/pt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int parse_number(const char **p, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(*p, &end, 0);
	if (end == *p || errno || *out > max)
		return -1;
	*p = end;
	return 0;
}

int jf_pt_parse_cpu(const char *spec, struct jf_pt_config *cfg, struct jf_error *err)
{
	unsigned long family, model, stepping = 0;
	const char *p = spec;

	if (!strcmp(spec, "none")) {
		cfg->cpu_family = 0;
		cfg->cpu_model = cfg->cpu_stepping = 0;
		return 0;
	}
	if (parse_number(&p, 0xffff, &family) < 0 || *p++ != '/' ||
	    parse_number(&p, 0xff, &model) < 0)
		goto bad;
	if (*p == '/') {
		p++;
		if (parse_number(&p, 0xff, &stepping) < 0)
			goto bad;
	}
	if (*p || family == 0)
		goto bad;
	cfg->cpu_family = (uint16_t)family;
	cfg->cpu_model = (uint8_t)model;
	cfg->cpu_stepping = (uint8_t)stepping;
	return 0;
bad:
	return jf_fail(err, "--cpu: expected FAMILY/MODEL[/STEPPING] or 'none', got '%s'", spec);
}

uint64_t jf_tsc_to_ns(const struct jf_tsc_conversion *conv, uint64_t tsc)
{
	/* perf's formula, split so that the product cannot overflow 64 bits. */
	uint64_t quot, rem;

	/* A shift of 64 or more is undefined in C (and no real perf writes one). */
	if (!conv->valid || conv->time_shift >= 64)
		return tsc;
	quot = tsc >> conv->time_shift;
	rem = tsc & ((1ull << conv->time_shift) - 1);
	return conv->time_zero + quot * conv->time_mult +
	       ((rem * conv->time_mult) >> conv->time_shift);
}
