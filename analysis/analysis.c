/* The analysis object: inputs in trace order (zone records, native ranges, flows). */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"

/* The generation of a missing map: it never changes. */
static const uint64_t no_map_generation;

struct jf_analysis *jf_analysis_new(const struct jf_analysis_config *cfg)
{
	struct jf_analysis *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	if (cfg)
		a->cfg = *cfg;
	if (a->cfg.steady_tolerance <= 0)
		a->cfg.steady_tolerance = 0.05;
	if (a->cfg.timeline_buckets < 2)
		a->cfg.timeline_buckets = JF_TIMELINE_BUCKETS;
	a->last_loaded_trace = -1;
	a->map_generation = &no_map_generation;
	a->flow_thread = SIZE_MAX;
	if (a->cfg.map) {
		a->map_generation = jf_codemap_generation_counter(a->cfg.map);
		a->walker = jf_insn_cache_new(a->cfg.map);
		if (!a->walker) {
			free(a);
			return NULL;
		}
	}
	if (a->cfg.views && jf_listeners_attach(&a->listeners, &jf_views_listener, jf_views_new()) < 0) {
		jf_analysis_free(a);
		return NULL;
	}
	if (a->cfg.call_stacks &&
	    jf_listeners_attach(&a->listeners, &jf_call_stacks_listener, jf_call_stacks_new()) < 0) {
		jf_analysis_free(a);
		return NULL;
	}
	return a;
}

void jf_analysis_free(struct jf_analysis *a)
{
	if (!a)
		return;
	jf_insn_cache_free(a->walker);
	jf_block_memo_free(a->memo);
	jf_zone_model_free(&a->zm);
	jf_listeners_free(&a->listeners);
	free(a->traces);
	free(a->guards);
	free(a->regions);
	free(a->bytecodes);
	free(a->ops);
	free(a->points);
	free(a->links);
	jf_index_map_free(&a->link_by_key);
	free(a->threads);
	free(a->instrumented);
	jf_phase_free(a);
	free(a->sources);
	jf_iteration_series_unref(a->iters);
	jf_index_map_free(&a->trace_by_id);
	jf_index_map_free(&a->guard_by_id);
	jf_index_map_free(&a->region_by_key);
	jf_index_map_free(&a->bytecode_by_key);
	jf_index_map_free(&a->op_by_kind);
	jf_index_map_free(&a->point_by_key);
	free(a);
}

int jf_analysis_add_native(struct jf_analysis *a, uint64_t start, uint64_t end,
			   enum jf_code_class cls, const char *name)
{
	a->model_generation++;
	return jf_zone_model_add_native(&a->zm, start, end, cls);
}

int jf_close_iteration(struct jf_analysis *a, const struct iteration_acc *acc)
{
	struct jf_iteration_result it;

	if (!a->iters && !(a->iters = jf_iteration_series_new()))
		return -1;
	it.index = acc->index;
	it.insns = acc->insns;
	it.time = acc->time;
	memcpy(it.insns_by_split, acc->by_split, sizeof(it.insns_by_split));
	memcpy(it.insns_by_class, acc->by_class, sizeof(it.insns_by_class));
	return jf_iteration_series_append(a->iters, &it);
}

/* An iteration mark closes the iteration under way and opens the next. */
static int start_iteration(struct jf_analysis *a, uint64_t index)
{
	if (a->cur.open && jf_close_iteration(a, &a->cur) < 0)
		return -1;
	memset(&a->cur, 0, sizeof(a->cur));
	a->cur.open = 1;
	a->cur.index = index;
	a->has_iterations = 1;
	return 0;
}

static int replay_state(struct jf_analysis *a, const struct jf_zone_reader *reader,
			const struct jf_zone_record *rec);

int jf_analysis_zone_record(struct jf_analysis *a, const struct jf_zone_reader *reader,
			    const struct jf_zone_record *rec)
{
	jf_emit_code_changed(a, &a->listeners, rec);
	if (rec->id == JF_ZONE_EVENT && rec->u.event.kind == JF_EVENT_ITERATION) {
		a->has_zone_records = 1;
		return start_iteration(a, rec->u.event.arg);
	}
	/* The runtime's trace events are counted where they took effect in the flow. */
	if (rec->id == JF_ZONE_EVENT) {
		a->trace_starts += rec->u.event.kind == JF_EVENT_TRACE_START;
		a->trace_aborts += rec->u.event.kind == JF_EVENT_TRACE_ABORT;
		a->trace_flushes += rec->u.event.kind == JF_EVENT_TRACE_FLUSH;
		if (jf_phase_event(a, rec, 0) < 0)
			return -1;
	}
	return replay_state(a, reader, rec);
}

/* How the trace loaded last ends: arg = enum jf_trace_link | target trace id << 8. */
static void set_trace_link(struct jf_analysis *a, uint64_t arg)
{
	struct jf_trace_result *t;

	if (a->last_loaded_trace < 0)
		return;
	t = &a->traces[a->last_loaded_trace];
	t->link = (uint32_t)(arg & 0xff);
	t->link_trace = arg >> 8;
}

/* The header of the loop trace holding addr moves from its entry to addr. */
static int set_loop_header(struct jf_analysis *a, uint64_t addr)
{
	struct live_region *r = jf_zone_model_region_at(&a->zm, addr);

	if (r)
		r->header = addr;
	return 0;
}



void jf_analysis_set_clock(struct jf_analysis *a, int time_is_ns, int time_is_synthetic)
{
	a->time_is_ns = time_is_ns;
	a->time_is_synthetic = time_is_synthetic;
}

/* What a record changes of the code model and the threads' state, in either part. */
static int replay_state(struct jf_analysis *a, const struct jf_zone_reader *reader,
			const struct jf_zone_record *rec)
{
	/* A loop header, a trace's link, the runtime and being inside instrumentation are
	 * state; the other events mark points of the flow. */
	if (rec->id == JF_ZONE_EVENT) {
		switch (rec->u.event.kind) {
		case JF_EVENT_LOOP_HEADER:
			a->model_generation++;
			return set_loop_header(a, rec->u.event.arg);
		case JF_EVENT_TRACE_LINK:
			set_trace_link(a, rec->u.event.arg);
			return 0;
		case JF_EVENT_RUNTIME:
			a->runtime = (uint32_t)rec->u.event.arg;
			return 0;
		case JF_EVENT_INSTRUMENTATION_BEGIN:
		case JF_EVENT_INSTRUMENTATION_END:
			return jf_instrumentation_event(a, (int32_t)rec->tid,
							rec->u.event.kind == JF_EVENT_INSTRUMENTATION_BEGIN);
		}
		return 0;
	}
	a->model_generation++;
	return jf_zone_model_apply(a, reader, rec);
}

int jf_analysis_replay_record(struct jf_analysis *a, const struct jf_zone_reader *reader,
			      const struct jf_zone_record *rec)
{
	/* The phase brackets open at the part's start are state too. */
	if (rec->id == JF_ZONE_EVENT && jf_phase_event(a, rec, 1) < 0)
		return -1;
	return replay_state(a, reader, rec);
}
