/* A freestanding x86-64 Linux program (no libc, so that the binary kept beside the trace
 * is a few KiB): fib(15) enters fib 1973 times; a loop calls one of three functions
 * through a table 300 times (100 each); it writes "fib(15)=610\n" and exits with 0.
 * Build: cc -O1 -fno-inline -fno-optimize-sibling-calls -fno-pie -fno-stack-protector
 *        -fcf-protection=none -ffreestanding -nostdlib -static -o fib_nolibc fib_nolibc.c */
typedef unsigned long u64;

static long syscall3(long n, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline)) int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static volatile u64 sink;
__attribute__((noinline)) void op_add(u64 v) { sink += v; }
__attribute__((noinline)) void op_xor(u64 v) { sink ^= v; }
__attribute__((noinline)) void op_sub(u64 v) { sink -= v; }
static void (*const table[3])(u64) = { op_add, op_xor, op_sub };

void _start(void)
{
	char msg[] = "fib(15)=000\n";
	int v = fib(15), i;

	for (i = 0; i < 300; i++)
		table[i % 3]((u64)i);
	msg[8] = (char)('0' + v / 100);
	msg[9] = (char)('0' + v / 10 % 10);
	msg[10] = (char)('0' + v % 10);
	syscall3(1, 1, (long)msg, sizeof(msg) - 1);
	syscall3(60, 0, 0, 0);
	for (;;)
		;
}
