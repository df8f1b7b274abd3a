/* Blocks cut at direct jumps after the decode (decoder/jump_split.c) against libipt's
 * block decoder cutting them itself (end_on_jump), on the recordings checked in under
 * traces/ (two JITs' and a plain program's). Both decodes run through
 * the command's own inputs (tools/jitflow/cli_inputs.c: the session, the zone filter,
 * PyPy's log), once with libipt's cut and once without it, the parts cut here; every
 * record must be the same, but for a part's trace offset (the block's, where libipt's
 * decoder was at the part's end). Then report's decode with the fast path on the buffers
 * that start once the code no longer changes, against libipt's block decoder on all:
 * every record the same. And the parts of blocks made here, field by field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cli_inputs.h"
#include "jitflow/codemap.h"
#include "jitflow/jump_split.h"
#include "jitflow/perf_session.h"
#include "test_support.h"

/* One decode's records in order, parts cut by `cut` when it is not NULL. */
struct pull {
	struct jf_cli_inputs in;
	struct jf_decoder *dec;
	struct jf_jump_split *cut;
	struct jf_flow block;  /* the block being given in parts */
	struct jf_flow part;   /* the part given last (the next is written over it) */
	uint32_t nparts, next;
};

/* The recording folder path; image_dir: where its program's files are (NULL: at the
 * recorded paths or in its code/ folder). */
static void open_pull_with(struct pull *p, const char *path, const char *image_dir, int cut,
			   int libipt_block)
{
	struct jf_error err = { 0 };

	memset(p, 0, sizeof(*p));
	jf_cli_inputs_init(&p->in);
	p->in.split_blocks = 1;
	p->in.cuts_jumps = cut;
	p->in.libipt_block = libipt_block;
	if (jf_cli_open_recording(&p->in, path, &err) < 0)
		fail_msg("%s: %s", path, err.msg);
	if (image_dir) {
		char *argv[] = { "--image-dir", (char *)image_dir };
		int i = 0;

		if (jf_cli_input_option(&p->in, 2, argv, &i, &err) != 1)
			fail_msg("--image-dir %s: %s", image_dir, err.msg);
	}
	p->dec = jf_cli_open_decoder(&p->in, &err);
	if (!p->dec)
		fail_msg("%s: %s", path, err.msg);
	assert_int_equal(p->in.jumps_left_in_blocks, cut);
	if (cut)
		assert_non_null(p->cut = jf_jump_split_new(p->in.map));
}

/* As report decodes (the fast path once the code is settled) */
static void open_pull(struct pull *p, const char *path, const char *image_dir, int cut)
{
	open_pull_with(p, path, image_dir, cut, 0);
}

static int next(struct pull *p, struct jf_flow *f)
{
	struct jf_error err = { 0 };
	int rc;

	if (p->next < p->nparts) {
		/* one buffer for the parts, each written over the one before, as report does */
		jf_jump_split_part(p->cut, &p->block, p->next++, &p->part);
		*f = p->part;
		return 1;
	}
	rc = jf_decoder_next(p->dec, f, &err);
	if (rc < 0)
		fail_msg("decode: %s", err.msg);
	if (rc > 0 && p->cut) {
		uint32_t n = jf_jump_split_record(p->cut, f);

		/* a block left whole keeps the mark for jump_split, which end_on_jump's records
		 * do not have (flow.h) */
		f->flags &= (uint16_t)~JF_FLOW_TIMED_AT_START;
		if (n > 1) {
			p->block = p->part = *f;
			p->nparts = n;
			p->next = 0;
			jf_jump_split_part(p->cut, &p->block, p->next++, &p->part);
			*f = p->part;
		}
	}
	return rc;
}

static void close_pull(struct pull *p)
{
	jf_jump_split_free(p->cut);
	jf_decoder_free(p->dec);
	jf_cli_inputs_fini(&p->in);
}

static int same_but_offset(const struct jf_flow *a, const struct jf_flow *b)
{
	struct jf_flow x = *a, y = *b;

	if (a->kind == JF_FLOW_BLOCK)
		x.offset = y.offset = 0;
	return jf_flow_same(&x, &y);
}

/* Pull both decodes to their ends; every record must be the same (but for a block's trace
 * offset when parts_offsets_differ: a part has its block's, libipt's has where its
 * decoder was at the part's end). Returns the blocks x ends at a direct jump. */
