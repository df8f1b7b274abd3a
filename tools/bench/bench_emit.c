/* bench_emit: the cost of one emitted zone record, in ns, as a runtime pays it.
 *
 *   bench_emit [RECORDS] [THREADS]     (defaults: 2000000 records, 1 thread)
 *
 * Writes jit-PID.dump into $TMPDIR (or /tmp) and removes it. Measures, per record type
 * mix: events (the smallest record), region loads of 64 code bytes (CODE_LOAD +
 * REGION_LOAD), patches of 5 bytes; with marker calls (the default) and without
 * (JF_EMIT_NO_MARKER_CALLS); and N threads sharing one emitter. Wall-clock time over all
 * records, file writes included; the best of 3 runs of each. Then the same as CPU time
 * (all threads', CLOCK_PROCESS_CPUTIME_ID): what the records cost the runtime whatever
 * else the machine runs, where the wall clock on a loaded machine also counts the time
 * other processes had the CPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jitflow/emitter.h"

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ns per record: on the wall clock and in CPU time. */
struct cost {
	double wall, cpu;
};

enum kind { EVENTS, LOADS, PATCHES };

struct job {
	struct jf_emitter *em;
	enum kind kind;
	long n;
	long failed;
};

static void *work(void *arg)
{
	struct job *j = arg;
	static const uint8_t code[64] = { 0x90 };
	static const uint8_t jmp[5] = { 0xe9, 1, 2, 3, 4 };
	struct jf_region r = { .name = "trace 1 (bench)", .code = code, .size = sizeof(code),
			       .kind = JF_REGION_TRACE, .trace_id = 1 };
	long i;

	for (i = 0; i < j->n; i++) {
		uint64_t seq;

		switch (j->kind) {
		case EVENTS:
			seq = jf_emit_event(j->em, JF_EVENT_ITERATION, (uint64_t)i);
			break;
		case LOADS:
			/* load then free, so the address can be reused as a JIT does */
			r.addr = 0x7f0000000000ull + (uint64_t)(i & 1023) * 64;
			seq = (i & 1) ? jf_emit_region_free(j->em, r.addr - 64, 64)
				      : jf_emit_region_load(j->em, &r);
			break;
		default:
			seq = jf_emit_patch(j->em, 0x7f0000000000ull + (uint64_t)i, jmp, 5,
					    "bench");
			break;
		}
		j->failed += seq == 0;
	}
	return NULL;
}

static struct cost run(const char *dir, unsigned flags, enum kind kind, long n, int threads)
{
	struct jf_emitter *em = jf_emitter_open(dir, flags);
	pthread_t t[64];
	struct job jobs[64];
	uint64_t t0, t1, c0, c1;
	long failed = 0;
	int i;

	if (!em) {
		fprintf(stderr, "bench_emit: cannot open an emitter in %s\n", dir);
		exit(1);
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (i = 0; i < threads; i++) {
		jobs[i] = (struct job){ em, kind, n / threads, 0 };
		pthread_create(&t[i], NULL, work, &jobs[i]);
	}
	for (i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		failed += jobs[i].failed;
	}
	jf_emitter_flush(em);
	t1 = clock_ns(CLOCK_MONOTONIC);
	c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	unlink(jf_emitter_path(em));
	jf_emitter_close(em);
	if (failed) {
		fprintf(stderr, "bench_emit: %ld records failed\n", failed);
		exit(1);
	}
	return (struct cost){ (double)(t1 - t0) / (double)n, (double)(c1 - c0) / (double)n };
}

/* The machine is shared: the best of 3 runs is the cost without interference. */
static struct cost best_of_3(const char *dir, unsigned flags, enum kind kind, long n,
			     int threads)
{
	struct cost best = { 1e30, 1e30 };
	int i;

	for (i = 0; i < 3; i++) {
		struct cost c = run(dir, flags, kind, n, threads);

		if (c.wall < best.wall)
			best.wall = c.wall;
		if (c.cpu < best.cpu)
			best.cpu = c.cpu;
	}
	return best;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000000;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	static const char *const names[] = { "event (48 B)", "load 64 B / free", "patch 5 B" };
	struct cost c[3][3];
	int k;

	if (n <= 0 || threads <= 0 || threads > 64) {
		fprintf(stderr, "usage: bench_emit [RECORDS] [THREADS<=64]\n");
		return 2;
	}
	printf("records: %ld, threads: %d, dir: %s\n", n, threads, dir);
	for (k = EVENTS; k <= PATCHES; k++) {
		c[k][0] = best_of_3(dir, JF_EMIT_CLOCK_MONOTONIC, (enum kind)k, n, threads);
		c[k][1] = best_of_3(dir, JF_EMIT_NO_MARKER_CALLS, (enum kind)k, n, threads);
		c[k][2] = best_of_3(dir, JF_EMIT_CLOCK_TSC, (enum kind)k, n, threads);
	}
	printf("%-18s %14s %14s %14s\n", "record", "ns (marker)", "ns (no marker)", "ns (TSC)");
	for (k = EVENTS; k <= PATCHES; k++)
		printf("%-18s %14.1f %14.1f %14.1f\n", names[k], c[k][0].wall, c[k][1].wall,
		       c[k][2].wall);
	printf("%-18s %14s %14s %14s\n", "CPU time", "ns (marker)", "ns (no marker)", "ns (TSC)");
	for (k = EVENTS; k <= PATCHES; k++)
		printf("%-18s %14.1f %14.1f %14.1f\n", names[k], c[k][0].cpu, c[k][1].cpu,
		       c[k][2].cpu);
	return 0;
}
