/* minivm's trace compiler: copy-and-patch. A recording becomes a list of stencil instances
 * (stencils.c, extracted at build time), laid out one after the other, each copied and its
 * holes patched with operands, the next instance's address, jump targets and exit stubs
 * (how a hole is written is the architecture's: jit_x86.c, jit_a64.c).
 *
 * Layout of one trace:
 *   count_entry                   entries++          (the trace's entry)
 *   count_iteration               iterations++       (loop traces: the header)
 *   body ...                      one or two stencils per recorded bytecode
 *   jump header | jump other | exit_leave            how it ends
 *   per guard: exit_count; jmp -> exit_leave(pc, id)  its exit stub (the jump is what a
 *                                                     bridge re-points) */
#include <stdlib.h>
#include <string.h>

#include <jitflow/emitter.h>

#include "jit_arch.h"
#include "stencils.h"
#include "vm.h"
#include "zone.h"

struct instance {
	uint32_t stencil;
	uint64_t op[3];
	uint32_t bytecode_pc, op_index;
	struct mvm_guard *guard;   /* guard stencils: whose stub the exit goes to;
	                            * exit_leave of a stub: whose id it reports */
	int target;                /* jump: instance index it goes to, or -1 */
	uint64_t target_addr;      /* jump: outside address (another trace) */
	int stub;                  /* part of an exit stub: keep its trailing jmp */
	uint64_t addr;
	uint32_t size;
};

struct builder {
	struct mvm_vm *vm;
	struct instance *insts;
	uint32_t count, cap;
	struct mvm_guard **guards;
	uint32_t guard_count, guard_cap;
	int failed;
};

static MVM_SECTION_COMPILER struct instance *add(struct builder *b, uint32_t stencil,
						 uint32_t pc, uint32_t op_index)
{
	struct instance *in;

	if (b->count == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 128;
		struct instance *p = realloc(b->insts, cap * sizeof(*p));

		if (!p) {
			b->failed = 1;
			return NULL;
		}
		b->insts = p;
		b->cap = cap;
	}
	in = &b->insts[b->count++];
	memset(in, 0, sizeof(*in));
	in->stencil = stencil;
	in->bytecode_pc = pc;
	in->op_index = op_index;
	in->target = -1;
	return in;
}

/* A guard stencil: it leaves to a new exit stub that resumes the interpreter at resume_pc. */
static MVM_SECTION_COMPILER struct instance *add_guarded(struct builder *b, uint32_t stencil,
							 uint32_t pc, uint32_t op_index,
							 uint32_t resume_pc)
{
	struct instance *in = add(b, stencil, pc, op_index);
	struct mvm_guard *g = calloc(1, sizeof(*g));

	if (b->guard_count == b->guard_cap) {
		uint32_t cap = b->guard_cap ? b->guard_cap * 2 : 16;
		struct mvm_guard **p = realloc(b->guards, cap * sizeof(*p));

		if (p) {
			b->guards = p;
			b->guard_cap = cap;
		}
	}
	if (!in || !g || b->guard_count == b->guard_cap) {
		free(g);
		b->failed = 1;
		return in;
	}
	g->resume_pc = resume_pc;
	b->guards[b->guard_count++] = g;
	in->guard = g;
	return in;
}

static const uint32_t binary_stencils[MVM_OP_COUNT] = {
	[MVM_OP_ADD] = MVM_ST_add, [MVM_OP_SUB] = MVM_ST_sub, [MVM_OP_MUL] = MVM_ST_mul,
	[MVM_OP_DIV] = MVM_ST_div, [MVM_OP_MOD] = MVM_ST_mod, [MVM_OP_LT] = MVM_ST_lt,
	[MVM_OP_LE] = MVM_ST_le, [MVM_OP_GT] = MVM_ST_gt, [MVM_OP_GE] = MVM_ST_ge,
	[MVM_OP_EQ] = MVM_ST_eq, [MVM_OP_NE] = MVM_ST_ne,
};

