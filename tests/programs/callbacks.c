/* Recorder test program: callbacks through libc (qsort), setjmp/longjmp and a signal
 * handler. It prints how often each function ran, counted by the program itself. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned compares, throws, handled;
static jmp_buf env;

__attribute__((noinline)) int compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	compares++;
	return (x > y) - (x < y);
}

__attribute__((noinline)) void thrower(int i)
{
	throws++;
	longjmp(env, i + 1);
}

__attribute__((noinline)) void handler(int sig)
{
	(void)sig;
	handled++;
}

int main(void)
{
	static int values[500];
	unsigned x = 7;
	volatile unsigned i; /* survives longjmp */
	volatile int caught = 0;

	for (i = 0; i < 500; i++) {
		x = x * 1103515245u + 12345u;
		values[i] = (int)(x >> 8);
	}
	qsort(values, 500, sizeof(values[0]), compare);
	for (i = 0; i < 100; i++) {
		if (setjmp(env) == 0)
			thrower((int)i);
		else
			caught++;
	}
	signal(SIGUSR1, handler);
	for (i = 0; i < 10; i++)
		raise(SIGUSR1);
	printf("compare=%u thrower=%u caught=%d handler=%u\n", compares, throws, caught, handled);
	return 3; /* a non-zero status the recorder must pass through */
}
