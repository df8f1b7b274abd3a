/* The instruction walker (jitflow/insn.h) over hand-encoded x86-64 code: instruction
 * lengths, classes and direct targets as the encodings define them, blocks expanded by
 * following direct jumps and calls, PTWRITE and the CET shadow-stack instructions of
 * libgcc's unwinder (unknown to capstone 4), and reconstruction
 * failures reported where they happen. */
#include "test_support.h"

#include <string.h>

#include "insn_cache_stats.h"
#include "jitflow/codemap.h"
#include "jitflow/insn.h"

static const uint8_t code[] = {
	/* 0x1000 */ 0xe9, 0x0b, 0x00, 0x00, 0x00,       /* jmp 0x1010 */
	/* 0x1005 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x1010 */ 0xe8, 0x0b, 0x00, 0x00, 0x00,       /* call 0x1020 */
	/* 0x1015 */ 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	/* 0x1020 */ 0x48, 0x8b, 0x03,                   /* mov rax, qword ptr [rbx] */
	/* 0x1023 */ 0xf3, 0x48, 0x0f, 0xae, 0xe0,       /* ptwrite rax */
	/* 0x1028 */ 0xf3, 0x0f, 0xae, 0x20,             /* ptwrite dword ptr [rax] */
	/* 0x102c */ 0xf3, 0x48, 0x0f, 0xae, 0xa4, 0x24, /* ptwrite qword ptr [rsp + 0x10] */
	/* 0x1032 */ 0x10, 0x00, 0x00, 0x00,             /*   (its disp32) */
	/* 0x1036 */ 0xc3,                               /* ret */
	/* 0x1037 */ 0x75, 0x02,                         /* jnz 0x103b */
	/* 0x1039 */ 0xff, 0xd0,                         /* call rax */
	/* 0x103b */ 0xff, 0x25, 0x00, 0x00, 0x00, 0x00, /* jmp qword ptr [rip] */
	/* 0x1041 */ 0x0f, 0x05,                         /* syscall */
};

/* The path through the block that starts at 0x1000 and ends at the ret. */
static const uint64_t path[] = { 0x1000, 0x1010, 0x1020, 0x1023, 0x1028, 0x102c, 0x1036 };

struct visit {
	uint64_t ip[32];
	size_t n;
};

static void visit(void *ctx, uint64_t ip)
{
	struct visit *v = ctx;

	if (v->n < 32)
		v->ip[v->n] = ip;
	v->n++;
}

static struct jf_codemap *map_code(void)
{
	struct jf_codemap *map = jf_codemap_new();
	struct jf_error err;

	assert_non_null(map);
	assert_int_equal(jf_codemap_add_bytes(map, code, sizeof(code), 0x1000, "code", &err), 0);
	return map;
}

static void expect_insn(struct jf_insn_cache *c, uint64_t ip, uint8_t size,
			enum jf_insn_class cls, uint64_t target)
{
	struct jf_insn_info info;

	if (jf_insn_at(c, JF_ISA_X86_64, ip, &info) < 0)
		fail_msg("no instruction at 0x%llx", (unsigned long long)ip);
	if (info.size != size || info.cls != cls || info.target != target)
		fail_msg("0x%llx: size %u class %u target 0x%llx, expected %u %u 0x%llx",
			 (unsigned long long)ip, info.size, info.cls,
			 (unsigned long long)info.target, size, cls, (unsigned long long)target);
}

