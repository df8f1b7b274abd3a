/* Recorder test program: asynchronous signals. A 0.2 ms interval timer interrupts a busy
 * loop wherever it happens to be; the handler runs 20 times (21 if the timer fired again
 * while the 20th ran) and counts itself. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile int hits;

__attribute__((noinline)) void on_alarm(int sig)
{
	static const struct itimerval stop;

	(void)sig;
	if (++hits == 20)
		setitimer(ITIMER_REAL, &stop, NULL); /* no 21st signal can be on its way */
}

int main(void)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	volatile unsigned long spins = 0;

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	while (hits < 20)
		spins++;
	printf("on_alarm=%d\n", hits);
	return 0;
}
