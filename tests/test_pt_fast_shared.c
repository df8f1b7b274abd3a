/* The fast path's entries shared between threads (decoder/pt_fast_shared.h), on
 * hand-assembled code whose semantics fix the expected values (written out below):
 * - a block or TNT payload path one cache decoded is what another cache attached to the
 *   same table answers, without decoding the code (its own map holds other code at that
 *   address, so an answer it decoded itself would differ);
 * - an entry taken from the table is kept in the cache under its own code map version (a
 *   second lookup is a hit);
 * - threads that look up and publish the same entries at the same time each get the
 *   entries the code fixes (races: build with CMAKE_C_FLAGS=-fsanitize=thread and run
 *   this test and the -j ones there);
 * - the pages a table's entries take are those of the entries published, not spread over
 *   the whole table (this thread's page faults while it publishes).
 * stat -j N against stat -j 1 on real captures (test_parallel, test_pt_parallel_count)
 * checks the decoders that use it. */
#include "test_support.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "jitflow/codemap.h"
#include "jitflow/insn.h"
#include "pt_fast_blocks.h"
#include "pt_fast_payloads.h"
#include "pt_fast_shared.h"

static const uint8_t code[] = {
	0xe8, 0x03, 0x00, 0x00, 0x00, /* 1000: call 1008 */
	0x75, 0xf9,                   /* 1005: jne 1000 */
	0x90,                         /* 1007: nop */
	0x74, 0x01,                   /* 1008: je 100b */
	0x90,                         /* 100a: nop */
	0xc3,                         /* 100b: ret */
	0xeb, 0x02,                   /* 100c: jmp 1010 */
	0x90, 0x90,                   /* 100e-100f: nop */
	0xff, 0xe0,                   /* 1010: jmp rax */
};

/* Other code at the same addresses: a return at 1000. */
static const uint8_t other[] = { 0xc3 };

/* A map, its instruction cache, and the counting caches over them (blocks follow jumps). */
struct caches {
	struct jf_codemap *map;
	struct jf_insn_cache *insns;
	struct jf_fast_blocks *blocks;
	struct jf_payloads *payloads;
	uint64_t gen;
};

static void caches_new(struct caches *c, const uint8_t *bytes, size_t n,
		       struct jf_fast_shared *shared)
{
	struct jf_error err = { "" };

	c->map = jf_codemap_new();
	assert_int_equal(jf_codemap_add_bytes(c->map, bytes, n, 0x1000, "code", &err), 0);
	c->insns = jf_insn_cache_new(c->map);
	c->blocks = jf_fast_blocks_new(c->insns, c->map, 6, 0);
	assert_non_null(c->blocks);
	c->payloads = jf_payloads_new(c->blocks, 6);
	assert_non_null(c->payloads);
	c->blocks->shared = shared;
	c->payloads->shared = shared;
	c->gen = jf_codemap_generation(c->map);
}

static void caches_free(struct caches *c)
{
	jf_payloads_free(c->payloads);
	jf_fast_blocks_free(c->blocks);
	jf_insn_cache_free(c->insns);
	jf_codemap_free(c->map);
}

/* The block at 1000 of `code`: the call, alone. */
static void is_call_block(const struct jf_fast_block *b)
{
	assert_int_equal(b->start, 0x1000);
	assert_int_equal(b->end, JF_FAST_CALL);
	assert_int_equal(b->ninsn, 1);
	assert_int_equal(b->last, 0x1000);
	assert_int_equal(b->next, 0x1005);
	assert_int_equal(b->target, 0x1008);
}

/* The path of payload "taken, taken, taken" from 1000 in `code`: call 1008, je taken to
 * 100b, ret (compressed, to 1005: a taken bit), jne taken to 1000; 4 blocks, 4
 * instructions, a push of 1005 then its pop. */
static void is_taken3_path(const struct jf_payload_path *p)
{
	assert_int_equal(p->used, 3);
	assert_int_equal(p->blocks, 4);
	assert_int_equal(p->insns, 4);
	assert_int_equal(p->end, 0x1000);
	assert_int_equal(p->nops, 2);
	assert_int_equal(p->pops, 2);
	assert_int_equal(p->push[0], 0x1005);
}

