/* Recorder test program: two threads besides main, each calling work() a different,
 * known number of times (1000 and 2000); main calls it 10 times. */
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long sink;

__attribute__((noinline)) void work(unsigned long v)
{
	sink += v;
}

static void *worker(void *arg)
{
	unsigned long n = (unsigned long)arg, i;

	for (i = 0; i < n; i++)
		work(i);
	return NULL;
}

int main(void)
{
	pthread_t a, b;
	int i;

	for (i = 0; i < 10; i++)
		work((unsigned long)i);
	pthread_create(&a, NULL, worker, (void *)1000ul);
	pthread_join(a, NULL);
	pthread_create(&b, NULL, worker, (void *)2000ul);
	pthread_join(b, NULL);
	printf("main=10 first=1000 second=2000\n");
	return 0;
}
