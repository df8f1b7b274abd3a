/* Changepoints in a series of iteration costs, and the warm-up class of an execution.
 *
 * The method is the one of Barrett et al., "Virtual Machine Warmup Blows Hot and Cold"
 * (OOPSLA 2017, Krun's analysis): changepoints in the mean by PELT (Killick, Fearnhead and
 * Eckley, JASA 2012) with the cost of a normal segment of known variance and a penalty per
 * changepoint, then a class from the segments (docs/analysis.md, "Warm-up across
 * executions", states the rules). Pure functions of the series: no I/O. */
#ifndef JITFLOW_CHANGEPOINTS_H
#define JITFLOW_CHANGEPOINTS_H

#include <stddef.h>

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

struct jf_changepoint_options {
	double penalty;     /* per changepoint; <= 0: 15 * log(n), as Krun's analysis */
	double min_sigma;   /* lower bound of the noise's deviation, as a share of the series'
			     * median (deterministic series have none); <= 0: 0.01 */
};

/* Segments end at ends[0] < ends[1] < ... < ends[n - 1] = series length (exclusive
 * ends); a changepoint is the first index of every segment but the first. */
struct jf_segments {
	size_t n;
	size_t *ends;
	double *means;
	double sigma;       /* the noise's deviation used for the cost */
	double penalty;     /* the penalty used */
};

/* Changepoints of x[0..n) in the mean. Returns 0, or -1 with errno set (ENOMEM, EINVAL
 * for n == 0). Free with jf_segments_free. */
int jf_changepoints_find(const double *x, size_t n, const struct jf_changepoint_options *opt,
			 struct jf_segments *out);
void jf_segments_free(struct jf_segments *s);

enum jf_exec_class {
	JF_EXEC_FLAT,
	JF_EXEC_WARMUP,
	JF_EXEC_SLOWDOWN,
	JF_EXEC_NO_STEADY_STATE,
};

/* The class of an execution of n iterations cut into the segments s: segments whose
 * means differ from the last one's by at most `tolerance` of it (a share, e.g. 0.05) are
 * equivalent to it. */
enum jf_exec_class jf_exec_classify(const struct jf_segments *s, size_t n, double tolerance);
const char *jf_exec_class_name(enum jf_exec_class c);

/* The benchmark's verdict across executions: "consistent" when every execution has the same
 * class, "good inconsistent" when they differ but are all flat or warm-up, else
 * "bad inconsistent". */
const char *jf_exec_verdict(const enum jf_exec_class *classes, size_t n);

#pragma GCC visibility pop

#endif
