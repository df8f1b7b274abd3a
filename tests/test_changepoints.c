/* PELT changepoints and warm-up classes on series whose changes are fixed by construction:
 * a level, plus deterministic noise of +-1%, with changes at chosen iterations. PELT's
 * pruning is checked against optimal partitioning without pruning (Jackson et al. 2005),
 * the same minimum found by trying every last changepoint. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "jitflow/changepoints.h"

static uint64_t rng = 12345;

static double noise(void) /* in [-0.01, 0.01) */
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return ((double)(rng >> 11) / (double)(1ULL << 53) - 0.5) * 0.02;
}

/* levels[i] from starts[i] on; n iterations. */
static double *series(size_t n, const size_t *starts, const double *levels, size_t nlevels)
{
	double *x = malloc(n * sizeof(*x));
	size_t i, l = 0;

	for (i = 0; i < n; i++) {
		while (l + 1 < nlevels && i >= starts[l + 1])
			l++;
		x[i] = levels[l] * (1 + noise());
	}
	return x;
}

static void expect(const double *x, size_t n, const size_t *changes, size_t nchanges,
		   enum jf_exec_class cls)
{
	struct jf_segments s;
	size_t i;

	assert_int_equal(jf_changepoints_find(x, n, NULL, &s), 0);
	if (s.n != nchanges + 1)
		fail_msg("%zu segments, expected %zu", s.n, nchanges + 1);
	for (i = 0; i < nchanges; i++) {
		long d = (long)s.ends[i] - (long)changes[i];

		if (d < -1 || d > 1)
			fail_msg("changepoint %zu at %zu, the series changes at %zu", i, s.ends[i],
				 changes[i]);
	}
	assert_int_equal(s.ends[s.n - 1], n);
	assert_string_equal(jf_exec_class_name(jf_exec_classify(&s, n, 0.05)),
			    jf_exec_class_name(cls));
	jf_segments_free(&s);
}

static void flat(void **state)
{
	size_t starts[] = { 0 };
	double levels[] = { 1000 };
	double *x = series(200, starts, levels, 1);

	(void)state;
	expect(x, 200, NULL, 0, JF_EXEC_FLAT);
	free(x);
}

static void warmup_at_30(void **state)
{
	size_t starts[] = { 0, 30 }, changes[] = { 30 };
	double levels[] = { 2000, 1000 };
	double *x = series(200, starts, levels, 2);

	(void)state;
	expect(x, 200, changes, 1, JF_EXEC_WARMUP);
	free(x);
}

/* Interpreter, then a first trace, then a better one: two steps down. */
static void warmup_two_steps(void **state)
{
	size_t starts[] = { 0, 10, 60 }, changes[] = { 10, 60 };
	double levels[] = { 5000, 1500, 1000 };
	double *x = series(200, starts, levels, 3);

	(void)state;
	expect(x, 200, changes, 2, JF_EXEC_WARMUP);
	free(x);
}

/* A guard that starts failing at iteration 100: every iteration after costs more. */
static void slowdown_at_100(void **state)
{
	size_t starts[] = { 0, 100 }, changes[] = { 100 };
	double levels[] = { 1000, 1300 };
	double *x = series(200, starts, levels, 2);

	(void)state;
	expect(x, 200, changes, 1, JF_EXEC_SLOWDOWN);
	free(x);
}

/* A change in the last quarter: no steady state to speak of. */
static void no_steady_state(void **state)
{
	size_t starts[] = { 0, 180 }, changes[] = { 180 };
	double levels[] = { 1000, 1500 };
	double *x = series(200, starts, levels, 2);

	(void)state;
	expect(x, 200, changes, 1, JF_EXEC_NO_STEADY_STATE);
	free(x);
}

/* Changes within the tolerance of the steady level are equivalent to it: flat. */
static void small_step_is_flat(void **state)
{
	size_t starts[] = { 0, 50 }, changes[] = { 50 };
	double levels[] = { 1030, 1000 };
	double *x = series(200, starts, levels, 2);

	(void)state;
	expect(x, 200, changes, 1, JF_EXEC_FLAT);
	free(x);
}

/* Optimal partitioning: the exact minimum of F(n), trying every last changepoint. */
static double optimal_cost(const double *x, size_t n, double sigma, double pen)
{
	double *F = malloc((n + 1) * sizeof(*F)), best;
	size_t t, a, i;

	F[0] = -pen;
	for (t = 1; t <= n; t++) {
		F[t] = INFINITY;
		for (a = 0; a < t; a++) {
			double m = 0, c = 0;

			for (i = a; i < t; i++)
				m += x[i];
			m /= (double)(t - a);
			for (i = a; i < t; i++)
				c += (x[i] - m) * (x[i] - m);
			if (F[a] + c / (sigma * sigma) + pen < F[t])
				F[t] = F[a] + c / (sigma * sigma) + pen;
		}
	}
	best = F[n];
	free(F);
	return best;
}

static double cost_of(const double *x, const struct jf_segments *s)
{
	double total = -s->penalty;
	size_t k, i, a = 0;

	for (k = 0; k < s->n; a = s->ends[k++]) {
		double c = 0;

		for (i = a; i < s->ends[k]; i++)
			c += (x[i] - s->means[k]) * (x[i] - s->means[k]);
		total += c / (s->sigma * s->sigma) + s->penalty;
	}
	return total;
}

static void pruning_keeps_the_optimum(void **state)
{
	int round;

	(void)state;
	for (round = 0; round < 20; round++) {
		size_t n = 40 + (size_t)round * 3, starts[4], i;
		double levels[4];
		double *x;
		struct jf_segments s;
		struct jf_changepoint_options opt = { .penalty = 2.0 + round % 5 };
		double want;

		for (i = 0; i < 4; i++) {
			starts[i] = i * n / 4 + (size_t)(round % 3);
			levels[i] = 1000 * (1 + 0.03 * (double)((round + i * 7) % 5));
		}
		starts[0] = 0;
		x = series(n, starts, levels, 4);
		assert_int_equal(jf_changepoints_find(x, n, &opt, &s), 0);
		want = optimal_cost(x, n, s.sigma, s.penalty);
		if (fabs(cost_of(x, &s) - want) > 1e-6 * (1 + fabs(want)))
			fail_msg("round %d: PELT's cost %.9g, the optimum %.9g", round,
				 cost_of(x, &s), want);
		jf_segments_free(&s);
		free(x);
	}
}

static void verdicts(void **state)
{
	enum jf_exec_class same[] = { JF_EXEC_WARMUP, JF_EXEC_WARMUP, JF_EXEC_WARMUP };
	enum jf_exec_class good[] = { JF_EXEC_WARMUP, JF_EXEC_FLAT };
	enum jf_exec_class bad[] = { JF_EXEC_WARMUP, JF_EXEC_SLOWDOWN };

	(void)state;
	assert_string_equal(jf_exec_verdict(same, 3), "consistent");
	assert_string_equal(jf_exec_verdict(good, 2), "good inconsistent");
	assert_string_equal(jf_exec_verdict(bad, 2), "bad inconsistent");
}

static void empty_series(void **state)
{
	struct jf_segments s;

	(void)state;
	assert_int_equal(jf_changepoints_find(NULL, 0, NULL, &s), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(flat),
		cmocka_unit_test(warmup_at_30),
		cmocka_unit_test(warmup_two_steps),
		cmocka_unit_test(slowdown_at_100),
		cmocka_unit_test(no_steady_state),
		cmocka_unit_test(small_step_is_flat),
		cmocka_unit_test(pruning_keeps_the_optimum),
		cmocka_unit_test(verdicts),
		cmocka_unit_test(empty_series),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