/* One recorded bytecode -> its stencil instances. */
static MVM_SECTION_COMPILER void translate(struct builder *b, const struct mvm_rec_op *op,
					   uint32_t index, const struct mvm_function *fn)
{
	uint32_t pc = op->pc;
	struct instance *in;

	switch (op->op) {
	case MVM_OP_CONST:
		in = add(b, MVM_ST_push_int, pc, index);
		if (in)
			in->op[0] = (uint64_t)op->imm;
		break;
	case MVM_OP_LOAD:
	case MVM_OP_STORE:
	case MVM_OP_ITER:
		in = add(b, op->op == MVM_OP_LOAD ? MVM_ST_load_local
			 : op->op == MVM_OP_STORE ? MVM_ST_store_local : MVM_ST_iter_mark, pc, index);
		if (in)
			in->op[0] = (uint64_t)op->arg;
		break;
	case MVM_OP_FUNC:
		in = add(b, MVM_ST_push_func, pc, index);
		if (in)
			in->op[0] = (uint64_t)(uintptr_t)b->vm->prog->functions[op->arg];
		break;
	case MVM_OP_POP:
		add(b, MVM_ST_pop, pc, index);
		break;
	case MVM_OP_ADD: case MVM_OP_SUB: case MVM_OP_MUL: case MVM_OP_DIV: case MVM_OP_MOD:
	case MVM_OP_LT: case MVM_OP_LE: case MVM_OP_GT: case MVM_OP_GE: case MVM_OP_EQ:
	case MVM_OP_NE:
		/* a failing type or zero check resumes at the operation itself, which the
		 * interpreter then reports */
		add_guarded(b, binary_stencils[op->op], pc, index, pc);
		break;
	case MVM_OP_NEG:
		add_guarded(b, MVM_ST_neg, pc, index, pc);
		break;
	case MVM_OP_NOT:
		add(b, MVM_ST_not, pc, index);
		break;
	case MVM_OP_JUMP_IF_FALSE:
		if (op->observed) /* jumped: stay on the jump's side while the value is 0 */
			add_guarded(b, MVM_ST_guard_false, pc, index, pc + 1);
		else
			add_guarded(b, MVM_ST_guard_true, pc, index, (uint32_t)op->arg);
		break;
	case MVM_OP_JUMP:
	case MVM_OP_LOOP: /* followed by the recording; a trace's own back-edge is its end */
		break;
	case MVM_OP_CALL:
		in = add_guarded(b, MVM_ST_guard_callee, pc, index, pc);
		if (in) {
			in->op[0] = (uint64_t)op->observed;
			in->op[1] = (uint64_t)op->arg + 1;
		}
		in = add(b, MVM_ST_call, pc, index);
		if (in) {
			in->op[0] = (uint64_t)op->arg;
			in->op[1] = (uint64_t)fn->index << 32 | pc;
		}
		break;
	case MVM_OP_PRINT:
		add(b, MVM_ST_print, pc, index);
		break;
	case MVM_OP_NEWARRAY:
		add_guarded(b, MVM_ST_guard_array_size, pc, index, pc);
		add(b, MVM_ST_new_array, pc, index);
		break;
	case MVM_OP_INDEX:
		add_guarded(b, MVM_ST_index, pc, index, pc);
		break;
	case MVM_OP_STORE_INDEX:
		add_guarded(b, MVM_ST_store_index, pc, index, pc);
		break;
	case MVM_OP_LEN:
		add_guarded(b, MVM_ST_len, pc, index, pc);
		break;
	default: /* RETURN and FLUSH end a recording before they are recorded */
		b->failed = 1;
		break;
	}
}

