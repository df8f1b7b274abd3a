/* Java Flight Recorder's execution samples as an oracle of where a Java thread spent its
 * time: the jdk.ExecutionSample events of a .jfr file (read with the JDK's `jfr print
 * --json`), counted per thread by the kind of their top frame, and an exact binomial
 * test of such counts against a share jitflow measured. */
#ifndef JITFLOW_TEST_JFR_SAMPLES_H
#define JITFLOW_TEST_JFR_SAMPLES_H

/* One thread's samples taken while it ran a method (the method anywhere on the sampled
 * stack), by the top frame's type as JFR names it. */
struct jf_jfr_samples {
	long interpreted;  /* "Interpreted" */
	long compiled;     /* "JIT compiled" or "Inlined" */
	long other;        /* "Native" and anything else */
	long outside;      /* the thread's samples without the method on their stack */
};

/* The samples of the Java thread named thread, in class cls, inside method, from
 * jfr_path. Fails the running test when `jfr` fails or prints no events. */
void jf_jfr_count_samples(const char *jfr_path, const char *thread, const char *cls,
			  const char *method, struct jf_jfr_samples *out);

/* Whether k successes of n draws fit some success probability q in [q_lo, q_hi]: neither
 * P(K >= k | q_hi) nor P(K <= k | q_lo) is below tail (exact binomial tails). */
int jf_binomial_fits(long k, long n, double q_lo, double q_hi, double tail);

#endif
