/* The perf.data session decoder on files built byte by byte, with PT payloads made by
 * libipt's encoder over a small code image whose executed path is known:
 *
 *   0x400000  b9 03 00 00 00   mov ecx, 3
 *   0x400005  ff c9            dec ecx          <-+
 *   0x400007  75 fc            jnz 0x400005    --+  taken, taken, not taken
 *   0x400009  ff e0            jmp rax          (tracing stops: TIP.PGD)
 *
 * so one buffer executes exactly 8 instructions. Checked: the MMAP'd image is found and
 * decoded; per-CPU buffers merge in time order with the sideband (reordered within perf's
 * rounds); AUX truncation and LOST become loss records; bytes before the first PSB are
 * reported; unknown records are skipped; missing images are listed with their record's
 * offset; perf itself accepts the files and lists the same sideband and AUXTRACE_INFO. */
#include "test_support.h"
#include "perf_builder.h"

#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/insn.h"
#include "jitflow/perf_images.h"
#include "jitflow/perf_intel_pt.h"
#include "jitflow/perf_session.h"

static const uint8_t code[] = { 0xb9, 0x03, 0x00, 0x00, 0x00, 0xff, 0xc9, 0x75, 0xfc,
				0xff, 0xe0 };
enum { CODE_VADDR = 0x400000, LOOP_INSNS = 8 };