/* Copy every instance into buf (which will live at base) and fill its holes. */
static MVM_SECTION_COMPILER int patch_all(struct builder *b, uint8_t *buf, uint64_t base)
{
	uint32_t i, h;

	for (i = 0; i < b->count; i++) {
		struct instance *in = &b->insts[i];
		const struct mvm_stencil *s = &mvm_stencils[in->stencil];
		uint8_t *dst = buf + (in->addr - base);

		memcpy(dst, s->code, in->size);
		for (h = 0; h < s->hole_count; h++) {
			uint32_t off = s->holes[h].offset;
			uint64_t field = in->addr + off;
			uint64_t value = 0;

			if (off >= in->size)
				continue; /* in the trailing jump that was left out */
			switch (s->holes[h].kind) {
			case MVM_HOLE_OP0:
			case MVM_HOLE_OP1:
			case MVM_HOLE_OP2:
				value = in->op[s->holes[h].kind - MVM_HOLE_OP0];
				break;
			case MVM_HOLE_CONTINUE:
				value = in->addr + in->size;
				break;
			case MVM_HOLE_TARGET:
				value = in->target >= 0 ? b->insts[in->target].addr : in->target_addr;
				break;
			case MVM_HOLE_EXIT:
				in->guard->branch_addr = mvm_jit_exit_branch(field);
				value = in->guard->stub_addr;
				break;
			}
			if (mvm_jit_patch_hole(dst + off, &s->holes[h], field, value))
				return -1;
		}
	}
	return 0;
}

static MVM_SECTION_COMPILER void discard(struct builder *b)
{
	uint32_t i;

	for (i = 0; i < b->guard_count; i++)
		free(b->guards[i]);
	free(b->guards);
	free(b->insts);
}

MVM_SECTION_COMPILER struct mvm_trace *mvm_jit_compile(struct mvm_vm *vm,
						       const struct mvm_recorder *rec,
						       enum mvm_rec_end end, uint32_t end_pc,
						       struct mvm_trace *link)
{
	struct mvm_function *fn = rec->frame->fn;
	struct builder b = {.vm = vm};
	struct mvm_trace *t = calloc(1, sizeof(*t));
	struct mvm_pc_entry *pcs = NULL;
	uint32_t i, body_count, header = 0, first_stub;
	uint64_t base, size = 0;
	uint8_t *buf = NULL;
	struct instance *in;

	mvm_zone_event(vm->zone, JF_EVENT_COMPILE_BEGIN, rec->trace_id);
	if (!t)
		return NULL;
	t->id = rec->trace_id;
	t->kind = rec->kind;
	t->fn = fn;
	t->start_pc = rec->start_pc;
	t->parent_guard = rec->parent;
	t->root = rec->parent ? rec->parent->trace->root : t;

	in = add(&b, MVM_ST_count_entry, rec->start_pc, 0);
	if (in)
		in->op[0] = (uint64_t)(uintptr_t)&t->entries;
	if (t->kind == MVM_TRACE_LOOP) {
		header = b.count;
		in = add(&b, MVM_ST_count_iteration, rec->start_pc, 0);
		if (in)
			in->op[0] = (uint64_t)(uintptr_t)&t->iterations;
	}
	for (i = 0; i < rec->len && !b.failed; i++)
		translate(&b, &rec->ops[i], i, fn);
	if (end == MVM_END_LOOP) {
		in = add(&b, MVM_ST_jump, rec->ops[rec->len - 1].pc, rec->len - 1);
		if (in)
			in->target = (int)header;
	} else if (end == MVM_END_LINK) {
		in = add(&b, MVM_ST_jump, end_pc, rec->len);
		/* back to the loop it hangs off: one more iteration of it; elsewhere: an entry
		 * into that trace */
		if (in)
			in->target_addr = link == t->root && link->kind == MVM_TRACE_LOOP
						  ? link->header_addr : link->entry_addr;
	} else {
		in = add(&b, MVM_ST_exit_leave, end_pc, rec->len);
		if (in)
			in->op[0] = end_pc;
	}
	body_count = b.count;
	for (i = 0; i < b.guard_count; i++) {
		in = add(&b, MVM_ST_exit_count, b.guards[i]->resume_pc, 0);
		if (in) {
			in->op[0] = (uint64_t)(uintptr_t)&b.guards[i]->exits;
			in->stub = 1;
		}
		in = add(&b, MVM_ST_exit_leave, b.guards[i]->resume_pc, 0);
		if (in) {
			in->op[0] = b.guards[i]->resume_pc;
			in->guard = b.guards[i];
		}
	}
	if (b.failed)
		goto fail;