static void test_block_from_another_cache(void **state)
{
	struct jf_fast_shared *s = jf_fast_shared_new();
	struct caches a, b;
	const struct jf_fast_block *blk;
	struct jf_fast_block copy;

	(void)state;
	assert_non_null(s);
	caches_new(&a, code, sizeof(code), s);
	caches_new(&b, other, sizeof(other), s);
	assert_int_equal(jf_fast_shared_block_get(s, JF_ISA_X86_64, 0x1000, &copy), 0);

	is_call_block(jf_fast_block_at(a.blocks, JF_ISA_X86_64, 0x1000, a.gen));
	assert_int_equal(jf_fast_shared_block_get(s, JF_ISA_X86_64, 0x1000, &copy), 1);
	is_call_block(&copy);
	/* Not in another mode. */
	assert_int_equal(jf_fast_shared_block_get(s, JF_ISA_X86_32, 0x1000, &copy), 0);

	/* b's own code would give a return: it answers with a's call. */
	blk = jf_fast_block_at(b.blocks, JF_ISA_X86_64, 0x1000, b.gen);
	is_call_block(blk);
	assert_int_equal(blk->gen, b.gen);
	assert_ptr_equal(jf_fast_block_at(b.blocks, JF_ISA_X86_64, 0x1000, b.gen), blk);
	/* Without the table, b decodes its own code (a mode a never looked up). */
	b.blocks->shared = NULL;
	assert_int_equal(jf_fast_block_at(b.blocks, JF_ISA_X86_32, 0x1000, b.gen)->end,
			 JF_FAST_RETURN);

	caches_free(&a);
	caches_free(&b);
	jf_fast_shared_free(s);
}

static void test_path_from_another_cache(void **state)
{
	struct jf_fast_shared *s = jf_fast_shared_new();
	struct caches a, b;
	const struct jf_payload_path *p;
	uint64_t lookups, hits;

	(void)state;
	assert_non_null(s);
	caches_new(&a, code, sizeof(code), s);
	caches_new(&b, other, sizeof(other), s);

	is_taken3_path(jf_payload_path_at(a.payloads, JF_ISA_X86_64, 0x1000, a.gen, 7, 3));
	p = jf_payload_path_at(b.payloads, JF_ISA_X86_64, 0x1000, b.gen, 7, 3);
	is_taken3_path(p);
	assert_int_equal(p->gen, b.gen);
	/* Kept in b's cache: a hit. */
	assert_ptr_equal(jf_payload_path_at(b.payloads, JF_ISA_X86_64, 0x1000, b.gen, 7, 3), p);
	jf_payloads_counts(b.payloads, &lookups, &hits);
	assert_int_equal(lookups, 2);
	assert_int_equal(hits, 1);
	/* Other bits are another key, which b follows itself, through the blocks a
	 * published (its own code would stop at the return at 1000): call 1008, je taken,
	 * ret taken to 1005. */
	p = jf_payload_path_at(b.payloads, JF_ISA_X86_64, 0x1000, b.gen, 3, 2);
	assert_int_equal(p->blocks, 3);
	assert_int_equal(p->used, 2);
	assert_int_equal(p->end, 0x1005);

	caches_free(&a);
	caches_free(&b);
	jf_fast_shared_free(s);
}

enum { THREADS = 8, ROUNDS = 200 };

struct worker {
	struct jf_fast_shared *shared;
	int bad;
};

/* Every thread: caches of its own over its own map of `code`, looking up the same blocks
 * and paths as the others at the same time, each checked against what the code fixes. */
static void *look_up(void *arg)
{
	struct worker *w = arg;
	struct jf_error err = { "" };
	struct jf_codemap *map = jf_codemap_new();
	struct jf_insn_cache *insns;
	struct jf_fast_blocks *blocks;
	struct jf_payloads *payloads;
	uint64_t gen;
	int r;

	if (jf_codemap_add_bytes(map, code, sizeof(code), 0x1000, "code", &err) < 0) {
		w->bad = 1;
		return NULL;
	}
	insns = jf_insn_cache_new(map);
	blocks = jf_fast_blocks_new(insns, map, 6, 0);
	payloads = blocks ? jf_payloads_new(blocks, 6) : NULL;
	if (!payloads) {
		w->bad = 1;
		return NULL;
	}
	blocks->shared = w->shared;
	payloads->shared = w->shared;
	gen = jf_codemap_generation(map);
	for (r = 0; r < ROUNDS; r++) {
		const struct jf_fast_block *b = jf_fast_block_at(blocks, JF_ISA_X86_64, 0x1000, gen);
		const struct jf_fast_block *j = jf_fast_block_at(blocks, JF_ISA_X86_64, 0x100c, gen);
		const struct jf_payload_path *p =
			jf_payload_path_at(payloads, JF_ISA_X86_64, 0x1000, gen, 7, 3);

		/* The jump at 100c is followed to the indirect jump at 1010: 2 instructions. */
		if (b->end != JF_FAST_CALL || b->target != 0x1008 || j->end != JF_FAST_INDIRECT ||
		    j->ninsn != 2 || p->insns != 4 || p->end != 0x1000 || p->used != 3)
			w->bad = 1;
		/* A new table of the caches' own now and then, so that misses go on. */
		if (r % 50 == 49) {
			jf_payloads_free(payloads);
			jf_fast_blocks_free(blocks);
			blocks = jf_fast_blocks_new(insns, map, 6, 0);
			payloads = blocks ? jf_payloads_new(blocks, 6) : NULL;
			if (!payloads) {
				w->bad = 1;
				break;
			}
			blocks->shared = w->shared;
			payloads->shared = w->shared;
		}
	}
	jf_payloads_free(payloads);
	jf_fast_blocks_free(blocks);
	jf_insn_cache_free(insns);
	jf_codemap_free(map);
	return NULL;
}