static unsigned long same_records(const char *path, struct pull *x, struct pull *y,
				  int part_offsets_differ)
{
	struct jf_flow a, b;
	unsigned long n = 0, jumps = 0;
	int ra, rb;

	do {
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		ra = next(x, &a);
		rb = next(y, &b);
		if (ra != rb || (ra > 0 && !(part_offsets_differ ? same_but_offset(&a, &b)
								 : jf_flow_same(&a, &b))))
			fail_msg("%s: record %lu differs: kind %u offset %#lx ip %#lx time %lu flags "
				 "%#x start %#lx last %#lx ninsn %u end %u next %#lx / kind %u offset "
				 "%#lx ip %#lx time %lu flags %#x start %#lx last %#lx ninsn %u end %u "
				 "next %#lx", path, n, a.kind, (unsigned long)a.offset,
				 (unsigned long)a.ip, (unsigned long)a.time, a.flags,
				 (unsigned long)a.u.block.start, (unsigned long)a.u.block.last,
				 a.u.block.ninsn, a.u.block.end, (unsigned long)a.u.block.next, b.kind,
				 (unsigned long)b.offset, (unsigned long)b.ip, (unsigned long)b.time,
				 b.flags, (unsigned long)b.u.block.start,
				 (unsigned long)b.u.block.last, b.u.block.ninsn, b.u.block.end,
				 (unsigned long)b.u.block.next);
		if (ra > 0 && a.kind == JF_FLOW_BLOCK && a.u.block.end == JF_END_JUMP)
			jumps++;
		n++;
	} while (ra > 0);
	return jumps;
}

/* libipt's cut at jumps against the parts cut here. Returns the number of blocks libipt
 * cut at a jump (parts before a block's last). */
static unsigned long compare(const char *path, const char *image_dir)
{
	struct pull libipt, cut;
	unsigned long jumps;

	open_pull(&libipt, path, image_dir, 0);
	open_pull(&cut, path, image_dir, 1);
	jumps = same_records(path, &libipt, &cut, 1);
	assert_int_equal(jf_jump_split_unwalked(cut.cut), 0);
	close_pull(&libipt);
	close_pull(&cut);
	return jumps;
}

/* The records report's decode gives (parts cut at jumps) with the fast path on the
 * perf.data buffers that start once the code is settled, and with libipt's block decoder
 * on all: every record the same, offsets included. Returns the first's session report. */
static struct jf_perf_session_report compare_decoders(const char *path, const char *image_dir)
{
	struct pull block, fast;
	struct jf_perf_session_report rep, none;

	open_pull_with(&block, path, image_dir, 1, 1);
	open_pull_with(&fast, path, image_dir, 1, 0);
	same_records(path, &block, &fast, 0);
	jf_perf_session_fast_report(block.in.perf_session, &none);
	jf_perf_session_fast_report(fast.in.perf_session, &rep);
	assert_int_equal(none.fast_buffers, 0);
	assert_int_equal(none.buffers, rep.buffers);
	close_pull(&block);
	close_pull(&fast);
	return rep;
}

/* On each recording: libipt's cut at jumps against the parts cut here (compare), and
 * report's decode with and without the fast path (compare_decoders). minivm-bridge's
 * runtime loads and patches its code in the first of its AUX buffers: the decoders after
 * it (a stitch across the cut, the second buffer) are the fast path's; recorded-fib has no
 * JIT code and its MMAPs come before the trace: all are. pypy-loop has one buffer, in
 * which PyPy compiles: the fast path's too, which leaves the code that PyPy's records
 * still change to libipt's block decoder. */
static void test_checked_in_recordings(void **state)
{
	static const char *const dirs[] = { "minivm-bridge", "pypy-loop", "recorded-fib" };
	char path[4096];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		/* recorded-fib's program is in its folder, not at the path it was recorded at */
		const char *image_dir = strcmp(dirs[i], "recorded-fib") ? NULL : path;
		struct jf_perf_session_report r;
		unsigned long jumps;

		snprintf(path, sizeof(path), "%s/traces/%s", jf_test_source_dir(), dirs[i]);
		jumps = compare(path, image_dir);
		printf("# %s: %lu blocks end at a direct jump\n", dirs[i], jumps);
		/* The JIT recordings jump into their traces and back to loop headers. */
		if (strcmp(dirs[i], "recorded-fib"))
			assert_true(jumps > 100);
		r = compare_decoders(path, image_dir);
		printf("# %s: %llu of %llu decoders the fast path's, over %llu bytes\n", dirs[i],
		       (unsigned long long)r.fast_buffers, (unsigned long long)r.buffers,
		       (unsigned long long)r.fast_bytes);
		if (i == 0)
			assert_true(r.fast_buffers > 0 && r.fast_buffers < r.buffers);
		else
			assert_true(r.fast_buffers > 0 && r.fast_buffers == r.buffers);
	}
}

