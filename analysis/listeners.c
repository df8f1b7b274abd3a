/* The listeners of the analysis events (listeners.h): attaching them, and the events that
 * only one listener answers. */
#include "analysis_internal.h"

/* Call callback cb of every listener of ls that has one; i_ is the listener's index. */
#define JF_EMIT(ls, cb, ...)                                                              \
	do {                                                                              \
		size_t i_;                                                                \
		for (i_ = 0; i_ < (ls)->n; i_++)                                          \
			if ((ls)->of[i_]->cb)                                             \
				(ls)->of[i_]->cb(__VA_ARGS__);                            \
	} while (0)

int jf_listeners_attach(struct jf_listeners *ls, const struct jf_listener *l, void *self)
{
	if (!self)
		return -1;
	if (ls->n >= JF_LISTENERS_MAX) {
		if (l->destroy)
			l->destroy(self);
		return -1;
	}
	ls->of[ls->n] = l;
	ls->self[ls->n] = self;
	ls->n++;
	return 0;
}

void jf_listeners_free(struct jf_listeners *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		if (ls->of[i]->destroy)
			ls->of[i]->destroy(ls->self[i]);
	ls->n = 0;
}

void jf_listeners_block_counted(struct jf_analysis *a, struct jf_listeners *ls,
				const struct jf_block_event *e)
{
	JF_EMIT(ls, block_counted, a, ls->self[i_], e);
}

void jf_listeners_bytecode_insns(struct jf_analysis *a, struct jf_listeners *ls,
				 int32_t bytecode, uint32_t inline_chain, uint32_t n)
{
	JF_EMIT(ls, bytecode_insns, a, ls->self[i_], bytecode, inline_chain, n);
}

void jf_listeners_block_done(struct jf_analysis *a, struct jf_listeners *ls,
			     const struct jf_block *b)
{
	JF_EMIT(ls, block_done, a, ls->self[i_], b);
}

void jf_listeners_time_attributed(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
				  int has_from, uint64_t from, uint64_t to)
{
	JF_EMIT(ls, time_attributed, a, ls->self[i_], tid, has_from, from, to);
}

void jf_listeners_guard_exited(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
			       int has_time, uint64_t time, uint32_t guard)
{
	JF_EMIT(ls, guard_exited, a, ls->self[i_], tid, has_time, time, guard);
}

void jf_listeners_code_changed(struct jf_analysis *a, struct jf_listeners *ls,
			       const struct jf_zone_record *rec)
{
	JF_EMIT(ls, code_changed, a, ls->self[i_], rec);
}

void jf_listeners_flow_event(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
			     const struct jf_flow *f)
{
	JF_EMIT(ls, flow_event, a, ls->self[i_], tid, f);
}

void jf_listeners_region_entered(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
				 const struct live_region *r)
{
	JF_EMIT(ls, region_entered, a, ls->self[i_], tid, r);
}

void jf_listeners_loop_iteration(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
				 int32_t trace)
{
	JF_EMIT(ls, loop_iteration, a, ls->self[i_], tid, trace);
}

void jf_listeners_guard_passed(struct jf_analysis *a, struct jf_listeners *ls, int32_t tid,
			       uint32_t guard)
{
	JF_EMIT(ls, guard_passed, a, ls->self[i_], tid, guard);
}

/* The bytecode memo keeps one row per code line it saw, so only the first listener that
 * keeps code lines is asked. */
static size_t line_keeper(const struct jf_listeners *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		if (ls->of[i]->code_line && ls->of[i]->code_lines_again)
			return i;
	return SIZE_MAX;
}

int32_t jf_listeners_code_line(struct jf_analysis *a, struct jf_listeners *ls,
			       const struct live_region *r, const struct pc_entry *e, uint64_t ip,
			       enum jf_isa isa)
{
	size_t i = line_keeper(ls);

	return i == SIZE_MAX ? -1 : ls->of[i]->code_line(a, ls->self[i], r, e, ip, isa);
}

void jf_listeners_code_lines_again(struct jf_listeners *ls, const uint32_t *rows, uint32_t n)
{
	size_t i = line_keeper(ls);

	if (i != SIZE_MAX)
		ls->of[i]->code_lines_again(ls->self[i], rows, n);
}

void jf_emit_seam_guard_exited(struct jf_analysis *a, int32_t tid, int has_time,
			       uint64_t time, uint32_t guard)
{
	struct jf_listeners *ls = &a->listeners;

	JF_EMIT(ls, seam_guard_exited, a, ls->self[i_], tid, has_time, time, guard);
}

void jf_emit_seam_guard_passed(struct jf_analysis *a, int32_t tid, uint32_t guard)
{
	struct jf_listeners *ls = &a->listeners;

	JF_EMIT(ls, seam_guard_passed, a, ls->self[i_], tid, guard);
}

void jf_emit_seam_time(struct jf_analysis *a, const struct jf_analysis *later, int32_t tid,
		       uint64_t from, uint64_t to)
{
	struct jf_listeners *ls = &a->listeners;

	JF_EMIT(ls, seam_time, a, ls->self[i_], later, later->listeners.self[i_], tid, from, to);
}

int jf_listeners_merge(struct jf_analysis *a, const struct jf_analysis *later,
		       uint64_t insn_shift)
{
	struct jf_listeners *ls = &a->listeners;
	size_t i;

	for (i = 0; i < ls->n && i < later->listeners.n; i++)
		if (ls->of[i]->merge &&
		    ls->of[i]->merge(a, ls->self[i], later, later->listeners.self[i], insn_shift) < 0)
			return -1;
	return 0;
}

int jf_listeners_result(const struct jf_analysis *a, struct jf_analysis_result *r)
{
	const struct jf_listeners *ls = &a->listeners;
	size_t i;

	for (i = 0; i < ls->n; i++)
		if (ls->of[i]->result && ls->of[i]->result(a, ls->self[i], r) < 0)
			return -1;
	return 0;
}
