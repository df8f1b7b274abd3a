/* bench_zone_decode: decode speed through JIT code from a zone file versus the same code
 * as a plain raw image, on the same synthetic Intel PT trace.
 *
 *   bench_zone_decode [ITERATIONS]     (default 400000)
 *
 * The workload is a loop of 16 "test rax,rax; jne +0" pairs and a jump back (33
 * instructions, 16 taken conditional branches per iteration); the trace is what a CPU
 * writes for it (libipt's encoder: PSB every 4 KiB, TNT packets). It is decoded:
 *   raw      the code as a file section of a raw file (--raw), no filter;
 *   zone     the code as a region of an emitter-written zone file, through the zone filter
 *            (file section of the dump itself);
 *   patched  the same region after a 5-byte patch inside it (the region is cut in three
 *            sections, the patch in an in-memory file).
 * Each is run 3 times; the best time is reported. */
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jitflow/emitter.h"
#include "jitflow/pt.h"
#include "jitflow/zone_image.h"

#define CODE_ADDR 0x7f0000100000ull
static uint64_t code_bytes;
enum { PAIRS = 16 };

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static size_t make_code(uint8_t *code)
{
	size_t n = 0;
	int i;

	for (i = 0; i < PAIRS; i++) {
		static const uint8_t pair[] = { 0x48, 0x85, 0xc0, 0x75, 0x00 };

		memcpy(code + n, pair, sizeof(pair));
		n += sizeof(pair);
	}
	code[n] = 0xeb; /* jmp back to the start */
	code[n + 1] = (uint8_t)(-(int)(n + 2));
	return n + 2;
}

static void put(struct pt_encoder *enc, struct pt_packet *p)
{
	if (pt_enc_next(enc, p) < 0) {
		fprintf(stderr, "bench_zone_decode: encoder failed\n");
		exit(1);
	}
}

static size_t make_trace(uint8_t *buf, size_t cap, long iterations)
{
	struct pt_config cfg;
	struct pt_encoder *enc;
	struct pt_packet p;
	uint64_t bits = (uint64_t)iterations * PAIRS, off = 0, last_psb = 0;

	pt_config_init(&cfg);
	cfg.begin = buf;
	cfg.end = buf + cap;
	enc = pt_alloc_encoder(&cfg);
	memset(&p, 0, sizeof(p));
	for (;;) {
		pt_enc_get_offset(enc, &off);
		if (off == 0 || off - last_psb >= 4096) {
			/* PSB+ restates the IP where decoding can start (FUP) */
			last_psb = off;
			memset(&p, 0, sizeof(p));
			p.type = ppt_psb;
			put(enc, &p);
			p.type = ppt_mode;
			p.payload.mode.leaf = pt_mol_exec;
			p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
			put(enc, &p);
			if (off == 0) {
				memset(&p, 0, sizeof(p));
				p.type = ppt_psbend;
				put(enc, &p);
				p.type = ppt_tip_pge;
				p.payload.ip.ipc = pt_ipc_sext_48;
				p.payload.ip.ip = CODE_ADDR;
				put(enc, &p);
			} else {
				memset(&p, 0, sizeof(p));
				p.type = ppt_fup;
				p.payload.ip.ipc = pt_ipc_sext_48;
				p.payload.ip.ip = CODE_ADDR; /* every 6 bits end at the loop head */
				put(enc, &p);
				p.type = ppt_psbend;
				put(enc, &p);
			}
		}
		if (!bits)
			break;
		memset(&p, 0, sizeof(p));
		p.type = ppt_tnt_8;
		p.payload.tnt.bit_size = 6;
		p.payload.tnt.payload = 0x3f;
		bits = bits > 6 ? bits - 6 : 0;
		put(enc, &p);
	}
	pt_enc_get_offset(enc, &off);
	pt_free_encoder(enc);
	return (size_t)off;
}

struct result { double seconds; uint64_t insns, errors; };

static struct result decode(const uint8_t *trace, size_t size, struct jf_codemap *map,
			    struct jf_zone_image *zi)
{
	struct jf_pt_config cfg;
	struct jf_error err;
	struct jf_decoder *dec;
	struct jf_flow f;
	struct result r = { 0, 0, 0 };
	uint64_t t0 = now_ns();

