/* bench_pt_latency: how long one Intel PT buffer takes to decode into its block sequence,
 * the latency a tracing JIT that decodes its traces online waits for.
 *
 *   bench_pt_latency [-j JOBS [-s SEGMENT]] IMAGE BASE TRACE [RUNS [ONLY]]    (RUNS default 21)
 *
 * IMAGE (the code bytes, at address BASE) and TRACE (the PT buffer) as tools/bench/
 * pt-latency.sh makes them. Each run makes a decoder that returns blocks as libipt's block
 * decoder cuts them (jf_pt_fast_decoder_new, with the options `jitflow decode` and
 * `report` use), reads every record and frees it; the code map stays (a JIT keeps its
 * own), the decoder's caches do not (each run fills them again: the first decode of a
 * buffer). The same decoder read in bulk (jf_decoder_next_batch: each stretch between two
 * PSBs at once, where it lies, instead of a copy and a call per record), the same decoder
 * read as a compact block stream (block_stream.h: a 4-byte block id per block, the other
 * records beside them; the block table made afresh each run) and the same decode by
 * libipt's block decoder alone
 * (jf_pt_decoder_new), which must return as many blocks and instructions. With -j JOBS
 * (> 1), also the same decode on JOBS threads (jf_pt_parallel_decoder_new with the fast
 * path, as `jitflow decode -j JOBS` makes it: the buffer cut into segments at PSBs, the
 * records handed out in trace order), read in bulk, and the block stream decoded on JOBS
 * threads (jf_pt_parallel_block_stream_new: each worker makes its segment's block ids);
 * their CPU time is the whole process's (every thread's), and their wall time is the
 * latency they give where JOBS cores are idle; -s SEGMENT sets their segments' size in bytes
 * (jf_pt_parallel_options.segment_size; default 0: the library's). Beside them, the
 * floor of any decoder that reads its packets with libipt: libipt's packet decoder
 * reading every packet of the buffer and nothing else. Printed: the
 * median, minimum and maximum CPU milliseconds of each (the thread's CPU time: on a
 * machine shared with other work, wall time measures the others too), the median wall
 * milliseconds, and the counts. ONLY (one of the names printed, e.g. "fast, block ids")
 * decodes that way alone and checks nothing, for `perf record`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#include "jitflow/block_stream.h"
#include "jitflow/codemap.h"
#include "jitflow/decoder.h"
#include "jitflow/mapped_file.h"
#include "jitflow/pt.h"
#include "jitflow/pt_fast.h"
#include "jitflow/pt_parallel.h"

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct counts {
	uint64_t blocks, insns, other;
};

enum way { FAST, FAST_BULK, FAST_IDS, LIBIPT, FAST_THREADS, IDS_THREADS, WAYS };

static void count_flow(struct counts *c, const struct jf_flow *f)
{
	if (f->kind == JF_FLOW_BLOCK) {
		c->blocks++;
		c->insns += f->u.block.ninsn;
	} else {
		c->other++;
	}
}

/* A run of the stream: a block id counts its block's instructions from the table, as a
 * consumer that wants the path would look them up (jf_block_stream_table). */
static int count_run(void *ctx, const struct jf_block_stream *s, const struct jf_block_run *run,
		     struct jf_error *err)
{
	const struct jf_block *blocks = jf_block_stream_table(s);
	struct counts *c = ctx;
	uint64_t nblocks = 0, insns = 0;
	size_t i, r;

	(void)err;
	/* Counted in locals: through c, every store might change blocks[] for the compiler. */
	for (i = 0, r = 0; i < run->n; i++) {
		if (run->ids[i] == JF_BLOCK_STREAM_RECORD) {
			count_flow(c, &run->records[r++]);
		} else {
			nblocks++;
			insns += blocks[run->ids[i]].ninsn;
		}
	}
	c->blocks += nblocks;
	c->insns += insns;
	return 0;
}

static uint64_t segment_size; /* -s: 0, the library's default */

/* The fast path on jobs threads, as `jitflow decode -j JOBS` makes it. */
static struct jf_pt_parallel_options on_threads(int jobs)
{
	struct jf_pt_parallel_options opt;

