/* bench_pt_latency: how long one Intel PT buffer takes to decode into its block sequence,
 * the latency a tracing JIT that decodes its traces online waits for.
 *
 *   bench_pt_latency IMAGE BASE TRACE [RUNS]     (RUNS default 21)
 *
 * IMAGE (the code bytes, at address BASE) and TRACE (the PT buffer) as tools/bench/
 * pt-latency.sh makes them. Each run makes a decoder that returns blocks as libipt's block
 * decoder cuts them (jf_pt_fast_decoder_new, with the options `jitflow decode` and
 * `report` use), reads every record and frees it; the code map stays (a JIT keeps its
 * own), the decoder's caches do not (each run fills them again: the first decode of a
 * buffer). Runs alternate with the same decode by libipt's block decoder alone
 * (jf_pt_decoder_new), which must return as many blocks and instructions. Printed: the
 * median, minimum and maximum CPU milliseconds of each (the thread's CPU time: on a
 * machine shared with other work, wall time measures the others too), the median wall
 * milliseconds, and the counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jitflow/codemap.h"
#include "jitflow/decoder.h"
#include "jitflow/mapped_file.h"
#include "jitflow/pt.h"
#include "jitflow/pt_fast.h"

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct counts {
	uint64_t blocks, insns, other;
};

/* One decode: its CPU time in ns, its wall time in *wall, its counts in *c. */
static uint64_t decode_once(const struct jf_pt_config *cfg, struct jf_codemap *map, int fast,
			    uint64_t *wall, struct counts *c)
{
	struct jf_error err = { "" };
	struct jf_decoder *dec;
	struct jf_flow f;
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC), t1;
	int rc;

	dec = fast ? jf_pt_fast_decoder_new(cfg, map, &err) : jf_pt_decoder_new(cfg, map, &err);
	if (!dec) {
		fprintf(stderr, "bench_pt_latency: %s\n", err.msg);
		exit(1);
	}
	memset(c, 0, sizeof(*c));
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		if (f.kind == JF_FLOW_BLOCK) {
			c->blocks++;
			c->insns += f.u.block.ninsn;
		} else {
			c->other++;
		}
	}
	jf_decoder_free(dec);
	t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	*wall = now_ns(CLOCK_MONOTONIC) - w0;
	if (rc < 0) {
		fprintf(stderr, "bench_pt_latency: %s\n", err.msg);
		exit(1);
	}
	return t1 - t0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void print_times(const char *what, uint64_t *ns, uint64_t *wall, int runs,
			const struct counts *c)
{
	qsort(ns, (size_t)runs, sizeof(*ns), by_value);
	qsort(wall, (size_t)runs, sizeof(*wall), by_value);
	printf("%-14s CPU median %8.2f ms  min %8.2f ms  max %8.2f ms;  wall median %8.2f ms  "
	       "(%llu blocks, %llu instructions, %llu other records)\n", what,
	       ns[runs / 2] / 1e6, ns[0] / 1e6, ns[runs - 1] / 1e6, wall[runs / 2] / 1e6,
	       (unsigned long long)c->blocks, (unsigned long long)c->insns,
	       (unsigned long long)c->other);
}

int main(int argc, char **argv)
{
	struct jf_error err = { "" };
	struct jf_mapped_file image, trace;
	struct jf_codemap *map;
	struct jf_pt_config cfg;
	struct counts fast, ref;
	uint64_t *fast_ns, *ref_ns, *fast_wall, *ref_wall, base;
	int runs = argc > 4 ? atoi(argv[4]) : 21, i;

	if (argc < 4 || runs < 1) {
		fprintf(stderr, "usage: bench_pt_latency IMAGE BASE TRACE [RUNS]\n");
		return 2;
	}
	base = strtoull(argv[2], NULL, 0);
	map = jf_codemap_new();
	if (!map || jf_map_file(&image, argv[1], &err) < 0 ||
	    jf_codemap_add_bytes(map, image.data, image.size, base, "image", &err) < 0 ||
	    jf_map_file(&trace, argv[3], &err) < 0) {
		fprintf(stderr, "bench_pt_latency: %s\n", err.msg);
		return 1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.trace = trace.data;
	cfg.size = trace.size;
	cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	fast_ns = calloc((size_t)runs, sizeof(*fast_ns));
	ref_ns = calloc((size_t)runs, sizeof(*ref_ns));
	fast_wall = calloc((size_t)runs, sizeof(*fast_wall));
	ref_wall = calloc((size_t)runs, sizeof(*ref_wall));
	if (!fast_ns || !ref_ns || !fast_wall || !ref_wall)
		return 1;
	for (i = 0; i < runs; i++) {
		fast_ns[i] = decode_once(&cfg, map, 1, &fast_wall[i], &fast);
		ref_ns[i] = decode_once(&cfg, map, 0, &ref_wall[i], &ref);
	}
	if (fast.blocks != ref.blocks || fast.insns != ref.insns || fast.other != ref.other) {
		fprintf(stderr, "bench_pt_latency: the fast path and libipt's block decoder "
			"disagree\n");
		return 1;
	}
	printf("trace %zu bytes, %d runs each\n", trace.size, runs);
	print_times("fast path", fast_ns, fast_wall, runs, &fast);
	print_times("libipt blocks", ref_ns, ref_wall, runs, &ref);
	free(fast_ns);
	free(ref_ns);
	free(fast_wall);
	free(ref_wall);
	jf_unmap_file(&trace);
	jf_unmap_file(&image);
	jf_codemap_free(map);
	return 0;
}
