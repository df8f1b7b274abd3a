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
 * and no crash. */
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

static const cJSON *row(const cJSON *hotspot, const char *key, double compile_id)
{
	const cJSON *o;

	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(hotspot, key))
		if (jf_test_num(o, "compile_id") == compile_id)
			return o;
	fail_msg("no compile id %.0f in %s", compile_id, key);
	return NULL;
}

static const cJSON *trap_at(const cJSON *hotspot, double offset)
{
	const cJSON *o;

	cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(hotspot, "traps"))
		if (jf_test_num(o, "offset") == offset)
			return o;
	fail_msg("no trap at offset %#.0f", offset);
	return NULL;
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

static void test_entries_deopts_not_entrant_and_frames(void **state)
{
	struct jf_analysis *a = jf_analysis_new(&(struct jf_analysis_config){ 0 });
	struct jf_zone_reader *reader = NULL;
	struct jf_analysis_result r;
	char *json = NULL, *text = NULL;
	size_t len;
	FILE *out;
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
	assert_int_equal(jf_analysis_result(a, &r), 0);
	out = open_memstream(&json, &len);
	jf_report_json(out, &r, NULL);
	fclose(out);
	out = open_memstream(&text, &len);
	jf_report_summary(out, &r, NULL);
	jf_report_guards(out, &r, NULL);
	fclose(out);

	/* the nmethods table's tier and entries columns */
	snprintf(nmethod_row, sizeof(nmethod_row), " %-14s %10d ", "C2", 3);
	doc = cJSON_Parse(json);
	if (!doc)
		fail_msg("the report is no JSON: %.300s", json);
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
	free(json);
	free(text);
	jf_analysis_result_free(&r);
	jf_analysis_free(a);
	jf_zone_reader_close(reader);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries_deopts_not_entrant_and_frames),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
