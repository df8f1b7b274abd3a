/* minivm's tracer: finds hot loops, records a trace while the interpreter runs one
 * iteration, enters compiled traces, handles their exits (and records a bridge when a guard
 * has failed often enough), and invalidates all compiled code on request or when code
 * memory is full.
 *
 * Thresholds, exactly (tests rely on them): a loop's header is recorded after its back-edge
 * has been taken `hot` times; the recorded iteration is interpreted and the trace is
 * entered at the next back-edge. A guard's bridge is recorded right after its `bridge`-th
 * exit (0: never), from the pc the exit resumes at. */
#include <stdlib.h>

#include <jitflow/emitter.h>

#include "vm.h"
#include "zone.h"

static MVM_SECTION_TRACER void record_start(struct mvm_vm *vm, struct mvm_frame *fr,
					     enum mvm_trace_kind kind, uint32_t pc,
					     uint32_t loop_end, struct mvm_guard *parent)
{
	struct mvm_recorder *rec = &vm->rec;

	rec->loop_end = loop_end;
	rec->active = 1;
	rec->kind = kind;
	rec->frame = fr;
	rec->start_pc = pc;
	rec->parent = parent;
	rec->len = 0;
	rec->trace_id = vm->next_trace_id++;
	mvm_zone_event(vm->zone, JF_EVENT_TRACE_START, rec->trace_id);
	/* Until it is finished or aborted, all the thread runs is recording this trace: the
	 * interpreter running the recorded iteration and the tracer's steps. */
	vm->recordings++;
	mvm_zone_tracing_begin(vm->zone);
}

/* The recording is given up (its tracing phase has ended). */
static MVM_SECTION_TRACER void record_give_up(struct mvm_vm *vm)
{
	struct mvm_recorder *rec = &vm->rec;

	rec->active = 0;
	mvm_zone_event(vm->zone, JF_EVENT_TRACE_ABORT, rec->trace_id);
	if (rec->kind == MVM_TRACE_LOOP) {
		struct mvm_pc_state *ps = &rec->frame->fn->pcs[rec->start_pc];

		ps->aborts++;
		ps->hot = 0;
	} else {
		rec->parent->bridge_aborts++;
	}
}

static MVM_SECTION_TRACER void record_abort(struct mvm_vm *vm)
{
	mvm_zone_tracing_end(vm->zone);
	record_give_up(vm);
}

/* Compiling: the trace and, for a bridge, re-pointing its guard's exit to it. */
static MVM_SECTION_TRACER struct mvm_trace *compile(struct mvm_vm *vm, enum mvm_rec_end end,
						     uint32_t end_pc, struct mvm_trace *link)
{
	struct mvm_recorder *rec = &vm->rec;
	struct mvm_trace *t;

	vm->compilations++;
	mvm_zone_compiling_begin(vm->zone);
	t = mvm_jit_compile(vm, rec, end, end_pc, link);
	if (t && t->kind == MVM_TRACE_BRIDGE)
		mvm_jit_patch_bridge(vm, rec->parent, t);
	mvm_zone_compiling_end(vm->zone);
	return t;
}

static MVM_SECTION_TRACER void record_finish(struct mvm_vm *vm, enum mvm_rec_end end,
					      uint32_t end_pc, struct mvm_trace *link)
{
	struct mvm_recorder *rec = &vm->rec;
	struct mvm_trace *t;

	mvm_zone_tracing_end(vm->zone);
	t = compile(vm, end, end_pc, link);
	rec->active = 0;
	if (!t && mvm_codemem_used(vm->code) == 0) {
		record_give_up(vm); /* bigger than all of code memory: give up after a few */
		return;
	}
	if (!t) {
		/* No room: everything is flushed as soon as no trace is running, and the
		 * loop heats up again. Not the loop's fault, so not counted as an abort. */
		mvm_zone_event(vm->zone, JF_EVENT_TRACE_ABORT, rec->trace_id);
		if (rec->kind == MVM_TRACE_LOOP)
			rec->frame->fn->pcs[rec->start_pc].hot = 0;
		mvm_tracer_request_flush(vm);
		return;
	}
	if (t->kind == MVM_TRACE_LOOP)
		rec->frame->fn->pcs[rec->start_pc].trace = t;
}

static MVM_SECTION_TRACER void record_append(struct mvm_vm *vm, const struct mvm_insn *in,
					      uint32_t pc, int64_t observed)
{
	struct mvm_recorder *rec = &vm->rec;
	struct mvm_rec_op *op;

	if (rec->len == rec->cap) {
		uint32_t cap = rec->cap ? rec->cap * 2 : 64;
		struct mvm_rec_op *ops = realloc(rec->ops, cap * sizeof(*ops));

		if (!ops) {
			record_abort(vm);
			return;
		}
		rec->ops = ops;
		rec->cap = cap;
	}
	op = &rec->ops[rec->len++];
	op->pc = pc;
	op->op = in->op;
	op->arg = in->arg;
	op->imm = in->imm;
	op->observed = observed;
}

