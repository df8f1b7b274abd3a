/* libFuzzer target: the whole Intel PT decode path (libipt's block decoder, the tracing-state
 * checks, resynchronisation, loss accounting, the instruction walker) on arbitrary bytes as
 * the PT stream, over a small fixed code image.
 *
 * Build: cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DJITFLOW_FUZZ=ON
 * Run:   build-fuzz/decoder/fuzz_pt_decode -max_total_time=240 decoder/fuzz/corpus_pt
 *
 * Checked beyond "no crash": decoding ends (a bound on records per input byte), byte
 * accounting stays within the input, every block's offset lies inside the trace, the fast
 * counting path counts what the block decoder decoded (also under a second set of timing
 * parameters, and under a Kaby Lake's errata), and on 2 and 4 threads (segments of 16
 * bytes and more) gives the records and statistics it gives on one; the fast decoder that
 * returns blocks returns the block decoder's records, every one, field by field, read one
 * by one or in bulk (jf_decoder_next_batch), also under those errata; read as a compact
 * block stream (block_stream.h), every entry is the record it gives one by one, and the
 * stream decoded on two threads gives the same entries as on one; and the
 * blocks cut at their jumps after the decode (jump_split.h, what `jitflow report` does) are
 * the block decoder's end_on_jump blocks, but for a part's offset and the mark a block left
 * whole keeps (JF_FLOW_TIMED_AT_START). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/block_stream.h"
#include "jitflow/codemap.h"
#include "jitflow/decoder.h"
#include "jitflow/insn.h"
#include "jitflow/jump_split.h"
#include "jitflow/pt.h"
#include "jitflow/pt_fast.h"
#include "jitflow/pt_parallel.h"

#include "flow_buffer.h"

/* The code the seeds in corpus_pt/ were written for (tests/test_pt_encoded.c): a loop with
 * direct and indirect calls and jumps, returns and syscalls; 32-bit and 64-bit code for
 * mode switches; a PTWRITE. One seed is written for this code by hand:
 * seed-bc91ca6fd4edcc2c.pt, a TIP.PGE at the PTWRITE (a hand-over with no error to come),
 * then two PSB+s of three rounds of the loop each, where returning blocks the block
 * decoder's records join a fast decoder's started at the first (pt_fast_join.c, adopt;
 * after an error the block decoder resynchronises and the fast path resumes there first,
 * and this code map never changes, so the fuzzer rarely builds such a join itself). */
static const uint8_t prog[] = {
	0xb9, 0x03, 0x00, 0x00, 0x00, /* 0x400000 mov ecx, 3 */
	0xff, 0xc9,                   /* 0x400005 dec ecx */
	0x75, 0xfc,                   /* 0x400007 jnz 0x400005 */
	0xe8, 0x12, 0x00, 0x00, 0x00, /* 0x400009 call 0x400020 */
	0xff, 0xd0,                   /* 0x40000e call rax */
	0xff, 0xe3,                   /* 0x400010 jmp rbx */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x90,                         /* 0x400020 nop */
	0xc3,                         /* 0x400021 ret */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x48, 0x89, 0xc8,             /* 0x400030 mov rax, rcx */
	0xc3,                         /* 0x400033 ret */
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x0f, 0x05,                   /* 0x400040 syscall */
	0x90,                         /* 0x400042 nop */
	0x0f, 0x05,                   /* 0x400043 syscall */
	0xf3, 0x48, 0x0f, 0xae, 0xe0, /* 0x400045 ptwrite rax */
	0xeb, 0xb7,                   /* 0x40004a jmp 0x400003 (into the middle of mov) */
};
static const uint8_t code32[] = { 0x48, 0xff, 0xe0 };      /* 0x1000: dec eax; jmp eax */
static const uint8_t code64[] = { 0x48, 0xff, 0xe0 };      /* 0x2000: jmp rax */

/* Made again for every input: libipt keeps a block cache in the image's sections, which a
 * decoder of an earlier input (with other end_on_call) would leave behind for this one.
 * With one map for the whole campaign, an input's outcome depended on the inputs before it:
 * a mismatch found after 60 k executions (2026-11-25) did not replay on its own. */
static struct jf_codemap *map;
static struct jf_insn_cache *insns;

