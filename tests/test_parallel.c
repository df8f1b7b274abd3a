/* `-j N`: a trace decoded by several threads gives byte for byte the output of one thread
 * (`decode`, `decode --blocks`, `stat` with the block decoder and with the fast counting
 * path, `report`), at several segment sizes, on the real
 * Intel PT captures in ../shared/traces (concatenated, so that they have many segments;
 * Unzip with its real decode errors; foo with bytes overwritten, so that decoders fail and
 * resynchronise inside segments and across seams) and on every recording in traces/.
 * The oracle is the single decoder, whose instructions test_pt_shared checks against
 * libipt's reference decoder (and test_pt_fast the fast path's against the block
 * decoder's). Where the threads did not run the test says so rather
 * than pass on a serial decode: the split is checked in stat's "decode threads" line. */
#include "pt_builder.h"
#include "test_support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* stat's lines about how it decoded (threads, time, speed) differ by design. */
static void drop_decode_lines(char *text)
{
	char *in = text, *out = text;

	while (*in) {
		char *eol = strchr(in, '\n');
		size_t n = eol ? (size_t)(eol - in + 1) : strlen(in);

		if (strncmp(in, "decode ", 7) != 0) {
			memmove(out, in, n);
			out += n;
		}
		in += n;
	}
	*out = 0;
}

static char *run(const char *env, const char *cmd, const char *inputs, const char *jobs)
{
	char line[4096], *out = NULL;

	snprintf(line, sizeof(line), "%s '%s' %s %s %s 2>&1", env, jf_test_cli(), cmd, inputs,
		 jobs);
	assert_int_equal(jf_test_run(line, &out), 0);
	return out;
}

/* stat with the block decoder, and with the fast counting path (its default; its blocks
 * are cut elsewhere: test_pt_fast compares the two paths). */
static const char *const commands[] = {
	"decode", "decode --blocks --format=jsonl", "stat --decoder=libipt-block", "stat",
	"stat --json", "report", "report --json",
};

/* stat --json's one object, without its "decode_threads" and "decode_seconds", which
 * differ by design; returns whether the threads decoded segments. */
static int drop_decode_json(char *text)
{
	char *threads = strstr(text, ",\"decode_threads\":");
	int split;

	assert_non_null(threads);
	split = strstr(threads, "\"segments\":0,") == NULL;
	strcpy(threads, "}\n");
	return split;
}

/* Drop what differs by design from stat's output; returns whether the threads decoded
 * segments (for the text, that line is kept in *threads). */
static int drop_decode(const char *cmd, char *out, char *threads, size_t size)
{
	const char *line;
	int split;

	if (strstr(cmd, "--json")) {
		snprintf(threads, size, "%.120s", strstr(out, "\"decode_threads\"") ?
			 strstr(out, "\"decode_threads\"") : "(none)");
		return drop_decode_json(out);
	}
	line = strstr(out, "decode threads  ");
	assert_non_null(line);
	snprintf(threads, size, "%.*s", (int)strcspn(line, "\n"), line);
	split = strstr(threads, "segments") != NULL;
	drop_decode_lines(out);
	return split;
}

/* Each of cmds with -j 1, then with each of jobs (and env); with want_split, stat must
 * say that the threads decoded segments. */
