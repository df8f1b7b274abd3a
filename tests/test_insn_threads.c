/* Threads decoding x86 code at once (as `stat -j N`'s do), each with its own code map copy
 * and instruction cache, from the process's first x86 instruction on: capstone takes no
 * lock for x86 (decoder/insn_walk.c sorts its one lazily sorted global table first), and
 * every thread must get what one thread gets, the registers capstone 4 finds in that table
 * (`in al, dx`, `stosb`) included. A race there shows as a wrong disassembly here, and
 * ThreadSanitizer (stat -j 3 found the table's race) flags it at once. */
#include "test_support.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/codemap.h"
#include "jitflow/insn.h"

enum { THREADS = 8, ROUNDS = 200, TEXT = 64 };

static const uint8_t code[] = {
	/* 0x1000 */ 0xec,                               /* in al, dx */
	/* 0x1001 */ 0xaa,                               /* stosb byte ptr [rdi], al */
	/* 0x1002 */ 0x48, 0x8b, 0x03,                   /* mov rax, qword ptr [rbx] */
	/* 0x1005 */ 0x75, 0x02,                         /* jne 0x1009 */
	/* 0x1007 */ 0xff, 0xd0,                         /* call rax */
	/* 0x1009 */ 0xe8, 0xf2, 0xff, 0xff, 0xff,       /* call 0x1000 */
	/* 0x100e */ 0xc3,                               /* ret */
};

struct decoded {
	char text[sizeof(code)][TEXT];
	struct jf_insn_info info[sizeof(code)];
};

static struct jf_codemap *map_code(void)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err = { 0 };

	assert_non_null(map);
	assert_int_equal(jf_codemap_add_bytes(map, code, sizeof(code), 0x1000, "code", &err), 0);
	return map;
}

/* Every instruction of code, disassembled (capstone each time) and classified. */
static int decode_all(struct jf_insn_cache *c, struct decoded *d)
{
	uint64_t ip = 0x1000;

	memset(d, 0, sizeof(*d));
	while (ip < 0x1000 + sizeof(code)) {
		size_t at = ip - 0x1000, n = jf_insn_disasm(c, JF_ISA_X86_64, ip, d->text[at], TEXT);

		if (n == 0 || jf_insn_at(c, JF_ISA_X86_64, ip, &d->info[at]) < 0)
			return -1;
		ip += n;
	}
	return 0;
}

static int same(const struct decoded *a, const struct decoded *b)
{
	size_t i;

	for (i = 0; i < sizeof(code); i++) {
		if (strcmp(a->text[i], b->text[i]) != 0 || a->info[i].target != b->info[i].target ||
		    a->info[i].size != b->info[i].size || a->info[i].cls != b->info[i].cls ||
		    a->info[i].far_call != b->info[i].far_call)
			return 0;
	}
	return 1;
}

struct worker {
	struct jf_codemap *map;
	pthread_t thread;
	struct decoded got;
	int failed;
};

static pthread_barrier_t start;

static void *work(void *arg)
{
	struct worker *w = arg;
	struct jf_insn_cache *c = jf_insn_cache_new(w->map);
	int r;

	pthread_barrier_wait(&start);
	for (r = 0; r < ROUNDS && c && !w->failed; r++) {
		struct decoded d;

		if (decode_all(c, &d) < 0 || (r > 0 && !same(&d, &w->got)))
			w->failed = 1;
		w->got = d;
	}
	w->failed |= !c;
	jf_insn_cache_free(c);
	return NULL;
}

static void test_threads_at_once(void **state)
{
	static struct worker w[THREADS];
	struct jf_codemap *map = map_code();
	struct jf_error err = { 0 };
	struct jf_insn_cache *c;
	struct decoded *one = calloc(1, sizeof(*one));
	int i;

	(void)state;
	assert_non_null(one);
	pthread_barrier_init(&start, NULL, THREADS);
	for (i = 0; i < THREADS; i++) {
		w[i].map = jf_codemap_clone(map, &err);
		assert_non_null(w[i].map);
		assert_int_equal(pthread_create(&w[i].thread, NULL, work, &w[i]), 0);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(w[i].thread, NULL);
	pthread_barrier_destroy(&start);

	c = jf_insn_cache_new(map);
	assert_int_equal(decode_all(c, one), 0);
	assert_string_equal(one->text[0], "in al, dx");
	assert_string_equal(one->text[1], "stosb byte ptr [rdi], al");
	assert_int_equal(one->info[5].cls, JF_INSN_COND);
	assert_int_equal(one->info[5].target, 0x1009);
	assert_int_equal(one->info[9].cls, JF_INSN_CALL);
	assert_int_equal(one->info[9].target, 0x1000);
	assert_int_equal(one->info[14].cls, JF_INSN_RETURN);
	for (i = 0; i < THREADS; i++) {
		assert_false(w[i].failed);
		assert_true(same(&w[i].got, one));
		jf_codemap_free(w[i].map);
	}
	jf_insn_cache_free(c);
	jf_codemap_free(map);
	free(one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
