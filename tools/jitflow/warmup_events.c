/* Events at changepoints, from a jitflow timeline.
 *
 * The timeline's instant events carry the trace's clock: iteration marks, code events
 * (compiled, freed, bridge attached: one each, exact) and guard exits (summed per window of
 * --resolution, stamped at the window's start, so an iteration's count can take a few exits
 * of its neighbour). Each event belongs to the iteration whose mark came last before it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "warmup_events.h"

#define GUARDS_LISTED 5   /* guards per changepoint, largest change first */

struct instant {
	double ts;
	size_t pos; /* in the file */
	const cJSON *ev;
};

static int by_time(const void *a, const void *b)
{
	const struct instant *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos; /* at one time, the file's order */
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

struct guard_rate {
	char name[48];
	double before, after; /* exits in each segment */
};

/* Exits per guard in iterations [from, to] of the sorted instants (each with its iteration
 * in iter[]), added to rates[].before or .after. */
static void count_guards(const struct instant *in, const long *iter, size_t n, long from, long to,
			 int after, struct guard_rate **rates, size_t *nrates)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(in[i].ev, "args");
		char name[48];

		if (iter[i] < from || iter[i] > to || strcmp(str(in[i].ev, "cat"), "guard"))
			continue;
		snprintf(name, sizeof(name), "%.0f/%.0f", num(args, "trace"), num(args, "guard"));
		for (k = 0; k < *nrates && strcmp((*rates)[k].name, name); k++)
			;
		if (k == *nrates) {
			struct guard_rate *r = realloc(*rates, (k + 1) * sizeof(**rates));

			if (!r)
				continue;
			*rates = r;
			memset(&r[k], 0, sizeof(r[k]));
			snprintf(r[k].name, sizeof(r[k].name), "%s", name);
			(*nrates)++;
		}
		if (after)
			(*rates)[k].after += num(args, "exits");
		else
			(*rates)[k].before += num(args, "exits");
	}
}

static double change_of(const struct guard_rate *r, double nb, double na)
{
	return fabs(r->after / na - r->before / nb);
}

static int by_change(const void *a, const void *b, void *lengths)
{
	const double *len = lengths; /* the segments' lengths, before and after */
	double x = change_of(a, len[0], len[1]), y = change_of(b, len[0], len[1]);

	if (x != y)
		return x > y ? -1 : 1;
	return strcmp(((const struct guard_rate *)a)->name, ((const struct guard_rate *)b)->name);
}

/* A guard's exit rate changed: by at least one exit per iteration and a quarter of the
 * larger rate. */
static int rate_changed(const struct guard_rate *r, double nb, double na)
{
	double b = r->before / nb, a = r->after / na, hi = a > b ? a : b;

	return fabs(a - b) >= 1 && fabs(a - b) >= hi / 4;
}

static void add_changepoint_events(cJSON *cp, const cJSON *before, const cJSON *after,
				   const struct instant *in, const long *iter, size_t n)
{
	long c = (long)num(after, "from");
	cJSON *events = cJSON_AddObjectToObject(cp, "events");
	cJSON *compiled = cJSON_AddArrayToObject(events, "compiled");
	cJSON *freed = cJSON_AddArrayToObject(events, "freed");
	cJSON *attached = cJSON_AddArrayToObject(events, "bridges_attached");
	cJSON *guards = cJSON_AddArrayToObject(events, "guards");
	struct guard_rate *rates = NULL;
	size_t nrates = 0, i, listed = 0;
	double nb = num(before, "to") - num(before, "from") + 1;
	double na = num(after, "to") - num(after, "from") + 1;

	for (i = 0; i < n; i++) {
		const char *name = str(in[i].ev, "name");

		if (iter[i] < c - 1 || iter[i] > c || strcmp(str(in[i].ev, "cat"), "code"))
			continue;
		if (!strncmp(name, "compiled ", 9))
			cJSON_AddItemToArray(compiled, cJSON_CreateString(name + 9));
		else if (!strncmp(name, "code freed ", 11))
			cJSON_AddItemToArray(freed, cJSON_CreateString(name + 11));
		else if (strstr(name, " attached to "))
			cJSON_AddItemToArray(attached, cJSON_CreateString(name));
	}
	count_guards(in, iter, n, (long)num(before, "from"), (long)num(before, "to"), 0, &rates,
		     &nrates);
	count_guards(in, iter, n, c, (long)num(after, "to"), 1, &rates, &nrates);
	if (nrates)
		qsort_r(rates, nrates, sizeof(*rates), by_change, (double[2]){ nb, na });
	for (i = 0; i < nrates && listed < GUARDS_LISTED; i++) {
		cJSON *g;

		if (!rate_changed(&rates[i], nb, na))
			continue;
		g = cJSON_CreateObject();
		cJSON_AddStringToObject(g, "guard", rates[i].name);
		cJSON_AddNumberToObject(g, "exits_per_iteration_before",
					round(rates[i].before / nb * 100) / 100);
		cJSON_AddNumberToObject(g, "exits_per_iteration_after",
					round(rates[i].after / na * 100) / 100);
		cJSON_AddItemToArray(guards, g);
		listed++;
	}
	free(rates);
}

int jf_warmup_add_events(cJSON *execution, const char *timeline_path, struct jf_error *err)
{
	cJSON *doc = jf_cli_load_json(timeline_path, "a jitflow timeline", err);
	const cJSON *events, *ev, *segs, *cp;
	struct instant *in;
	long *iter, current = -1;
	size_t n = 0, i;
	int k;

	if (!doc)
		return -1;
	events = cJSON_GetObjectItemCaseSensitive(doc, "traceEvents");
	if (!cJSON_IsArray(events)) {
		jf_fail(err, "%s: not a jitflow timeline (expected a \"traceEvents\" array)",
			timeline_path);
		cJSON_Delete(doc);
		return -1;
	}
	in = calloc((size_t)cJSON_GetArraySize(events) + 1, sizeof(*in));
	iter = calloc((size_t)cJSON_GetArraySize(events) + 1, sizeof(*iter));
	if (!in || !iter) {
		free(in);
		free(iter);
		cJSON_Delete(doc);
		return jf_fail(err, "%s: out of memory", timeline_path);
	}
	cJSON_ArrayForEach(ev, events) {
		if (!strcmp(str(ev, "ph"), "i")) {
			in[n].ts = num(ev, "ts");
			in[n].pos = n;
			in[n++].ev = ev;
		}
	}
	qsort(in, n, sizeof(*in), by_time);
	for (i = 0; i < n; i++) {
		const char *name = str(in[i].ev, "name");

		if (!strcmp(str(in[i].ev, "cat"), "iteration") && !strncmp(name, "iteration ", 10))
			current = strtol(name + 10, NULL, 10);
		iter[i] = current;
	}
	segs = cJSON_GetObjectItemCaseSensitive(execution, "segments");
	k = 1;
	cJSON_ArrayForEach(cp, cJSON_GetObjectItemCaseSensitive(execution, "changepoints")) {
		add_changepoint_events((cJSON *)cp, cJSON_GetArrayItem(segs, k - 1),
				       cJSON_GetArrayItem(segs, k), in, iter, n);
		k++;
	}
	free(in);
	free(iter);
	cJSON_Delete(doc);
	return 0;
}
