/* The plain-data result: tables sorted by the runtime's ids, the overall split, the
 * per-iteration series with its warmup class, and the retrace candidates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

#define DUP(dst, src, n) \
	((n) ? ((dst) = malloc((n) * sizeof(*(dst)))) && memcpy((dst), (src), (n) * sizeof(*(dst))) : 1)

static int by_trace(const void *x, const void *y)
{
	const struct jf_trace_result *p = x, *q = y;

	return p->trace_id < q->trace_id ? -1 : p->trace_id > q->trace_id;
}

static int by_guard(const void *x, const void *y)
{
	const struct jf_guard_result *p = x, *q = y;

	if (p->trace_id != q->trace_id)
		return p->trace_id < q->trace_id ? -1 : 1;
	return p->guard_id < q->guard_id ? -1 : p->guard_id > q->guard_id;
}

static int by_bytecode(const void *x, const void *y)
{
	const struct jf_bytecode_result *p = x, *q = y;

	if (p->region_key != q->region_key)
		return p->region_key < q->region_key ? -1 : 1;
	if (p->pc_from != q->pc_from)
		return p->pc_from < q->pc_from ? -1 : 1;
	return p->pc_to < q->pc_to ? -1 : p->pc_to > q->pc_to;
}

static int by_op(const void *x, const void *y)
{
	const struct jf_op_result *p = x, *q = y;

	return p->insns > q->insns ? -1 : p->insns < q->insns;
}

static int by_score(const void *x, const void *y)
{
	const struct jf_retrace_candidate *p = x, *q = y;

	return p->score > q->score ? -1 : p->score < q->score;
}

/* The value the warmup class looks at: time when the trace has it, else instructions. */
static uint64_t iteration_value(const struct jf_analysis_result *r, size_t i, int *failed)
{
	struct jf_iteration_result it;

	if (jf_analysis_iteration(r, i, &it) < 0)
		*failed = 1;
	return r->has_time ? it.time : it.insns;
}

/* The k-th smallest (from 0) of the values of rows [from, n), exactly, in bounded memory:
 * the series may be longer than memory allows, so instead of sorting, the answer is found
 * 16 bits at a time from the top, each pass counting the values that share the bits found
 * so far. */
static uint64_t kth_value(const struct jf_analysis_result *r, size_t from, size_t n, uint64_t k,
			  int *failed)
{
	enum { BITS = 16, DIGITS = 1 << BITS };
	uint64_t *count = malloc(DIGITS * sizeof(*count)), prefix = 0;
	int shift;

	if (!count) {
		*failed = 1;
		return 0;
	}
	for (shift = 64 - BITS; shift >= 0; shift -= BITS) {
		uint64_t high_mask = shift + BITS >= 64 ? 0 : ~0ull << (shift + BITS);
		size_t i, d;

		memset(count, 0, DIGITS * sizeof(*count));
		for (i = from; i < n; i++) {
			uint64_t v = iteration_value(r, i, failed);

			if ((v & high_mask) == prefix)
				count[(v >> shift) & (DIGITS - 1)]++;
		}
		for (d = 0; d < DIGITS - 1 && k >= count[d]; d++)
			k -= count[d];
		prefix |= (uint64_t)d << shift;
	}
	free(count);
	return prefix;
}

/* Steady state: from the first iteration after which every value stays within tolerance
 * of the median of the last third. Flat when that is the first iteration; warmup when the
 * iterations before were slower, slowdown when faster; no steady state when even the last
 * third strays. */
