/* A recording decoded on the fast path against libipt's block decoder (perf_fast_check.h). */
#include "perf_fast_check.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_inputs.h"
#include "flow_check.h"
#include "test_support.h"

struct run {
	struct jf_cli_inputs in;
	struct jf_decoder *dec;
};

/* Open the recording folder path as stat (count_only) or decode (split_blocks) opens it;
 * image_dir: where its program's files are (NULL: at the recorded paths or in its code/
 * folder); cpu_none: --cpu none. */
static void open_run(struct run *r, const char *path, const char *image_dir, int count,
		     int libipt_block, int cpu_none)
{
	struct jf_error err = { 0 };

	memset(r, 0, sizeof(*r));
	jf_cli_inputs_init(&r->in);
	r->in.count_only = count;
	r->in.split_blocks = !count;
	r->in.libipt_block = libipt_block;
	if (jf_cli_open_recording(&r->in, path, &err) < 0)
		fail_msg("%s: %s", path, err.msg);
	if (image_dir) {
		char *argv[] = { "--image-dir", (char *)image_dir };
		int i = 0;

		if (jf_cli_input_option(&r->in, 2, argv, &i, &err) != 1)
			fail_msg("--image-dir %s: %s", image_dir, err.msg);
	}
	if (cpu_none) {
		char *argv[] = { "--cpu", "none" };
		int i = 0;

		if (jf_cli_input_option(&r->in, 2, argv, &i, &err) != 1)
			fail_msg("--cpu none: %s", err.msg);
	}
	r->dec = jf_cli_open_decoder(&r->in, &err);
	if (!r->dec)
		fail_msg("%s: %s", path, err.msg);
}

static void close_run(struct run *r)
{
	jf_decoder_free(r->dec);
	jf_cli_inputs_fini(&r->in);
}

/* The next record of r, blocks skipped when skip_blocks. */
static int next(struct run *r, struct jf_flow *f, int skip_blocks)
{
	struct jf_error err = { 0 };
	int rc;

	do {
		memset(f, 0, sizeof(*f));
		rc = jf_decoder_next(r->dec, f, &err);
		if (rc < 0)
			fail_msg("decode: %s", err.msg);
	} while (rc > 0 && skip_blocks && f->kind == JF_FLOW_BLOCK);
	return rc;
}

/* Both runs to their ends, record by record (blocks left out when counting). */
static void same_records(const char *what, struct run *ref, struct run *fast, int count)
{
	struct jf_flow a, b;
	unsigned long n = 0;
	int ra, rb;

	do {
		ra = next(ref, &a, count);
		rb = next(fast, &b, count);
		/* Whether tracing resumed where it stopped is told with returned blocks only
		 * (the counter's enable records leave it 0: stat does not read it). */
		if (count && ra > 0 && a.kind == JF_FLOW_ENABLED)
			a.u.enabled.resumed = 0;
		if (count && rb > 0 && b.kind == JF_FLOW_ENABLED)
			b.u.enabled.resumed = 0;
		if (ra != rb || (ra > 0 && !jf_flow_same(&a, &b)))
			fail_msg("%s: record %lu differs: kind %u offset %#lx ip %#lx time %lu / "
				 "kind %u offset %#lx ip %#lx time %lu", what, n, a.kind,
				 (unsigned long)a.offset, (unsigned long)a.ip, (unsigned long)a.time,
				 b.kind, (unsigned long)b.offset, (unsigned long)b.ip,
				 (unsigned long)b.time);
		n++;
	} while (ra > 0);
}

/* stat's counts: all but the blocks the same. */
static void same_counts(const char *what, const struct jf_decode_stats *a,
			const struct jf_decode_stats *b)
{
	printf("# %s: %llu instructions, %llu events, time span %llu\n", what,
	       (unsigned long long)a->insns, (unsigned long long)a->events,
	       (unsigned long long)(a->last_time - a->first_time));
	assert_true(a->insns > 0);
	jf_check_same_stats(a, b);
}

struct jf_perf_session_report jf_check_perf_fast(const char *path, const char *image_dir,
						 int count, int cpu_none,
						 struct jf_pt_fast_report *fast_path,
						 uint64_t *path_of)
{
	struct run ref, fast;
	struct jf_perf_session_report none, rep;
	char what[4200];

	snprintf(what, sizeof(what), "%s (%s%s)", path, count ? "stat" : "decode",
		 cpu_none ? ", --cpu none" : "");
	open_run(&ref, path, image_dir, count, 1, cpu_none);
	open_run(&fast, path, image_dir, count, 0, cpu_none);
	same_records(what, &ref, &fast, count);
	if (count)
		same_counts(what, jf_decoder_stats(ref.dec), jf_decoder_stats(fast.dec));
	jf_perf_session_fast_report(ref.in.perf_session, &none);
	jf_perf_session_fast_report(fast.in.perf_session, &rep);
	assert_int_equal(none.fast_buffers, 0);
	assert_int_equal(none.buffers, rep.buffers);
	jf_cli_decode_path(&fast.in, fast.dec, fast_path, path_of);
	printf("# %s: %llu of %llu decoders the fast path's; fast path %llu of %llu bytes, "
	       "%llu hand-overs\n", what, (unsigned long long)rep.fast_buffers,
	       (unsigned long long)rep.buffers, (unsigned long long)fast_path->fast_bytes,
	       (unsigned long long)*path_of, (unsigned long long)fast_path->hand_overs);
	close_run(&ref);
	close_run(&fast);
	return rep;
}
