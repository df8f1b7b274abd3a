/* Recorder test program: loops with data-dependent conditional branches and calls through
 * a table of function pointers. The counts are fixed by the program's semantics; it prints
 * them so that a test can compare a trace's counts with the program's own. */
#include <stdio.h>

static volatile unsigned sink;
static unsigned calls[3];

__attribute__((noinline)) void op_add(unsigned v) { sink += v; calls[0]++; }
__attribute__((noinline)) void op_xor(unsigned v) { sink ^= v; calls[1]++; }
__attribute__((noinline)) void op_mul(unsigned v) { sink *= v | 1; calls[2]++; }
__attribute__((noinline)) void on_rare(unsigned v) { sink -= v; }

static void (*const table[3])(unsigned) = { op_add, op_xor, op_mul };

int main(void)
{
	unsigned x = 12345, rare = 0, i;

	/* 3000 indirect calls: 1000 through each entry. */
	for (i = 0; i < 3000; i++)
		table[i % 3](i);
	/* A pseudo-random walk: how often on_rare runs depends on the data. */
	for (i = 0; i < 20000; i++) {
		x = x * 1103515245u + 12345u;
		if (((x >> 16) & 7) == 3) {
			on_rare(x);
			rare++;
		}
	}
	printf("op_add=%u op_xor=%u op_mul=%u on_rare=%u\n", calls[0], calls[1], calls[2], rare);
	return 0;
}
