/* minivm -> jitflow's zone emitter (imagemap/include/jitflow/emitter.h). */
#include <stdio.h>
#include <stdlib.h>

#include <jitflow/emitter.h>

#include "stencils.h"
#include "zone.h"

struct mvm_zone {
	struct jf_emitter *em;
	const struct mvm_program *prog;
};

/* Section bounds from the linker (see MVM_SECTION_* in vm.h). */
extern const char __start_mvmsec_eval[], __stop_mvmsec_eval[];
extern const char __start_mvmsec_handlers[], __stop_mvmsec_handlers[];
extern const char __start_mvmsec_tracer[], __stop_mvmsec_tracer[];
extern const char __start_mvmsec_compiler[], __stop_mvmsec_compiler[];
extern const char __start_mvmsec_runtime[], __stop_mvmsec_runtime[];

struct mvm_zone *mvm_zone_open(const char *dir, int *failed)
{
	struct mvm_zone *z;

	*failed = 0;
	if (!dir)
		return NULL;
	z = calloc(1, sizeof(*z));
	if (z)
		z->em = jf_emitter_open(dir, JF_EMIT_CLOCK_MONOTONIC);
	if (!z || !z->em) {
		fprintf(stderr, "minivm: cannot write a zone file in %s\n", dir);
		free(z);
		*failed = 1;
		return NULL;
	}
	return z;
}

void mvm_zone_close(struct mvm_zone *z)
{
	if (!z)
		return;
	jf_emitter_close(z->em);
	free(z);
}