static void add(struct jf_codemap *to, const void *bytes, size_t size, uint64_t vaddr)
{
	struct jf_error err;

	if (jf_codemap_add_bytes(to, bytes, size, vaddr, NULL, &err) < 0) {
		fprintf(stderr, "fuzz_pt_decode: %s\n", err.msg);
		abort();
	}
}

/* A new map of the code. */
static struct jf_codemap *code_map(void)
{
	struct jf_codemap *m = jf_codemap_new();

	if (!m)
		abort();
	add(m, prog, sizeof(prog), 0x400000);
	add(m, code32, sizeof(code32), 0x1000);
	add(m, code64, sizeof(code64), 0x2000);
	return m;
}

static void count_insn(void *ctx, uint64_t ip)
{
	(void)ip;
	++*(uint64_t *)ctx;
}

/* A hash of the errors and losses, in order: their kinds, offsets, IPs, error codes and
 * bytes lost (the counting path returns them as the block decoder does). */
static uint64_t ref_losses;

static uint64_t mix_loss(uint64_t h, const struct jf_flow *f)
{
	uint64_t v[4] = { f->kind, f->offset, f->ip, 0 };
	size_t i;

	if (f->kind != JF_FLOW_ERROR && f->kind != JF_FLOW_LOST)
		return h;
	v[3] = f->kind == JF_FLOW_ERROR ? (uint64_t)(int64_t)f->u.error.code : f->u.lost.bytes;
	for (i = 0; i < 4; i++)
		h = (h ^ v[i]) * 0x100000001b3ull;
	return h;
}

/* The fast counting path (pt_fast.c) must count exactly what the block decoder decoded,
 * and report the same errors and losses at the same offsets and IPs. */
static void same_counts_fast(const struct jf_pt_config *cfg, const struct jf_decode_stats *ref)
{
	struct jf_error err;
	struct jf_decoder *dec = jf_pt_fast_counter_new(cfg, map, &err);
	const struct jf_decode_stats *st;
	struct jf_flow f;
	uint64_t records = 0, losses = 0;
	int rc;

	if (!dec)
		abort();
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		if (++records > 64 * (uint64_t)cfg->size + 64)
			abort();
		losses = mix_loss(losses, &f);
	}
	st = jf_decoder_stats(dec);
	if (rc >= 0 && losses != ref_losses) {
		fprintf(stderr, "fuzz_pt_decode: the fast path's errors and losses differ from "
			"the block decoder's (offsets, IPs, codes, bytes)\n");
		abort();
	}
	if (rc < 0 || st->insns != ref->insns || st->events != ref->events ||
	    st->errors != ref->errors || st->overflows != ref->overflows ||
	    st->lost_bytes != ref->lost_bytes || st->has_time != ref->has_time ||
	    st->first_time != ref->first_time || st->last_time != ref->last_time) {
		fprintf(stderr, "fuzz_pt_decode: rc %d; insns, events, errors, overflows, lost bytes, "
			"has time, first time, last time: the fast path %llu %llu %llu %llu %llu "
			"%d %llu %llu; the block decoder %llu %llu %llu %llu %llu %d %llu %llu\n", rc,
			(unsigned long long)st->insns, (unsigned long long)st->events,
			(unsigned long long)st->errors, (unsigned long long)st->overflows,
			(unsigned long long)st->lost_bytes, st->has_time,
			(unsigned long long)st->first_time, (unsigned long long)st->last_time,
			(unsigned long long)ref->insns, (unsigned long long)ref->events,
			(unsigned long long)ref->errors, (unsigned long long)ref->overflows,
			(unsigned long long)ref->lost_bytes, ref->has_time,
			(unsigned long long)ref->first_time, (unsigned long long)ref->last_time);
		abort();
	}
	jf_decoder_free(dec);
}

/* Counting under cfg (count_plain_events either way) against the block decoder under it,
 * its errors and losses included. */
static void same_counts_under(struct jf_pt_config cfg)
{
	struct jf_decode_stats ref;
	struct jf_error err;
	struct jf_decoder *dec;
	struct jf_flow f;
	uint64_t records = 0, given_losses = ref_losses;
	int rc;

	cfg.count_plain_events = 0;
	dec = jf_pt_decoder_new(&cfg, map, &err);
	if (!dec)
		abort();
	ref_losses = 0;
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		if (++records > 64 * (uint64_t)cfg.size + 64)
			abort();
		ref_losses = mix_loss(ref_losses, &f);
	}
	if (rc < 0)
		abort();
	ref = *jf_decoder_stats(dec);
	jf_decoder_free(dec);
	same_counts_fast(&cfg, &ref);
	cfg.count_plain_events = 1;
	same_counts_fast(&cfg, &ref);
	ref_losses = given_losses;
}

