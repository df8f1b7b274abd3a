/* Recorder test program for call stacks: longjmp out of nested calls. main calls
 * attempt() 4 times; each sets a jump buffer and calls outer -> middle -> inner, and
 * inner longjmps back into attempt, which then returns to main: 4 returns that leave
 * frames behind (inner, middle, outer and longjmp's own). After the loop main calls
 * after_jumps() once, whose stack must be main;after_jumps again. */
#include <setjmp.h>
#include <stdio.h>

#define ATTEMPTS 4

static jmp_buf env;
static volatile int depth_reached;

__attribute__((noinline)) void inner(void)
{
	depth_reached++;
	longjmp(env, 1);
}

__attribute__((noinline)) void middle(void)
{
	inner();
	depth_reached--; /* never reached */
}

__attribute__((noinline)) void outer(void)
{
	middle();
	depth_reached--; /* never reached */
}

__attribute__((noinline)) int attempt(void)
{
	if (setjmp(env))
		return 1;
	outer();
	return 0;
}

__attribute__((noinline)) int after_jumps(int n)
{
	return n + depth_reached;
}

int main(void)
{
	int jumped = 0, i;

	for (i = 0; i < ATTEMPTS; i++)
		jumped += attempt();
	printf("jumped=%d total=%d\n", jumped, after_jumps(jumped));
	return 0;
}
