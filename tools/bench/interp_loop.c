/* The input of tools/bench/pt-latency.sh: a bytecode interpreter's dispatch loop, the code a
 * tracing JIT's interpreter runs between traces. A switch over the opcodes (an indirect
 * jump through a jump table), a stack and conditional jumps in the bytecode; the program
 * sums the odd numbers below LIMIT, ROUNDS times over, and prints the sum (fixed by its
 * semantics: ROUNDS * (LIMIT / 2)^2). Built static and not PIE (tools/CMakeLists.txt), so
 * that its code is at the addresses in the file. */
#include <stdio.h>

enum { LIMIT = 2000, ROUNDS = 100 };

enum op { PUSH, LOAD, STORE, ADD, LT, ODD, JZ, JMP, HALT };

struct insn {
	enum op op;
	long arg;
};

/* sum = 0; for (i = 0; i < LIMIT; i++) if (i is odd) sum += i; */
static const struct insn program[] = {
	{ PUSH, 0 }, { STORE, 0 },          /* 0: sum = 0 */
	{ PUSH, 0 }, { STORE, 1 },          /* 2: i = 0 */
	{ LOAD, 1 }, { PUSH, LIMIT }, { LT, 0 }, { JZ, 21 }, /* 4: while (i < LIMIT) */
	{ LOAD, 1 }, { ODD, 0 }, { JZ, 16 },                 /* 8: if (i is odd) */
	{ LOAD, 0 }, { LOAD, 1 }, { ADD, 0 }, { STORE, 0 },  /* 11: sum += i */
	{ JMP, 16 },
	{ LOAD, 1 }, { PUSH, 1 }, { ADD, 0 }, { STORE, 1 },  /* 16: i++ */
	{ JMP, 4 },
	{ HALT, 0 },                                         /* 21 */
};

__attribute__((noinline)) static long run(const struct insn *code)
{
	long stack[16], vars[2] = { 0, 0 };
	int sp = 0, pc = 0;

	for (;;) {
		const struct insn *in = &code[pc++];

		switch (in->op) {
		case PUSH: stack[sp++] = in->arg; break;
		case LOAD: stack[sp++] = vars[in->arg]; break;
		case STORE: vars[in->arg] = stack[--sp]; break;
		case ADD: sp--; stack[sp - 1] += stack[sp]; break;
		case LT: sp--; stack[sp - 1] = stack[sp - 1] < stack[sp]; break;
		case ODD: stack[sp - 1] &= 1; break;
		case JZ: if (!stack[--sp]) pc = (int)in->arg; break;
		case JMP: pc = (int)in->arg; break;
		case HALT: return vars[0];
		}
	}
}

int main(void)
{
	long sum = 0;
	int r;

	for (r = 0; r < ROUNDS; r++)
		sum += run(program);
	printf("%ld\n", sum);
	return sum == (long)ROUNDS * (LIMIT / 2) * (LIMIT / 2) ? 0 : 1;
}