/* Counting under other timing parameters, against the block decoder under them: no
 * nominal frequency (CBRs then do not calibrate) and an MTC frequency whose bits a TMA
 * gives only in part (libipt estimates the rest at the next MTC). */
static void same_counts_other_timing(const struct jf_pt_config *given)
{
	struct jf_pt_config cfg = *given;

	cfg.nom_freq = 0;
	cfg.mtc_freq = 9;
	same_counts_under(cfg);
}

/* The next record of dec read in bulk (jf_decoder_next_batch): *pos of the *n in *batch. */
static int next_in_batches(struct jf_decoder *dec, const struct jf_flow **batch, size_t *n,
			   size_t *pos, struct jf_flow *f, struct jf_error *err)
{
	int rc;

	if (*pos == *n) {
		if ((rc = jf_decoder_next_batch(dec, batch, n, err)) <= 0)
			return rc;
		*pos = 0;
	}
	*f = (*batch)[(*pos)++];
	return 1;
}

/* A compact block stream (block_stream.h) read entry by entry, each turned back into its
 * record. */
struct stream_reader {
	struct jf_block_stream *s;
	struct jf_block_run run;
	size_t pos, rec;
	struct jf_flow prev;
	int has_prev;
};

/* The next entry's record; a block id's gets offset (the one field it does not keep). */
static int next_in_stream(struct stream_reader *r, uint64_t offset, struct jf_flow *f,
			  struct jf_error *err)
{
	int rc;

	if (r->pos == r->run.n) {
		if ((rc = jf_block_stream_next(r->s, &r->run, err)) <= 0)
			return rc;
		r->pos = r->rec = 0;
	}
	if (r->run.ids[r->pos] == JF_BLOCK_STREAM_RECORD) {
		if (r->rec >= r->run.nrecords)
			abort();
		*f = r->run.records[r->rec++];
	} else {
		if (!jf_block_stream_block(r->s, r->run.ids[r->pos]))
			abort();
		jf_block_stream_record(r->s, r->run.ids[r->pos], r->has_prev ? &r->prev : NULL, f);
		f->offset = offset;
	}
	if (++r->pos == r->run.n && r->rec != r->run.nrecords)
		abort();
	r->prev = *f;
	r->has_prev = 1;
	return 1;
}

/* The fast decoder read as a compact block stream gives, entry for entry, the records the
 * same decoder gives one by one (jf_decoder_next), and counts them the same. */
static void same_records_in_stream(const struct jf_pt_config *given)
{
	struct jf_pt_config cfg = *given;
	struct jf_codemap *stream_map = code_map(), *one_map = code_map();
	struct stream_reader r = { 0 };
	struct jf_error err;
	struct jf_decoder *streamed, *one;
	const struct jf_decode_stats *sa, *sb;
	struct jf_flow a, b;
	uint64_t n = 0;
	int ra, rb;

	cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	streamed = jf_pt_fast_decoder_new(&cfg, stream_map, &err);
	one = jf_pt_fast_decoder_new(&cfg, one_map, &err);
	if (!streamed || !one || !(r.s = jf_block_stream_new(streamed, &err)))
		abort();
	do {
		rb = jf_decoder_next(one, &b, &err);
		ra = next_in_stream(&r, rb > 0 ? b.offset : 0, &a, &err);
		if (ra != rb || (rb > 0 && !jf_flow_same(&a, &b))) {
			fprintf(stderr, "fuzz_pt_decode: entry %llu of the block stream differs: "
				"%d %s at ip 0x%llx, jf_decoder_next's %d %s at 0x%llx ip 0x%llx\n",
				(unsigned long long)n, ra,
				jf_flow_kind_name((enum jf_flow_kind)a.kind),
				(unsigned long long)a.ip, rb,
				jf_flow_kind_name((enum jf_flow_kind)b.kind),
				(unsigned long long)b.offset, (unsigned long long)b.ip);
			abort();
		}
		n++;
	} while (rb > 0);
	/* The stream counts what it reads itself. */
	sa = jf_decoder_stats(streamed);
	sb = jf_decoder_stats(one);
	if (sa->blocks != sb->blocks || sa->insns != sb->insns || sa->events != sb->events ||
	    sa->errors != sb->errors || sa->overflows != sb->overflows ||
	    sa->lost_bytes != sb->lost_bytes || sa->lost_insns != sb->lost_insns ||
	    sa->has_time != sb->has_time || sa->first_time != sb->first_time ||
	    sa->last_time != sb->last_time ||
	    memcmp(sa->errors_by_code, sb->errors_by_code, sizeof(sa->errors_by_code))) {
		fprintf(stderr, "fuzz_pt_decode: the block stream's statistics differ\n");
		abort();
	}
	jf_block_stream_free(r.s);
	jf_decoder_free(streamed);
	jf_decoder_free(one);
	jf_codemap_free(stream_map);
	jf_codemap_free(one_map);
}

