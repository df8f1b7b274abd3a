/* PELT changepoints in the mean of a series, and Barrett et al.'s classes from them.
 *
 * PELT (Killick et al. 2012) finds the segmentation minimising the sum of segment costs plus
 * a penalty per changepoint, exactly, by dynamic programming over the last changepoint:
 *   F(t) = min over tau < t of F(tau) + C(x[tau..t)) + penalty,   F(0) = -penalty,
 * and prunes every tau with F(tau) + C(x[tau..t)) > F(t): no later t can end a segment
 * there more cheaply (the cost adds no constant when a segment splits). The cost of a
 * normal segment with a known deviation sigma, change in mean only:
 *   C(x[a..b)) = sum (x_i - mean)^2 / sigma^2,
 * from prefix sums in O(1). Sigma is estimated from the series (the median absolute
 * deviation of successive differences, which changes in the mean barely move) and bounded
 * below by a share of the median: the emulated recorder's clock and instruction counts
 * are deterministic, and with no noise any difference at all would be a change. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/changepoints.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The noise's deviation: 1.4826 * MAD of the differences / sqrt(2), at least min_share
 * of the series' median magnitude (and never zero). */
static int estimate_sigma(const double *x, size_t n, double min_share, double *sigma)
{
	double *v = malloc((n ? n : 1) * sizeof(*v));
	double med_x, med_d, s = 0;
	size_t i;

	if (!v)
		return -1;
	for (i = 0; i < n; i++)
		v[i] = fabs(x[i]);
	med_x = median_of(v, n);
	if (n > 2) {
		for (i = 0; i + 1 < n; i++)
			v[i] = x[i + 1] - x[i];
		med_d = median_of(v, n - 1);
		for (i = 0; i + 1 < n; i++)
			v[i] = fabs(v[i] - med_d);
		s = 1.4826 * median_of(v, n - 1) / sqrt(2.0);
	}
	free(v);
	if (s < min_share * med_x)
		s = min_share * med_x;
	*sigma = s > 0 ? s : 1.0;
	return 0;
}

int jf_changepoints_find(const double *x, size_t n, const struct jf_changepoint_options *opt,
			 struct jf_segments *out)
{
	double *sum = NULL, *sq = NULL, *F = NULL, sigma, pen;
	size_t *last = NULL, *cand = NULL, ncand, t, i, k;
	double min_share = opt && opt->min_sigma > 0 ? opt->min_sigma : 0.01;

	memset(out, 0, sizeof(*out));
	if (!n) {
		errno = EINVAL;
		return -1;
	}
	pen = opt && opt->penalty > 0 ? opt->penalty : 15.0 * log((double)n);
	sum = malloc((n + 1) * sizeof(*sum));
	sq = malloc((n + 1) * sizeof(*sq));
	F = malloc((n + 1) * sizeof(*F));
	last = malloc((n + 1) * sizeof(*last));
	cand = malloc((n + 1) * sizeof(*cand));
	if (!sum || !sq || !F || !last || !cand || estimate_sigma(x, n, min_share, &sigma) < 0)
		goto fail;
	/* Centre on the first value: prefix sums of raw magnitudes (instructions in the
	 * millions, squared) would lose the differences to rounding. */
	sum[0] = sq[0] = 0;
	for (i = 0; i < n; i++) {
		double d = (x[i] - x[0]) / sigma;

		sum[i + 1] = sum[i] + d;
		sq[i + 1] = sq[i] + d * d;
	}
	F[0] = -pen;
	cand[0] = 0;
	ncand = 1;
	for (t = 1; t <= n; t++) {
		double best = INFINITY;
		size_t arg = 0, keep = 0;

		for (k = 0; k < ncand; k++) {
			size_t a = cand[k];
			double s = sum[t] - sum[a], m = (double)(t - a);
			double c = sq[t] - sq[a] - s * s / m;
			double v = F[a] + (c > 0 ? c : 0) + pen;

			if (v < best) {
				best = v;
				arg = a;
			}
		}
		F[t] = best;
		last[t] = arg;
		for (k = 0; k < ncand; k++) {
			size_t a = cand[k];
			double s = sum[t] - sum[a], m = (double)(t - a);
			double c = sq[t] - sq[a] - s * s / m;

			if (F[a] + (c > 0 ? c : 0) <= F[t])
				cand[keep++] = a;
		}
		cand[keep++] = t;
		ncand = keep;
	}
	/* Walk the last changepoints back from n: segment ends in reverse. */
	k = 0;
	for (t = n; t > 0; t = last[t])
		cand[k++] = t;
	out->ends = malloc(k * sizeof(*out->ends));
	out->means = malloc(k * sizeof(*out->means));
	if (!out->ends || !out->means)
		goto fail;
	out->n = k;
	for (i = 0; i < k; i++) {
		size_t b = cand[k - 1 - i], a = i ? out->ends[i - 1] : 0;
		double s = 0;

		out->ends[i] = b;
		for (t = a; t < b; t++)
			s += x[t];
		out->means[i] = s / (double)(b - a);
	}
	out->sigma = sigma;
	out->penalty = pen;
	free(sum);
	free(sq);
	free(F);
	free(last);
	free(cand);
	return 0;
fail:
	free(sum);
	free(sq);
	free(F);
	free(last);
	free(cand);
	jf_segments_free(out);
	errno = ENOMEM;
	return -1;
}

void jf_segments_free(struct jf_segments *s)
{
	free(s->ends);
	free(s->means);
	memset(s, 0, sizeof(*s));
}

enum jf_exec_class jf_exec_classify(const struct jf_segments *s, size_t n, double tolerance)
{
	double steady, band;
	size_t i, last_start;
	int faster_before = 0;

	if (s->n <= 1)
		return JF_EXEC_FLAT;
	/* The steady state must cover the last quarter of the execution (Barrett et al.:
	 * the last 500 of 2000 iterations). */
	last_start = s->ends[s->n - 2];
	if (n - last_start < (n + 3) / 4)
		return JF_EXEC_NO_STEADY_STATE;
	steady = s->means[s->n - 1];
	band = fabs(steady) * tolerance;
	for (i = 0; i + 1 < s->n; i++) {
		if (s->means[i] < steady - band)
			faster_before = 1;
	}
	if (faster_before)
		return JF_EXEC_SLOWDOWN;
	for (i = 0; i + 1 < s->n; i++) {
		if (s->means[i] > steady + band)
			return JF_EXEC_WARMUP;
	}
	return JF_EXEC_FLAT;
}

const char *jf_exec_class_name(enum jf_exec_class c)
{
	switch (c) {
	case JF_EXEC_FLAT: return "flat";
	case JF_EXEC_WARMUP: return "warmup";
	case JF_EXEC_SLOWDOWN: return "slowdown";
	case JF_EXEC_NO_STEADY_STATE: return "no steady state";
	}
	return "?";
}

const char *jf_exec_verdict(const enum jf_exec_class *classes, size_t n)
{
	size_t i;
	int same = 1, good = 1;

	for (i = 0; i < n; i++) {
		if (classes[i] != classes[0])
			same = 0;
		if (classes[i] != JF_EXEC_FLAT && classes[i] != JF_EXEC_WARMUP)
			good = 0;
	}
	if (same)
		return "consistent";
	return good ? "good inconsistent" : "bad inconsistent";
}