static void compare_commands(const char *const *cmds, size_t ncmds, const char *inputs,
			     const char *const *jobs, size_t njobs, const char *env, int want_split)
{
	const char *const *commands = cmds;
	size_t c, j;

	for (c = 0; c < ncmds; c++) {
		char *want = run("", commands[c], inputs, "-j 1"), threads[160];

		if (!strncmp(commands[c], "stat", 4))
			drop_decode(commands[c], want, threads, sizeof(threads));
		for (j = 0; j < njobs; j++) {
			char *got = run(env, commands[c], inputs, jobs[j]);

			/* The fast path's default segments (256 KiB) are larger than these
			 * traces: one segment, one thread. */
			int split = want_split && (strstr(jobs[j], "--segment-size") ||
						   strstr(commands[c], "--decoder"));

			if (!strncmp(commands[c], "stat", 4) &&
			    !drop_decode(commands[c], got, threads, sizeof(threads)) && split)
				fail_msg("%s %s %s: not decoded in parallel: %s", commands[c], inputs,
					 jobs[j], threads);
			if (strcmp(want, got) != 0)
				fail_msg("jitflow %s %s %s %s: output differs from -j 1", commands[c],
					 inputs, jobs[j], env);
			free(got);
		}
		free(want);
	}
}

static void compare(const char *inputs, const char *const *jobs, size_t njobs, const char *env,
		    int want_split)
{
	compare_commands(commands, sizeof(commands) / sizeof(commands[0]), inputs, jobs, njobs,
			 env, want_split);
}

static const char *const split_jobs[] = {
	"-j 2 --segment-size 4096", "-j 3 --segment-size 4096", "-j 2 --segment-size 5600",
	"-j 3 --segment-size 16K", "-j 2",
};

/* name's trace concatenated times (with bytes overwritten when damage is set), written to
 * the temporary folder; returns the inputs for it. */
static void concatenated(const char *name, const char *base, int times, int damage,
			 char *inputs, size_t size)
{
	const char *dir = jf_test_shared_traces();
	char out[1024];
	size_t total;
	unsigned char *all = jf_test_concatenated_capture(name, times, damage, &total);

	snprintf(out, sizeof(out), "%s/%s-%d%s.pt", jf_test_tmpdir(), name, times,
		 damage ? "-damaged" : "");
	jf_test_write_file(out, all, total);
	snprintf(inputs, size, "--raw '%s/intel-pt/%s/data:%s' --pt '%s'", dir, name, base, out);
	free(all);
}

/* stat's (fast counting path) "decode threads" line with jobs must contain want. */
static void expect_threads(const char *inputs, const char *jobs, const char *want)
{
	char *out = run("", "stat", inputs, jobs);
	const char *line = strstr(out, "decode threads  ");

	assert_non_null(line);
	if (!strstr(line, want))
		fail_msg("stat %s %s: '%s' expected in: %.200s", inputs, jobs, want, line);
	free(out);
}

/* stat's "decode threads" line with jobs must say that hand-overs were made, some of them
 * by the workers. */
static void expect_worker_hand_overs(const char *inputs, const char *jobs)
{
	char *out = run("", "stat", inputs, jobs);
	const char *line = strstr(out, "decode threads  "), *in_place;
	unsigned long long made = 0, by_workers = 0;

	assert_non_null(line);
	in_place = strstr(line, " hand-overs decoded in place, ");
	if (in_place) {
		while (in_place > line && in_place[-1] >= '0' && in_place[-1] <= '9')
			in_place--;
		if (sscanf(in_place, "%llu hand-overs decoded in place, %llu of them by the workers",
			   &made, &by_workers) != 2)
			made = 0;
	}
	if (!made || !by_workers)
		fail_msg("stat %s %s: hand-overs made by the workers expected in: %.200s", inputs,
			 jobs, line);
	free(out);
}

static void test_foo(void **state)
{
	char inputs[4096];

	if (!jf_test_shared_traces())
		skip();
	concatenated("foo", "0x7ffff7819000", 4, 0, inputs, sizeof(inputs));
	compare(inputs, split_jobs, 5, "", 1);
	/* foo decodes entirely on the fast path: every seam it reaches joins. */
	expect_threads(inputs, "-j 2 --segment-size 16K", "6 seams joined, 0 decoded on serially)");
}