	/* Layout: everything falls through into the next instance except stub halves. */
	for (i = 0; i < b.count; i++) {
		const struct mvm_stencil *s = &mvm_stencils[b.insts[i].stencil];

		b.insts[i].size = b.insts[i].stub ? s->size : s->fall_size;
		size += b.insts[i].size;
	}
	base = mvm_codemem_alloc(vm->code, size);
	buf = malloc(size);
	pcs = calloc(body_count, sizeof(*pcs));
	if (!base || !buf || !pcs)
		goto fail;
	first_stub = body_count;
	for (i = 0; i < b.count; i++) {
		b.insts[i].addr = base;
		base += b.insts[i].size;
	}
	t->addr = b.insts[0].addr;
	t->size = size;
	t->body_size = b.insts[first_stub - 1].addr + b.insts[first_stub - 1].size - t->addr;
	t->entry_addr = t->addr;
	t->header_addr = b.insts[header].addr;
	for (i = 0; i < b.guard_count; i++) {
		struct mvm_guard *g = b.guards[i];
		struct instance *count = &b.insts[first_stub + 2 * i];

		g->trace = t;
		g->stub_addr = count->addr;
		g->stub_jump_addr = count->addr + (uint64_t)mvm_stencils[MVM_ST_exit_count].tail_jump;
	}
	/* Guard ids are given only now that the trace will exist. */
	if (vm->guard_count + b.guard_count + 1 > vm->guard_cap) {
		uint64_t cap = (vm->guard_count + b.guard_count + 1) * 2;
		struct mvm_guard **p = realloc(vm->guards, cap * sizeof(*p));

		if (!p)
			goto fail;
		vm->guards = p;
		vm->guard_cap = cap;
	}
	for (i = 0; i < b.guard_count; i++) {
		b.guards[i]->id = ++vm->guard_count;
		vm->guards[b.guards[i]->id] = b.guards[i];
		b.insts[first_stub + 2 * i + 1].op[1] = b.guards[i]->id;
	}
	if (patch_all(&b, buf, t->addr) || mvm_codemem_write(vm->code, t->addr, buf, size))
		goto fail_registered;

	t->guards = b.guards;
	t->guard_count = b.guard_count;
	t->live = 1;
	*vm->traces_tail = t;
	vm->traces_tail = &t->next;
	fn->pcs[t->start_pc].compiles++;
	for (i = 0; i < body_count; i++) {
		pcs[i].code_offset = (uint32_t)(b.insts[i].addr - t->addr);
		pcs[i].bytecode_pc = b.insts[i].bytecode_pc;
		pcs[i].op_index = b.insts[i].op_index;
		pcs[i].stencil = (uint16_t)b.insts[i].stencil;
	}
	mvm_zone_trace_loaded(vm->zone, t, buf, pcs, body_count);
	mvm_zone_event(vm->zone, JF_EVENT_COMPILE_END, t->id);
	free(b.insts);
	free(buf);
	free(pcs);
	return t;

fail_registered:
	for (i = 0; i < b.guard_count; i++)
		vm->guards[b.guards[i]->id] = NULL;
fail:
	discard(&b);
	free(buf);
	free(pcs);
	free(t);
	return NULL;
}

/* Re-point guard g's exit stub to a new bridge: its jump gets a new target. */
MVM_SECTION_COMPILER void mvm_jit_patch_bridge(struct mvm_vm *vm, struct mvm_guard *g,
					       struct mvm_trace *bridge)
{
	uint8_t jmp[MVM_JIT_JUMP_MAX];
	int size = mvm_jit_encode_jump(jmp, g->stub_jump_addr, bridge->entry_addr);
	char reason[96];

	if (size < 0 || mvm_codemem_write(vm->code, g->stub_jump_addr, jmp, (size_t)size))
		return;
	g->bridge = bridge;
	snprintf(reason, sizeof(reason), "guard %llu exit -> bridge %llu",
		 (unsigned long long)g->id, (unsigned long long)bridge->id);
	mvm_zone_patch(vm->zone, g->stub_jump_addr, jmp, (uint32_t)size, reason);
}
