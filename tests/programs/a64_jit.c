/* Recorder test program for AArch64: a tiny JIT. It maps an anonymous page read-write,
 * writes two instructions into it (mov w0, #42; ret), makes it read-execute with mprotect
 * and calls it RUNS times: RUNS * 2 instructions execute in the page, each run entered by
 * BLR. It prints the page's address. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

enum { RUNS = 100 };

static const uint32_t code[] = {
	0x52800540, /* mov w0, #42 */
	0xd65f03c0, /* ret */
};

typedef int (*jit_fn)(void);

int main(void)
{
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			     -1, 0);
	jit_fn fn;
	int i, sum = 0;

	if (page == MAP_FAILED) {
		perror("a64_jit: mmap");
		return 1;
	}
	memcpy(page, code, sizeof(code));
	__builtin___clear_cache((char *)page, (char *)page + sizeof(code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC)) {
		perror("a64_jit: mprotect");
		return 1;
	}
	fn = (jit_fn)(uintptr_t)page;
	for (i = 0; i < RUNS; i++)
		sum += fn();
	printf("page=%p sum=%d\n", (void *)page, sum);
	return sum == RUNS * 42 ? 0 : 1;
}