/* The block stream decoded on two threads (jf_pt_parallel_block_stream_new: each worker
 * makes its part's ids, the calling thread renumbers them) against the stream over one
 * fast decoder, entry by entry as they are given: the same ids and records. */
struct parallel_stream_check {
	struct stream_reader one;
	struct jf_flow prev;
	int has_prev;
	uint64_t n;
};

static int same_as_one_stream(void *ctx, const struct jf_block_stream *s,
			      const struct jf_block_run *run, struct jf_error *err)
{
	struct parallel_stream_check *c = ctx;
	struct jf_flow a, b;
	size_t i, r = 0;
	int is_id;

	for (i = 0; i < run->n; i++, c->n++) {
		is_id = run->ids[i] != JF_BLOCK_STREAM_RECORD;
		if (is_id)
			jf_block_stream_record(s, run->ids[i], c->has_prev ? &c->prev : NULL, &a);
		else
			a = run->records[r++];
		if (next_in_stream(&c->one, 0, &b, err) <= 0 ||
		    is_id != (c->one.run.ids[c->one.pos - 1] != JF_BLOCK_STREAM_RECORD) ||
		    !jf_flow_same(&a, &b)) {
			fprintf(stderr, "fuzz_pt_decode: entry %llu of the block stream on two "
				"threads (%s %s at ip 0x%llx) is not one thread's\n",
				(unsigned long long)c->n, is_id ? "an id for" : "a record,",
				jf_flow_kind_name((enum jf_flow_kind)a.kind),
				(unsigned long long)a.ip);
			abort();
		}
		c->prev = a;
		c->has_prev = 1;
	}
	if (r != run->nrecords)
		abort();
	return 0;
}

static void same_entries_in_parallel_stream(const struct jf_pt_config *given)
{
	struct jf_pt_parallel_options opt = { .jobs = 2, .segment_size = 16, .fast = 1 };
	struct jf_pt_config cfg = *given;
	struct jf_codemap *par_map = code_map(), *one_map = code_map();
	struct parallel_stream_check c;
	struct jf_block_stream *par;
	struct jf_decoder *one;
	struct jf_error err;
	struct jf_flow f;
	int rc, one_rc;

	memset(&c, 0, sizeof(c));
	cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	opt.no_joins = cfg.size & 2;
	one = jf_pt_fast_decoder_new(&cfg, one_map, &err);
	par = jf_pt_parallel_block_stream_new(&cfg, par_map, &opt, NULL, &err);
	if (!one || !par || !(c.one.s = jf_block_stream_new(one, &err)))
		abort();
	rc = jf_block_stream_run(par, same_as_one_stream, &c, &err);
	/* One thread ends there too, or fails as well. */
	while ((one_rc = next_in_stream(&c.one, 0, &f, &err)) > 0 && rc < 0)
		;
	if ((rc == 0 && one_rc != 0) || (rc < 0 && one_rc >= 0) ||
	    (rc == 0 && (jf_block_stream_stats(par)->insns != jf_decoder_stats(one)->insns ||
			 jf_block_stream_stats(par)->events != jf_decoder_stats(one)->events ||
			 jf_block_stream_stats(par)->errors != jf_decoder_stats(one)->errors))) {
		fprintf(stderr, "fuzz_pt_decode: the block stream on two threads ends with %d "
			"after %llu entries, one thread's with %d\n", rc,
			(unsigned long long)c.n, one_rc);
		abort();
	}
	jf_block_stream_free(par);
	jf_block_stream_free(c.one.s);
	jf_decoder_free(one);
	jf_codemap_free(par_map);
	jf_codemap_free(one_map);
}