static int classify_warmup(struct jf_analysis_result *r, double tolerance)
{
	size_t n = r->niterations, tail = n / 3, i, from;
	uint64_t median;
	double before = 0;
	int failed = 0;

	r->warmup = JF_WARMUP_UNKNOWN;
	if (n < 6)
		return 0;
	median = kth_value(r, n - tail, n, tail / 2, &failed);
#define VALUE(k) ((double)iteration_value(r, (k), &failed))
#define STEADY(k) (VALUE(k) >= (double)median * (1 - tolerance) && VALUE(k) <= (double)median * (1 + tolerance))
	for (i = n - tail; i < n; i++) {
		if (!STEADY(i)) {
			r->warmup = JF_WARMUP_NO_STEADY_STATE;
			return failed ? -1 : 0;
		}
	}
	from = n - tail;
	while (from > 0 && STEADY(from - 1))
		from--;
	r->steady_from = from;
	if (from == 0) {
		r->warmup = JF_WARMUP_FLAT;
		return failed ? -1 : 0;
	}
	for (i = 0; i < from; i++)
		before += VALUE(i);
	r->warmup = before / (double)from > (double)median ? JF_WARMUP_WARMUP : JF_WARMUP_SLOWDOWN;
#undef STEADY
#undef VALUE
	return failed ? -1 : 0;
}

/* Traces whose iterations mostly leave through one guard, or whose instructions mostly run
 * in their bridges: the recorded path is not the common one, so re-tracing would help. */
static int find_retrace(struct jf_analysis_result *r)
{
	size_t i, j;

	r->retrace = calloc(r->ntraces ? r->ntraces : 1, sizeof(*r->retrace));
	if (!r->retrace)
		return -1;
	for (i = 0; i < r->ntraces; i++) {
		const struct jf_trace_result *t = &r->traces[i];
		struct jf_retrace_candidate c = { .trace_id = t->trace_id };
		uint64_t bridge_insns = 0, top = 0;

		if (t->kind == JF_REGION_BRIDGE || !t->iterations)
			continue;
		for (j = t->guard_first; j < t->guard_first + t->guard_count; j++) {
			if (r->guards[j].exits > top) {
				top = r->guards[j].exits;
				c.top_guard = r->guards[j].guard_id;
			}
		}
		for (j = 0; j < r->ntraces; j++) {
			if (r->traces[j].kind == JF_REGION_BRIDGE && r->traces[j].parent_trace == t->trace_id)
				bridge_insns += r->traces[j].insns;
		}
		c.top_guard_share = (double)top / (double)t->iterations;
		if (t->insns + bridge_insns)
			c.bridge_share = (double)bridge_insns / (double)(t->insns + bridge_insns);
		c.score = c.top_guard_share > c.bridge_share ? c.top_guard_share : c.bridge_share;
		if (c.score > 0.5)
			r->retrace[r->nretrace++] = c;
	}
	jf_sort_rows(r->retrace, r->nretrace, sizeof(*r->retrace), by_score);
	return 0;
}

static int by_point(const void *x, const void *y)
{
	const struct jf_point_result *p = x, *q = y;

	if (p->trace_id != q->trace_id)
		return p->trace_id < q->trace_id ? -1 : 1;
	if (p->kind != q->kind)
		return p->kind < q->kind ? -1 : 1;
	return p->addr < q->addr ? -1 : p->addr > q->addr;
}

/* Most taken first, then by the traces' ids. */
static int by_link(const void *x, const void *y)
{
	const struct jf_trace_link_result *p = x, *q = y;

	if (p->count != q->count)
		return p->count > q->count ? -1 : 1;
	if (p->from_trace != q->from_trace)
		return p->from_trace < q->from_trace ? -1 : 1;
	return p->to_trace < q->to_trace ? -1 : p->to_trace > q->to_trace;
}

