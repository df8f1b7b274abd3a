/* Recorder test program: one thread JIT-compiles, another runs the code right after.
 *
 * The JIT thread (main) writes VERSIONS versions of a function at the same address, one
 * after the other; version v is `mov eax, edi`, v times `add eax, 1`, `ret`: v + 2
 * instructions. After writing a version and describing it with the zone emitter (markers
 * on: the record applies at the marker call in the JIT thread's stream), it hands the
 * version to the runner thread, which calls it RUNS times and hands back; the JIT thread
 * then frees it and writes the next one. So every version's code runs only on the runner
 * thread, right after the other thread changed it: instructions executed inside version v
 * = RUNS * (v + 2), fixed by the program, not by any timing.
 *
 * The hand-over is a pipe each way: the runner blocks in read() until the JIT thread has
 * written the version and the JIT thread in read() until the runner is done. A system
 * call on both sides is what lets the recorder order the two threads exactly: it orders
 * threads at system calls, and only to a chunk of blocks between them (a hand-over
 * through shared memory alone, a spin on an atomic flag, can be recorded in the wrong
 * order; see docs/recorder.md). */
#include <jitflow/emitter.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { VERSIONS = 8, RUNS = 20, MAX_ADDS = VERSIONS };

typedef int (*jit_fn)(int);

static uint8_t *page;
static int to_runner[2], to_jit[2];
static long sum;

/* Version v: mov eax, edi; v x add eax, 1; ret. */
static size_t emit_version(uint8_t *code, int v)
{
	size_t n = 0;
	int i;

	code[n++] = 0x89;
	code[n++] = 0xf8;
	for (i = 0; i < v; i++) {
		code[n++] = 0x83;
		code[n++] = 0xc0;
		code[n++] = 0x01;
	}
	code[n++] = 0xc3;
	return n;
}

static void *runner(void *arg)
{
	int v, i;

	(void)arg;
	for (v = 1; v <= VERSIONS; v++) {
		volatile jit_fn fn = (jit_fn)(uintptr_t)page;
		char c;

		if (read(to_runner[0], &c, 1) != 1)
			return NULL;
		for (i = 0; i < RUNS; i++)
			sum += fn(i);
		if (write(to_jit[1], "d", 1) != 1)
			return NULL;
	}
	return NULL;
}

int main(void)
{
	struct jf_emitter *em;
	pthread_t t;
	uint8_t code[2 + 3 * MAX_ADDS + 1];
	char name[32];
	int v;

	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (page == MAP_FAILED || pipe(to_runner) || pipe(to_jit)) {
		perror("jit_threads");
		return 1;
	}
	em = jf_emitter_open(NULL, JF_EMIT_CLOCK_MONOTONIC);
	if (!em) {
		perror("jit_threads: jf_emitter_open");
		return 1;
	}
	if (pthread_create(&t, NULL, runner, NULL)) {
		fprintf(stderr, "jit_threads: pthread_create failed\n");
		return 1;
	}
	for (v = 1; v <= VERSIONS; v++) {
		size_t size = emit_version(code, v);
		struct jf_region r = { .name = name, .addr = (uint64_t)(uintptr_t)page,
				       .code = code, .size = size, .kind = JF_REGION_FUNCTION,
				       .generation = (uint32_t)v, .trace_id = 1 };
		char c;

		snprintf(name, sizeof(name), "version %d", v);
		memcpy(page, code, size);
		__builtin___clear_cache((char *)page, (char *)page + size);
		if (!jf_emit_region_load(em, &r))
			fprintf(stderr, "jit_threads: %s\n", jf_emitter_error(em));
		if (write(to_runner[1], "r", 1) != 1 || read(to_jit[0], &c, 1) != 1)
			return 1;
		jf_emit_region_free(em, (uint64_t)(uintptr_t)page, size);
	}
	pthread_join(t, NULL);
	jf_emitter_close(em);
	printf("versions=%d runs=%d", VERSIONS, RUNS);
	for (v = 1; v <= VERSIONS; v++)
		printf(" v%d=%d", v, RUNS * (v + 2));
	printf(" sum=%ld\n", sum);
	return 0;
}