/* jf_pt_fast_decoder_new, on one thread (read one by one, or in bulk for every other
 * input) and on two (segments of 16 bytes and more), must return what jf_pt_decoder_new
 * returns, record for record. */
static void same_records_with_blocks(const struct jf_pt_config *given, int threads)
{
	struct jf_pt_parallel_options opt = { .jobs = 2, .segment_size = 16, .fast = 1 };
	struct jf_pt_config cfg = *given;
	struct jf_error err;
	struct jf_decoder *fast, *ref;
	struct jf_flow a, b;
	const struct jf_flow *batch = NULL;
	size_t in_batch = 0, pos = 0;
	uint64_t n = 0;
	int ra, rb, bulk = threads == 1 && (given->size & 4);

	/* The same code in maps of their own, new for each decoder: libipt keeps its block
	 * cache in the image's sections and reuses an entry whatever the execution mode and
	 * the options of the decoder that made it, so its blocks would depend on what was
	 * decoded before (inputs and decoders earlier in this process). */
	struct jf_codemap *fast_map = code_map(), *ref_map = code_map();

	cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	opt.no_joins = cfg.size & 2;
	fast = threads > 1 ? jf_pt_parallel_decoder_new(&cfg, fast_map, &opt, NULL, &err)
			   : jf_pt_fast_decoder_new(&cfg, fast_map, &err);
	ref = jf_pt_decoder_new(&cfg, ref_map, &err);
	if (!fast || !ref)
		abort();
	do {
		ra = bulk ? next_in_batches(fast, &batch, &in_batch, &pos, &a, &err)
			  : jf_decoder_next(fast, &a, &err);
		rb = jf_decoder_next(ref, &b, &err);
		if (ra != rb || (rb > 0 && !jf_flow_same(&a, &b))) {
			fprintf(stderr, "fuzz_pt_decode: record %llu differs: the fast decoder (%d "
				"threads) %d %s at 0x%llx ip 0x%llx, the block decoder %d %s at "
				"0x%llx ip 0x%llx\n", (unsigned long long)n, threads, ra,
				jf_flow_kind_name((enum jf_flow_kind)a.kind),
				(unsigned long long)a.offset, (unsigned long long)a.ip, rb,
				jf_flow_kind_name((enum jf_flow_kind)b.kind),
				(unsigned long long)b.offset, (unsigned long long)b.ip);
			abort();
		}
		n++;
	} while (rb > 0);
	jf_decoder_free(fast);
	jf_decoder_free(ref);
	jf_codemap_free(fast_map);
	jf_codemap_free(ref_map);
}

/* The next record of a decoder without end_on_jump, its blocks cut by cut (the block in
 * parts in *held, *nparts of them, *next given so far). */
static int next_cut(struct jf_decoder *dec, struct jf_jump_split *cut, struct jf_flow *held,
		    uint32_t *nparts, uint32_t *next, struct jf_flow *f)
{
	struct jf_error err;
	uint32_t n;
	int rc;

	if (*next < *nparts) {
		jf_jump_split_part(cut, held, (*next)++, f);
		return 1;
	}
	rc = jf_decoder_next(dec, f, &err);
	*nparts = *next = 0;
	if (rc > 0 && (n = jf_jump_split_record(cut, f)) > 1) {
		*held = *f;
		*nparts = n;
		jf_jump_split_part(cut, held, (*next)++, f);
	}
	return rc;
}

/* Block a was left whole, counted as not walkable (capstone could not decode one of its
 * instructions that libipt did): end_on_jump's blocks from *b on must be its instructions,
 * back to back, from its start to its last. Returns the decoder's status after them, *b
 * the last of them with a's count, so that it compares equal to a when all is well. */
