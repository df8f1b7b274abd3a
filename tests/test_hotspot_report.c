/* HotSpot's report sections on a scripted run: zone records written by the real emitter as
 * the JVMTI agent writes them (the runtime, nmethods, their POINTs, trap calls whose kinds
 * name the frames) and read back by the real reader, then the blocks a decoder would give.
 * The script fixes the answers: an OSR nmethod entered twice at its OSR entry; a normal
 * nmethod's verified entry run three times, once as the 5-byte jump HotSpot writes over it
 * when it makes the nmethod not entrant (a block of that one jump); two arrivals at its
 * start (the inline-cache check), one falling through to the verified entry and one
 * leaving for the IC-miss stub: the nmethod was entered 3 times, the OSR one twice; one return into its
 * deopt handler and one entry into DeoptimizationBlob's start another way; trap calls whose kinds
 * are the agent's ("reason: M.a@1 <- M.b@7") and damaged ones, which must give a report
 * and no crash. A second script runs collections on a VM thread (native code, a collector
 * entry the test names) beside a Java thread in the interpreter, a C1 and a C2 nmethod:
 * the per-thread table's columns are the script's sums, and each way a collection ends
 * (the entry's return, a signal handler's frame inside it, a nested entry, lost track, a
 * jump out of it into the interpreter) ends it where the script says. */
#include "json_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/analysis.h"
#include "jitflow/emitter.h"
#include "jitflow/report.h"
#include "jitflow/zone.h"
#include "jitflow/zone_format.h"

enum {
	INTERP = 0x1000,      /* the interpreter [0x1000, 0x2000) */
	OSR_NM = 0x10000,     /* nmethod 5 L4 osr@3: [0x10000, 0x10100), OSR entry +0x40 */
	NM = 0x20000,         /* nmethod 6 L4: [0x20000, 0x20100), verified entry +0x20,
	                       * deopt handler +0xe0, trap calls at +0x50.. */
	DEOPT_BLOB = 0x30000, /* DeoptimizationBlob [0x30000, 0x30100) */
	C1_NM = 0x40000,      /* nmethod 7 L1: [0x40000, 0x40100) */
	VM = 0x100000,        /* native code [0x100000, 0x200000): the VM's */
	GC_ENTRY = 0x150000,  /* ... a collector entry */
	GC_WORK = 0x160000,   /* ... a function a collection calls */
	LIBC = 0x300000,      /* [0x300000, 0x400000): a library's */
	NTRAPS = 6,
};

static const char *const trap_kinds[NTRAPS] = {
	"unstable_if: Traps.branchyInner@1 <- Traps.depth@12",
	"class_check",        /* an agent that names no frames */
	": Traps.x@3",        /* a reason it could not tell */
	"null_check: @",      /* damaged from here on */
	"range_check: a@1 <- b <- @@ <- c@-7 <- ",
	":::",
};

static struct jf_flow blocks[64];
static int nblocks;

static void block(uint64_t start, uint64_t last, enum jf_block_end end)
{
	struct jf_flow *f = &blocks[nblocks++];

	assert_true(nblocks <= (int)(sizeof(blocks) / sizeof(blocks[0])));
	memset(f, 0, sizeof(*f));
	f->kind = JF_FLOW_BLOCK;
	f->ip = start;
	f->u.block.start = start;
	f->u.block.last = last;
	f->u.block.ninsn = (uint32_t)(last - start + 1); /* one-byte instructions */
	f->u.block.next = last + 1;
	f->u.block.last_size = 1;
	f->u.block.isa = JF_ISA_X86_64;
	f->u.block.end = (uint8_t)end;
}

static void region(struct jf_emitter *em, const char *name, uint64_t addr, uint32_t kind,
		   uint64_t trace_id)
{
	static uint8_t code[0x100];
	struct jf_region r;

	memset(&r, 0, sizeof(r));
	r.name = name;
	r.addr = addr;
	r.code = code;
	r.size = sizeof(code);
	r.kind = kind;
	r.trace_id = trace_id;
	assert_true(jf_emit_region_load(em, &r));
}

