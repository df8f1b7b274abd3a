/* Recorder test program: a recursive fib(20) enters fib exactly 21891 times. */
#include <stdio.h>

__attribute__((noinline)) int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(void)
{
	printf("fib(20)=%d\n", fib(20));
	return 0;
}