static int same_as_unwalked(struct jf_decoder *ref, const struct jf_flow *a, struct jf_flow *b)
{
	struct jf_error err;
	uint64_t start = b->u.block.start, ninsn = 0;
	int rc = 1;

	if (b->kind != JF_FLOW_BLOCK || start != a->u.block.start)
		return rc;
	for (;;) {
		ninsn += b->u.block.ninsn;
		if (ninsn >= a->u.block.ninsn || b->u.block.end != JF_END_JUMP)
			break;
		rc = jf_decoder_next(ref, b, &err);
		if (rc <= 0 || b->kind != JF_FLOW_BLOCK)
			return rc;
	}
	if (ninsn == a->u.block.ninsn) {
		b->ip = b->u.block.start = start;
		b->u.block.ninsn = a->u.block.ninsn;
	}
	return rc;
}

/* A block decoded without end_on_jump and cut at its direct jumps by jump_split.c must be
 * the blocks libipt's end_on_jump gives, record for record; only a part's offset is its
 * block's. f is written over from part to part, as `jitflow report` does. */
static void same_parts_as_end_on_jump(const struct jf_pt_config *given)
{
	struct jf_pt_config cfg = *given;
	struct jf_codemap *cut_map = code_map(), *ref_map = code_map();
	struct jf_jump_split *cut = jf_jump_split_new(cut_map);
	struct jf_decoder *whole, *ref;
	struct jf_flow a, b, held, x;
	uint32_t nparts = 0, next = 0;
	uint64_t n = 0;
	struct jf_error err;
	int ra, rb;

	cfg.end_on_call = 1;
	cfg.end_on_jump = 0;
	whole = jf_pt_decoder_new(&cfg, cut_map, &err);
	cfg.end_on_jump = 1;
	ref = jf_pt_decoder_new(&cfg, ref_map, &err);
	if (!cut || !whole || !ref)
		abort();
	do {
		uint64_t unwalked = jf_jump_split_unwalked(cut);

		ra = next_cut(whole, cut, &held, &nparts, &next, &a);
		rb = jf_decoder_next(ref, &b, &err);
		if (ra > 0 && jf_jump_split_unwalked(cut) != unwalked)
			rb = same_as_unwalked(ref, &a, &b);
		x = a;
		/* A block left whole keeps the mark end_on_jump's decoder has no use for. */
		x.flags &= (uint16_t)~JF_FLOW_TIMED_AT_START;
		if (ra > 0 && rb > 0 && x.kind == JF_FLOW_BLOCK)
			x.offset = b.offset;
		if (ra != rb || (rb > 0 && !jf_flow_same(&x, &b))) {
			fprintf(stderr, "fuzz_pt_decode: record %llu differs: cut at jumps %d %s ip "
				"0x%llx ninsn %u, end_on_jump %d %s ip 0x%llx ninsn %u\n",
				(unsigned long long)n, ra,
				jf_flow_kind_name((enum jf_flow_kind)a.kind), (unsigned long long)a.ip,
				a.kind == JF_FLOW_BLOCK ? a.u.block.ninsn : 0, rb,
				jf_flow_kind_name((enum jf_flow_kind)b.kind), (unsigned long long)b.ip,
				b.kind == JF_FLOW_BLOCK ? b.u.block.ninsn : 0);
			abort();
		}
		n++;
	} while (rb > 0);
	jf_jump_split_free(cut);
	jf_decoder_free(whole);
	jf_decoder_free(ref);
	jf_codemap_free(cut_map);
	jf_codemap_free(ref_map);
}

/* jf_pt_parallel_run: parts that keep their records (flow_buffer.h), checked as they are
 * taken against one fast decoder's records (ref). */
struct parts_check {
	struct jf_decoder *ref;
	uint64_t n;
};

static int kept_take(void *ctx, void *self, uint64_t reached, struct jf_error *err)
{
	struct parts_check *c = ctx;
	struct jf_flow_buffer *k = self;
	struct jf_flow a, b;
	size_t pos;

	(void)reached;
	for (pos = 0; pos < k->len; c->n++) {
		pos = jf_flow_buffer_get(k, pos, &a);
		if (jf_decoder_next(c->ref, &b, err) <= 0 || !jf_flow_same(&a, &b)) {
			fprintf(stderr, "fuzz_pt_decode: record %llu of the parts (-j 2) is not one "
				"thread's\n", (unsigned long long)c->n);
			abort();
		}
	}
	jf_flow_buffer_part_free(k);
	return 0;
}

