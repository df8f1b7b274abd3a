/* Recorder test program: signals in a multi-threaded program. Eight workers, started back
 * to back, each:
 *   phase 1: calls work() WORK_CALLS + 1000 K times (K: the worker's number, so that no
 *            two threads can be mistaken for each other) through a function pointer (an
 *            indirect call and a return per call) while its own timer (timer_create,
 *            SIGEV_THREAD_ID) sends it SIGALRM every 200 us and main sends it SIGUSR1;
 *   phase 2: waits (idle() through a pointer, then a 50 us nanosleep, in a loop) while
 *            main sends it SIGUSR2, whose handler leaves by siglongjmp to the start of
 *            the wait.
 * Main forks a child (which exits at once: not followed, reported) while the workers run,
 * then sends each worker USR1_ROUNDS SIGUSR1 and USR2_ROUNDS SIGUSR2, one at a time,
 * waiting until the handler has counted it (so none merge with a pending one).
 *
 * Fixed by these semantics, per worker: work() is entered WORK_CALLS + 1000 K times,
 * on_usr1 USR1_ROUNDS times, on_usr2 USR2_ROUNDS times. The timer's count depends on
 * speed: its handler counts its entries and the program prints them. Output, one line per
 * worker:
 *   worker K tid=T work=N usr1=N usr2=N alrm=N */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { WORKERS = 8, WORK_CALLS = 20000, USR1_ROUNDS = 10, USR2_ROUNDS = 5 };

struct worker {
	pthread_t thread;
	volatile int tid;    /* set once self is: signals may come */
	sigjmp_buf env;
	volatile int usr1, usr2, alrm, phase1_done;
	unsigned long work_calls;
};

static struct worker workers[WORKERS];
static __thread struct worker *self;
static volatile int all_done;
static volatile unsigned long sink;

__attribute__((noinline)) void work(unsigned long v)
{
	self->work_calls++;
	sink += v;
}

__attribute__((noinline)) void idle(unsigned long v)
{
	sink ^= v;
}

static void (*volatile work_fn)(unsigned long) = work;
static void (*volatile idle_fn)(unsigned long) = idle;

__attribute__((noinline)) void on_usr1(int sig)
{
	(void)sig;
	self->usr1++;
}

__attribute__((noinline)) void on_alrm(int sig)
{
	(void)sig;
	self->alrm++;
}

__attribute__((noinline)) void on_usr2(int sig)
{
	(void)sig;
	self->usr2++;
	siglongjmp(self->env, 1);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct sigevent sev;
	struct itimerspec every = { { 0, 200000 }, { 0, 200000 } }, stop;
	struct timespec nap = { 0, 50000 };
	timer_t timer;
	int have_timer;
	unsigned long i;

	self = w;
	w->tid = (int)syscall(SYS_gettid);
	memset(&sev, 0, sizeof(sev));
	memset(&stop, 0, sizeof(stop));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev._sigev_un._tid = (int)syscall(SYS_gettid);
	have_timer = timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0;
	if (have_timer)
		timer_settime(timer, 0, &every, NULL);
	for (i = 0; i < WORK_CALLS + 1000ul * (unsigned long)(w - workers); i++)
		work_fn(i);
	if (have_timer) {
		timer_settime(timer, 0, &stop, NULL);
		timer_delete(timer);
	}
	w->phase1_done = 1;
	sigsetjmp(w->env, 1); /* on_usr2 comes back here */
	while (!all_done) {
		idle_fn(1);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

static void handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigfillset(&sa.sa_mask); /* no handler interrupts another */
	sigaction(sig, &sa, NULL);
}

/* Send sig to worker w and wait until its handler counted it. */
static void signal_worker(struct worker *w, int sig, volatile int *count)
{
	int before = *count;
	struct timespec pause = { 0, 20000 };

	pthread_kill(w->thread, sig);
	while (*count == before)
		nanosleep(&pause, NULL);
}

int main(void)
{
	struct timespec pause = { 0, 20000 };
	pid_t child;
	int k, r, status = 0;

	handle(SIGUSR1, on_usr1);
	handle(SIGUSR2, on_usr2);
	handle(SIGALRM, on_alrm);
	for (k = 0; k < WORKERS; k++)
		pthread_create(&workers[k].thread, NULL, worker_main, &workers[k]);
	child = fork();
	if (child == 0)
		_exit(7);
	if (child > 0)
		waitpid(child, &status, 0);
	for (k = 0; k < WORKERS; k++)
		while (!workers[k].tid)
			nanosleep(&pause, NULL);
	for (r = 0; r < USR1_ROUNDS; r++)
		for (k = 0; k < WORKERS; k++)
			signal_worker(&workers[k], SIGUSR1, &workers[k].usr1);
	for (k = 0; k < WORKERS; k++)
		while (!workers[k].phase1_done)
			nanosleep(&pause, NULL);
	for (r = 0; r < USR2_ROUNDS; r++)
		for (k = 0; k < WORKERS; k++)
			signal_worker(&workers[k], SIGUSR2, &workers[k].usr2);
	all_done = 1;
	for (k = 0; k < WORKERS; k++)
		pthread_join(workers[k].thread, NULL);
	for (k = 0; k < WORKERS; k++)
		printf("worker %d tid=%d work=%lu usr1=%d usr2=%d alrm=%d\n", k, workers[k].tid,
		       workers[k].work_calls, workers[k].usr1, workers[k].usr2, workers[k].alrm);
	printf("fork child exit=%d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}
