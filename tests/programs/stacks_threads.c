/* Recorder test program for call stacks: two threads. Thread 1 calls leaf_work 3 times,
 * thread 2 calls it 5 times, each from worker: in each thread the stack ending in
 * worker;leaf_work is entered exactly as often as that thread called it. */
#include <pthread.h>
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) void leaf_work(long v)
{
	sink += v;
}

__attribute__((noinline)) void *worker(void *arg)
{
	long calls = (long)arg, i;

	for (i = 0; i < calls; i++)
		leaf_work(i);
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	/* One after the other, so that each thread's calls are all its own. */
	pthread_create(&a, NULL, worker, (void *)3L);
	pthread_join(a, NULL);
	pthread_create(&b, NULL, worker, (void *)5L);
	pthread_join(b, NULL);
	printf("sink=%ld\n", sink);
	return 0;
}