int jf_analysis_result(struct jf_analysis *a, struct jf_analysis_result *r)
{
	size_t i, g;

	memset(r, 0, sizeof(*r));
	if (!DUP(r->traces, a->traces, a->ntraces) || !DUP(r->guards, a->guards, a->nguards) ||
	    !DUP(r->regions, a->regions, a->nregions) ||
	    !DUP(r->bytecodes, a->bytecodes, a->nbytecodes) || !DUP(r->ops, a->ops, a->nops) ||
	    !DUP(r->points, a->points, a->npoints) ||
	    !DUP(r->trace_links, a->links, a->nlinks))
		goto oom;
	r->ntrace_links = a->nlinks;
	jf_sort_rows(r->trace_links, r->ntrace_links, sizeof(*r->trace_links), by_link);
	r->npoints = a->npoints;
	jf_sort_rows(r->points, r->npoints, sizeof(*r->points), by_point);
	r->ntraces = a->ntraces;
	r->nguards = a->nguards;
	r->nregions = a->nregions;
	r->nbytecodes = a->nbytecodes;
	r->nops = a->nops;
	jf_sort_rows(r->traces, r->ntraces, sizeof(*r->traces), by_trace);
	jf_sort_rows(r->guards, r->nguards, sizeof(*r->guards), by_guard);
	jf_sort_rows(r->bytecodes, r->nbytecodes, sizeof(*r->bytecodes), by_bytecode);
	jf_sort_rows(r->ops, r->nops, sizeof(*r->ops), by_op);
	for (i = 0, g = 0; i < r->ntraces; i++) {
		while (g < r->nguards && r->guards[g].trace_id < r->traces[i].trace_id)
			g++;
		r->traces[i].guard_first = (uint32_t)g;
		while (g < r->nguards && r->guards[g].trace_id == r->traces[i].trace_id)
			g++;
		r->traces[i].guard_count = (uint32_t)(g - r->traces[i].guard_first);
	}
	for (i = 0; i < r->nops; i++) {
		const char *name = jf_zone_model_op_name(&a->zm, r->ops[i].op_kind);

		if (name)
			strncpy(r->ops[i].name, name, sizeof(r->ops[i].name) - 1);
	}

	r->threads = calloc(a->nthreads ? a->nthreads : 1, sizeof(*r->threads));
	if (!r->threads)
		goto oom;
	r->total.tid = -1;
	for (i = 0; i < a->nthreads; i++) {
		const char *name = jf_zone_model_thread_name(&a->zm, a->threads[i].tid);

		r->threads[i] = a->threads[i].split;
		if (name)
			snprintf(r->threads[i].name, sizeof(r->threads[i].name), "%s", name);
		jf_split_add(&r->total, &a->threads[i].split);
	}
	r->nthreads = a->nthreads;

	/* The result shares the analysis' series (no copy); the iteration under way when the
	 * trace ended is the last one. */
	r->iteration_series = jf_iteration_series_ref(a->iters);
	r->niterations = jf_iteration_series_count(a->iters);
	if (a->cur.open) {
		struct jf_iteration_result *it = &r->open_iteration;

		it->index = a->cur.index;
		it->insns = a->cur.insns;
		it->time = a->cur.time;
		memcpy(it->insns_by_split, a->cur.by_split, sizeof(it->insns_by_split));
		memcpy(it->insns_by_class, a->cur.by_class, sizeof(it->insns_by_class));
		r->has_open_iteration = 1;
		r->niterations++;
	}

	jf_phase_result(a, r);
	r->insns = a->insns;
	r->blocks = a->blocks;
	r->decode_errors = a->decode_errors;
	r->lost_bytes = a->lost_bytes;
	r->lost_events = a->lost_events;
	r->overflows = a->overflows;
	r->image_misses = a->image_misses;
	memcpy(r->problems, a->problems, sizeof(r->problems));
	r->nproblems = a->nproblems;
	r->has_zone_records = a->has_zone_records;
	r->runtime = a->runtime;
	r->trace_starts = a->trace_starts;
	r->trace_aborts = a->trace_aborts;
	r->trace_flushes = a->trace_flushes;
	r->has_pc_maps = a->has_pc_maps;
	r->has_iterations = a->has_iterations;
	r->has_time = a->has_time;
	r->time_is_ns = a->time_is_ns;
	r->time_is_synthetic = a->time_is_synthetic;
	if (classify_warmup(r, a->cfg.steady_tolerance) < 0 || find_retrace(r) < 0 ||
	    jf_listeners_result(a, r) < 0)
		goto oom;
	return 0;
oom:
	jf_analysis_result_free(r);
	return -1;
}

void jf_analysis_result_free(struct jf_analysis_result *r)
{
	free(r->traces);
	free(r->guards);
	free(r->regions);
	free(r->bytecodes);
	free(r->ops);
	free(r->points);
	free(r->trace_links);
	free(r->threads);
	jf_iteration_series_unref(r->iteration_series);
	free(r->retrace);
	jf_views_result_free(r);
	jf_call_stacks_result_free(r);
	memset(r, 0, sizeof(*r));
}
