/* Recorder test program: a tiny JIT. It writes machine code into an RWX page, describes it
 * with the zone emitter (jit-PID.dump, in $JITFLOW_ZONE_DIR or the current directory), runs
 * it RUNS_A times, then rewrites the same address with different code and runs that
 * RUNS_B times. Instructions executed inside the page: RUNS_A * 2 + RUNS_B * 3.
 * With --no-markers it writes like a plain jitdump writer: no marker calls, each record
 * written to the file (flushed) before the code runs. With --wx the page is never writable
 * and executable at once, as CPython's JIT does it: mapped read-write, made read-execute
 * with mprotect once the code is in (and writable again to change it); records are
 * flushed before the code runs, and the marker calls are kept. With --unannounced it
 * describes version A only and then overwrites it with version B in place without a word,
 * as a JIT patches its code (inline caches, call sites): only the recorder sees the
 * change. The two options go together (--wx --unannounced): the page made writable, version
 * B written, the page made executable again, still without a word. With --late-record
 * (after --unannounced) it then writes a record of version A at the address (a free and a
 * load), as a runtime whose record of its code comes late holds the bytes from before a
 * patch it made since (HotSpot's CompiledMethodLoad and a resolved call site), and runs
 * version B RUNS_B more times. */
#include <jitflow/emitter.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

enum { RUNS_A = 100, RUNS_B = 50 };

/* Version A, 2 instructions: mov eax, 42; ret */
static const uint8_t code_a[] = { 0xb8, 0x2a, 0x00, 0x00, 0x00, 0xc3 };
/* Version B, 3 instructions: lea eax, [rdi + 7]; add eax, edi; ret */
static const uint8_t code_b[] = { 0x8d, 0x47, 0x07, 0x01, 0xf8, 0xc3 };

typedef int (*jit_fn)(int);

static int flush_each, wx, unannounced, late_record;

static void protect(uint8_t *page, int prot)
{
	if (wx && mprotect(page, 4096, prot))
		perror("jit: mprotect");
}

/* Placing a record by its timestamp (perf inject --jit; jitflow with a zone file but no
 * markers) cannot tell which of two versions at one address ran when they run closer
 * together than the trace's time resolution: a block's time is that of the timing packet
 * the decoder last read, which can lead the block by a full TNT packet (up to 47 branches)
 * or lag it by a stretch without packets. The program leaves ~5000 instructions between
 * each change of the code and the runs on either side of it, so that timestamp placement
 * has a right answer to be checked against. */
static void settle(void)
{
	for (volatile int i = 0; i < 1000; i++)
		;
}

static void load(struct jf_emitter *em, uint8_t *page, const uint8_t *code, size_t size,
		 const char *name, uint32_t generation)
{
	struct jf_region r = { .name = name, .addr = (uint64_t)(uintptr_t)page, .code = code,
			       .size = size, .kind = JF_REGION_FUNCTION,
			       .generation = generation, .trace_id = 1 };

	protect(page, PROT_READ | PROT_WRITE);
	memcpy(page, code, size);
	__builtin___clear_cache((char *)page, (char *)page + size);
	protect(page, PROT_READ | PROT_EXEC);
	if (!jf_emit_region_load(em, &r))
		fprintf(stderr, "jit: %s\n", jf_emitter_error(em));
	if (flush_each)
		jf_emitter_flush(em);
	settle();
}

int main(int argc, char **argv)
{
	int markers = 1;
	uint8_t *page;
	struct jf_emitter *em;
	volatile jit_fn fn;
	long sum = 0;
	int i;

	for (i = 1; i < argc; i++) {
		markers &= strcmp(argv[i], "--no-markers") != 0;
		wx |= !strcmp(argv[i], "--wx");
		unannounced |= !strcmp(argv[i], "--unannounced");
		late_record |= !strcmp(argv[i], "--late-record");
	}
	flush_each = !markers || wx;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | (wx ? 0 : PROT_EXEC),
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		perror("jit: mmap");
		return 1;
	}
	em = jf_emitter_open(NULL, JF_EMIT_CLOCK_MONOTONIC | (markers ? 0 : JF_EMIT_NO_MARKER_CALLS));
	if (!em) {
		perror("jit: jf_emitter_open");
		return 1;
	}
	load(em, page, code_a, sizeof(code_a), "version A", 1);
	fn = (jit_fn)(uintptr_t)page;
	for (i = 0; i < RUNS_A; i++)
		sum += fn(i);
	settle();
	if (unannounced) {
		protect(page, PROT_READ | PROT_WRITE);
		memcpy(page, code_b, sizeof(code_b));
		__builtin___clear_cache((char *)page, (char *)page + sizeof(code_b));
		protect(page, PROT_READ | PROT_EXEC);
	} else {
		jf_emit_region_free(em, (uint64_t)(uintptr_t)page, sizeof(code_a));
		load(em, page, code_b, sizeof(code_b), "version B", 2);
	}
	for (i = 0; i < RUNS_B; i++)
		sum += fn(i);
	if (late_record) {
		struct jf_region r = { .name = "version A", .addr = (uint64_t)(uintptr_t)page,
				       .code = code_a, .size = sizeof(code_a),
				       .kind = JF_REGION_FUNCTION, .generation = 1, .trace_id = 1 };

		jf_emit_region_free(em, r.addr, r.size);
		if (!jf_emit_region_load(em, &r) || jf_emitter_flush(em))
			fprintf(stderr, "jit: %s\n", jf_emitter_error(em));
		settle();
		for (i = 0; i < RUNS_B; i++)
			sum += fn(i);
	}
	jf_emitter_close(em);
	printf("page=%p runs_a=%d runs_b=%d jit_instructions=%d sum=%ld\n", (void *)page, RUNS_A,
	       RUNS_B * (late_record ? 2 : 1), RUNS_A * 2 + RUNS_B * 3 * (late_record ? 2 : 1), sum);
	return 0;
}