/* The agent's records, read back into the analysis. */
static void describe(struct jf_analysis *a, struct jf_zone_reader **reader)
{
	struct jf_emitter *em = jf_emitter_open(jf_test_tmpdir(), JF_EMIT_NO_MARKER_CALLS);
	struct jf_zone_record rec;
	struct jf_error err;
	int i;

	assert_non_null(em);
	assert_true(jf_emit_event(em, JF_EVENT_RUNTIME, JF_RUNTIME_HOTSPOT));
	assert_true(jf_emit_interp_range(em, JF_INTERP_EVAL_LOOP, INTERP, 0x2000, "Interpreter"));
	region(em, "nmethod 5 L4 osr@3 Traps.spin()J", OSR_NM, JF_REGION_FUNCTION, 5);
	assert_true(jf_emit_point(em, 5, OSR_NM + 0x40, JF_HOTSPOT_OSR_ENTRY, JF_POINT_ENTRY));
	region(em, "nmethod 6 L4 Traps.depth(I)I", NM, JF_REGION_FUNCTION, 6);
	region(em, "nmethod 7 L1 Traps.light(I)I", C1_NM, JF_REGION_FUNCTION, 7);
	assert_true(jf_emit_point(em, 6, NM + 0x20, JF_HOTSPOT_VERIFIED_ENTRY, JF_POINT_ENTRY));
	assert_true(jf_emit_point(em, 6, NM + 0x21, JF_HOTSPOT_ENTRY_BODY, JF_POINT_ENTRY));
	assert_true(jf_emit_point(em, 6, NM + 0xe0, JF_HOTSPOT_DEOPT_HANDLER, JF_POINT_ENTRY));
	for (i = 0; i < NTRAPS; i++) {
		assert_true(jf_emit_op_name(em, (uint16_t)(64 + i), trap_kinds[i]));
		assert_true(jf_emit_guard_kind(em, 0x50 + 8 * (uint64_t)i, 6, NM + 0x50 + 8 * (uint64_t)i,
					       DEOPT_BLOB + 0x80, 1, 0, (uint16_t)(64 + i)));
	}
	region(em, "DeoptimizationBlob", DEOPT_BLOB, JF_REGION_EXIT_STUB, 0);
	{
		char path[512];

		snprintf(path, sizeof(path), "%s", jf_emitter_path(em));
		jf_emitter_close(em);
		assert_int_equal(jf_zone_reader_open(reader, path, &err), 0);
	}
	while (jf_zone_next(*reader, &rec, &err) > 0)
		assert_int_equal(jf_analysis_zone_record(a, *reader, &rec), 0);
}

static void script(void)
{
	int i;

	nblocks = 0;
	for (i = 0; i < 2; i++) { /* two OSR transitions */
		block(INTERP, INTERP + 9, JF_END_JUMP_INDIRECT);
		block(OSR_NM + 0x40, OSR_NM + 0x4f, JF_END_RETURN);
	}
	for (i = 0; i < 2; i++) { /* two calls run the verified entry's code */
		block(INTERP, INTERP + 9, JF_END_CALL);
		block(NM + 0x20, NM + 0x30, JF_END_RETURN);
	}
	block(INTERP, INTERP + 9, JF_END_CALL); /* the class check passes */
	block(NM, NM + 0x30, JF_END_RETURN);
	block(INTERP, INTERP + 9, JF_END_CALL); /* the class check fails: to the IC-miss stub */
	block(NM, NM + 0x8, JF_END_JUMP);
	block(INTERP + 0x100, INTERP + 0x10f, JF_END_RETURN);
	block(INTERP, INTERP + 9, JF_END_CALL); /* one meets the not-entrant jump */
	block(NM + 0x20, NM + 0x20, JF_END_JUMP);
	block(INTERP + 0x100, INTERP + 0x10f, JF_END_RETURN);
	for (i = 0; i < NTRAPS; i++) { /* each trap call runs once */
		block(NM + 0x48 + 8 * (uint64_t)i, NM + 0x50 + 8 * (uint64_t)i, JF_END_CALL);
		block(DEOPT_BLOB + 0x80, DEOPT_BLOB + 0x8f, JF_END_JUMP_INDIRECT);
	}
	block(NM + 0xe0, NM + 0xe5, JF_END_JUMP); /* a return into the deopt handler */
	block(DEOPT_BLOB, DEOPT_BLOB + 0xf, JF_END_JUMP_INDIRECT);
	block(INTERP + 0x200, INTERP + 0x209, JF_END_JUMP); /* the blob entered another way */
	block(DEOPT_BLOB, DEOPT_BLOB + 0xf, JF_END_JUMP_INDIRECT);
	block(INTERP, INTERP + 9, JF_END_RETURN);
}