/* A block record of ninsn 64-bit instructions from start to last. */
static struct jf_flow block_at(uint64_t start, uint64_t last, uint32_t ninsn)
{
	struct jf_flow f;

	memset(&f, 0, sizeof(f));
	f.kind = JF_FLOW_BLOCK;
	f.ip = f.u.block.start = start;
	f.u.block.last = last;
	f.u.block.ninsn = ninsn;
	f.u.block.isa = JF_ISA_X86_64;
	f.u.block.end = JF_END_RETURN;
	f.u.block.last_size = 1;
	f.u.block.next = 0x5000;
	return f;
}

/* The parts of a block with a jump, and a block capstone cannot walk: left whole and
 * counted (report states the count). */
static void test_parts_and_unwalkable_blocks(void **state)
{
	static const uint8_t code[] = {
		0x90,                   /* 0x1000 nop */
		0xeb, 0x01,             /* 0x1001 jmp 0x1004 */
		0xcc,
		0xc3,                   /* 0x1004 ret */
	};
	/* REX.W 0F AE /4 with a register operand: PTWRITE without its F3 prefix, which libipt
	 * decodes as an instruction and capstone 4 does not (found by fuzz_pt_decode) */
	static const uint8_t odd[] = { 0x48, 0x0f, 0xae, 0xe0, 0xeb, 0x00, 0xc3 };
	struct jf_codemap *map = jf_codemap_new();
	struct jf_jump_split *cut;
	struct jf_error err;
	struct jf_flow f, part;

	(void)state;
	assert_non_null(map);
	assert_int_equal(jf_codemap_add_bytes(map, code, sizeof(code), 0x1000, NULL, &err), 0);
	assert_int_equal(jf_codemap_add_bytes(map, odd, sizeof(odd), 0x2000, NULL, &err), 0);
	assert_non_null(cut = jf_jump_split_new(map));

	f = block_at(0x1000, 0x1004, 3);
	f.flags = JF_FLOW_HAS_TIME;
	f.time = 7;
	assert_int_equal(jf_jump_split_record(cut, &f), 2);
	part = f;
	jf_jump_split_part(cut, &f, 0, &part);
	assert_int_equal(part.u.block.start, 0x1000);
	assert_int_equal(part.u.block.last, 0x1001);
	assert_int_equal(part.u.block.ninsn, 2);
	assert_int_equal(part.u.block.end, JF_END_JUMP);
	assert_int_equal(part.u.block.next, 0x1003);
	assert_false(part.flags & JF_FLOW_HAS_TIME); /* no record of its source before it */
	jf_jump_split_part(cut, &f, 1, &part);
	assert_int_equal(part.ip, 0x1004);
	assert_int_equal(part.u.block.start, 0x1004);
	assert_int_equal(part.u.block.last, 0x1004);
	assert_int_equal(part.u.block.ninsn, 1);
	assert_int_equal(part.u.block.end, JF_END_RETURN);
	assert_int_equal(part.u.block.next, 0x5000);
	assert_int_equal(part.time, 7);
	assert_int_equal(jf_jump_split_unwalked(cut), 0);

	/* Timed at its start (an event's packets read before it, flow.h): the part before
	 * the jump takes the block's own time, not the previous record's (7), as libipt's
	 * end_on_jump decoder gives it (fuzz_pt_decode's seed
	 * jump-part-time-after-event-read-ahead.pt); no part keeps the mark. */
	f = block_at(0x1000, 0x1004, 3);
	f.flags = JF_FLOW_HAS_TIME | JF_FLOW_TIMED_AT_START;
	f.time = 9;
	assert_int_equal(jf_jump_split_record(cut, &f), 2);
	part = f;
	jf_jump_split_part(cut, &f, 0, &part);
	assert_int_equal(part.flags, JF_FLOW_HAS_TIME);
	assert_int_equal(part.time, 9);
	jf_jump_split_part(cut, &f, 1, &part);
	assert_int_equal(part.flags, JF_FLOW_HAS_TIME);
	assert_int_equal(part.time, 9);

	f = block_at(0x2000, 0x2006, 3);
	assert_int_equal(jf_jump_split_record(cut, &f), 1);
	assert_int_equal(jf_jump_split_unwalked(cut), 1);

	jf_jump_split_free(cut);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parts_and_unwalkable_blocks),
		cmocka_unit_test(test_checked_in_recordings),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
