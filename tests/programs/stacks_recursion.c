/* Recorder test program for call stacks: recursion of a known depth and mutual recursion.
 * main calls chain(12) 7 times; chain(d) calls chain(d - 1) down to chain(0), so the
 * stack main;chain x13 is entered exactly 7 times and none is deeper. Then is_even(9)
 * runs is_even, is_odd, ... down to is_odd(0): the stack main;(is_even;is_odd) x5 is
 * entered exactly 3 times, by 3 calls of is_even(9). An argument sets another depth for
 * chain (a stack deeper than a reconstruction keeps). */
#include <stdio.h>
#include <stdlib.h>

#define CHAIN_DEPTH 12
#define CHAIN_CALLS 7
#define PARITY_N 9
#define PARITY_CALLS 3

__attribute__((noinline)) int chain(int d)
{
	return d == 0 ? 1 : chain(d - 1) + 1;
}

__attribute__((noinline)) int is_even(unsigned n);

__attribute__((noinline)) int is_odd(unsigned n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

__attribute__((noinline)) int is_even(unsigned n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

/* Read at every call, so that no call can be hoisted out of its loop (both functions are
 * pure, and the compiler may call them once). */
static volatile int chain_depth = CHAIN_DEPTH;
static volatile unsigned parity_n = PARITY_N;

int main(int argc, char **argv)
{
	int sum = 0, i;

	if (argc > 1)
		chain_depth = atoi(argv[1]);
	for (i = 0; i < CHAIN_CALLS; i++)
		sum += chain(chain_depth);
	for (i = 0; i < PARITY_CALLS; i++)
		sum += is_even(parity_n);
	printf("chain=%d parity=%d\n", CHAIN_CALLS * (chain_depth + 1),
	       sum - CHAIN_CALLS * (chain_depth + 1));
	return 0;
}