static uint64_t addr_of(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

void mvm_zone_describe_runtime(struct mvm_zone *z, const struct mvm_program *prog)
{
	uint32_t i;

	if (!z)
		return;
	z->prog = prog;
	jf_emit_interp_range(z->em, JF_INTERP_EVAL_LOOP, addr_of(__start_mvmsec_eval),
			     addr_of(__stop_mvmsec_eval), "eval loop");
	for (i = 0; i < MVM_OP_COUNT; i++) {
		uint64_t start, end;
		char name[64];

		mvm_handler_range(i, &start, &end);
		snprintf(name, sizeof(name), "handler %s", mvm_opcode_name(i));
		jf_emit_interp_range(z->em, JF_INTERP_HANDLER, start, end, name);
	}
	jf_emit_interp_range(z->em, JF_INTERP_TRACER, addr_of(__start_mvmsec_tracer),
			     addr_of(__stop_mvmsec_tracer), "tracer");
	jf_emit_interp_range(z->em, JF_INTERP_COMPILER, addr_of(__start_mvmsec_compiler),
			     addr_of(__stop_mvmsec_compiler), "jit compiler");
	jf_emit_interp_range(z->em, JF_INTERP_RUNTIME, addr_of(__start_mvmsec_runtime),
			     addr_of(__stop_mvmsec_runtime), "runtime services");
	/* Code objects are numbered from 1 (0 means "none"): function i is object i + 1. */
	for (i = 0; i < prog->function_count; i++)
		jf_emit_code_object(z->em, i + 1, prog->functions[i]->name, prog->path,
				    prog->functions[i]->line);
	for (i = 0; i < MVM_ST_COUNT; i++)
		jf_emit_op_name(z->em, (uint16_t)i, mvm_stencils[i].name);
}

void mvm_zone_trace_loaded(struct mvm_zone *z, const struct mvm_trace *t,
			   const uint8_t *code, const struct mvm_pc_entry *pcs, uint32_t pc_count)
{
	struct jf_region r = {0};
	struct jf_pc_map_entry *map;
	char name[160];
	uint32_t i;

	if (!z)
		return;
	if (t->kind == MVM_TRACE_LOOP)
		snprintf(name, sizeof(name), "trace %llu (loop at %s:%u in %s)",
			 (unsigned long long)t->id, z->prog ? z->prog->path : "?",
			 t->fn->code[t->start_pc].line, t->fn->name);
	else
		snprintf(name, sizeof(name), "bridge %llu (trace %llu guard %llu, pc %u in %s)",
			 (unsigned long long)t->id, (unsigned long long)t->parent_guard->trace->id,
			 (unsigned long long)t->parent_guard->id, t->start_pc, t->fn->name);
	r.name = name;
	r.addr = t->addr;
	r.code = code;
	r.size = t->body_size;
	r.kind = t->kind == MVM_TRACE_LOOP ? JF_REGION_TRACE : JF_REGION_BRIDGE;
	r.generation = t->fn->pcs[t->start_pc].compiles - 1;
	r.trace_id = t->id;
	r.parent_trace = t->parent_guard ? t->parent_guard->trace->id : 0;
	r.parent_guard = t->parent_guard ? t->parent_guard->id : 0;
	r.code_object = t->fn->index + 1;
	jf_emit_region_load(z->em, &r);
	/* Back-edges jump past count_entry to count_iteration: say where, so that a trace
	 * tells iterations from entries. */
	if (t->kind == MVM_TRACE_LOOP && t->header_addr != t->addr)
		jf_emit_event(z->em, JF_EVENT_LOOP_HEADER, t->header_addr);

	/* Each exit stub is a region of its own, so time spent leaving is told apart. */
	for (i = 0; i < t->guard_count; i++) {
		const struct mvm_guard *g = t->guards[i];
		uint64_t end = i + 1 < t->guard_count ? t->guards[i + 1]->stub_addr
						       : t->addr + t->size;

		snprintf(name, sizeof(name), "exit stub (trace %llu guard %llu)",
			 (unsigned long long)t->id, (unsigned long long)g->id);
		r.name = name;
		r.addr = g->stub_addr;
		r.code = code + (g->stub_addr - t->addr);
		r.size = end - g->stub_addr;
		r.kind = JF_REGION_EXIT_STUB;
		r.parent_trace = t->id;
		r.parent_guard = g->id;
		jf_emit_region_load(z->em, &r);
	}
	for (i = 0; i < t->guard_count; i++) {
		const struct mvm_guard *g = t->guards[i];

		jf_emit_guard(z->em, g->id, t->id, g->branch_addr, g->stub_addr, g->resume_pc);
	}
	map = calloc(pc_count ? pc_count : 1, sizeof(*map));
	if (!map)
		return;
	for (i = 0; i < pc_count; i++) {
		map[i].code_offset = pcs[i].code_offset;
		map[i].bytecode_pc = pcs[i].bytecode_pc;
		map[i].op_index = pcs[i].op_index;
		map[i].op_kind = pcs[i].stencil;
	}
	jf_emit_pc_map(z->em, t->addr, map, pc_count);
	free(map);
}

void mvm_zone_trace_freed(struct mvm_zone *z, const struct mvm_trace *t)
{
	uint32_t i;

	if (!z)
		return;
	jf_emit_region_free(z->em, t->addr, t->body_size);
	for (i = 0; i < t->guard_count; i++) {
		uint64_t start = t->guards[i]->stub_addr;
		uint64_t end = i + 1 < t->guard_count ? t->guards[i + 1]->stub_addr
						       : t->addr + t->size;

		jf_emit_region_free(z->em, start, end - start);
	}
}

void mvm_zone_patch(struct mvm_zone *z, uint64_t addr, const uint8_t *bytes, uint32_t size,
		    const char *reason)
{
	if (z)
		jf_emit_patch(z->em, addr, bytes, size, reason);
}

void mvm_zone_event(struct mvm_zone *z, uint32_t kind, uint64_t arg)
{
	if (z)
		jf_emit_event(z->em, kind, arg);
}

#define PHASE_BRACKET(name, event, phase)                                                \
	__attribute__((noinline, noclone)) void name(struct mvm_zone *z)                 \
	{                                                                                \
		mvm_zone_event(z, event, phase);                                         \
	}

PHASE_BRACKET(mvm_zone_tracing_begin, JF_EVENT_PHASE_BEGIN, JF_PHASE_TRACING)
PHASE_BRACKET(mvm_zone_tracing_end, JF_EVENT_PHASE_END, JF_PHASE_TRACING)
PHASE_BRACKET(mvm_zone_compiling_begin, JF_EVENT_PHASE_BEGIN, JF_PHASE_COMPILING)
PHASE_BRACKET(mvm_zone_compiling_end, JF_EVENT_PHASE_END, JF_PHASE_COMPILING)
PHASE_BRACKET(mvm_zone_exit_handling_begin, JF_EVENT_PHASE_BEGIN, JF_PHASE_EXIT_HANDLING)
PHASE_BRACKET(mvm_zone_exit_handling_end, JF_EVENT_PHASE_END, JF_PHASE_EXIT_HANDLING)
