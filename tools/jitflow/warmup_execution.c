/* One execution of a warm-up report: its iteration series, segments and changepoints. */
#include <math.h>
#include <stdlib.h>

#include "warmup_execution.h"

static double number(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static double share(double part, double whole)
{
	/* Rounded to 1e-4, so that the report reads the same after a JSON round trip. */
	return whole > 0 ? floor(part / whole * 10000 + 0.5) / 10000 : 0;
}

/* PELT costs up to n^2 / 2 segment costs on a series without changes (nothing can be
 * pruned): longer series are cut into bins of consecutive iterations, and the bins'
 * means are the series (changepoints then fall on bin edges; the report gives "bin"). */
#define MAX_POINTS 20000

/* The phases of a report's iteration rows ("phases", where the runtime told phases). */
static const char *const phase_names[] = {
	"interpreting", "tracing", "compiling", "garbage collection", "exit handling", "jitted",
};
#define NPHASES (sizeof(phase_names) / sizeof(phase_names[0]))

/* A phase's share moved at a changepoint when it changed by a point of the iterations'
 * instructions or more. */
#define PHASE_MOVED 0.01

struct row {
	double index, cost, insns, jitted;
	int has_phases;
	double phase[NPHASES];
};

/* The rows of a report's "iterations", but the last: it runs from the last mark to the end
 * of the recording (the last iteration plus everything after the loop: output, exit), not
 * an iteration's cost. One pass: cJSON's arrays are lists. */
static struct row *read_rows(const cJSON *rows, const char *metric, size_t *n)
{
	size_t total = (size_t)cJSON_GetArraySize(rows), i = 0;
	struct row *r = malloc((total ? total : 1) * sizeof(*r));
	const cJSON *row;

	if (!r)
		return NULL;
	cJSON_ArrayForEach(row, rows) {
		const cJSON *phases = cJSON_GetObjectItemCaseSensitive(row, "phases");
		size_t k;

		r[i].index = number(row, "index");
		r[i].cost = number(row, metric);
		r[i].insns = number(row, "instructions");
		r[i].jitted = number(row, "jitted_instructions");
		r[i].has_phases = cJSON_IsObject(phases);
		for (k = 0; k < NPHASES; k++)
			r[i].phase[k] = number(phases, phase_names[k]);
		i++;
	}
	*n = total > 1 ? total - 1 : 0;
	return r;
}

static cJSON *segment(const struct row *r, size_t from, size_t to, double mean)
{
	cJSON *seg = cJSON_CreateObject();
	double insns = 0, jitted = 0;
	size_t i;

	for (i = from; i < to; i++) {
		insns += r[i].insns;
		jitted += r[i].jitted;
	}
	cJSON_AddNumberToObject(seg, "from", r[from].index);
	cJSON_AddNumberToObject(seg, "to", r[to - 1].index);
	cJSON_AddNumberToObject(seg, "mean", floor(mean + 0.5));
	cJSON_AddNumberToObject(seg, "jitted_share", share(jitted, insns));
	if (r[from].has_phases) {
		cJSON *shares = cJSON_AddObjectToObject(seg, "phase_shares");
		size_t k;

		for (k = 0; k < NPHASES; k++) {
			double sum = 0;

			for (i = from; i < to; i++)
				sum += r[i].phase[k];
			cJSON_AddNumberToObject(shares, phase_names[k], share(sum, insns));
		}
	}
	return seg;
}

/* The phases whose shares moved between two segments, the largest move first. */
static void phases_moved(cJSON *cp, const cJSON *before, const cJSON *after)
{
	const cJSON *b = cJSON_GetObjectItemCaseSensitive(before, "phase_shares");
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(after, "phase_shares");
	size_t order[NPHASES], n = 0, i, j;
	cJSON *moved;

	if (!b || !a)
		return;
	for (i = 0; i < NPHASES; i++) {
		double d = fabs(number(a, phase_names[i]) - number(b, phase_names[i]));

		if (d < PHASE_MOVED)
			continue;
		for (j = n; j > 0; j--) { /* insertion: by move, then in phase order */
			double dj = fabs(number(a, phase_names[order[j - 1]]) -
					 number(b, phase_names[order[j - 1]]));

			if (dj >= d)
				break;
			order[j] = order[j - 1];
		}
		order[j] = i;
		n++;
	}
	moved = cJSON_AddArrayToObject(cp, "phases_moved");
	for (i = 0; i < n; i++) {
		cJSON *m = cJSON_CreateObject();

		cJSON_AddStringToObject(m, "phase", phase_names[order[i]]);
		cJSON_AddNumberToObject(m, "share_before", number(b, phase_names[order[i]]));
		cJSON_AddNumberToObject(m, "share_after", number(a, phase_names[order[i]]));
		cJSON_AddItemToArray(moved, m);
	}
}

static cJSON *changepoint(const cJSON *before, const cJSON *after)
{
	cJSON *cp = cJSON_CreateObject();

	cJSON_AddNumberToObject(cp, "iteration", number(after, "from"));
	cJSON_AddNumberToObject(cp, "mean_before", number(before, "mean"));
	cJSON_AddNumberToObject(cp, "mean_after", number(after, "mean"));
	cJSON_AddNumberToObject(cp, "jitted_share_before", number(before, "jitted_share"));
	cJSON_AddNumberToObject(cp, "jitted_share_after", number(after, "jitted_share"));
	phases_moved(cp, before, after);
	return cp;
}

cJSON *jf_warmup_execution(const char *name, const cJSON *rows, const char *metric,
			   const struct jf_changepoint_options *opt, double tolerance,
			   struct jf_error *err)
{
	size_t n = 0, bin, points, i, k;
	struct row *r = read_rows(rows, metric, &n);
	double *x = NULL;
	struct jf_segments s;
	cJSON *e, *segs, *cps, *series;

	bin = n > MAX_POINTS ? (n + MAX_POINTS - 1) / MAX_POINTS : 1;
	points = (n + bin - 1) / bin;
	x = r ? malloc((points ? points : 1) * sizeof(*x)) : NULL;
	if (!x) {
		free(r);
		jf_fail(err, "%s: out of memory", name);
		return NULL;
	}
	for (k = 0; k < points; k++) {
		size_t to = (k + 1) * bin < n ? (k + 1) * bin : n;
		double sum = 0;

		for (i = k * bin; i < to; i++)
			sum += r[i].cost;
		x[k] = sum / (double)(to - k * bin);
	}
	if (jf_changepoints_find(x, points, opt, &s) < 0) {
		jf_fail(err, "%s: %s", name, n ? "out of memory" :
			"fewer than two iteration marks (minivm marks its outermost loop's)");
		free(x);
		free(r);
		return NULL;
	}
	e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "name", name);
	cJSON_AddNumberToObject(e, "iterations", (double)n);
	if (bin > 1)
		cJSON_AddNumberToObject(e, "bin", (double)bin);
	cJSON_AddStringToObject(e, "class", jf_exec_class_name(jf_exec_classify(&s, points,
											 tolerance)));
	segs = cJSON_AddArrayToObject(e, "segments");
	for (k = 0; k < s.n; k++) {
		size_t from = k ? s.ends[k - 1] * bin : 0;
		size_t to = s.ends[k] * bin < n ? s.ends[k] * bin : n;

		cJSON_AddItemToArray(segs, segment(r, from, to, s.means[k]));
	}
	cps = cJSON_AddArrayToObject(e, "changepoints");
	for (k = 1; k < s.n; k++)
		cJSON_AddItemToArray(cps, changepoint(cJSON_GetArrayItem(segs, (int)k - 1),
						      cJSON_GetArrayItem(segs, (int)k)));
	/* The points the changepoints were found in, for charts (whole units, as the means). */
	series = cJSON_AddArrayToObject(e, "series");
	for (k = 0; k < points; k++)
		cJSON_AddItemToArray(series, cJSON_CreateNumber(floor(x[k] + 0.5)));
	jf_segments_free(&s);
	free(x);
	free(r);
	return e;
}
