/* Recorder test program: a process-wide timer (setitimer, SIGALRM every 100 us) whose
 * handler leaves by siglongjmp out of a busy loop of indirect calls, until it has run 20
 * times (or more: under emulation a signal can come again and again before the timer is
 * stopped; the handler counts itself).
 *
 * The jump buffer is set before the timer is armed. The other order (setitimer, then
 * sigsetjmp) is a race: a signal that arrives inside sigsetjmp, before it has noted that
 * the mask was saved, makes siglongjmp leave the mask alone, so SIGALRM, blocked while its
 * handler runs, stays blocked for good and the loop never ends. Natively the first signal
 * comes 100 us after setitimer and sigsetjmp is long done; under QEMU, translating the
 * code after setitimer takes longer, and that program hung in 5 of 10 runs under plain
 * qemu-x86_64 (docs/reliability.md). Output: on_alrm=N iterations=I, where I is the
 * number of loop iterations that finished; each op call either finished its iteration or
 * was cut short by a signal, so the calls of both ops together are I to I + N. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static sigjmp_buf env;
static volatile int hits;
static volatile unsigned long sink;

__attribute__((noinline)) void op_a(unsigned long v)
{
	sink += v;
}

__attribute__((noinline)) void op_b(unsigned long v)
{
	sink ^= v;
}

static void (*volatile ops[2])(unsigned long) = { op_a, op_b };

__attribute__((noinline)) void on_alrm(int sig)
{
	(void)sig;
	hits++;
	siglongjmp(env, 1);
}

int main(void)
{
	static const struct itimerval stop;
	struct itimerval it = { { 0, 100 }, { 0, 100 } };
	struct sigaction sa = { 0 };
	volatile unsigned long i = 0; /* kept across siglongjmp */

	sa.sa_handler = on_alrm;
	sigaction(SIGALRM, &sa, NULL);
	if (!sigsetjmp(env, 1))
		setitimer(ITIMER_REAL, &it, NULL);
	while (hits < 20) {
		ops[i & 1](i);
		i++;
	}
	setitimer(ITIMER_REAL, &stop, NULL);
	printf("on_alrm=%d iterations=%lu\n", hits, (unsigned long)i);
	return 0;
}