/* The element of hotspot's array `key` whose `field` is value. */
static const cJSON *element(const cJSON *hotspot, const char *key, const char *field,
			    double value)
{
	const cJSON *o;

	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(hotspot, key))
		if (jf_test_num(o, field) == value)
			return o;
	fail_msg("no %s %.0f in %s", field, value, key);
	return NULL;
}

static const cJSON *row(const cJSON *hotspot, const char *key, double compile_id)
{
	return element(hotspot, key, "compile_id", compile_id);
}

static const cJSON *trap_at(const cJSON *hotspot, double offset)
{
	return element(hotspot, "traps", "offset", offset);
}

static void check_frames(const cJSON *trap, const char *reason, int nframes)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(trap, "reason");

	if (reason ? !cJSON_IsString(r) || strcmp(r->valuestring, reason) : !cJSON_IsNull(r))
		fail_msg("reason %s, expected %s", cJSON_IsString(r) ? r->valuestring : "null",
			 reason ? reason : "null");
	if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(trap, "frames")) != nframes)
		fail_msg("trap at %#.0f: %d frames, expected %d", jf_test_num(trap, "offset"),
			 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(trap, "frames")), nframes);
}

/* The reports of a's result: the JSON one, parsed, and the text summary and guards
 * (*text, malloc'd). */
static cJSON *reports(struct jf_analysis *a, char **text)
{
	struct jf_analysis_result r;
	char *json = NULL;
	size_t len;
	FILE *out;
	cJSON *doc;

	assert_int_equal(jf_analysis_result(a, &r), 0);
	out = open_memstream(&json, &len);
	jf_report_json(out, &r, NULL);
	fclose(out);
	out = open_memstream(text, &len);
	jf_report_summary(out, &r, NULL);
	jf_report_guards(out, &r, NULL);
	fclose(out);
	doc = cJSON_Parse(json);
	if (!doc)
		fail_msg("the report is no JSON: %.300s", json);
	free(json);
	jf_analysis_result_free(&r);
	return doc;
}

static void test_entries_deopts_not_entrant_and_frames(void **state)
{
	struct jf_analysis *a = jf_analysis_new(&(struct jf_analysis_config){ 0 });
	struct jf_zone_reader *reader = NULL;
	char *text = NULL;
	cJSON *doc;
	const cJSON *hs, *f;
	char nmethod_row[64];
	int i;

	(void)state;
	assert_non_null(a);
	describe(a, &reader);
	script();
	for (i = 0; i < nblocks; i++)
		assert_int_equal(jf_analysis_flow(a, &blocks[i]), 0);
	doc = reports(a, &text);

	/* the nmethods table's tier and entries columns */
	snprintf(nmethod_row, sizeof(nmethod_row), " %-14s %10d ", "C2", 3);
	hs = cJSON_GetObjectItemCaseSensitive(doc, "hotspot");
	assert_int_equal((int)jf_test_num(row(hs, "osr_entries", 5), "entries"), 2);
	assert_int_equal((int)jf_test_num(row(hs, "osr_entries", 5), "osr_bci"), 3);
	assert_int_equal((int)jf_test_num(row(hs, "not_entrant_seen", 6), "calls_turned_away"), 1);
	f = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(hs, "nmethods"), "c2");
	assert_int_equal((int)jf_test_num(f, "entries"), 2 + 3);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(hs, "not_entrant_seen")), 1);
	assert_int_equal((int)jf_test_num(row(hs, "deoptimized", 6), "count"), 1);
	assert_int_equal((int)jf_test_num(hs, "deoptimizations_not_tied"), 1);

	f = cJSON_GetObjectItemCaseSensitive(trap_at(hs, 0x50), "frames");
	check_frames(trap_at(hs, 0x50), "unstable_if", 2);
	assert_string_equal(jf_test_str(f->child, "method"), "Traps.branchyInner");
	assert_int_equal((int)jf_test_num(f->child, "bci"), 1);
	assert_string_equal(jf_test_str(f->child->next, "method"), "Traps.depth");
	assert_int_equal((int)jf_test_num(f->child->next, "bci"), 12);
	check_frames(trap_at(hs, 0x58), "class_check", 0);
	check_frames(trap_at(hs, 0x60), NULL, 1);
	/* damaged names: the frames that name a method and a bci, nothing else */
	check_frames(trap_at(hs, 0x68), "null_check", 0);
	check_frames(trap_at(hs, 0x70), "range_check", 2);
	check_frames(trap_at(hs, 0x78), NULL, 0);
	if (!strstr(text, "at Traps.branchyInner@1 <- Traps.depth@12") ||
	    !strstr(text, "osr@3") || !strstr(text, "Nmethods seen made not entrant") ||
	    !strstr(text, nmethod_row))
		fail_msg("the text report lacks the frames, the OSR nmethod or the not-entrant "
			 "nmethod:\n%s", text);
	cJSON_Delete(doc);
	free(text);
	jf_analysis_free(a);
	jf_zone_reader_close(reader);
}

