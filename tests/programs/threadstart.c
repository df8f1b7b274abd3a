/* Recorder test program: thread ids when threads start together. Main starts 4 workers
 * back to back (no wait between the pthread_create calls); worker K (0..3) calls work()
 * 1000 (K + 1) times through a function pointer (an indirect call per call, so every
 * entry is a block of its own in any decoder), then prints its thread id (gettid) and its
 * count; main joins them. Workers that start and end close together are where a recorder
 * that matches threads to new-thread events by order can swap two ids.
 *
 * Fixed by these semantics: worker K enters work() exactly 1000 (K + 1) times, all on its
 * own thread. Output, one line per worker (in the order they finish):
 *   worker K tid=T work=N */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { WORKERS = 4, CALLS_PER_K = 1000 };

static volatile unsigned long sink;

__attribute__((noinline)) void work(unsigned long v)
{
	sink += v;
}

static void (*volatile work_fn)(unsigned long) = work;

static void *worker_main(void *arg)
{
	unsigned long k = (unsigned long)arg, n = CALLS_PER_K * (k + 1), i;

	for (i = 0; i < n; i++)
		work_fn(i);
	printf("worker %lu tid=%ld work=%lu\n", k, (long)syscall(SYS_gettid), n);
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];
	unsigned long k;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (k = 0; k < WORKERS; k++)
		if (pthread_create(&t[k], NULL, worker_main, (void *)k)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	for (k = 0; k < WORKERS; k++)
		pthread_join(t[k], NULL);
	return 0;
}
