/* JFR's execution samples, counted (jfr_samples.h). */
#include "jfr_samples.h"
#include "json_check.h"
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Whether the stack has a frame of method in class cls (JFR names classes by their
 * internal name: "Threads", "java/lang/Thread"). */
static int on_stack(const cJSON *frames, const char *cls, const char *method)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, frames) {
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(f, "method");
		const cJSON *type = cJSON_GetObjectItemCaseSensitive(m, "type");
		const char *name = jf_test_str(m, "name"), *type_name = jf_test_str(type, "name");

		if (!strcmp(name, method) && !strcmp(type_name, cls))
			return 1;
	}
	return 0;
}

void jf_jfr_count_samples(const char *jfr_path, const char *thread, const char *cls,
			  const char *method, struct jf_jfr_samples *out)
{
	char cmd[2048];
	cJSON *doc;
	const cJSON *e, *events;

	memset(out, 0, sizeof(*out));
	snprintf(cmd, sizeof(cmd), "jfr print --json --events jdk.ExecutionSample '%s'", jfr_path);
	doc = jf_test_run_json(cmd);
	events = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(doc, "recording"), "events");
	if (!cJSON_GetArraySize(events))
		fail_msg("%s: no jdk.ExecutionSample event", jfr_path);
	cJSON_ArrayForEach(e, events) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, "values");
		const cJSON *who = cJSON_GetObjectItemCaseSensitive(v, "sampledThread");
		const cJSON *frames = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(v, "stackTrace"), "frames");
		const char *name = cJSON_GetStringValue(
			cJSON_GetObjectItemCaseSensitive(who, "javaName")), *top;

		if (!name || strcmp(name, thread) || !cJSON_GetArraySize(frames))
			continue;
		if (!on_stack(frames, cls, method)) {
			out->outside++;
			continue;
		}
		top = jf_test_str(cJSON_GetArrayItem(frames, 0), "type");
		if (!strcmp(top, "Interpreted"))
			out->interpreted++;
		else if (!strcmp(top, "JIT compiled") || !strcmp(top, "Inlined"))
			out->compiled++;
		else
			out->other++;
	}
	cJSON_Delete(doc);
}

/* log P(K = i) for K ~ Binomial(n, q). */
static double log_pmf(long i, long n, double q)
{
	double log_choose = lgamma((double)n + 1) - lgamma((double)i + 1) - lgamma((double)(n - i) + 1);

	if (q <= 0)
		return i == 0 ? 0 : -INFINITY;
	if (q >= 1)
		return i == n ? 0 : -INFINITY;
	return log_choose + (double)i * log(q) + (double)(n - i) * log1p(-q);
}

/* P(K in [from, to]) for K ~ Binomial(n, q). */
static double probability(long from, long to, long n, double q)
{
	double p = 0;
	long i;

	for (i = from; i <= to; i++)
		p += exp(log_pmf(i, n, q));
	return p;
}

int jf_binomial_fits(long k, long n, double q_lo, double q_hi, double tail)
{
	return probability(k, n, n, q_hi) >= tail && probability(0, k, n, q_lo) >= tail;
}