	memset(&cfg, 0, sizeof(cfg));
	cfg.trace = trace;
	cfg.size = size;
	dec = jf_pt_decoder_new(&cfg, map, &err);
	if (zi)
		dec = jf_zone_filter_new(dec, zi, &err);
	if (!dec) {
		fprintf(stderr, "bench_zone_decode: %s\n", err.msg);
		exit(1);
	}
	while (jf_decoder_next(dec, &f, &err) > 0) {
		if (f.kind == JF_FLOW_BLOCK)
			r.insns += f.u.block.ninsn;
		else if (f.kind == JF_FLOW_ERROR)
			r.errors++;
	}
	jf_decoder_free(dec);
	r.seconds = (double)(now_ns() - t0) / 1e9;
	return r;
}

enum mode { RAW, ZONE, PATCHED };

static struct result best_of_3(const uint8_t *trace, size_t size, enum mode mode,
			       const char *raw_path, const char *zone_path)
{
	struct result best = { 1e9, 0, 0 };
	struct jf_error err;
	int i;

	for (i = 0; i < 3; i++) {
		struct jf_codemap *map = jf_codemap_new();
		struct jf_zone_image *zi = NULL;
		struct result r;

		if (mode == RAW) {
			if (jf_codemap_add_file(map, raw_path, 0, code_bytes,
						CODE_ADDR, "loop", &err)) {
				fprintf(stderr, "bench_zone_decode: %s\n", err.msg);
				exit(1);
			}
		} else {
			zi = jf_zone_image_new(map, NULL, &err);
			/* everything in the zone file happened before the trace began */
			if (!zi || jf_zone_image_add_file(zi, zone_path, &err) ||
			    jf_zone_image_apply_all(zi, &err)) {
				fprintf(stderr, "bench_zone_decode: %s\n", err.msg);
				exit(1);
			}
		}
		r = decode(trace, size, map, zi);
		if (r.seconds < best.seconds)
			best = r;
		jf_zone_image_free(zi);
		jf_codemap_free(map);
	}
	return best;
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 400000;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[512], raw_path[600], zone_path[600];
	static const char *const names[] = { "raw", "zone", "patched" };
	uint8_t code[128];
	size_t code_size = make_code(code), cap, size;

	uint8_t *trace;
	struct jf_emitter *em;
	struct jf_region r = { .name = "loop trace", .addr = CODE_ADDR, .code = code,
			       .kind = JF_REGION_TRACE, .trace_id = 1 };
	FILE *f;
	int m;

	if (iterations <= 0)
		return 2;
	code_bytes = code_size;
	snprintf(dir, sizeof(dir), "%s/jitflow-bench-XXXXXX", tmp);
	if (!mkdtemp(dir))
		return 1;
	snprintf(raw_path, sizeof(raw_path), "%s/loop.bin", dir);
	f = fopen(raw_path, "wb");
	fwrite(code, 1, code_size, f);
	fclose(f);
	/* the zone files: one with the load, one with the load and a patch in the middle */
	for (m = ZONE; m <= PATCHED; m++) {
		char sub[560];
		static const uint8_t same[5] = { 0x48, 0x85, 0xc0, 0x75, 0x00 };

		snprintf(sub, sizeof(sub), "%s/%s", dir, names[m]);
		mkdir(sub, 0755);
		em = jf_emitter_open(sub, JF_EMIT_CLOCK_MONOTONIC);
		r.size = code_size;
		jf_emit_region_load(em, &r);
		if (m == PATCHED) /* the same bytes, so the same path: only the sections differ */
			jf_emit_patch(em, CODE_ADDR + 40, same, 5, "bench");
		jf_emitter_close(em);
	}
	cap = (size_t)iterations * PAIRS / 6 + (size_t)iterations * PAIRS / 6 / 4000 * 64 + 4096;
	trace = malloc(cap);
	size = make_trace(trace, cap, iterations);
	printf("workload: %ld iterations, %zu code bytes, %zu trace bytes\n", iterations,
	       code_size, size);
	printf("%-8s %12s %10s %12s %10s %7s\n", "image", "insns", "seconds", "Minsn/s",
	       "MB/s", "errors");
	for (m = RAW; m <= PATCHED; m++) {
		struct result res;

		snprintf(zone_path, sizeof(zone_path), "%s/%s/jit-%d.dump", dir, names[m],
			 (int)getpid());
		res = best_of_3(trace, size, (enum mode)m, raw_path, zone_path);
		printf("%-8s %12llu %10.3f %12.1f %10.1f %7llu\n", names[m],
		       (unsigned long long)res.insns, res.seconds, res.insns / res.seconds / 1e6,
		       size / res.seconds / 1e6, (unsigned long long)res.errors);
	}
	free(trace);
	return 0;
}