/* A flow that is no block, of kind k. */
static void other(enum jf_flow_kind k)
{
	struct jf_flow *f = &blocks[nblocks++];

	memset(f, 0, sizeof(*f));
	f->kind = (uint16_t)k;
}

static void thread(int32_t tid)
{
	other(JF_FLOW_CONTEXT);
	blocks[nblocks - 1].u.context.tid = tid;
}

static enum jf_code_class native_of(void *ctx, uint64_t addr)
{
	(void)ctx;
	if (addr >= VM && addr < VM + 0x100000)
		return JF_CLASS_RUNTIME;
	return addr >= LIBC && addr < LIBC + 0x100000 ? JF_CLASS_NATIVE : JF_CLASS_UNKNOWN;
}

static int entry_of(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr == GC_ENTRY;
}

enum { VM_TID = 100, JAVA_TID = 200 };

/* The entry's last block returns to its caller, the VM's code at vm (10 instructions
 * each: GC, then VM). */
static void entry_returns(uint64_t vm)
{
	block(GC_ENTRY + 0x10, GC_ENTRY + 0x19, JF_END_RETURN);
	block(vm, vm + 9, JF_END_CALL);
}

/* Five collections on the VM thread: the comments say what each block is counted as. */
static void gc_script(void)
{
	nblocks = 0;
	thread(JAVA_TID);
	block(INTERP, INTERP + 9, JF_END_CALL);          /* interpreter 10 */
	block(C1_NM, C1_NM + 0x1f, JF_END_RETURN);      /* C1 32 */
	block(INTERP, INTERP + 9, JF_END_CALL);          /* interpreter 10 */
	block(NM + 0x20, NM + 0x30, JF_END_CALL);        /* C2 17 */
	block(LIBC + 0x40, LIBC + 0x49, JF_END_RETURN);  /* native 10: no collection */
	thread(VM_TID);
	/* 1: calls and returns inside, libc's memcpy included; the return to the caller
	 * ends it */
	block(VM, VM + 9, JF_END_CALL);                   /* VM 10 */
	block(GC_ENTRY, GC_ENTRY + 9, JF_END_CALL);       /* GC 10 */
	block(GC_WORK, GC_WORK + 9, JF_END_CALL);         /* GC 10 */
	block(LIBC, LIBC + 9, JF_END_RETURN);             /* GC 10 */
	block(GC_WORK + 0x10, GC_WORK + 0x19, JF_END_RETURN); /* GC 10 */
	entry_returns(VM + 0xa);                          /* GC 10, VM 10 */
	/* 2: the entry called again inside the collection is the same collection */
	block(GC_ENTRY, GC_ENTRY + 9, JF_END_CALL);       /* GC 10 */
	block(GC_ENTRY, GC_ENTRY + 9, JF_END_RETURN);     /* GC 10 */
	entry_returns(VM + 0x14);                         /* GC 10, VM 10 */
	/* 3: a signal inside it: the handler returns to its restorer, which no call made */
	block(GC_ENTRY, GC_ENTRY + 9, JF_END_CALL);       /* GC 10 */
	block(GC_WORK, GC_WORK + 4, JF_END_NONE);         /* GC 5 */
	other(JF_FLOW_ASYNC);
	block(LIBC + 0x100, LIBC + 0x109, JF_END_RETURN); /* GC 10 */
	block(LIBC + 0x200, LIBC + 0x201, JF_END_FAR);    /* GC 2 */
	block(GC_WORK + 5, GC_WORK + 9, JF_END_RETURN);   /* GC 5 */
	entry_returns(VM + 0x1e);                         /* GC 10, VM 10 */
	/* 4: the trace loses track inside it */
	block(GC_ENTRY, GC_ENTRY + 9, JF_END_CALL);       /* GC 10 */
	block(GC_WORK, GC_WORK + 9, JF_END_JUMP);         /* GC 10 */
	other(JF_FLOW_OVERFLOW);
	block(VM + 0x30, VM + 0x39, JF_END_JUMP);         /* VM 10 */
	/* 5: entered by a jump, left by a jump (a longjmp) into the interpreter */
	block(GC_ENTRY, GC_ENTRY + 9, JF_END_JUMP_INDIRECT); /* GC 10 */
	block(GC_WORK, GC_WORK + 9, JF_END_JUMP_INDIRECT); /* GC 10 */
	block(INTERP + 0x300, INTERP + 0x309, JF_END_JUMP_INDIRECT); /* interpreter 10 */
	block(VM + 0x40, VM + 0x49, JF_END_RETURN);       /* VM 10 */
}