static const char *tmp_path(const char *name)
{
	static char path[8][512];
	static int n;
	char *p = path[n++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", jf_test_tmpdir(), name);
	return p;
}

static const char *code_file(void)
{
	const char *path = tmp_path("loop.bin");

	jf_test_write_file(path, code, sizeof(code));
	return path;
}

static void enc(struct pt_encoder *e, const struct pt_packet *p)
{
	int rc = pt_enc_next(e, p);

	if (rc < 0)
		fail_msg("pt_enc_next: %s", pt_errstr(pt_errcode(rc)));
}

/* junk bytes, then PSB [TSC] PSBEND MODE.exec(64) TIP.PGE(0x400000) TNT(1,1,0) TIP.PGD. */
static size_t encode_loop(uint8_t *buf, size_t cap, size_t junk, uint64_t tsc)
{
	struct pt_config cfg;
	struct pt_encoder *e;
	struct pt_packet p;
	uint64_t off;

	memset(buf, 0x55, junk); /* not a PSB; libipt's sync skips it */
	pt_config_init(&cfg);
	cfg.begin = buf + junk;
	cfg.end = buf + cap;
	e = pt_alloc_encoder(&cfg);
	assert_non_null(e);
	memset(&p, 0, sizeof(p));
	p.type = ppt_psb;
	enc(e, &p);
	if (tsc) {
		memset(&p, 0, sizeof(p));
		p.type = ppt_tsc;
		p.payload.tsc.tsc = tsc;
		enc(e, &p);
	}
	memset(&p, 0, sizeof(p));
	p.type = ppt_psbend;
	enc(e, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_mode;
	p.payload.mode.leaf = pt_mol_exec;
	p.payload.mode.bits.exec.csl = 1;
	enc(e, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tip_pge;
	p.payload.ip.ipc = pt_ipc_sext_48;
	p.payload.ip.ip = CODE_VADDR;
	enc(e, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tnt_8;
	p.payload.tnt.bit_size = 3;
	p.payload.tnt.payload = 0x6; /* taken, taken, not taken (oldest first) */
	enc(e, &p);
	memset(&p, 0, sizeof(p));
	p.type = ppt_tip_pgd;
	p.payload.ip.ipc = pt_ipc_suppressed;
	enc(e, &p);
	pt_enc_get_offset(e, &off);
	pt_free_encoder(e);
	return junk + (size_t)off;
}

/* What a decode produced. */
struct result {
	struct jf_flow flows[256];
	int n;
	uint64_t insns;
	int rc;
	struct jf_error err;
};

static void decode(const char *path, struct jf_perf_images *imgs, struct result *res)
{
	struct jf_perf_session_hooks hooks;
	struct jf_decoder *dec;
	struct jf_flow f;

	memset(res, 0, sizeof(*res));
	memset(&hooks, 0, sizeof(hooks));
	if (imgs)
		jf_perf_images_hooks(imgs, &hooks);
	dec = jf_perf_pt_decoder_new(path, imgs ? &hooks : NULL, &res->err);
	if (!dec)
		fail_msg("%s", res->err.msg);
	while ((res->rc = jf_decoder_next(dec, &f, &res->err)) > 0) {
		if (res->n < 256)
			res->flows[res->n++] = f;
		if (f.kind == JF_FLOW_BLOCK)
			res->insns += f.u.block.ninsn;
	}
	assert_int_equal(jf_decoder_stats(dec)->insns, res->insns);
	jf_decoder_free(dec);
}

static int count_kind(const struct result *res, int kind)
{
	int i, n = 0;

	for (i = 0; i < res->n; i++)
		n += res->flows[i].kind == kind;
	return n;
}

/* A per-thread recording of pid 100 (no TSC: ordered by file position). */
static void build_per_thread(struct pb *b, const char *image, const char *extra_map,
			     int unknown, size_t junk, uint64_t *auxtrace_off)
{
	static const uint8_t unknown_body[8] = { 0 };
	struct pb_sid sid = { 100, 100, 1000, 0 };
	uint64_t priv[17];
	uint8_t trace[256];
	size_t n = encode_loop(trace, sizeof(trace), junk, 0);

	pb_init(b);
	b->cpuid = "GenuineIntel,6,142,10";
	/* As perf record makes it: IP in sample_type, one event id (perf only decodes for
	 * events with ids). */
	pb_add_attr(b, PB_INTEL_PT_PMU, PB_CFG_NORETCOMP, PB_SAMPLE_STD | 1u,
		    PB_ATTR_SAMPLE_ID_ALL | (1u << 8) | (1u << 9) | (1u << 23), 1);
	pb_intel_pt_priv(priv, 0, 0, 0, 0);
	pb_auxtrace_info_intel_pt(b, priv, 17);
	pb_comm(b, 100, 100, "loop", 1, &sid);
	sid.time++;
	pb_mmap2(b, 100, 100, CODE_VADDR, 0x1000, 0, 5, image, &sid);
	if (extra_map) {
		sid.time++;
		pb_mmap2(b, 100, 100, 0x7fff0000, 0x2000, 0, 5, extra_map, &sid);
	}
	if (unknown)
		pb_raw(b, 150, 0, unknown_body, sizeof(unknown_body));
	sid.time++;
	pb_itrace_start(b, 100, 100, &sid);
	sid.time++;
	pb_aux(b, 0, n, 0, &sid);
	*auxtrace_off = pb_auxtrace(b, trace, n, 0, 0, 100, (uint32_t)-1);
	pb_finished_round(b);
}

static void test_mmap_image_decoded(void **state)
{
	const char *path = tmp_path("thread.data");
	struct jf_perf_images *imgs = jf_perf_images_new();
	struct result res;
	struct pb b;
	uint64_t at;
	int i, first_block = -1, context = -1;

	build_per_thread(&b, code_file(), NULL, 1, 0, &at);
	pb_write(&b, path);
	decode(path, imgs, &res);
	assert_int_equal(res.rc, 0);
	assert_int_equal(res.insns, LOOP_INSNS);
	assert_int_equal(jf_perf_images_loaded(imgs), 1);
	assert_int_equal(jf_perf_images_nmissing(imgs), 0);
	assert_int_equal(count_kind(&res, JF_FLOW_ERROR), 0);
	for (i = 0; i < res.n; i++) {
		const struct jf_flow *f = &res.flows[i];

		if (f->kind == JF_FLOW_CONTEXT && context < 0)
			context = i;
		if (f->kind == JF_FLOW_BLOCK && first_block < 0)
			first_block = i;
		if (f->kind == JF_FLOW_BLOCK) {
			/* Offsets are file offsets inside the AUXTRACE payload. */
			assert_true(f->offset >= at + 48);
			assert_true(f->offset < at + 48 + 64);
			assert_int_equal(f->source, 0);
		}
	}
	assert_true(context >= 0 && first_block > context);
	assert_int_equal(res.flows[context].u.context.pid, 100);
	assert_int_equal(res.flows[context].u.context.tid, 100);
	assert_int_equal(res.flows[first_block].u.block.start, CODE_VADDR);
	jf_perf_images_free(imgs);
	pb_free(&b);
}

static void test_missing_images_listed(void **state)
{
	const char *path = tmp_path("missing.data");
	struct jf_perf_images *imgs = jf_perf_images_new();
	const struct jf_perf_missing_image *m;
	struct result res;
	struct pb b;
	uint64_t at;

	build_per_thread(&b, "/nonexistent/loop.bin", "[vdso]", 0, 0, &at);
	pb_write(&b, path);
	decode(path, imgs, &res);
	assert_int_equal(res.rc, 0);
	assert_int_equal(res.insns, 0);
	assert_true(count_kind(&res, JF_FLOW_ERROR) + count_kind(&res, JF_FLOW_LOST) > 0);
	assert_int_equal(jf_perf_images_nmissing(imgs), 2);
	m = jf_perf_images_missing(imgs, 0);
	assert_string_equal(m->name, "/nonexistent/loop.bin");
	assert_int_equal(m->pid, 100);
	assert_int_equal(m->addr, CODE_VADDR);
	assert_true(m->record_offset > 0);
	assert_non_null(strstr(m->reason, "not found"));
	m = jf_perf_images_missing(imgs, 1);
	assert_string_equal(m->name, "[vdso]");
	jf_perf_images_free(imgs);

	/* With --image-dir holding loop.bin under its base name, the code is found. */
	imgs = jf_perf_images_new();
	code_file();
	assert_int_equal(jf_perf_images_add_dir(imgs, jf_test_tmpdir(), NULL), 0);
	decode(path, imgs, &res);
	assert_int_equal(res.insns, LOOP_INSNS);
	assert_int_equal(jf_perf_images_nmissing(imgs), 1); /* [vdso] still */
	jf_perf_images_free(imgs);
	pb_free(&b);
}

static void test_bytes_before_psb(void **state)
{
	const char *path = tmp_path("nosync.data");
	struct jf_perf_images *imgs = jf_perf_images_new();
	struct result res;
	struct pb b;
	uint64_t at;
	int i, seen = 0;

	build_per_thread(&b, code_file(), NULL, 0, 5, &at);
	/* A second buffer of the same queue without any PSB. */
	pb_auxtrace(&b, "\x55\x55\x55\x55\x55\x55\x55", 7, 64, 0, 100, (uint32_t)-1);
	pb_write(&b, path);
	decode(path, imgs, &res);
	assert_int_equal(res.rc, 0);
	assert_int_equal(res.insns, LOOP_INSNS);
	for (i = 0; i < res.n; i++) {
		const struct jf_flow *f = &res.flows[i];

		if (f->kind != JF_FLOW_LOST || f->u.lost.reason != JF_LOST_NO_SYNC)
			continue;
		if (seen == 0) {
			assert_int_equal(f->u.lost.bytes, 5);
			assert_int_equal(f->offset, at + 48);
		} else {
			assert_int_equal(f->u.lost.bytes, 7);
		}
		seen++;
	}
	assert_int_equal(seen, 2);
	jf_perf_images_free(imgs);
	pb_free(&b);
}

static void test_lost_records(void **state)
{
	const char *path = tmp_path("lost.data");
	struct pb b;
	struct result res;
	uint64_t at, lost_off;
	struct pb_sid sid = { 100, 100, 5000, 0 };
	int i, found = 0;

	build_per_thread(&b, code_file(), NULL, 0, 0, &at);
	lost_off = pb_lost(&b, 0, 3, &sid);
	pb_write(&b, path);
	decode(path, NULL, &res); /* no hooks: an empty code map */
	assert_int_equal(res.rc, 0);
	assert_int_equal(res.insns, 0);
	for (i = 0; i < res.n; i++) {
		if (res.flows[i].kind == JF_FLOW_LOST &&
		    res.flows[i].u.lost.reason == JF_LOST_RECORDS) {
			assert_int_equal(res.flows[i].offset, lost_off);
			found++;
		}
	}
	assert_int_equal(found, 1);
	pb_free(&b);
}

static void test_not_intel_pt(void **state)
{
	const char *path = tmp_path("nopt.data");
	struct pb b;
	struct jf_error err;

	pb_init(&b);
	pb_add_attr(&b, 0, 0, PB_SAMPLE_STD, PB_ATTR_SAMPLE_ID_ALL, 0);
	pb_comm(&b, 1, 1, "x", 0, NULL);
	pb_write(&b, path);
	assert_null(jf_perf_pt_decoder_new(path, NULL, &err));
	assert_non_null(strstr(err.msg, "nopt.data"));
	assert_non_null(strstr(err.msg, "AUXTRACE_INFO"));
	pb_free(&b);
}

/* Truncations and corrupted record sizes through the session: never a crash or a hang.
 * A file cut before its records can be read fails with an error naming the file; one cut
 * later decodes what is whole in it, reports the cut as a located loss (where the file
 * ends), and never decodes more than the whole file, nor less than a shorter cut. */
static void test_session_malformed(void **state)
{
	const char *path = tmp_path("cut-session.data");
	struct pb b;
	uint64_t at, insns, last_insns = 0, whole_insns = 0;
	uint8_t *img;
	size_t size, n, decoded = 0;

	build_per_thread(&b, code_file(), NULL, 0, 0, &at);
	img = pb_image(&b, &size);
	for (n = size + 1; n-- > 0;) {
		struct jf_error err;
		struct jf_decoder *dec;
		struct jf_flow f;
		int rc, cuts = 0;

		struct jf_perf_images *imgs = jf_perf_images_new();
		struct jf_perf_session_hooks hooks;

		jf_test_write_file(path, img, n);
		memset(&err, 0, sizeof(err));
		memset(&hooks, 0, sizeof(hooks));
		jf_perf_images_hooks(imgs, &hooks);
		dec = jf_perf_pt_decoder_new(path, &hooks, &err);
		if (!dec) {
			jf_perf_images_free(imgs);
			if (!strstr(err.msg, "cut-session.data"))
				fail_msg("prefix of %zu bytes: unclear error: %s", n, err.msg);
			continue;
		}
		insns = 0;
		while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
			if (f.kind == JF_FLOW_BLOCK)
				insns += f.u.block.ninsn;
			if (f.kind == JF_FLOW_LOST && f.u.lost.reason == JF_LOST_FILE_CUT) {
				cuts++;
				assert_int_equal(f.offset, n);
			}
		}
		jf_decoder_free(dec);
		jf_perf_images_free(imgs);
		if (rc < 0 && (!strstr(err.msg, "cut-session.data") || !strstr(err.msg, "offset")))
			fail_msg("prefix of %zu bytes: unclear error: %s", n, err.msg);
		if (n == size) {
			assert_int_equal(rc, 0);
			assert_int_equal(cuts, 0);
			whole_insns = insns;
		} else if (rc == 0 && !cuts) {
			/* Only the feature table after the data can be cut without a loss. */
			assert_int_equal(insns, whole_insns);
		}
		if (n < size && insns > whole_insns)
			fail_msg("prefix of %zu bytes decoded %llu instructions, the whole file %llu",
				 n, (unsigned long long)insns, (unsigned long long)whole_insns);
		/* Going down in size: never more than a longer prefix gave. */
		if (n < size && insns > last_insns)
			fail_msg("prefix of %zu bytes decoded %llu instructions, more than a longer "
				 "one (%llu)", n, (unsigned long long)insns,
				 (unsigned long long)last_insns);
		last_insns = insns;
		decoded += insns > 0;
	}
	/* Cuts inside the data decode part of it. */
	assert_true(decoded > 0);
	/* The AUXTRACE record's size field set to 4 (< header): the stream ends with an
	 * error at that record's offset, after what came before it. */
	{
		struct jf_error err;
		struct jf_decoder *dec;
		struct jf_flow f;
		char want[64];
		int rc;

		img[at + 6] = 4;
		img[at + 7] = 0;
		jf_test_write_file(path, img, size);
		dec = jf_perf_pt_decoder_new(path, NULL, &err);
		assert_non_null(dec);
		while ((rc = jf_decoder_next(dec, &f, &err)) > 0)
			;
		assert_int_equal(rc, -1);
		snprintf(want, sizeof(want), "offset %llu:", (unsigned long long)at);
		assert_non_null(strstr(err.msg, want));
		jf_decoder_free(dec);
	}
	free(img);
	pb_free(&b);
}

/* Our decode as text, one line per executed instruction: "CPU-or-queue ADDRESS", and the
 * sideband lines perf script prints for COMM and MMAP2, from our reader's values. */
struct listing {
	struct jf_perf_images *imgs;
	struct jf_perf_session_hooks inner;
	char sideband[4096];
	char insns[8192];
	size_t len;
	uint32_t source;
};

static void on_record(void *ctx, const struct jf_perf_record *r)
{
	struct listing *l = ctx;
	size_t n = strlen(l->sideband);

	if (r->type == JF_PERF_RECORD_COMM)
		snprintf(l->sideband + n, sizeof(l->sideband) - n,
			 "PERF_RECORD_COMM%s: %s:%d/%d\n", r->u.comm.exec ? " exec" : "",
			 r->u.comm.comm, r->u.comm.pid, r->u.comm.tid);
	if (r->type == JF_PERF_RECORD_MMAP2)
		snprintf(l->sideband + n, sizeof(l->sideband) - n,
			 "PERF_RECORD_MMAP2 %d/%d: [0x%llx(0x%llx) @ %llu %02x:%02x %llu %llu]: "
			 "%c%c%cp %s\n",
			 r->u.mmap.pid, r->u.mmap.tid, (unsigned long long)r->u.mmap.addr,
			 (unsigned long long)r->u.mmap.len, (unsigned long long)r->u.mmap.pgoff,
			 r->u.mmap.maj, r->u.mmap.min, (unsigned long long)r->u.mmap.ino,
			 (unsigned long long)r->u.mmap.ino_generation,
			 r->u.mmap.prot & 1 ? 'r' : '-', r->u.mmap.prot & 2 ? 'w' : '-',
			 r->u.mmap.prot & 4 ? 'x' : '-', r->u.mmap.filename);
	l->inner.on_record(l->inner.ctx, r);
}

static struct jf_codemap *codemap_for_pid(void *ctx, int32_t pid)
{
	struct listing *l = ctx;

	return l->inner.codemap_for_pid(l->inner.ctx, pid);
}

static void add_insn(void *ctx, uint64_t ip)
{
	struct listing *l = ctx;

	l->len += (size_t)snprintf(l->insns + l->len, sizeof(l->insns) - l->len, "%u %llx\n",
				   l->source, (unsigned long long)ip);
}

static void our_listing(const char *path, struct listing *l)
{
	struct jf_perf_session_hooks hooks = { l, codemap_for_pid, on_record, NULL };
	struct jf_insn_cache *cache;
	struct jf_decoder *dec;
	struct jf_error err;
	struct jf_flow f;
	uint64_t stop;

	memset(l, 0, sizeof(*l));
	l->imgs = jf_perf_images_new();
	jf_perf_images_hooks(l->imgs, &l->inner);
	cache = jf_insn_cache_new(jf_perf_images_codemap(l->imgs, 100));
	dec = jf_perf_pt_decoder_new(path, &hooks, &err);
	if (!dec)
		fail_msg("%s", err.msg);
	while (jf_decoder_next(dec, &f, &err) > 0) {
		if (f.kind != JF_FLOW_BLOCK)
			continue;
		l->source = f.source;
		assert_int_equal(jf_block_walk(cache, &f.u.block, add_insn, l, &stop), 0);
	}
	jf_decoder_free(dec);
	jf_insn_cache_free(cache);
	jf_perf_images_free(l->imgs);
}

/* perf's own lines for the same file: "CPU ADDRESS" per instruction (or "0 ADDRESS" for
 * per-thread files, where perf's cpu is -1 and ours is the queue index). */
static int perf_listing(const char *path, int per_cpu, char *insns, size_t cap, char **side,
			char *warnings, size_t wcap)
{
	char cmd[1024], *out = NULL, *line, *save = NULL;
	size_t len = 0;
	int rc;

	snprintf(cmd, sizeof(cmd), "perf script -i %s --show-mmap-events --show-task-events "
		 "-F comm,tid 2>&1", path);
	if (jf_test_run(cmd, side) != 0)
		return -1;
	/* perf's per-thread samples have no CPU field. */
	snprintf(cmd, sizeof(cmd), "perf script -i %s --itrace=i1i -F %s 2>&1", path,
		 per_cpu ? "cpu,ip" : "ip");
	rc = jf_test_run(cmd, &out);
	if (rc != 0) {
		print_message("%s", out);
		free(out);
		return -1;
	}
	insns[0] = 0;
	if (wcap)
		warnings[0] = 0;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int cpu = 0;
		unsigned long long ip;

		/* perf's warnings (e.g. "AUX data lost 1 times out of 2!") come first. */
		if (!strncmp(line, "Warning:", 8) || strstr(line, " lost ")) {
			if (wcap)
				strncat(warnings, line, wcap - strlen(warnings) - 1);
			continue;
		}

		if (per_cpu ? sscanf(line, " [%d] %llx", &cpu, &ip) != 2
			    : sscanf(line, " %llx", &ip) != 1)
			fail_msg("unexpected perf script line: %s", line);
		len += (size_t)snprintf(insns + len, cap - len, "%d %llx\n", per_cpu ? cpu : 0, ip);
	}
	free(out);
	return 0;
}

static void require_perf(void)
{
	jf_test_require_tools("perf --version", "perf (linux-perf)");
}

/* perf itself reads a per-thread file built here: the same sideband, and its own Intel PT
 * decoder executes the same instructions as ours. */
static void test_perf_agrees_per_thread(void **state)
{
	const char *path = tmp_path("for-perf.data");
	char theirs[8192], *side = NULL, *line, *save = NULL;
	struct listing ours;
	struct pb b;
	uint64_t at;

	require_perf();
	build_per_thread(&b, code_file(), NULL, 0, 0, &at);
	pb_write(&b, path);
	our_listing(path, &ours);
	assert_int_equal(perf_listing(path, 0, theirs, sizeof(theirs), &side, NULL, 0), 0);
	assert_string_equal(ours.insns, theirs);
	assert_string_equal(ours.insns, "0 400000\n0 400005\n0 400007\n0 400005\n0 400007\n"
					"0 400005\n0 400007\n0 400009\n");
	for (line = strtok_r(ours.sideband, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strstr(side, line))
			fail_msg("perf script does not list '%s':\n%s", line, side);
	}
	free(side);
	pb_free(&b);
}

/* Two CPUs running the loop (CPU 1 first in time), with the sideband perf writes; with
 * mmap_last, the MMAP2 of the code (time 20) comes after the AUX data of both CPUs (in
 * the same round), as when perf drains the sideband ring late. */
static void build_two_cpus(struct pb *b, int mmap_last)
{
	struct pb_sid sid = { 100, 100, 10, 0 };
	static uint8_t t0[128], t1[128];
	size_t n0 = encode_loop(t0, sizeof(t0), 0, 2000);
	size_t n1 = encode_loop(t1, sizeof(t1), 0, 1000);
	uint64_t priv[17];

	pb_init(b);
	pb_add_attr(b, PB_INTEL_PT_PMU, PB_CFG_TSC, PB_SAMPLE_STD | 1u,
		    PB_ATTR_SAMPLE_ID_ALL | (1u << 8) | (1u << 23), 1);
	pb_intel_pt_priv(priv, 1, 1, 0, 0); /* ns = tsc */
	pb_auxtrace_info_intel_pt(b, priv, 17);
	pb_comm(b, 100, 100, "loop", 1, &sid);
	sid.time = 20;
	if (!mmap_last)
		pb_mmap2(b, 100, 100, CODE_VADDR, 0x1000, 0, 5, code_file(), &sid);
	/* Out of order inside the round, as perf writes per-CPU buffers one after another. */
	sid.time = 31;
	sid.cpu = 1;
	pb_itrace_start(b, 100, 100, &sid);
	sid.time = 30;
	sid.cpu = 0;
	pb_itrace_start(b, 100, 100, &sid);
	pb_finished_round(b);
	pb_auxtrace(b, t0, n0, 0, 0, 100, 0);
	pb_auxtrace(b, t1, n1, 0, 1, 100, 1);
	sid.time = 1500;
	sid.cpu = 0;
	pb_aux(b, 0, n0, 0x1, &sid); /* TRUNCATED */
	sid.time = 1600;
	sid.cpu = 1;
	pb_aux(b, 0, n1, 0, &sid);
	if (mmap_last) {
		sid.time = 20;
		sid.cpu = 0;
		pb_mmap2(b, 100, 100, CODE_VADDR, 0x1000, 0, 5, code_file(), &sid);
	}
	pb_finished_round(b);
}

/* perf merges the CPUs by time with its own decoder: the same instructions, in the same
 * order, as ours. */
static void assert_two_cpus_as_perf(const char *path)
{
	char theirs[8192], warnings[256], *side = NULL;
	struct listing ours;

	require_perf();
	our_listing(path, &ours);
	assert_int_equal(perf_listing(path, 1, theirs, sizeof(theirs), &side, warnings,
				      sizeof(warnings)),
			 0);
	assert_string_equal(ours.insns, theirs);
	/* perf counts the truncated AUX record we reported as loss. */
	assert_non_null(strstr(warnings, "AUX data lost 1 times out of 2"));
	assert_non_null(strstr(ours.insns, "0 400000\n"));
	assert_non_null(strstr(ours.insns, "1 400000\n1 400005\n"));
	free(side);
}

static void test_per_cpu_time_order(void **state)
{
	const char *path = tmp_path("cpus.data");
	struct jf_perf_images *imgs = jf_perf_images_new();
	uint64_t last_time = 0;
	struct result res;
	struct pb b;
	int i, lost_at = -1, last_cpu1 = -1, first_cpu0 = -1, ctx = 0;

	build_two_cpus(&b, 0);
	pb_write(&b, path);

	decode(path, imgs, &res);
	assert_int_equal(res.rc, 0);
	assert_int_equal(res.insns, 2 * LOOP_INSNS);
	for (i = 0; i < res.n; i++) {
		const struct jf_flow *f = &res.flows[i];

		if (f->flags & JF_FLOW_HAS_TIME) {
			if (f->time < last_time)
				fail_msg("flow %d (kind %d) at time %llu after %llu", i, f->kind,
					 (unsigned long long)f->time,
					 (unsigned long long)last_time);
			last_time = f->time;
		}
		if (f->kind == JF_FLOW_CONTEXT) {
			/* COMM (cpu 0, t10), then ITRACE_START cpu 0 (t30), cpu 1 (t31). */
			static const uint32_t want_src[] = { 0, 0, 1 };
			static const uint64_t want_time[] = { 10, 30, 31 };

			assert_true(ctx < 3);
			assert_int_equal(f->source, want_src[ctx]);
			assert_int_equal(f->time, want_time[ctx]);
			ctx++;
		}
		if (f->kind == JF_FLOW_LOST && f->u.lost.reason == JF_LOST_AUX_TRUNCATED) {
			lost_at = i;
			assert_int_equal(f->source, 0);
			assert_int_equal(f->time, 1500);
		}
		if (f->kind == JF_FLOW_BLOCK && f->source == 1) {
			last_cpu1 = i;
			assert_int_equal(f->time, 1000);
		}
		if (f->kind == JF_FLOW_BLOCK && f->source == 0 && first_cpu0 < 0) {
			first_cpu0 = i;
			assert_int_equal(f->time, 2000);
		}
	}
	assert_int_equal(ctx, 3);
	assert_true(last_cpu1 >= 0 && lost_at > last_cpu1 && first_cpu0 > lost_at);
	jf_perf_images_free(imgs);

	assert_two_cpus_as_perf(path);
	pb_free(&b);
}

/* The MMAP2 of the code written after the AUX data of both CPUs (earlier in time): it
 * applies at its time, so both CPUs decode, to the same instructions as perf's. */
static void test_mmap_after_the_aux_data(void **state)
{
	const char *path = tmp_path("late-mmap.data");
	struct jf_perf_images *imgs = jf_perf_images_new();
	struct result res;
	struct pb b;

	build_two_cpus(&b, 1);
	pb_write(&b, path);
	decode(path, imgs, &res);
	assert_int_equal(res.rc, 0);
	assert_int_equal(res.insns, 2 * LOOP_INSNS);
	assert_int_equal(jf_perf_images_nmissing(imgs), 0);
	jf_perf_images_free(imgs);
	assert_two_cpus_as_perf(path);
	pb_free(&b);
}

/* The command: `jitflow decode --perf` prints perf's instruction addresses (16 hex
 * digits each), and warns about images it could not load, naming the record's offset. */
static void test_cli_decode_perf(void **state)
{
	const char *path = tmp_path("cli.data"), *missing = tmp_path("cli-missing.data");
	char cmd[1024], theirs[8192], want[8192], *out = NULL, *side = NULL, *line, *save = NULL;
	struct pb b;
	uint64_t at;
	size_t len = 0;

	build_per_thread(&b, code_file(), NULL, 0, 0, &at);
	pb_write(&b, path);
	pb_free(&b);
	snprintf(cmd, sizeof(cmd), "%s decode --perf %s 2>&1", jf_test_cli(), path);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	require_perf();
	assert_int_equal(perf_listing(path, 0, theirs, sizeof(theirs), &side, NULL, 0), 0);
	free(side);
	want[0] = 0;
	for (line = strtok_r(theirs, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		len += (size_t)snprintf(want + len, sizeof(want) - len, "%016llx\n",
					strtoull(line + 2, NULL, 16));
	/* Our address lines, without the bracketed event lines. */
	{
		char got[8192];
		size_t glen = 0;

		got[0] = 0;
		save = NULL;
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (line[0] != '[')
				glen += (size_t)snprintf(got + glen, sizeof(got) - glen, "%s\n", line);
		assert_string_equal(got, want);
	}
	free(out);

	build_per_thread(&b, "/nonexistent/loop.bin", NULL, 0, 0, &at);
	pb_write(&b, missing);
	pb_free(&b);
	snprintf(cmd, sizeof(cmd), "%s decode --perf %s 2>&1 >/dev/null", jf_test_cli(), missing);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "warning: "));
	assert_non_null(strstr(out, "cli-missing.data: offset 464: no code for /nonexistent/"
				    "loop.bin"));
	free(out);
	/* A file that is not perf.data: one line, non-zero exit. */
	snprintf(cmd, sizeof(cmd), "%s decode --perf %s 2>&1", jf_test_cli(), code_file());
	assert_int_not_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "loop.bin: offset 0:"));
	free(out);
}

