/* Recorder test program: a recursive fib(n) (n = 20 unless given) enters fib exactly
 * 2 * fib(n + 1) - 1 times: 21891 for n = 20, 242785 for n = 25. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;

	printf("fib(%d)=%d\n", n, fib(n));
	return 0;
}