/* The columns of a thread's row, in instructions or time, and its collections. */
static void check_columns(const cJSON *row, const char *what, const double expected[11])
{
	static const char *const keys[11] = { "interpreter", "c1", "c2", "native_wrapper",
					      "unknown_level", "stubs", "vm", "native", "gc",
					      "instrumentation", "unknown" };
	const cJSON *cols = cJSON_GetObjectItemCaseSensitive(row, what);
	int i;

	for (i = 0; i < 11; i++)
		if (jf_test_num(cols, keys[i]) != expected[i])
			fail_msg("thread %.0f: %s %s %.0f, expected %.0f", jf_test_num(row, "tid"),
				 what, keys[i], jf_test_num(cols, keys[i]), expected[i]);
}

static void test_threads_and_collections(void **state)
{
	struct jf_analysis_config cfg = { 0 };
	struct jf_analysis *a;
	struct jf_zone_reader *reader = NULL;
	char *text = NULL;
	cJSON *doc;
	const cJSON *hs, *java, *vm;
	uint64_t clock[2] = { 0, 0 };
	int32_t tid = 0;
	int i;
	/* interpreter, C1, C2, wrappers, level?, stubs, VM, native, GC, instrumentation,
	 * unknown */
	const double java_insns[11] = { 20, 32, 17, 0, 0, 0, 0, 10, 0, 0, 0 };
	const double vm_insns[11] = { 10, 0, 0, 0, 0, 0, 60, 0, 162, 0, 0 };
	/* Each block's timestamp is the thread's instructions so far: a block's time is its
	 * instructions but for each thread's first block, which has no time before it. */
	const double java_time[11] = { 10, 32, 17, 0, 0, 0, 0, 10, 0, 0, 0 };
	const double vm_time[11] = { 10, 0, 0, 0, 0, 0, 50, 0, 162, 0, 0 };

	(void)state;
	cfg.native_class = native_of;
	cfg.collector_entry = entry_of;
	a = jf_analysis_new(&cfg);
	assert_non_null(a);
	describe(a, &reader);
	gc_script();
	for (i = 0; i < nblocks; i++) {
		struct jf_flow *f = &blocks[i];

		if (f->kind == JF_FLOW_CONTEXT) {
			tid = f->u.context.tid;
		} else if (f->kind == JF_FLOW_BLOCK) {
			uint64_t *c = &clock[tid == VM_TID];

			*c += f->u.block.ninsn;
			f->time = *c;
			f->flags |= JF_FLOW_HAS_TIME;
		}
		assert_int_equal(jf_analysis_flow(a, f), 0);
	}
	doc = reports(a, &text);
	hs = cJSON_GetObjectItemCaseSensitive(doc, "hotspot");
	java = element(hs, "threads", "tid", JAVA_TID);
	vm = element(hs, "threads", "tid", VM_TID);
	check_columns(java, "instructions", java_insns);
	check_columns(vm, "instructions", vm_insns);
	check_columns(java, "time", java_time);
	check_columns(vm, "time", vm_time);
	assert_int_equal((int)jf_test_num(java, "collections"), 0);
	assert_int_equal((int)jf_test_num(vm, "collections"), 5);
	if (!strstr(text, "Java threads:") || !strstr(text, "collections"))
		fail_msg("the text report lacks the per-thread table:\n%s", text);
	cJSON_Delete(doc);
	free(text);
	jf_analysis_free(a);
	jf_zone_reader_close(reader);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries_deopts_not_entrant_and_frames),
		cmocka_unit_test(test_threads_and_collections),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