	memset(&opt, 0, sizeof(opt));
	opt.jobs = jobs;
	opt.segment_size = segment_size;
	opt.fast = 1;
	return opt;
}

/* The stream over dec (NULL: over cfg's trace decoded on jobs threads), read to the end. */
static int read_stream(const struct jf_pt_config *cfg, struct jf_codemap *map, int jobs,
		       struct jf_decoder *dec, struct counts *c, struct jf_error *err)
{
	struct jf_pt_parallel_options opt = on_threads(jobs);
	struct jf_block_stream *s;
	int rc;

	s = dec ? jf_block_stream_new(dec, err)
		: jf_pt_parallel_block_stream_new(cfg, map, &opt, NULL, err);
	if (!s)
		return -1;
	rc = jf_block_stream_run(s, count_run, c, err);
	jf_block_stream_free(s);
	return rc;
}

/* Every packet of the buffer read by libipt's packet decoder (synchronised at the first
 * PSB, and again after an error): what following the packets costs before anything is
 * done with them. Returns the CPU time in ns, the packets in *packets. */
static uint64_t read_packets(const struct jf_pt_config *cfg, uint64_t *wall, uint64_t *packets)
{
	struct pt_config pc;
	struct pt_packet_decoder *pkt;
	struct pt_packet p;
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC), t1;
	int rc;

	pt_config_init(&pc);
	pc.begin = (uint8_t *)cfg->trace;
	pc.end = (uint8_t *)cfg->trace + cfg->size;
	pkt = pt_pkt_alloc_decoder(&pc);
	if (!pkt) {
		fprintf(stderr, "bench_pt_latency: libipt's packet decoder: out of memory\n");
		exit(1);
	}
	*packets = 0;
	rc = pt_pkt_sync_forward(pkt);
	while (rc >= 0) {
		while ((rc = pt_pkt_next(pkt, &p, sizeof(p))) >= 0)
			++*packets;
		if (rc != -pte_eos)
			rc = pt_pkt_sync_forward(pkt);
	}
	pt_pkt_free_decoder(pkt);
	t1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	*wall = now_ns(CLOCK_MONOTONIC) - w0;
	return t1 - t0;
}

static struct jf_decoder *new_decoder(const struct jf_pt_config *cfg, struct jf_codemap *map,
				      enum way way, int jobs, struct jf_error *err)
{
	struct jf_pt_parallel_options opt = on_threads(jobs);

	if (way == LIBIPT)
		return jf_pt_decoder_new(cfg, map, err);
	if (way != FAST_THREADS)
		return jf_pt_fast_decoder_new(cfg, map, err);
	return jf_pt_parallel_decoder_new(cfg, map, &opt, NULL, err);
}

/* One decode: its CPU time in ns (the calling thread's; with threads, the process's),
 * its wall time in *wall, its counts in *c. */
static uint64_t decode_once(const struct jf_pt_config *cfg, struct jf_codemap *map,
			    enum way way, int jobs, uint64_t *wall, struct counts *c)
{
	struct jf_error err = { "" };
	struct jf_decoder *dec;
	const struct jf_flow *flows;
	struct jf_flow f;
	clockid_t cpu = way >= FAST_THREADS ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID;
	uint64_t t0 = now_ns(cpu), w0 = now_ns(CLOCK_MONOTONIC), t1;
	size_t n, i;
	int rc;