static void test_foo_damaged(void **state)
{
	char inputs[4096];

	if (!jf_test_shared_traces())
		skip();
	concatenated("foo", "0x7ffff7819000", 4, 1, inputs, sizeof(inputs));
	compare(inputs, split_jobs, 3, "", 1);
	/* Each damaged copy makes the fast path hand over to libipt's block decoder, up to the
	 * PSB where it resynchronises: that stretch is decoded as one thread decodes it, and
	 * the segments go on from there (no one-thread rest). The worker whose segment meets
	 * the damage makes that hand-over (its output the same as -j 1's: compare, above)
	 * unless it cannot know what one thread committed before it (its segment starts just
	 * before the damage); segments of 16 KiB hold each damaged copy's inside. */
	expect_threads(inputs, "-j 2 --segment-size 4096", "hand-overs decoded in place, ");
	expect_worker_hand_overs(inputs, "-j 2 --segment-size 16K");
}

static void test_unzip(void **state)
{
	char inputs[4096];

	if (!jf_test_shared_traces())
		skip();
	concatenated("Unzip", "0x400000", 6, 0, inputs, sizeof(inputs));
	compare(inputs, split_jobs, 3, "", 1);
	/* Its errors (11 a copy) are reported and resynchronised after on the fast path, by
	 * the segments' decoders as by one thread: every seam joins, none is decoded on by
	 * the calling thread, and no stretch is left to one thread. */
	expect_threads(inputs, "-j 2 --segment-size 16K", ", 0 decoded on serially)");
	expect_threads(inputs, "-j 3 --segment-size 5600", ", 0 decoded on serially)");
}

/* Seams that do not join: the calling thread decodes the next segment on with the
 * previous segment's decoder state (made again by decoding that segment a second time). */
static void test_seams_decoded_on(void **state)
{
	char inputs[4096];

	if (!jf_test_shared_traces())
		skip();
	concatenated("Unzip", "0x400000", 4, 0, inputs, sizeof(inputs));
	compare(inputs, split_jobs, 3, "JITFLOW_PT_NO_JOINS=1", 1);
	concatenated("foo", "0x7ffff7819000", 2, 1, inputs, sizeof(inputs));
	compare(inputs, split_jobs, 2, "JITFLOW_PT_NO_JOINS=1", 1);
}

/* Bytes without a PSB before the trace (lost until the first sync point), a stretch of
 * zeros in it, and its end cut in the middle of a packet. */
static void test_edges(void **state)
{
	const char *dir = jf_test_shared_traces();
	char path[1024], out[1024], inputs[4096];
	size_t n, i, at = 0;
	unsigned char *one, *all;
	unsigned seed = 9;

	if (!dir)
		skip();
	snprintf(path, sizeof(path), "%s/intel-pt/foo/trace", dir);
	one = jf_test_read_file(path, &n);
	all = calloc(1, 10000 + 3 * n + 20000);
	assert_non_null(all);
	for (i = 0; i < 10000; i++) {
		seed = seed * 1103515245u + 12345u;
		all[at++] = (unsigned char)(seed >> 24);
	}
	memcpy(all + at, one, n);
	at += n + 20000; /* zeros */
	memcpy(all + at, one, n);
	at += n;
	memcpy(all + at, one, n);
	at += n / 2 + 1;
	snprintf(out, sizeof(out), "%s/foo-edges.pt", jf_test_tmpdir());
	jf_test_write_file(out, all, at);
	snprintf(inputs, sizeof(inputs), "--raw '%s/intel-pt/foo/data:0x7ffff7819000' --pt '%s'",
		 dir, out);
	compare(inputs, split_jobs, 2, "", 1);
	free(one);
	free(all);
}

/* A trace shorter than one segment and the recordings in traces/ (perf.data, which is
 * decoded by one thread whatever -j says; stat says why). */
