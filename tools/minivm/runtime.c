/* minivm's runtime services: calls, arrays, printing, run-time faults, and the entry points
 * that compiled traces call back into (through struct mvm_jit_state). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <jitflow/emitter.h>

#include "vm.h"
#include "zone.h"

#define VALUE_STACK_SLOTS (1u << 22)

_Noreturn void mvm_fault(struct mvm_vm *vm, struct mvm_function *fn, uint32_t pc,
			 const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s:%u:%u: runtime error: ", vm->prog->path, fn->code[pc].line,
		fn->code[pc].column);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	mvm_vm_finish(vm);
	mvm_vm_free(vm);
	exit(1);
}

/* Call the function below argc arguments at sp[-argc-1]; the result replaces it. */
MVM_SECTION_RUNTIME void mvm_call(struct mvm_vm *vm, struct mvm_function *caller, uint32_t pc,
				  struct mvm_value *sp, uint32_t argc)
{
	struct mvm_value *callee = &sp[-(int64_t)argc - 1];
	struct mvm_frame frame;
	struct mvm_function *fn;
	uint32_t i;

	if (callee->tag != MVM_FUNC)
		mvm_fault(vm, caller, pc, "calling %s, which is not a function",
			  callee->tag == MVM_INT ? "an integer" : "an array");
	fn = (struct mvm_function *)(uintptr_t)callee->i;
	if (argc != fn->param_count)
		mvm_fault(vm, caller, pc, "%s() takes %u argument%s, not %u", fn->name,
			  fn->param_count, fn->param_count == 1 ? "" : "s", argc);
	frame.fn = fn;
	frame.locals = &sp[-(int64_t)argc];
	frame.sp = frame.locals + fn->local_count;
	/* Three limits, whichever comes first: nesting depth, the value stack, and the
	 * machine stack the recursive interpreter runs on (frames are bigger in sanitizer
	 * builds; running out of it would crash instead of reporting). */
	if (vm->call_depth >= MVM_MAX_CALL_DEPTH || frame.sp + fn->max_stack > vm->stack_end ||
	    vm->machine_stack_top - (uintptr_t)__builtin_frame_address(0) > vm->machine_stack_limit)
		mvm_fault(vm, caller, pc, "stack overflow (calls nested too deeply)");
	for (i = argc; i < fn->local_count; i++)
		frame.locals[i] = (struct mvm_value){MVM_INT, 0};
	vm->call_depth++;
	mvm_eval(vm, &frame);
	vm->call_depth--;
	*callee = frame.result;
}

static void print_value(struct mvm_value v, int depth)
{
	if (v.tag == MVM_INT) {
		printf("%" PRId64, v.i);
	} else if (v.tag == MVM_FUNC) {
		printf("<function %s>", ((struct mvm_function *)(uintptr_t)v.i)->name);
	} else if (depth > 4) {
		printf("[...]");
	} else {
		const struct mvm_array *a = (const struct mvm_array *)(uintptr_t)v.i;
		int64_t i;

		putchar('[');
		for (i = 0; i < a->len; i++) {
			if (i)
				printf(", ");
			print_value(a->items[i], depth + 1);
		}
		putchar(']');
	}
}

MVM_SECTION_RUNTIME void mvm_print_value(struct mvm_value v)
{
	print_value(v, 0);
	putchar('\n');
}

/* Arrays live until the program ends (minivm has no garbage collector). */
MVM_SECTION_RUNTIME void mvm_new_array(struct mvm_vm *vm, struct mvm_value *slot, int64_t n)
{
	struct mvm_array *a = malloc(sizeof(*a));

	if (!a || !(a->items = calloc((size_t)n + 1, sizeof(*a->items)))) {
		fprintf(stderr, "%s: out of memory for an array of %lld\n", vm->prog->path,
			(long long)n);
		free(a);
		mvm_vm_finish(vm);
		mvm_vm_free(vm);
		exit(1);
	}
	a->len = n;
	a->next_allocated = vm->arrays;
	vm->arrays = a;
	slot->tag = MVM_ARRAY;
	slot->i = (int64_t)(uintptr_t)a;
}

/* Services for traces. Their operands were checked by the trace's guards. */
static MVM_SECTION_RUNTIME struct mvm_value *jit_call(struct mvm_jit_state *st,
						      struct mvm_value *sp, int64_t argc,
						      uint64_t site)
{
	struct mvm_vm *vm = st->vm;

	mvm_call(vm, vm->prog->functions[site >> 32], (uint32_t)site, sp, (uint32_t)argc);
	return sp - argc;
}