/* One buffer's trace cut into two consecutive AUXTRACE buffers, as perf cuts AUX data
 * wherever the ring buffer's head was: decoded as one stream, nothing lost. At a packet
 * boundary perf's decoder agrees; inside a packet (TIP.PGE) perf 6.1 itself reports "Bad
 * packet", so there the program's known path is the only oracle. */
static void check_split(size_t cut, int perf_agrees)
{
	const char *path = tmp_path("split.data");
	struct pb_sid sid = { 100, 100, 1000, 0 };
	struct jf_perf_images *imgs = jf_perf_images_new();
	uint8_t trace[256];
	size_t n = encode_loop(trace, sizeof(trace), 0, 0);
	uint64_t priv[17];
	struct result res;
	struct pb b;
	int i;

	pb_init(&b);
	pb_add_attr(&b, PB_INTEL_PT_PMU, PB_CFG_NORETCOMP, PB_SAMPLE_STD | 1u,
		    PB_ATTR_SAMPLE_ID_ALL | (1u << 8) | (1u << 9) | (1u << 23), 1);
	pb_intel_pt_priv(priv, 0, 0, 0, 0);
	pb_auxtrace_info_intel_pt(&b, priv, 17);
	pb_comm(&b, 100, 100, "loop", 1, &sid);
	pb_mmap2(&b, 100, 100, CODE_VADDR, 0x1000, 0, 5, code_file(), &sid);
	pb_itrace_start(&b, 100, 100, &sid);
	pb_aux(&b, 0, cut, 0, &sid);
	pb_auxtrace(&b, trace, cut, 0, 0, 100, (uint32_t)-1);
	pb_aux(&b, cut, n - cut, 0, &sid);
	pb_auxtrace(&b, trace + cut, n - cut, cut, 0, 100, (uint32_t)-1);
	pb_finished_round(&b);
	pb_write(&b, path);
	pb_free(&b);

	decode(path, imgs, &res);
	assert_int_equal(res.rc, 0);
	assert_int_equal(res.insns, LOOP_INSNS);
	assert_int_equal(count_kind(&res, JF_FLOW_ERROR), 0);
	for (i = 0; i < res.n; i++)
		if (res.flows[i].kind == JF_FLOW_LOST)
			fail_msg("lost %llu bytes at %llu",
				 (unsigned long long)res.flows[i].u.lost.bytes,
				 (unsigned long long)res.flows[i].offset);
	assert_int_equal(count_kind(&res, JF_FLOW_END), 0); /* ends with TIP.PGD */
	jf_perf_images_free(imgs);
	if (perf_agrees) {
		require_perf();
		char theirs[8192], *side = NULL;
		struct listing ours;

		our_listing(path, &ours);
		assert_int_equal(perf_listing(path, 0, theirs, sizeof(theirs), &side, NULL, 0), 0);
		assert_string_equal(ours.insns, theirs);
		free(side);
	}
}