	dec = way == IDS_THREADS ? NULL : new_decoder(cfg, map, way, jobs, &err);
	if (!dec && way != IDS_THREADS) {
		fprintf(stderr, "bench_pt_latency: %s\n", err.msg);
		exit(1);
	}
	memset(c, 0, sizeof(*c));
	if (way == FAST_BULK || way == FAST_THREADS) {
		while ((rc = jf_decoder_next_batch(dec, &flows, &n, &err)) > 0)
			for (i = 0; i < n; i++)
				count_flow(c, &flows[i]);
	} else if (way == FAST_IDS || way == IDS_THREADS) {
		rc = read_stream(cfg, map, jobs, dec, c, &err);
	} else {
		while ((rc = jf_decoder_next(dec, &f, &err)) > 0)
			count_flow(c, &f);
	}
	jf_decoder_free(dec);
	t1 = now_ns(cpu);
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
	printf("%-16s CPU median %8.2f ms  min %8.2f ms  max %8.2f ms;  wall median %8.2f ms  "
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
	static const char *const names[WAYS] = { "fast path", "fast, in bulk", "fast, block ids",
						   "libipt blocks", "fast, threads",
						   "ids, threads" };
	struct counts counts[WAYS];
	uint64_t *ns[WAYS], *wall[WAYS], base, *pkt_ns, *pkt_wall, packets = 0;
	int runs, i, w, only = -1, jobs = 1, ways;

	if (argc > 2 && !strcmp(argv[1], "-j")) {
		jobs = atoi(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc > 2 && !strcmp(argv[1], "-s")) {
		segment_size = strtoull(argv[2], NULL, 0);
		argc -= 2;
		argv += 2;
	}
	ways = jobs > 1 ? WAYS : FAST_THREADS;
	runs = argc > 4 ? atoi(argv[4]) : 21;
	for (w = 0; argc > 5 && w < ways; w++)
		if (!strcmp(argv[5], names[w]))
			only = w;
	if (argc < 4 || runs < 1 || (argc > 5 && only < 0)) {
		fprintf(stderr, "usage: bench_pt_latency [-j JOBS [-s SEGMENT]] IMAGE BASE TRACE [RUNS [ONLY]]\n");
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
	for (w = 0; w < WAYS; w++) {
		ns[w] = calloc((size_t)runs, sizeof(*ns[w]));
		wall[w] = calloc((size_t)runs, sizeof(*wall[w]));
		if (!ns[w] || !wall[w])
			return 1;
	}
	pkt_ns = calloc((size_t)runs, sizeof(*pkt_ns));
	pkt_wall = calloc((size_t)runs, sizeof(*pkt_wall));
	if (!pkt_ns || !pkt_wall)
		return 1;
	if (only >= 0) {
		for (i = 0; i < runs; i++)
			ns[only][i] = decode_once(&cfg, map, (enum way)only, jobs,
						  &wall[only][i], &counts[only]);
		print_times(names[only], ns[only], wall[only], runs, &counts[only]);
		return 0;
	}
	for (i = 0; i < runs; i++) {
		for (w = 0; w < ways; w++)
			ns[w][i] = decode_once(&cfg, map, (enum way)w, jobs, &wall[w][i],
					       &counts[w]);
		pkt_ns[i] = read_packets(&cfg, &pkt_wall[i], &packets);
	}
	for (w = 0; w < ways; w++) {
		if (counts[w].blocks != counts[LIBIPT].blocks ||
		    counts[w].insns != counts[LIBIPT].insns ||
		    counts[w].other != counts[LIBIPT].other) {
			fprintf(stderr, "bench_pt_latency: %s and libipt's block decoder "
				"disagree\n", names[w]);
			return 1;
		}
	}
	printf("trace %zu bytes, %d runs each; threads: %d\n", trace.size, runs, jobs);
	for (w = 0; w < ways; w++) {
		print_times(names[w], ns[w], wall[w], runs, &counts[w]);
		free(ns[w]);
		free(wall[w]);
	}
	qsort(pkt_ns, (size_t)runs, sizeof(*pkt_ns), by_value);
	qsort(pkt_wall, (size_t)runs, sizeof(*pkt_wall), by_value);
	printf("%-16s CPU median %8.2f ms  min %8.2f ms  max %8.2f ms;  wall median %8.2f ms  "
	       "(%llu packets, read and nothing else)\n", "libipt packets", pkt_ns[runs / 2] / 1e6,
	       pkt_ns[0] / 1e6, pkt_ns[runs - 1] / 1e6, pkt_wall[runs / 2] / 1e6,
	       (unsigned long long)packets);
	free(pkt_ns);
	free(pkt_wall);
	jf_unmap_file(&trace);
	jf_unmap_file(&image);
	jf_codemap_free(map);
	return 0;
}
