/* minivm's bytecode interpreter: an eval loop that dispatches to one handler function per
 * opcode. Handlers live in their own section (mvmsec_handlers) and the loop in another
 * (mvmsec_eval), so a trace decoder can tell interpreter time per opcode from the addresses. */
#include <stdlib.h>

#include "vm.h"

typedef uint32_t (*handler_fn)(struct mvm_vm *vm, struct mvm_frame *fr, uint32_t pc);

#define HANDLER(name) \
	static MVM_SECTION_HANDLERS uint32_t h_##name(struct mvm_vm *vm, struct mvm_frame *fr, \
						       uint32_t pc)

static inline struct mvm_insn *insn(struct mvm_frame *fr, uint32_t pc)
{
	return &fr->fn->code[pc];
}

static inline int64_t int_operand(struct mvm_vm *vm, struct mvm_frame *fr, uint32_t pc,
				  struct mvm_value v, const char *what)
{
	if (v.tag != MVM_INT)
		mvm_fault(vm, fr->fn, pc, "%s must be an integer, not %s", what,
			  v.tag == MVM_ARRAY ? "an array" : "a function");
	return v.i;
}

static inline int truthy(struct mvm_value v)
{
	return !(v.tag == MVM_INT && v.i == 0);
}

HANDLER(CONST)
{
	fr->sp->tag = MVM_INT;
	fr->sp->i = insn(fr, pc)->imm;
	fr->sp++;
	return pc + 1;
}

HANDLER(LOAD)
{
	*fr->sp++ = fr->locals[insn(fr, pc)->arg];
	return pc + 1;
}

HANDLER(STORE)
{
	fr->locals[insn(fr, pc)->arg] = *--fr->sp;
	return pc + 1;
}

HANDLER(FUNC)
{
	fr->sp->tag = MVM_FUNC;
	fr->sp->i = (int64_t)(uintptr_t)vm->prog->functions[insn(fr, pc)->arg];
	fr->sp++;
	return pc + 1;
}

HANDLER(POP)
{
	fr->sp--;
	return pc + 1;
}

/* Integer operations wrap around (two's complement); x / -1 and x % -1 are defined so
 * that INT64_MIN / -1 wraps instead of trapping. */
#define BINARY(name, check_zero, expr)                                                   \
	HANDLER(name)                                                                    \
	{                                                                                \
		int64_t a = int_operand(vm, fr, pc, fr->sp[-2], "the left operand");     \
		int64_t b = int_operand(vm, fr, pc, fr->sp[-1], "the right operand");    \
		if (check_zero && b == 0)                                                \
			mvm_fault(vm, fr->fn, pc, "division by zero");                   \
		fr->sp[-2].i = (expr);                                                   \
		fr->sp--;                                                                \
		return pc + 1;                                                           \
	}

BINARY(ADD, 0, (int64_t)((uint64_t)a + (uint64_t)b))
BINARY(SUB, 0, (int64_t)((uint64_t)a - (uint64_t)b))
BINARY(MUL, 0, (int64_t)((uint64_t)a * (uint64_t)b))
BINARY(DIV, 1, b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b)
BINARY(MOD, 1, b == -1 ? 0 : a % b)
BINARY(LT, 0, a < b)
BINARY(LE, 0, a <= b)
BINARY(GT, 0, a > b)
BINARY(GE, 0, a >= b)
BINARY(EQ, 0, a == b)
BINARY(NE, 0, a != b)

HANDLER(NEG)
{
	int64_t a = int_operand(vm, fr, pc, fr->sp[-1], "the operand of '-'");

	fr->sp[-1].i = (int64_t)(0 - (uint64_t)a);
	return pc + 1;
}

HANDLER(NOT)
{
	fr->sp[-1].i = !truthy(fr->sp[-1]);
	fr->sp[-1].tag = MVM_INT;
	return pc + 1;
}

HANDLER(JUMP)
{
	return (uint32_t)insn(fr, pc)->arg;
}

HANDLER(JUMP_IF_FALSE)
{
	return truthy(*--fr->sp) ? pc + 1 : (uint32_t)insn(fr, pc)->arg;
}

HANDLER(LOOP)
{
	uint32_t header = (uint32_t)insn(fr, pc)->arg;

	return vm->opt.jit ? mvm_tracer_backedge(vm, fr, pc, header) : header;
}

HANDLER(CALL)
{
	uint32_t argc = (uint32_t)insn(fr, pc)->arg;

	mvm_call(vm, fr->fn, pc, fr->sp, argc);
	fr->sp -= argc;
	return pc + 1;
}

HANDLER(RETURN)
{
	fr->result = *--fr->sp;
	return MVM_PC_RETURN;
}

HANDLER(PRINT)
{
	mvm_print_value(*--fr->sp);
	return pc + 1;
}

