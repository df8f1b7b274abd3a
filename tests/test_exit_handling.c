/* Exit handling told by code, not by brackets: a runtime's exit handling code (an
 * INTERP_RANGE of kind deopt, as LuaJIT's module writes for lj_vm_exit_handler) and all the
 * thread runs from there until that code goes on by other than a call. Zone records
 * written by the real emitter and read back by the real reader; blocks a decoder would
 * report; every count follows from the script's block sizes.
 *
 * The script (one thread): interpreter; a trace; its exit into the exit code, which calls
 * the runtime (which calls a VM routine in the interpreter's range, the emitter and more
 * runtime code, and returns) and jumps on into the interpreter; runtime code called from
 * the interpreter, which is not exit handling; a second exit, cut short by jitted code
 * (the exit code's callee never returns there), after which runtime code is native again. */
#include "test_support.h"

#include <stdio.h>
#include <string.h>

#include "jitflow/analysis.h"
#include "jitflow/emitter.h"
#include "jitflow/zone.h"

enum {
	INTERP = 0x1000,  /* the interpreter's code [0x1000, 0x2000) */
	EXIT = 0x1800,    /* its exit code [0x1800, 0x1900), inside it */
	RUNTIME = 0x3000, /* the runtime's native code [0x3000, 0x4000) */
	EMITTER = 0x5000, /* the emitter's code (instrumentation) [0x5000, 0x5100) */
	TRACE = 0x6000,   /* trace 1 [0x6000, 0x6040) */
};

static struct jf_analysis *analysis_with_records(void)
{
	struct jf_analysis *a = jf_analysis_new(NULL);
	struct jf_emitter *em;
	struct jf_zone_reader *reader;
	struct jf_zone_record rec;
	struct jf_region r;
	struct jf_error err;
	unsigned char code[0x40];
	char dir[256], path[512];

	assert_non_null(a);
	snprintf(dir, sizeof(dir), "%s", jf_test_tmpdir());
	em = jf_emitter_open(dir, JF_EMIT_CLOCK_MONOTONIC | JF_EMIT_NO_MARKER_CALLS);
	assert_non_null(em);
	assert_true(jf_emit_interp_range(em, JF_INTERP_EVAL_LOOP, INTERP, 0x2000, "interpreter"));
	assert_true(jf_emit_interp_range(em, JF_INTERP_DEOPT, EXIT, EXIT + 0x100, "exit code"));
	assert_true(jf_emit_interp_range(em, JF_INTERP_INSTRUMENTATION, EMITTER, EMITTER + 0x100,
					 "emitter"));
	memset(code, 0x90, sizeof(code));
	memset(&r, 0, sizeof(r));
	r.name = "trace 1";
	r.addr = TRACE;
	r.code = code;
	r.size = sizeof(code);
	r.kind = JF_REGION_TRACE;
	r.trace_id = 1;
	assert_true(jf_emit_region_load(em, &r));
	snprintf(path, sizeof(path), "%s", jf_emitter_path(em));
	jf_emitter_close(em);

	assert_int_equal(jf_analysis_add_native(a, RUNTIME, RUNTIME + 0x1000, JF_CLASS_RUNTIME,
						"runtime"), 0);
	assert_int_equal(jf_zone_reader_open(&reader, path, &err), 0);
	while (jf_zone_next(reader, &rec, &err) > 0) {
		/* the emitter's range of its own code in this process plays no part */
		if (rec.id == JF_ZONE_INTERP_RANGE && rec.u.interp_range.start >= 0x10000)
			continue;
		rec.tid = (uint32_t)-1; /* the flow names no thread: source 0's, tid -1 */
		assert_int_equal(jf_analysis_zone_record(a, reader, &rec), 0);
	}
	jf_zone_reader_close(reader);
	return a;
}

static void block(struct jf_analysis *a, uint64_t start, uint32_t n, enum jf_block_end end)
{
	struct jf_flow f;

	memset(&f, 0, sizeof(f));
	f.kind = JF_FLOW_BLOCK;
	f.ip = start;
	f.u.block.start = start;
	f.u.block.last = start + n - 1;
	f.u.block.ninsn = n;
	f.u.block.next = start + n;
	f.u.block.last_size = 1;
	f.u.block.isa = JF_ISA_X86_64;
	f.u.block.end = (uint8_t)end;
	assert_int_equal(jf_analysis_flow(a, &f), 0);
}

static void test_exit_code_and_what_it_calls(void **state)
{
	struct jf_analysis *a = analysis_with_records();
	struct jf_analysis_result r;
	const struct jf_split_result *s;

	(void)state;
	block(a, INTERP, 10, JF_END_JUMP_INDIRECT);        /* interpreter */
	block(a, TRACE, 5, JF_END_JUMP);                    /* jitted: to an exit */
	block(a, EXIT, 7, JF_END_CALL);                     /* exit handling ... */
	block(a, RUNTIME, 20, JF_END_CALL);                 /* ... its callee */
	block(a, INTERP + 0x100, 4, JF_END_CALL);           /* ... a VM routine it calls */
	block(a, EMITTER, 3, JF_END_RETURN);                /* instrumentation, even here */
	block(a, RUNTIME + 0x100, 6, JF_END_RETURN);        /* exit handling */
	block(a, RUNTIME + 0x20, 2, JF_END_RETURN);         /* exit handling: back to ... */
	block(a, EXIT + 7, 9, JF_END_JUMP_INDIRECT);        /* ... the exit code, which goes on */
	block(a, INTERP + 0x200, 11, JF_END_CALL);          /* interpreter */
	block(a, RUNTIME + 0x200, 8, JF_END_RETURN);        /* runtime native */
	block(a, TRACE, 5, JF_END_JUMP);                    /* jitted: a second exit */
	block(a, EXIT, 7, JF_END_CALL);                     /* exit handling */
	block(a, RUNTIME, 20, JF_END_JUMP);                 /* exit handling */
	block(a, TRACE, 5, JF_END_CALL);                    /* jitted: ends it */
	block(a, RUNTIME + 0x300, 4, JF_END_RETURN);        /* runtime native */
	assert_int_equal(jf_analysis_result(a, &r), 0);
	s = &r.total;
	assert_int_equal(s->by_class[JF_CLASS_EXIT_HANDLING], 7 + 20 + 4 + 6 + 2 + 9 + 7 + 20);
	assert_int_equal(s->by_class[JF_CLASS_INTERPRETER], 10 + 11);
	assert_int_equal(s->by_class[JF_CLASS_TRACE], 5 + 5 + 5);
	assert_int_equal(s->by_class[JF_CLASS_INSTRUMENTATION], 3);
	assert_int_equal(s->by_class[JF_CLASS_RUNTIME], 8 + 4);
	/* exit handling is native in the coarse split; no phase was told */
	assert_int_equal(s->insns[JF_SPLIT_NATIVE], 7 + 20 + 4 + 6 + 2 + 9 + 7 + 20 + 8 + 4);
	assert_int_equal(s->phase_spans[JF_PHASE_EXIT_HANDLING], 0);
	assert_int_equal(r.phases_told, 0);
	jf_analysis_result_free(&r);
	jf_analysis_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_code_and_what_it_calls),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
