/* Recorder test program: signals over a hot path of indirect branches. A 100 us interval
 * timer interrupts a loop made of indirect calls (a table of functions), their returns
 * and an indirect jump (a switch compiled to a jump table), so that many signals arrive
 * right after an indirect branch, where "the block does not follow from the one before"
 * cannot see them. The calls are fixed by the loop: op_add, op_xor, op_mul and op_neg run
 * ROUNDS times each (or argv[1] times); the handler's entries are counted by the handler itself (it calls
 * tick() once per entry). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

enum { ROUNDS = 20000 };

static volatile unsigned long acc;
static volatile int ticks;

__attribute__((noinline)) void tick(void)
{
	ticks++;
}

__attribute__((noinline)) void on_timer(int sig)
{
	(void)sig;
	tick();
}

__attribute__((noinline)) unsigned long op_add(unsigned long v) { return v + 3; }
__attribute__((noinline)) unsigned long op_xor(unsigned long v) { return v ^ 0x55; }
__attribute__((noinline)) unsigned long op_mul(unsigned long v) { return v * 7; }
__attribute__((noinline)) unsigned long op_neg(unsigned long v) { return ~v; }

static unsigned long (*volatile ops[4])(unsigned long) = { op_add, op_xor, op_mul, op_neg };

/* A switch dense enough to become a jump table: an indirect jump, then (through the
 * volatile table) an indirect call per call. */
__attribute__((noinline)) unsigned long dispatch(unsigned k, unsigned long v)
{
	switch (k) {
	case 0: return ops[0](v);
	case 1: return ops[1](v) + 1;
	case 2: return ops[2](v) - 1;
	case 3: return ops[3](v) ^ 2;
	case 4: return v + 11;
	case 5: return v - 13;
	case 6: return v ^ 17;
	default: return v;
	}
}

/* argv[1], if given: the rounds (a shorter run for the slower AArch64 checks). */
int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } }, stop;
	struct sigaction sa;
	unsigned long v = 1;
	unsigned i, k, rounds = argc > 1 ? (unsigned)atoi(argv[1]) : ROUNDS;

	memset(&sa, 0, sizeof(sa));
	memset(&stop, 0, sizeof(stop));
	sa.sa_handler = on_timer;
	sigfillset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < rounds; i++)
		for (k = 0; k < 4; k++)
			v = dispatch(k, v);
	setitimer(ITIMER_REAL, &stop, NULL);
	acc = v;
	printf("rounds=%u tick=%d\n", rounds, ticks);
	return 0;
}
