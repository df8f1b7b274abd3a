/* Recorder test program for call stacks: a signal handler. main calls deliver() 5 times;
 * each raises SIGUSR1, whose handler on_usr1 calls handler_work: the stacks
 * ...;[signal];on_usr1 and ...;[signal];on_usr1;handler_work are each entered exactly 5
 * times, and after the signals main's calls of after_signals() run on main;after_signals. */
#include <signal.h>
#include <stdio.h>

#define DELIVERIES 5

static volatile int handled;

__attribute__((noinline)) void handler_work(void)
{
	handled++;
}

__attribute__((noinline)) void on_usr1(int sig)
{
	(void)sig;
	handler_work();
}

__attribute__((noinline)) void deliver(void)
{
	raise(SIGUSR1);
}

__attribute__((noinline)) int after_signals(int n)
{
	return n + handled;
}

int main(void)
{
	int i;

	signal(SIGUSR1, on_usr1);
	for (i = 0; i < DELIVERIES; i++)
		deliver();
	printf("handled=%d total=%d\n", handled, after_signals(0));
	return 0;
}