static void test_recordings(void **state)
{
	static const char *const jobs[] = { "-j 2 --segment-size 4096", "-j 3" };
	char dir[1024], inputs[2048], path[2048];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/traces", jf_test_source_dir());
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s/perf.data", dir, e->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		fclose(f);
		snprintf(inputs, sizeof(inputs), "--recording '%s/%s'", dir, e->d_name);
		compare(inputs, jobs, 2, "", 0);
		n++;
	}
	closedir(d);
	assert_true(n >= 3);
	{
		char line[4096], *out = NULL;

		snprintf(line, sizeof(line), "'%s' stat --recording '%s/recorded-fib' -j 2",
			 jf_test_cli(), dir);
		assert_int_equal(jf_test_run(line, &out), 0);
		assert_non_null(strstr(out, "decode threads  1 (-j 2 not applied: perf.data"));
		free(out);
	}
}

/* The analysis commands (tools/jitflow/cli_analysis.c), in every format: with -j N, each
 * thread analyses the segments it decodes into an analysis of their own, and these are
 * merged in trace order (jf_analysis_merge); where a seam does not join
 * (JITFLOW_PT_NO_JOINS), the calling thread analyses what it decodes on. The oracle is
 * one analysis of the whole trace (-j 1), which test_analysis and the golden tests check.
 * The code image is given as two files, a library and the program, so that the report has
 * transitions between native and runtime code that seams cut through. */
static const char *const analysis_commands[] = {
	"report", "report --json", "report --folded", "report --csv split", "split --json",
	"guards", "bytecodes --json", "timeline -o /dev/stdout", "report --html /dev/stdout",
	"report --svg /dev/stdout", "report --json --decoder=libipt-block",
};

/* The last: the default thread count (the cores available) where parts apply. */
static const char *const analysis_jobs[] = {
	"-j 2 --segment-size 4096", "-j 3 --segment-size 5600", "-j 2 --segment-size 16K",
	"--segment-size 8K",
};

/* name's inputs (concatenated), with its code from `lib_until` bytes on in a file named
 * like a shared library. */
static void split_image(const char *name, const char *base, uint64_t lib_until, int times,
			int damage, char *inputs, size_t size)
{
	char one[4096], lib[1024], data[1024];
	const char *pt;
	unsigned long long at;

	concatenated(name, base, times, damage, one, sizeof(one));
	pt = strstr(one, "--pt ");
	snprintf(data, sizeof(data), "%s/intel-pt/%s/data", jf_test_shared_traces(), name);
	snprintf(lib, sizeof(lib), "%s/lib%s-part.so", jf_test_tmpdir(), name);
	unlink(lib);
	assert_int_equal(symlink(data, lib), 0);
	at = strtoull(base, NULL, 16) + lib_until;
	snprintf(inputs, size, "--raw '%s:0-0x%llx:%s' --raw '%s:0x%llx:0x%llx' %s", lib,
		 (unsigned long long)lib_until, base, data, (unsigned long long)lib_until, at,
		 pt);
}

static void test_analysis_commands(void **state)
{
	static const struct { const char *name, *base; uint64_t lib_until; int times, damage; } t[] = {
		{ "foo", "0x7ffff7819000", 0x37000, 4, 0 },
		{ "foo", "0x7ffff7819000", 0x37000, 4, 1 },
		{ "Unzip", "0x400000", 0x11000, 6, 0 },
	};
	const size_t ncmds = sizeof(analysis_commands) / sizeof(analysis_commands[0]);
	char inputs[4096];
	size_t i;

	if (!jf_test_shared_traces())
		skip();
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		split_image(t[i].name, t[i].base, t[i].lib_until, t[i].times, t[i].damage, inputs,
			    sizeof(inputs));
		compare_commands(analysis_commands, ncmds, inputs, analysis_jobs, 4, "", 0);
		compare_commands(analysis_commands, ncmds, inputs, analysis_jobs, 2,
				 "JITFLOW_PT_NO_JOINS=1", 0);
	}
}

