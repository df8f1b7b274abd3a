/* stat and decode on perf.data recordings take the fast path once the code is settled, as
 * report does: stat counts each such AUX buffer with the fast counting path
 * (count_when_fast), decode returns its blocks from the fast path. Each is checked against
 * libipt's block decoder on every buffer (--decoder=libipt-block), through the command's
 * own inputs (tools/jitflow/cli_inputs.c: the session, the zone filter, PyPy's log), on
 * the recordings checked in under traces/ (two JITs' and a plain program's), with the
 * recorded CPU's errata (the fast path hands over only where libipt works around one)
 * and without (--cpu none), each PSB+'s CBR calibrating with the nominal frequency
 * perf.data gives:
 *
 * - stat: the same instructions, events, errors, overflows, bytes lost and time span, and
 *   every record but the blocks the same (the fast counter returns no blocks; its blocks
 *   are cut at every branch, so their number differs; its enable records do not say
 *   whether tracing resumed where it stopped);
 * - decode: every record the same, offsets and times included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_inputs.h"
#include "flow_check.h"
#include "jitflow/perf_session.h"
#include "jitflow/pt_fast.h"
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

/* One recording, counted or decoded, fast against libipt's block decoder. Returns how
 * many of the fast run's decoders were the fast path's; *path_of: its decode path. */
static uint64_t compare(const char *path, const char *image_dir, int count, int cpu_none,
			struct jf_pt_fast_report *fast_path, uint64_t *path_of)
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
	return rep.fast_buffers;
}

/* minivm-bridge's runtime loads and patches its code in the first of its AUX buffers: the
 * decoders after it are the fast path's; recorded-fib has no JIT code and its MMAPs come
 * before the trace: all are. pypy-loop has one buffer, in which PyPy compiles: none. */
static void test_checked_in_recordings(void **state)
{
	static const char *const dirs[] = { "minivm-bridge", "pypy-loop", "recorded-fib" };
	char path[4096];
	size_t i;
	int count, cpu_none;

	(void)state;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		/* recorded-fib's program is in its folder, not at the path it was recorded at */
		const char *image_dir = strcmp(dirs[i], "recorded-fib") ? NULL : path;

		snprintf(path, sizeof(path), "%s/traces/%s", jf_test_source_dir(), dirs[i]);
		for (count = 0; count < 2; count++) {
			for (cpu_none = 0; cpu_none < 2; cpu_none++) {
				struct jf_pt_fast_report fp;
				uint64_t of, n;

				n = compare(path, image_dir, count, cpu_none, &fp, &of);
				if (i == 1) {
					assert_int_equal(n, 0);
					assert_int_equal(fp.is_fast, 0);
					continue;
				}
				assert_true(n > 0);
				assert_int_equal(fp.is_fast, 1);
				assert_true(fp.fast_bytes <= of);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checked_in_recordings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