static MVM_SECTION_RUNTIME struct mvm_value *jit_print(struct mvm_jit_state *st,
						       struct mvm_value *sp)
{
	(void)st;
	mvm_print_value(sp[-1]);
	return sp - 1;
}

static MVM_SECTION_RUNTIME struct mvm_value *jit_new_array(struct mvm_jit_state *st,
							   struct mvm_value *sp)
{
	mvm_new_array(st->vm, &sp[-1], sp[-1].i);
	return sp;
}

static MVM_SECTION_RUNTIME void jit_iteration(struct mvm_jit_state *st, int64_t index)
{
	struct mvm_vm *vm = st->vm;

	mvm_zone_event(vm->zone, JF_EVENT_ITERATION, (uint64_t)index);
}

void mvm_jit_state_init(struct mvm_vm *vm, struct mvm_jit_state *st)
{
	memset(st, 0, sizeof(*st));
	st->call = jit_call;
	st->print = jit_print;
	st->new_array = jit_new_array;
	st->iteration = jit_iteration;
	st->vm = vm;
}

/* How much of the machine stack nested calls may use: its limit less 1 MiB for everything
 * else (libc, the emitter, a fault's message). */
static uintptr_t machine_stack_budget(void)
{
	struct rlimit rl;
	uintptr_t size = (uintptr_t)8 << 20;

	if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		size = (uintptr_t)rl.rlim_cur;
	return size > ((uintptr_t)2 << 20) ? size - ((uintptr_t)1 << 20) : size / 2;
}

int mvm_vm_init(struct mvm_vm *vm, struct mvm_program *prog, const struct mvm_options *opt)
{
	uint32_t i;
	int failed;

	memset(vm, 0, sizeof(*vm));
	vm->prog = prog;
	vm->opt = *opt;
	vm->traces_tail = &vm->traces;
	vm->next_trace_id = 1;
	vm->stack = calloc(VALUE_STACK_SLOTS, sizeof(*vm->stack));
	if (!vm->stack) {
		fprintf(stderr, "minivm: out of memory\n");
		return -1;
	}
	vm->stack_end = vm->stack + VALUE_STACK_SLOTS;
	vm->machine_stack_limit = machine_stack_budget();
	for (i = 0; i < prog->function_count; i++) {
		struct mvm_function *fn = prog->functions[i];

		fn->pcs = calloc(fn->code_len, sizeof(*fn->pcs));
		if (!fn->pcs) {
			fprintf(stderr, "minivm: out of memory\n");
			return -1;
		}
	}
	if (opt->jit) {
		vm->code = mvm_codemem_new(opt->code_size);
		if (!vm->code)
			return -1;
	}
	vm->zone = mvm_zone_open(opt->zone_dir, &failed);
	if (failed)
		return -1;
	mvm_zone_describe_runtime(vm->zone, prog);
	return 0;
}

int mvm_vm_run(struct mvm_vm *vm)
{
	struct mvm_function *main_fn = vm->prog->functions[0];
	struct mvm_frame frame = {0};
	uint32_t i;

	vm->machine_stack_top = (uintptr_t)__builtin_frame_address(0);
	frame.fn = main_fn;
	frame.locals = vm->stack;
	frame.sp = frame.locals + main_fn->local_count;
	for (i = 0; i < main_fn->local_count; i++)
		frame.locals[i] = (struct mvm_value){MVM_INT, 0};
	mvm_eval(vm, &frame);
	return 0;
}

void mvm_vm_finish(struct mvm_vm *vm)
{
	fflush(stdout);
	if (vm->opt.counters_path && mvm_counters_write(vm, vm->opt.counters_path) != 0)
		fprintf(stderr, "minivm: cannot write counters to %s\n", vm->opt.counters_path);
	vm->opt.counters_path = NULL;
	mvm_zone_close(vm->zone);
	vm->zone = NULL;
}

void mvm_vm_free(struct mvm_vm *vm)
{
	struct mvm_trace *t, *next_trace;
	struct mvm_array *a, *next_array;
	uint32_t i;

	for (t = vm->traces; t; t = next_trace) {
		next_trace = t->next;
		for (i = 0; i < t->guard_count; i++)
			free(t->guards[i]);
		free(t->guards);
		free(t);
	}
	for (a = vm->arrays; a; a = next_array) {
		next_array = a->next_allocated;
		free(a->items);
		free(a);
	}
	free(vm->guards);
	free(vm->rec.ops);
	free(vm->stack);
	mvm_codemem_free(vm->code);
	mvm_program_free(vm->prog);
	free(vm->source);
	memset(vm, 0, sizeof(*vm));
}