static void test_threads(void **state)
{
	struct jf_fast_shared *s = jf_fast_shared_new();
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int i;

	(void)state;
	assert_non_null(s);
	for (i = 0; i < THREADS; i++) {
		w[i].shared = s;
		w[i].bad = 0;
		assert_int_equal(pthread_create(&t[i], NULL, look_up, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].bad, 0);
	}
	jf_fast_shared_free(s);
}

/* This thread's page faults so far. */
static long thread_faults(void)
{
	struct rusage u;

	assert_int_equal(getrusage(RUSAGE_THREAD, &u), 0);
	return u.ru_minflt;
}

/* This thread's page faults while it writes n fresh pages of its own (in small pages): the
 * measure of the faults below, since a sanitizer's shadow memory adds its own to each
 * page written (ThreadSanitizer about four). */
static long faults_writing(size_t n, size_t page)
{
	char *m = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	long before;

	assert_true(m != MAP_FAILED);
	madvise(m, n * page, MADV_NOHUGEPAGE);
	before = thread_faults();
	memset(m, 1, n * page);
	before = thread_faults() - before;
	munmap(m, n * page);
	return before;
}

enum { MANY = 4096 };

/* MANY blocks and MANY paths published, each found again. Their entries take
 * MANY * (48 + 104) bytes, 152 pages of 4 KiB, and the slots that index them at most their
 * arrays' 64 + 128 pages: publishing them faults in no more than twice as many pages as
 * writing that many (344 faults against 344 here, without a sanitizer). Entries placed at
 * their hash's slot touched most of the tables' 768 + 3328 pages instead (3,965 faults). */
static void test_entries_dense(void **state)
{
	struct jf_fast_shared *s = jf_fast_shared_new();
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = MANY * (sizeof(struct jf_fast_block) + sizeof(struct jf_payload_path)) /
			       page +
		       (((size_t)1 << 16) + ((size_t)1 << 17)) * sizeof(uint32_t) / page;
	struct jf_fast_block b, got;
	struct jf_payload_path p, path;
	long before, faults;
	uint64_t i;

	(void)state;
	assert_non_null(s);
	memset(&b, 0, sizeof(b));
	memset(&p, 0, sizeof(p));
	b.isa = p.isa = JF_ISA_X86_64;
	b.end = JF_FAST_RETURN;
	p.nbits = 3;
	before = thread_faults();
	for (i = 0; i < MANY; i++) {
		b.start = p.start = 0x400000 + 16 * i;
		b.ninsn = p.blocks = (uint32_t)i;
		jf_fast_shared_block_put(s, &b);
		jf_fast_shared_path_put(s, &p);
	}
	faults = thread_faults() - before;
	for (i = 0; i < MANY; i++) {
		uint64_t at = 0x400000 + 16 * i;

		assert_int_equal(jf_fast_shared_block_get(s, JF_ISA_X86_64, at, &got), 1);
		assert_int_equal(got.start, at);
		assert_int_equal(got.ninsn, i);
		assert_int_equal(jf_fast_shared_path_get(s, JF_ISA_X86_64, at, 0, 3, &path), 1);
		assert_int_equal(path.start, at);
		assert_int_equal(path.blocks, i);
	}
	assert_true(faults <= 2 * faults_writing(pages, page));
	jf_fast_shared_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_from_another_cache),
		cmocka_unit_test(test_path_from_another_cache),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_entries_dense),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