static void test_lengths_classes_targets(void **state)
{
	struct jf_codemap *map = map_code();
	struct jf_insn_cache *c = jf_insn_cache_new(map);
	int pass;

	/* Twice: decoded, then from the cache. */
	for (pass = 0; pass < 2; pass++) {
		expect_insn(c, 0x1000, 5, JF_INSN_JUMP, 0x1010);
		expect_insn(c, 0x1010, 5, JF_INSN_CALL, 0x1020);
		expect_insn(c, 0x1020, 3, JF_INSN_OTHER, 0);
		expect_insn(c, 0x1023, 5, JF_INSN_PTWRITE, 0);
		expect_insn(c, 0x1028, 4, JF_INSN_PTWRITE, 0);
		expect_insn(c, 0x102c, 10, JF_INSN_PTWRITE, 0);
		expect_insn(c, 0x1036, 1, JF_INSN_RETURN, 0);
		expect_insn(c, 0x1037, 2, JF_INSN_COND, 0x103b);
		expect_insn(c, 0x1039, 2, JF_INSN_CALL_INDIRECT, 0);
		expect_insn(c, 0x103b, 6, JF_INSN_JUMP_INDIRECT, 0);
		expect_insn(c, 0x1041, 2, JF_INSN_FAR, 0);
	}
	assert_int_equal(jf_insn_class_to_end(JF_INSN_COND), JF_END_COND);
	assert_int_equal(jf_insn_class_to_end(JF_INSN_PTWRITE), JF_END_NONE);
	assert_int_equal(jf_insn_class_to_end(JF_INSN_FAR), JF_END_FAR);
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

/* Far branches after which tracing resumes (libipt's far calls: a TIP.PGD there and a
 * TIP.PGE at the next instruction is a return from the kernel) and the others. */
static void test_far_calls(void **state)
{
	static const struct { uint8_t bytes[3], size, far_call; const char *name; } far[] = {
		{ { 0x0f, 0x05 }, 2, 1, "syscall" },
		{ { 0x0f, 0x34 }, 2, 1, "sysenter" },
		{ { 0xcd, 0x80 }, 2, 1, "int 0x80" },
		{ { 0xcc }, 1, 1, "int3" },
		{ { 0xf1 }, 1, 1, "int1" },
		{ { 0xff, 0x18 }, 2, 1, "call far [rax]" },
		{ { 0x0f, 0x07 }, 2, 0, "sysret" },
		{ { 0x48, 0xcf }, 2, 0, "iretq" },
		{ { 0xcb }, 1, 0, "retf" },
		{ { 0xff, 0x28 }, 2, 0, "jmp far [rax]" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		struct jf_codemap *map = jf_codemap_new();
		struct jf_insn_cache *c;
		struct jf_insn_info info;
		struct jf_error err;

		assert_int_equal(jf_codemap_add_bytes(map, far[i].bytes, far[i].size, 0x1000,
						      "code", &err), 0);
		c = jf_insn_cache_new(map);
		assert_int_equal(jf_insn_at(c, JF_ISA_X86_64, 0x1000, &info), 0);
		if (info.cls != JF_INSN_FAR || info.size != far[i].size ||
		    info.far_call != far[i].far_call)
			fail_msg("%s: class %u size %u far call %u, expected %u %u %u", far[i].name,
				 info.cls, info.size, info.far_call, JF_INSN_FAR, far[i].size,
				 far[i].far_call);
		jf_insn_cache_free(c);
		jf_codemap_free(map);
	}
}

static void test_next_ip(void **state)
{
	struct jf_codemap *map = map_code();
	struct jf_insn_cache *c = jf_insn_cache_new(map);
	uint64_t next = 0;

	assert_int_equal(jf_insn_next_ip(c, JF_ISA_X86_64, 0x1000, &next), 0);
	assert_int_equal(next, 0x1010);  /* direct jump: its target */
	assert_int_equal(jf_insn_next_ip(c, JF_ISA_X86_64, 0x1010, &next), 0);
	assert_int_equal(next, 0x1020);  /* direct call: its target */
	assert_int_equal(jf_insn_next_ip(c, JF_ISA_X86_64, 0x1023, &next), 0);
	assert_int_equal(next, 0x1028);  /* the instruction after */
	assert_int_equal(jf_insn_next_ip(c, JF_ISA_X86_64, 0x1037, &next), 0);
	assert_int_equal(next, 0x1039);  /* a conditional branch: the fall-through */
	next = 7;
	assert_int_equal(jf_insn_next_ip(c, JF_ISA_X86_64, 0x9000, &next), -1);
	assert_int_equal(next, 7);
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

/* rdssp and incssp (libgcc's _Unwind_RaiseException): instructions of known length. */
static void test_shadow_stack_nops(void **state)
{
	static const uint8_t unwind[] = {
		/* 0x2000 */ 0xf3, 0x48, 0x0f, 0x1e, 0xc8, /* rdsspq rax */
		/* 0x2005 */ 0x48, 0x85, 0xc0,             /* test rax, rax */
		/* 0x2008 */ 0x74, 0x05,                   /* je 0x200f */
		/* 0x200a */ 0xf3, 0x48, 0x0f, 0xae, 0xe9, /* incsspq rcx */
		/* 0x200f */ 0xc3,                         /* ret */
	};
	struct jf_codemap *map = jf_codemap_new();
	struct jf_insn_cache *c;
	struct jf_error err;
	char text[64];

	(void)state;
	assert_non_null(map);
	assert_int_equal(jf_codemap_add_bytes(map, unwind, sizeof(unwind), 0x2000, "unwind", &err), 0);
	c = jf_insn_cache_new(map);
	expect_insn(c, 0x2000, 5, JF_INSN_OTHER, 0);
	expect_insn(c, 0x2005, 3, JF_INSN_OTHER, 0);
	expect_insn(c, 0x2008, 2, JF_INSN_COND, 0x200f);
	expect_insn(c, 0x200a, 5, JF_INSN_OTHER, 0);
	assert_int_equal(jf_insn_disasm(c, JF_ISA_X86_64, 0x2000, text, sizeof(text)), 5);
	assert_string_equal(text, "rdssp");
	assert_int_equal(jf_insn_disasm(c, JF_ISA_X86_64, 0x200a, text, sizeof(text)), 5);
	assert_string_equal(text, "incssp");
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

static void test_block_walk_follows_direct_branches(void **state)
{
	struct jf_codemap *map = map_code();
	struct jf_insn_cache *c = jf_insn_cache_new(map);
	struct jf_block b = { 0x1000, 0x1036, 0x1037, 7, JF_END_RETURN, JF_ISA_X86_64, 0, 1 };
	struct visit v = { { 0 }, 0 };
	uint64_t stop = 0;

	assert_int_equal(jf_block_walk(c, &b, visit, &v, &stop), 0);
	assert_int_equal(v.n, 7);
	assert_memory_equal(v.ip, path, sizeof(path));
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

/* A block that does not fit the code: the walk says where it went wrong. */
static void test_block_walk_mismatch(void **state)
{
	struct jf_codemap *map = map_code();
	struct jf_insn_cache *c = jf_insn_cache_new(map);
	struct jf_block b = { 0x1000, 0x1036, 0x1037, 3, JF_END_RETURN, JF_ISA_X86_64, 0, 1 };
	struct visit v = { { 0 }, 0 };
	uint64_t stop = 0;

	/* Three instructions from 0x1000 end at 0x1020, not at the ret. */
	assert_int_equal(jf_block_walk(c, &b, visit, &v, &stop), -1);
	assert_int_equal(stop, 0x1020);
	assert_int_equal(v.n, 3);
	/* Too many instructions: the walk passes the ret and ends elsewhere. */
	b.ninsn = 8;
	v.n = 0;
	assert_int_equal(jf_block_walk(c, &b, visit, &v, &stop), -1);
	assert_int_equal(stop, 0x1037);
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

/* The call's target has no code: reconstruction stops there. */
static void test_block_walk_missing_bytes(void **state)
{
	struct jf_codemap *map = map_code();
	struct jf_insn_cache *c = jf_insn_cache_new(map);
	struct jf_block b = { 0x1000, 0x1036, 0x1037, 7, JF_END_RETURN, JF_ISA_X86_64, 0, 1 };
	struct visit v = { { 0 }, 0 };
	uint64_t stop = 0;

	assert_int_equal(jf_codemap_remove(map, 0x1020, 0x20), 1);
	assert_int_equal(jf_block_walk(c, &b, visit, &v, &stop), -1);
	assert_int_equal(stop, 0x1020);
	assert_true(v.n <= 3);
	assert_int_equal(v.ip[0], 0x1000);
	assert_int_equal(v.ip[1], 0x1010);
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

/* A code map change drops what the cache knew; instructions straddling two sections are
 * read from both. */
static void test_cache_follows_code_changes(void **state)
{
	static const uint8_t nop = 0x90;
	struct jf_codemap *map = map_code();
	struct jf_insn_cache *c = jf_insn_cache_new(map);
	struct jf_error err;
	uint8_t tail[3];

	expect_insn(c, 0x1020, 3, JF_INSN_OTHER, 0);
	assert_int_equal(jf_codemap_add_bytes(map, &nop, 1, 0x1020, "patch", &err), 0);
	expect_insn(c, 0x1020, 1, JF_INSN_OTHER, 0);
	expect_insn(c, 0x1000, 5, JF_INSN_JUMP, 0x1010);
	/* Split the 5-byte ptwrite at 0x1023 across two sections (same bytes). */
	memcpy(tail, code + 0x25, sizeof(tail));
	assert_int_equal(jf_codemap_add_bytes(map, tail, sizeof(tail), 0x1025, "tail", &err), 0);
	expect_insn(c, 0x1023, 5, JF_INSN_PTWRITE, 0);
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

/* A change of the code keeps the hot instructions it does not touch at hand (a JIT
 * changes its code thousands of times), and decodes again those it touches or abuts. */
static void test_change_keeps_hot_instructions(void **state)
{
	static const uint8_t nop = 0x90;
	struct jf_codemap *map = map_code();
	struct jf_insn_cache *c = jf_insn_cache_new(map);
	struct jf_error err;
	uint64_t misses;

	expect_insn(c, 0x1000, 5, JF_INSN_JUMP, 0x1010);
	expect_insn(c, 0x1020, 3, JF_INSN_OTHER, 0);
	expect_insn(c, 0x1036, 1, JF_INSN_RETURN, 0);
	expect_insn(c, 0x1037, 2, JF_INSN_COND, 0x103b);
	misses = jf_insn_cache_recent_misses(c);
	/* A nop over the ret, between the two instructions looked up last. */
	assert_int_equal(jf_codemap_add_bytes(map, &nop, 1, 0x1036, "patch", &err), 0);
	expect_insn(c, 0x1000, 5, JF_INSN_JUMP, 0x1010);
	expect_insn(c, 0x1020, 3, JF_INSN_OTHER, 0);
	assert_int_equal(jf_insn_cache_recent_misses(c), misses);
	expect_insn(c, 0x1036, 1, JF_INSN_OTHER, 0);
	expect_insn(c, 0x1037, 2, JF_INSN_COND, 0x103b);
	assert_int_equal(jf_insn_cache_recent_misses(c), misses + 2);
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

/* A change over more bytes than the table looks up one by one (code the JIT wrote far
 * away: HotSpot's zone records reach 500 KB) forgets only what lies in its bytes'
 * span: the instructions outside it stay at hand; those inside are decoded again. */
static void test_big_change_keeps_instructions_outside_it(void **state)
{
	static uint8_t nops[1 << 16];
	struct jf_codemap *map = map_code();
	struct jf_insn_cache *c = jf_insn_cache_new(map);
	struct jf_error err;
	uint64_t misses;

	(void)state;
	memset(nops, 0x90, sizeof(nops));
	expect_insn(c, 0x1000, 5, JF_INSN_JUMP, 0x1010);
	expect_insn(c, 0x1020, 3, JF_INSN_OTHER, 0);
	misses = jf_insn_cache_recent_misses(c);
	assert_int_equal(jf_codemap_add_bytes(map, nops, sizeof(nops), 0x100000, "far", &err), 0);
	expect_insn(c, 0x1000, 5, JF_INSN_JUMP, 0x1010);
	expect_insn(c, 0x1020, 3, JF_INSN_OTHER, 0);
	assert_int_equal(jf_insn_cache_recent_misses(c), misses);
	/* As big a change over the code itself. */
	assert_int_equal(jf_codemap_add_bytes(map, nops, 1 << 13, 0x800, "over", &err), 0);
	expect_insn(c, 0x1000, 1, JF_INSN_OTHER, 0);
	expect_insn(c, 0x1020, 1, JF_INSN_OTHER, 0);
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

static void test_other_modes_and_disasm(void **state)
{
	struct jf_codemap *map = map_code();
	struct jf_insn_cache *c = jf_insn_cache_new(map);
	struct jf_insn_info info;
	char text[64];

	/* 0x48 0x8b 0x03 in 32-bit code: dec eax, then mov eax, [ebx]. */
	assert_int_equal(jf_insn_at(c, JF_ISA_X86_32, 0x1020, &info), 0);
	assert_int_equal(info.size, 1);
	assert_int_equal(jf_insn_at(c, JF_ISA_X86_32, 0x1021, &info), 0);
	assert_int_equal(info.size, 2);
	/* F3 48 0F AE E0 is ptwrite rax only in 64-bit code; in 32-bit code 0x48 is no REX
	 * prefix but dec eax (with a rep prefix). */
	assert_int_equal(jf_insn_at(c, JF_ISA_X86_32, 0x1023, &info), 0);
	assert_int_equal(info.size, 2);
	assert_int_equal(info.cls, JF_INSN_OTHER);
	assert_int_equal(jf_insn_disasm(c, JF_ISA_X86_64, 0x1020, text, sizeof(text)), 3);
	assert_string_equal(text, "mov rax, qword ptr [rbx]");
	assert_int_equal(jf_insn_disasm(c, JF_ISA_X86_64, 0x1023, text, sizeof(text)), 5);
	assert_string_equal(text, "ptwrite");
	assert_int_equal(jf_insn_disasm(c, JF_ISA_X86_64, 0x9000, text, sizeof(text)), 0);
	/* No bytes: an error, not a guess. */
	assert_int_equal(jf_insn_at(c, JF_ISA_X86_64, 0x9000, &info), -1);
	assert_int_equal(info.cls, JF_INSN_ERROR);
	jf_insn_cache_free(c);
	jf_codemap_free(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lengths_classes_targets),
		cmocka_unit_test(test_far_calls),
		cmocka_unit_test(test_next_ip),
		cmocka_unit_test(test_shadow_stack_nops),
		cmocka_unit_test(test_block_walk_follows_direct_branches),
		cmocka_unit_test(test_block_walk_mismatch),
		cmocka_unit_test(test_block_walk_missing_bytes),
		cmocka_unit_test(test_cache_follows_code_changes),
		cmocka_unit_test(test_change_keeps_hot_instructions),
		cmocka_unit_test(test_big_change_keeps_instructions_outside_it),
		cmocka_unit_test(test_other_modes_and_disasm),
	};
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