/* Called before the interpreter executes fr's instruction at pc while recording fr. */
MVM_SECTION_TRACER void mvm_tracer_step(struct mvm_vm *vm, struct mvm_frame *fr, uint32_t pc)
{
	struct mvm_recorder *rec = &vm->rec;
	const struct mvm_insn *in = &fr->fn->code[pc];
	int bridge = rec->kind == MVM_TRACE_BRIDGE;
	int64_t observed = 0;

	if (bridge) {
		/* A bridge ends where compiled code already takes over. */
		struct mvm_trace *t = fr->fn->pcs[pc].trace;

		if (t && t->live) {
			record_finish(vm, MVM_END_LINK, pc, t);
			return;
		}
	} else if (in->op == MVM_OP_LOOP && (uint32_t)in->arg == rec->start_pc) {
		record_append(vm, in, pc, 0);
		if (rec->active)
			record_finish(vm, MVM_END_LOOP, pc, NULL);
		return;
	} else if (pc < rec->start_pc || pc > rec->loop_end) {
		record_abort(vm); /* the loop ended during the recorded iteration */
		return;
	}
	if (in->op == MVM_OP_CALL) {
		struct mvm_value callee = fr->sp[-(int64_t)in->arg - 1];

		/* A call that is about to fault is left to the interpreter. */
		if (callee.tag != MVM_FUNC ||
		    ((struct mvm_function *)(uintptr_t)callee.i)->param_count != (uint32_t)in->arg)
			goto stop;
		observed = callee.i;
	}
	if (in->op == MVM_OP_RETURN || in->op == MVM_OP_FLUSH || rec->len >= MVM_MAX_TRACE_OPS)
		goto stop;
	if (in->op == MVM_OP_JUMP_IF_FALSE)
		observed = fr->sp[-1].tag == MVM_INT && fr->sp[-1].i == 0;
	record_append(vm, in, pc, observed);
	return;
stop:
	/* A loop trace must come back to its header; a bridge may end by returning to the
	 * interpreter here. */
	if (bridge)
		record_finish(vm, MVM_END_EXIT, pc, NULL);
	else
		record_abort(vm);
}

static MVM_SECTION_TRACER uint32_t run_trace(struct mvm_vm *vm, struct mvm_frame *fr,
					      struct mvm_trace *t)
{
	struct mvm_jit_state st;
	struct mvm_guard *g;
	uint32_t pc;

	mvm_jit_state_init(vm, &st);
	vm->jit_active++;
	((mvm_trace_entry_fn)(uintptr_t)t->entry_addr)(&st, fr->sp, fr->locals);
	vm->jit_active--;
	/* Exit handling: the interpreter's state back from where compiled code left. */
	vm->exits_handled++;
	mvm_zone_exit_handling_begin(vm->zone);
	fr->sp = st.exit_sp;
	pc = (uint32_t)st.exit_pc;
	mvm_zone_exit_handling_end(vm->zone);
	if (vm->flush_pending) {
		/* A flush asked for while traces ran happens once none is on the stack. */
		if (!vm->jit_active)
			mvm_tracer_flush(vm);
		return pc;
	}
	g = st.exit_guard ? vm->guards[st.exit_guard] : NULL;
	if (g && vm->opt.bridge && g->exits >= vm->opt.bridge && !g->bridge &&
	    g->bridge_aborts < MVM_MAX_ABORTS && !vm->rec.active && g->trace->live)
		record_start(vm, fr, MVM_TRACE_BRIDGE, pc, 0, g);
	return pc;
}

/* The interpreter is about to take the back-edge at pc to a loop header. */
MVM_SECTION_TRACER uint32_t mvm_tracer_backedge(struct mvm_vm *vm, struct mvm_frame *fr,
						 uint32_t pc, uint32_t header)
{
	struct mvm_pc_state *ps = &fr->fn->pcs[header];

	if (vm->rec.active && vm->rec.frame == fr)
		return header; /* recording this frame: stay in the interpreter */
	if (ps->trace)
		return run_trace(vm, fr, ps->trace);
	if (vm->rec.active || ps->aborts >= MVM_MAX_ABORTS)
		return header;
	if (++ps->hot >= vm->opt.hot) {
		ps->hot = 0;
		record_start(vm, fr, MVM_TRACE_LOOP, header, pc, NULL);
	}
	return header;
}

MVM_SECTION_TRACER void mvm_tracer_request_flush(struct mvm_vm *vm)
{
	vm->flush_pending = 1;
	if (!vm->jit_active)
		mvm_tracer_flush(vm);
}

/* Invalidate every trace: their memory is reused from the start by the next ones. Only
 * called when no trace is running. */
MVM_SECTION_TRACER void mvm_tracer_flush(struct mvm_vm *vm)
{
	struct mvm_trace *t;
	uint32_t f, i;

	if (vm->rec.active)
		record_abort(vm);
	for (t = vm->traces; t; t = t->next) {
		if (!t->live)
			continue;
		mvm_zone_trace_freed(vm->zone, t);
		t->live = 0;
		if (t->kind == MVM_TRACE_LOOP)
			t->fn->pcs[t->start_pc].trace = NULL;
	}
	for (f = 0; f < vm->prog->function_count; f++) {
		struct mvm_function *fn = vm->prog->functions[f];

		for (i = 0; i < fn->code_len; i++)
			fn->pcs[i].hot = 0;
	}
	mvm_codemem_reset(vm->code);
	vm->flush_pending = 0;
	vm->flushes++;
}