/* A compressed return to a call made several PSBs before it. Hardware compresses only
 * returns to calls made since the last PSB; a damaged trace need not. A decoder started at
 * a segment's PSB has no such call and reports an error the one-thread decoder does not:
 * the segment must not join, and its flows come from a decoder that started before the
 * call (pt_parallel.c decodes on from the trace's start). psbs: PSBs between call and
 * return, so that the call lies one or more segments before the return's. */
static void write_return_across_psbs(int psbs, char *inputs, size_t size)
{
	/* 1000: call 1010; 1005: jmp 1000; 1010: je 1012; 1012: jne 1010; 1014: ret */
	static const uint8_t code[] = { 0xe8, 0x0b, 0x00, 0x00, 0x00, 0xeb, 0xf9, 0x90, 0x90,
					0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x74, 0x00,
					0x75, 0xfc, 0xc3 };
	/* 23 passes through the loop at 1010 (je not taken, jne taken) */
	static const char loop[] = "NTNTNTNTNTNTNTNTNTNTNTNTNTNTNTNTNTNTNTNTNTNT";
	struct jf_ptb *b = jf_ptb_new();
	char code_path[1024], trace_path[1024];
	int i, k;

	jf_ptb_psb(b);
	jf_ptb_mode_exec(b, ptem_64bit);
	jf_ptb_psbend(b);
	jf_ptb_tip_pge(b, pt_ipc_sext_48, 0x1000);
	for (k = 0; k <= psbs; k++) {
		if (k) {
			/* A PSB+ inside the callee's loop: 4 KiB segments start here. */
			jf_ptb_psb(b);
			jf_ptb_mode_exec(b, ptem_64bit);
			jf_ptb_fup(b, pt_ipc_sext_48, 0x1010);
			jf_ptb_psbend(b);
		}
		for (i = 0; i < 515; i++)
			jf_ptb_tnt(b, loop);
	}
	/* out of the loop, the compressed return (T) to 1005, jmp 1000, call, and again */
	jf_ptb_tnt(b, "NNT");
	for (i = 0; i < 10; i++)
		jf_ptb_tnt(b, loop);
	jf_ptb_tnt(b, "NNT");
	jf_ptb_tip_pgd(b, pt_ipc_suppressed, 0);
	snprintf(code_path, sizeof(code_path), "%s/return-code.bin", jf_test_tmpdir());
	snprintf(trace_path, sizeof(trace_path), "%s/return-%d.pt", jf_test_tmpdir(), psbs);
	jf_test_write_file(code_path, code, sizeof(code));
	jf_test_write_file(trace_path, jf_ptb_bytes(b), jf_ptb_size(b));
	jf_ptb_free(b);
	snprintf(inputs, size, "--raw '%s:0x1000' --pt '%s'", code_path, trace_path);
}

static void test_return_across_psbs(void **state)
{
	static const char *const jobs[] = { "-j 2 --segment-size 4096", "-j 3 --segment-size 4096" };
	char inputs[4096];
	int psbs;

	for (psbs = 1; psbs <= 3; psbs++) {
		char *one, *blocks;

		write_return_across_psbs(psbs, inputs, sizeof(inputs));
		/* The one-thread decode has the call: no error. */
		one = run("", "stat", inputs, "-j 1");
		assert_non_null(strstr(one, "\nerrors          0\n"));
		free(one);
		compare(inputs, jobs, 2, "", 1);
		/* The segment of the return did not join: decoded on by the calling thread. */
		blocks = run("", "stat --decoder=libipt-block", inputs, jobs[0]);
		assert_null(strstr(blocks, " 0 decoded on serially"));
		assert_non_null(strstr(blocks, "decoded on serially"));
		free(blocks);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foo),
		cmocka_unit_test(test_foo_damaged),
		cmocka_unit_test(test_unzip),
		cmocka_unit_test(test_seams_decoded_on),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_recordings),
		cmocka_unit_test(test_analysis_commands),
		cmocka_unit_test(test_return_across_psbs),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