/* Decoded on two threads into parts (segments of 16 bytes and more), the parts taken in
 * order must hold the records of one thread, each once, and its statistics. */
static void same_records_in_parts(const struct jf_pt_config *given)
{
	static const struct jf_pt_part_ops ops = { jf_flow_buffer_part_new,
						    jf_flow_buffer_part_flow, kept_take,
						    jf_flow_buffer_part_free, NULL };
	struct jf_pt_parallel_options opt = { .jobs = 2, .segment_size = 16, .fast = 1,
					      .parts = &ops };
	struct jf_pt_config cfg = *given;
	struct jf_codemap *par_map = code_map(), *ref_map = code_map();
	struct parts_check c = { NULL, 0 };
	const struct jf_decode_stats *one, *two;
	struct jf_decoder *dec;
	struct jf_error err;
	struct jf_flow b;
	int rc, ref_rc;

	cfg.end_on_call = cfg.end_on_jump = cfg.join_cache_splits = 1;
	opt.no_joins = cfg.size & 2;
	opt.parts_ctx = &c;
	c.ref = jf_pt_fast_decoder_new(&cfg, ref_map, &err);
	dec = jf_pt_parallel_decoder_new(&cfg, par_map, &opt, NULL, &err);
	if (!c.ref || !dec)
		abort();
	rc = jf_pt_parallel_run(dec, &err);
	if (rc <= 0) {
		/* One thread ends there too (or fails as well). */
		ref_rc = jf_decoder_next(c.ref, &b, &err);
		one = jf_decoder_stats(c.ref);
		two = jf_decoder_stats(dec);
		if ((rc == 0 && ref_rc != 0) || (rc < 0 && ref_rc >= 0) ||
		    (rc == 0 && (one->insns != two->insns || one->blocks != two->blocks ||
				 one->events != two->events || one->errors != two->errors ||
				 one->lost_bytes != two->lost_bytes ||
				 one->has_time != two->has_time ||
				 one->first_time != two->first_time ||
				 one->last_time != two->last_time))) {
			fprintf(stderr, "fuzz_pt_decode: parts (-j 2): rc %d, one thread %d after "
				"%llu records; insns %llu %llu, events %llu %llu\n", rc, ref_rc,
				(unsigned long long)c.n, (unsigned long long)two->insns,
				(unsigned long long)one->insns, (unsigned long long)two->events,
				(unsigned long long)one->events);
			abort();
		}
	}
	jf_decoder_free(dec);
	jf_decoder_free(c.ref);
	jf_codemap_free(par_map);
	jf_codemap_free(ref_map);
}

/* The fast path's records (each record's kind, offset and ip, hashed) and statistics. */
static uint64_t fast_records(struct jf_decoder *dec, struct jf_decode_stats *st, int *rc)
{
	struct jf_error err;
	struct jf_flow f;
	uint64_t h = 0;

	while ((*rc = jf_decoder_next(dec, &f, &err)) > 0)
		h = (h ^ f.kind ^ (f.offset << 8) ^ (f.ip << 24) ^ f.time) * 0x100000001b3ull;
	*st = *jf_decoder_stats(dec);
	jf_decoder_free(dec);
	return h;
}

/* pt_parallel_count.c on `jobs` threads must give what one thread gives. */
static void same_on_threads(const struct jf_pt_config *cfg, int jobs)
{
	struct jf_pt_parallel_options opt = { .jobs = jobs, .segment_size = 16 };
	struct jf_decode_stats one, two;
	struct jf_error err;
	struct jf_decoder *dec;
	uint64_t h1, h2;
	int rc1, rc2;

	dec = jf_pt_fast_counter_new(cfg, map, &err);
	if (!dec)
		abort();
	h1 = fast_records(dec, &one, &rc1);
	opt.no_joins = cfg->size & 2;
	/* stat's default: segments cut guided, large first, down to 16 bytes at the end. */
	opt.segment_max = cfg->size & 4 ? cfg->size : 0;
	dec = jf_pt_parallel_counter_new(cfg, map, &opt, NULL, &err);
	if (!dec)
		abort();
	h2 = fast_records(dec, &two, &rc2);
	if (rc1 != rc2 || h1 != h2 || one.insns != two.insns || one.blocks != two.blocks ||
	    one.events != two.events || one.errors != two.errors ||
	    one.lost_bytes != two.lost_bytes || one.has_time != two.has_time ||
	    one.first_time != two.first_time || one.last_time != two.last_time) {
		fprintf(stderr, "fuzz_pt_decode: -j %d differs from -j 1: insns %llu %llu, blocks "
			"%llu %llu, events %llu %llu, records %s\n", jobs,
			(unsigned long long)one.insns, (unsigned long long)two.insns,
			(unsigned long long)one.blocks, (unsigned long long)two.blocks,
			(unsigned long long)one.events, (unsigned long long)two.events,
			h1 == h2 ? "same" : "differ");
		abort();
	}
}