HANDLER(NEWARRAY)
{
	int64_t n = int_operand(vm, fr, pc, fr->sp[-1], "an array's size");

	if (n < 0 || n > MVM_ARRAY_MAX)
		mvm_fault(vm, fr->fn, pc, "array size %lld is not between 0 and %lld", (long long)n,
			  (long long)MVM_ARRAY_MAX);
	mvm_new_array(vm, &fr->sp[-1], n);
	return pc + 1;
}

static struct mvm_array *array_operand(struct mvm_vm *vm, struct mvm_frame *fr, uint32_t pc,
				       struct mvm_value v)
{
	if (v.tag != MVM_ARRAY)
		mvm_fault(vm, fr->fn, pc, "indexing needs an array, not %s",
			  v.tag == MVM_INT ? "an integer" : "a function");
	return (struct mvm_array *)(uintptr_t)v.i;
}

static int64_t checked_index(struct mvm_vm *vm, struct mvm_frame *fr, uint32_t pc,
			     const struct mvm_array *a, struct mvm_value v)
{
	int64_t i = int_operand(vm, fr, pc, v, "an index");

	if (i < 0 || i >= a->len)
		mvm_fault(vm, fr->fn, pc, "index %lld is out of bounds (length %lld)", (long long)i,
			  (long long)a->len);
	return i;
}

HANDLER(INDEX)
{
	struct mvm_array *a = array_operand(vm, fr, pc, fr->sp[-2]);
	int64_t i = checked_index(vm, fr, pc, a, fr->sp[-1]);

	fr->sp[-2] = a->items[i];
	fr->sp--;
	return pc + 1;
}

HANDLER(STORE_INDEX)
{
	struct mvm_array *a = array_operand(vm, fr, pc, fr->sp[-3]);
	int64_t i = checked_index(vm, fr, pc, a, fr->sp[-2]);

	a->items[i] = fr->sp[-1];
	fr->sp -= 3;
	return pc + 1;
}

HANDLER(LEN)
{
	if (fr->sp[-1].tag != MVM_ARRAY)
		mvm_fault(vm, fr->fn, pc, "len() needs an array");
	fr->sp[-1].i = ((struct mvm_array *)(uintptr_t)fr->sp[-1].i)->len;
	fr->sp[-1].tag = MVM_INT;
	return pc + 1;
}

HANDLER(ITER)
{
	struct mvm_value *counter = &fr->locals[insn(fr, pc)->arg];
	struct mvm_jit_state st;

	mvm_jit_state_init(vm, &st);
	st.iteration(&st, counter->i); /* the same service a trace calls */
	counter->i++;
	return pc + 1;
}

HANDLER(FLUSH)
{
	if (vm->opt.jit)
		mvm_tracer_request_flush(vm);
	fr->sp->tag = MVM_INT;
	fr->sp->i = 0;
	fr->sp++;
	return pc + 1;
}

static const handler_fn handlers[MVM_OP_COUNT] = {
#define MVM_HANDLER_ENTRY(name) [MVM_OP_##name] = h_##name,
	MVM_OPCODES(MVM_HANDLER_ENTRY)
#undef MVM_HANDLER_ENTRY
};

MVM_SECTION_EVAL void mvm_eval(struct mvm_vm *vm, struct mvm_frame *fr)
{
	const struct mvm_insn *code = fr->fn->code;
	uint32_t pc = 0;

	for (;;) {
		if (__builtin_expect(vm->rec.active, 0) && vm->rec.frame == fr)
			mvm_tracer_step(vm, fr, pc);
		pc = handlers[code[pc].op](vm, fr, pc);
		if (pc == MVM_PC_RETURN)
			return;
	}
}

extern const char __stop_mvmsec_handlers[];

/* Handlers are whole functions in one section: each one's range ends where the next one
 * (by address) starts, the last one at the section's end. */
void mvm_handler_range(unsigned op, uint64_t *start, uint64_t *end)
{
	uint64_t mine = (uint64_t)(uintptr_t)handlers[op];
	unsigned i;

	*start = mine;
	*end = (uint64_t)(uintptr_t)__stop_mvmsec_handlers;
	for (i = 0; i < MVM_OP_COUNT; i++) {
		uint64_t other = (uint64_t)(uintptr_t)handlers[i];

		if (other > mine && other < *end)
			*end = other;
	}
}

const char *mvm_opcode_name(unsigned op)
{
	static const char *const names[MVM_OP_COUNT] = {
#define MVM_OPCODE_NAME(name) #name,
		MVM_OPCODES(MVM_OPCODE_NAME)
#undef MVM_OPCODE_NAME
	};
	return op < MVM_OP_COUNT ? names[op] : "?";
}
