/* Recorder test program: a thread that spins in user code, never making a system call,
 * while main returns (exit_group): the thread stops somewhere inside the block it is
 * running, which QEMU has already reported as begun. */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long spins;
static volatile int stop; /* never set: a conditional branch per turn */

static void *spinner(void *arg)
{
	(void)arg;
	while (!stop)
		spins++;
	return NULL;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, spinner, NULL);
	while (spins < 10000)
		;
	printf("spun\n");
	return 0;
}