/* Under the errata of a Kaby Lake, the CPU the recorder's recordings name (libipt's
 * workarounds of BDM70: a PSB+'s FUP ignored before a TIP.PGE; SKD007: an OVF inside a
 * CYC; SKD010, SKD022, SKL168), counting and returning blocks against the block decoder
 * under them. */
static void same_under_errata(const struct jf_pt_config *given)
{
	struct jf_pt_config cfg = *given;

	cfg.cpu_family = 6;
	cfg.cpu_model = 0x9e;
	cfg.cpu_stepping = 9;
	same_counts_under(cfg);
	same_records_with_blocks(&cfg, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jf_pt_config cfg = { 0 };
	struct jf_error err;
	struct jf_decoder *dec;
	struct jf_flow f;
	const struct jf_decode_stats *st;
	uint64_t records = 0, walked = 0;
	int rc;

	map = code_map();
	insns = jf_insn_cache_new(map);
	if (!insns)
		abort();
	cfg.trace = data;
	cfg.size = size;
	/* Timing parameters set, so that TSC/MTC/CYC/CBR take their full paths. */
	cfg.cpuid_0x15_eax = 1;
	cfg.cpuid_0x15_ebx = 2;
	cfg.mtc_freq = 4;
	cfg.nom_freq = 4;
	cfg.conv = (struct jf_tsc_conversion){ 1, 1, 3, 1000 };
	cfg.end_on_call = size & 1;
	ref_losses = 0;
	dec = jf_pt_decoder_new(&cfg, map, &err);
	if (!dec) {
		fprintf(stderr, "fuzz_pt_decode: %s\n", err.msg);
		abort();
	}
	while ((rc = jf_decoder_next(dec, &f, &err)) > 0) {
		/* Each record consumes trace or instructions; a block has at most 65535
		 * instructions (libipt), so records stay proportional to the input. */
		if (++records > 64 * (uint64_t)size + 64) {
			fprintf(stderr, "fuzz_pt_decode: %llu records from %zu bytes: no end\n",
				(unsigned long long)records, size);
			abort();
		}
		if (f.offset > size)
			abort();
		if (f.kind == JF_FLOW_BLOCK)
			jf_block_walk(insns, &f.u.block, count_insn, &walked, NULL);
		ref_losses = mix_loss(ref_losses, &f);
	}
	if (rc < 0) {
		fprintf(stderr, "fuzz_pt_decode: fatal: %s\n", err.msg);
		abort();
	}
	st = jf_decoder_stats(dec);
	if (st->lost_bytes > size || st->trace_bytes != size)
		abort();
	same_counts_fast(&cfg, st);
	same_on_threads(&cfg, 2);
	/* Counting as `jitflow stat` does: events counted, not returned (pt.h); on 4 threads
	 * too, where seams meet segments a worker decoded while the one before was still
	 * being decoded. */
	cfg.count_plain_events = 1;
	same_counts_fast(&cfg, st);
	same_on_threads(&cfg, 2);
	same_on_threads(&cfg, 4);
	cfg.count_plain_events = 0;
	same_counts_other_timing(&cfg);
	same_under_errata(&cfg);
	same_records_with_blocks(&cfg, 1);
	same_records_with_blocks(&cfg, 2);
	same_records_in_stream(&cfg);
	same_entries_in_parallel_stream(&cfg);
	same_records_in_parts(&cfg);
	same_parts_as_end_on_jump(&cfg);
	jf_decoder_free(dec);
	jf_insn_cache_free(insns);
	jf_codemap_free(map);
	return 0;
}
