/* The recorder's IP filter (record_filter.h). */
#include "record_filter.h"

#include "address_ranges.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int parse_addr(const char *s, const char **end, uint64_t *out)
{
	char *e;
	unsigned long long v;

	if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
		return -1;
	errno = 0;
	v = strtoull(s, &e, 16);
	if (errno || e == s)
		return -1;
	*out = v;
	*end = e;
	return 0;
}

int jf_rec_filter_parse(struct jf_rec_filter *f, const char *spec, struct jf_error *err)
{
	const char *p = spec;

	memset(f, 0, sizeof(*f));
	if (strlen(spec) >= sizeof(f->spec))
		return jf_fail(err, "--filter: longer than %zu characters", sizeof(f->spec) - 1);
	strcpy(f->spec, spec);
	for (;;) {
		const char *item = p, *e;
		uint64_t a, b;

		if (!strncmp(p, "jit", 3) && (p[3] == ',' || !p[3])) {
			f->jit = 1;
			p += 3;
		} else if (parse_addr(p, &e, &a) == 0 && *e == '-' &&
			   parse_addr(e + 1, &e, &b) == 0 && (*e == ',' || !*e)) {
			if (b <= a)
				return jf_fail(err, "--filter: '%.*s': the end must lie above the start",
					       (int)(e - item), item);
			if (f->nranges == JF_REC_FILTER_MAX)
				return jf_fail(err, "--filter: more than %d ranges", JF_REC_FILTER_MAX);
			f->start[f->nranges] = a;
			f->end[f->nranges++] = b;
			p = e;
		} else {
			size_t n = strcspn(item, ",");

			return jf_fail(err, "--filter: '%.*s' is neither 'jit' nor a range START-END "
				       "(hexadecimal addresses, END excluded)", (int)n, item);
		}
		if (!*p)
			break;
		p++; /* the comma */
	}
	f->nfixed = f->nranges;
	return 0;
}

int jf_rec_filter_anon_exec(struct jf_rec_filter *f, uint64_t addr, uint64_t len)
{
	if (!f->jit || !len ||
	    jf_rec_ranges_join(f->start, f->end, f->nfixed, f->nranges, addr, len))
		return 0;
	if (f->nranges == JF_REC_FILTER_MAX)
		return ++f->dropped == 1;
	f->start[f->nranges] = addr;
	f->end[f->nranges++] = addr + len;
	return 0;
}

int jf_rec_filter_has(struct jf_rec_filter *f, uint64_t pc)
{
	unsigned i;

	if (f->hit_start <= pc && pc < f->hit_end)
		return 1;
	/* Newest first: a JIT's latest mapping is where its code runs most. */
	for (i = f->nranges; i-- > 0;) {
		if (f->start[i] <= pc && pc < f->end[i]) {
			f->hit_start = f->start[i];
			f->hit_end = f->end[i];
			return 1;
		}
	}
	return 0;
}