static void test_split_buffers_stitched(void **state)
{
	check_split(27, 1); /* PSB PSBEND MODE TIP.PGE | TNT TIP.PGD */
	check_split(22, 0); /* inside TIP.PGE */
	check_split(28, 1); /* between TNT and TIP.PGD */
}

/* Context switches on a per-CPU recording: SWITCH_CPU_WIDE switch-out names the next
 * task, SWITCH switch-in is the incoming task itself (its sample_id); both become context
 * records of the CPU's queue, in time order with the trace. */
static void test_context_switches(void **state)
{
	const char *path = tmp_path("switch.data");
	struct pb_sid sid = { 100, 100, 10, 0 };
	uint8_t t0[128];
	size_t n0 = encode_loop(t0, sizeof(t0), 0, 2000);
	uint64_t priv[17];
	struct result res;
	struct pb b;
	int i, nctx = 0, blocks_before = 0;
	static const int32_t want_pid[] = { 100, 200, 300 };
	static const uint64_t want_time[] = { 10, 1500, 2500 };

	pb_init(&b);
	pb_add_attr(&b, PB_INTEL_PT_PMU, PB_CFG_TSC, PB_SAMPLE_STD | 1u,
		    PB_ATTR_SAMPLE_ID_ALL | (1u << 8) | (1u << 26), 1);
	pb_intel_pt_priv(priv, 1, 1, 0, 0);
	pb_auxtrace_info_intel_pt(&b, priv, 17);
	pb_itrace_start(&b, 100, 100, &sid);
	sid.time = 1500;
	pb_switch_cpu_wide(&b, 1, 200, 201, &sid); /* cpu 0: 100 out, 200/201 next */
	sid.time = 2500;
	sid.pid = 300;
	sid.tid = 301;
	pb_switch(&b, 0, &sid);                    /* cpu 0: 300/301 in */
	pb_finished_round(&b);
	pb_auxtrace(&b, t0, n0, 0, 0, 100, 0);
	pb_finished_round(&b);
	pb_write(&b, path);
	pb_free(&b);

	decode(path, NULL, &res);
	assert_int_equal(res.rc, 0);
	for (i = 0; i < res.n; i++) {
		const struct jf_flow *f = &res.flows[i];

		/* No code map here: the trace's own records (enable, no-image error...). */
		if (f->kind != JF_FLOW_CONTEXT && f->time == 2000 && nctx == 2)
			blocks_before++;
		if (f->kind != JF_FLOW_CONTEXT)
			continue;
		assert_true(nctx < 3);
		assert_int_equal(f->source, 0);
		assert_int_equal(f->u.context.cpu, 0);
		assert_int_equal(f->u.context.pid, want_pid[nctx]);
		assert_int_equal(f->time, want_time[nctx]);
		nctx++;
	}
	assert_int_equal(nctx, 3);
	/* The trace (time 2000) runs between the two switches. */
	assert_true(blocks_before > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap_image_decoded),
		cmocka_unit_test(test_missing_images_listed),
		cmocka_unit_test(test_bytes_before_psb),
		cmocka_unit_test(test_per_cpu_time_order),
		cmocka_unit_test(test_mmap_after_the_aux_data),
		cmocka_unit_test(test_lost_records),
		cmocka_unit_test(test_not_intel_pt),
		cmocka_unit_test(test_session_malformed),
		cmocka_unit_test(test_perf_agrees_per_thread),
		cmocka_unit_test(test_cli_decode_perf),
		cmocka_unit_test(test_split_buffers_stitched),
		cmocka_unit_test(test_context_switches),
	};
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
