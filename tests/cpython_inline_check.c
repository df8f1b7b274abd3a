/* Where jitflow puts a function that a CPython executor inlined (cpython_check.h): its
 * bytecode ranges in the report, its frame in the call stacks over its caller's, and the
 * call the module's INLINE_FRAMES record names, each against what CPython says of the
 * program (code_facts.py) and of the same run (pystats). */
#include "cpython_check.h"
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What code_facts.py printed about a caller and its callee (CPython's view, same build),
 * and whether the executor pushed the callee's frame ("pushes N", when the program says). */
struct inline_facts {
	char callee[64], caller[64];
	unsigned callee_line, callee_size, caller_line, loop_from, loop_to, call;
	int pushes;                 /* -1: not said */
};

static void read_inline_facts(const char *out_path, struct inline_facts *f)
{
	FILE *in = fopen(out_path, "r");
	char line[512];
	int got = 0;

	memset(f, 0, sizeof(*f));
	f->pushes = -1;
	if (!in)
		fail_msg("%s: cannot read the program's output", out_path);
	while (fgets(line, sizeof(line), in)) {
		got += sscanf(line, "callee %63s %u %u", f->callee, &f->callee_line,
			      &f->callee_size) == 3;
		got += sscanf(line, "caller %63s %u %u %u", f->caller, &f->caller_line,
			      &f->loop_from, &f->loop_to) == 4;
		got += sscanf(line, "call %u", &f->call) == 1;
		sscanf(line, "pushes %d", &f->pushes);
	}
	fclose(in);
	if (got != 3)
		fail_msg("%s: no callee, caller and call lines (code_facts.py)", out_path);
}

/* pystats' execution_count of _PUSH_FRAME: the calls that JIT code made into a frame it
 * pushed itself, the caller's loop's calls of the callee when nothing else inlines. */
static uint64_t frames_pushed(const char *pystats_path)
{
	char *text = jf_test_read_file(pystats_path, NULL), *line, *save = NULL;
	unsigned long long v = 0;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "uops[_PUSH_FRAME].execution_count : %llu", &v) == 1)
			break;
	free(text);
	if (!v)
		fail_msg("%s: no _PUSH_FRAME ran in JIT code: the program does not test inlining",
			 pystats_path);
	return v;
}

/* Whether a stack frame is the guest frame of function name, first line `line`, in a file
 * ending in file_suffix: "NAME (FILE:LINE)". */
static int guest_frame_is(const cJSON *frame, const char *name, unsigned line,
			  const char *file_suffix)
{
	const char *s = jf_test_str(frame, "name");
	char tail[160];
	size_t n = strlen(name), len = strlen(s), tn;

	snprintf(tail, sizeof(tail), "%s:%u)", file_suffix, line);
	tn = strlen(tail);
	return !strcmp(jf_test_str(frame, "kind"), "guest") && !strncmp(s, name, n) &&
	       !strncmp(s + n, " (", 2) && len >= n + 2 + tn && !strcmp(s + len - tn, tail);
}

/* `jitflow stacks DIR --json`: the callee's guest frame lies either on its executor's
 * region frame (an executor of its own) or on the caller's guest frame, itself on a
 * region frame (the chain of the INLINE_FRAMES record: the caller the program's source
 * says); stacks topped by the callee's and by the caller's frames ran the instructions of
 * their bytecode ranges in the report; and the chain's stacks are entered once per frame
 * the JIT code pushed (pystats' _PUSH_FRAME executions). Only for recordings of JIT code
 * alone: where native code was traced too, its calls from the inlined code stand on the
 * executor's frame (docs/analysis.md) and each return from one enters the guest frames
 * again. */
static void check_stacks(const char *dir, const struct inline_facts *f, const char *file_suffix,
			 uint64_t callee_insns, uint64_t caller_insns, uint64_t pushed)
{
	char cmd[2048];
	cJSON *st;
	const cJSON *s;
	uint64_t on_callee = 0, on_caller = 0, chain_entries = 0;

	snprintf(cmd, sizeof(cmd), "'%s' stacks '%s' --json", jf_test_cli(), dir);
	st = jf_test_run_json(cmd);
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(st, "stacks")) {
		const cJSON *frames = cJSON_GetObjectItemCaseSensitive(s, "frames");
		int n = cJSON_GetArraySize(frames);
		const cJSON *top = cJSON_GetArrayItem(frames, n - 1);
		const cJSON *below = n > 1 ? cJSON_GetArrayItem(frames, n - 2) : NULL;
		const cJSON *under = n > 2 ? cJSON_GetArrayItem(frames, n - 3) : NULL;
		uint64_t insns = (uint64_t)jf_test_num(s, "insns");

		if (n < 2)
			continue;
		if (guest_frame_is(top, f->caller, f->caller_line, file_suffix)) {
			on_caller += insns;
			continue;
		}
		if (!guest_frame_is(top, f->callee, f->callee_line, file_suffix))
			continue;
		on_callee += insns;
		if (!strcmp(jf_test_str(below, "kind"), "jitted"))
			continue;
		if (!guest_frame_is(below, f->caller, f->caller_line, file_suffix) || !under ||
		    strcmp(jf_test_str(under, "kind"), "jitted"))
			fail_msg("%s: %s's frame lies on %s (%s), not on %s's over an executor", dir,
				 f->callee, jf_test_str(below, "name"), jf_test_str(below, "kind"),
				 f->caller);
		chain_entries += (uint64_t)jf_test_num(s, "entries");
	}
	cJSON_Delete(st);
	printf("%s: stacks %s;%s entered %llu times (pystats: %llu frames pushed); stacks "
	       "topped by %s %llu instructions, by %s %llu\n", dir, f->caller, f->callee,
	       (unsigned long long)chain_entries, (unsigned long long)pushed, f->callee,
	       (unsigned long long)on_callee, f->caller, (unsigned long long)on_caller);
	if (chain_entries != pushed)
		fail_msg("%s: %s's frame over %s's entered %llu times, pystats pushed %llu frames",
			 dir, f->callee, f->caller, (unsigned long long)chain_entries,
			 (unsigned long long)pushed);
	if (on_callee != callee_insns || on_caller != caller_insns)
		fail_msg("%s: stacks topped by %s ran %llu instructions, by %s %llu; their bytecode "
			 "ranges %llu and %llu", dir, f->callee, (unsigned long long)on_callee,
			 f->caller, (unsigned long long)on_caller,
			 (unsigned long long)callee_insns, (unsigned long long)caller_insns);
}

/* The zone file's INLINE_FRAMES records (`jitflow zone dump --json`): every frame of the
 * caller's code object they name is at the offset of its loop's call of the callee, the
 * only call in that loop (frames of other functions, inlined by other executors, are
 * not the program's to say). */
static void check_call_offsets(const char *dir, const struct inline_facts *f,
			       const char *file_suffix)
{
	char cmd[2048], *text, *line, *save = NULL;
	double caller_id = -1;
	unsigned frames = 0;
	size_t suffix = strlen(file_suffix);

	snprintf(cmd, sizeof(cmd), "'%s' zone dump \"$(ls '%s'/jit-*.dump)\" --json", jf_test_cli(),
		 dir);
	assert_int_equal(jf_test_run(cmd, &text), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *rec = cJSON_Parse(line);
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(rec, "record"), *e;

		if (!rec)
			fail_msg("%s: zone dump line is not JSON: %.80s", dir, line);
		if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "CODE_OBJECT")) {
			const char *file = jf_test_str(rec, "file");
			size_t len = strlen(file);

			if (!strcmp(jf_test_str(rec, "name"), f->caller) &&
			    (unsigned)jf_test_num(rec, "line") == f->caller_line && len >= suffix &&
			    !strcmp(file + len - suffix, file_suffix))
				caller_id = jf_test_num(rec, "id");
		} else if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "INLINE_FRAMES")) {
			cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(rec, "entries")) {
				if (jf_test_num(e, "op_kind") != caller_id)
					continue;
				if ((unsigned)jf_test_num(e, "bytecode_pc") != f->call)
					fail_msg("%s: an INLINE_FRAMES frame of %s calls at offset "
						 "%.0f; its loop calls %s at %u", dir, f->caller,
						 jf_test_num(e, "bytecode_pc"), f->callee, f->call);
				frames++;
			}
		}
		cJSON_Delete(rec);
	}
	free(text);
	if (!frames)
		fail_msg("%s: no INLINE_FRAMES record names %s's frame around %s", dir, f->caller,
			 f->callee);
}

int jf_test_cpython_inlined(const char *dir, const char *facts_path, const char *pystats_path,
			    const char *file_suffix, int must_push, int jit_only)
{
	struct inline_facts f;
	char cmd[4096], *text, heading[160];
	cJSON *report;
	const cJSON *b;
	uint64_t callee_insns = 0, caller_insns = 0;
	size_t suffix = strlen(file_suffix);

	read_inline_facts(facts_path, &f);
	if (must_push && f.pushes != 1)
		fail_msg("%s: no executor of %s pushes %s's frame (_opcode.get_executor): the "
			 "program does not test inlining", dir, f.caller, f.callee);
	if (f.callee_size > f.loop_from)
		fail_msg("%s: the callee's code (%u bytes) reaches the caller's loop (from %u): "
			 "a callee offset counted in the caller would not show", dir,
			 f.callee_size, f.loop_from);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	report = jf_test_run_json(cmd);
	cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(report, "bytecodes")) {
		const cJSON *co = cJSON_GetObjectItemCaseSensitive(b, "code_object");
		unsigned from = (unsigned)jf_test_num(b, "pc_from"), to = (unsigned)jf_test_num(b, "pc_to");
		uint64_t insns = (uint64_t)jf_test_num(b, "instructions");
		const char *file = co ? jf_test_str(co, "file") : "";
		size_t len = strlen(file);

		if (!co || len < suffix || strcmp(file + len - suffix, file_suffix))
			continue;
		if (!strcmp(jf_test_str(co, "name"), f.callee) &&
		    (unsigned)jf_test_num(co, "line") == f.callee_line) {
			if (from >= f.callee_size || to >= f.callee_size)
				fail_msg("%s: %s's range %u->%u is outside its %u bytes of code", dir,
					 f.callee, from, to, f.callee_size);
			callee_insns += insns;
		} else if (!strcmp(jf_test_str(co, "name"), f.caller) &&
			   (unsigned)jf_test_num(co, "line") == f.caller_line) {
			if (from < f.loop_from || to > f.loop_to)
				fail_msg("%s: %s's range %u->%u is outside its loop %u->%u", dir,
					 f.caller, from, to, f.loop_from, f.loop_to);
			caller_insns += insns;
		}
	}
	cJSON_Delete(report);
	printf("%s: %s's inlined uops: %llu instructions in its code object; %s's loop: %llu\n",
	       dir, f.callee, (unsigned long long)callee_insns, f.caller,
	       (unsigned long long)caller_insns);
	if (!callee_insns || !caller_insns)
		fail_msg("%s: no instruction in %s's (%llu) or %s's (%llu) bytecode ranges", dir,
			 f.callee, (unsigned long long)callee_insns, f.caller,
			 (unsigned long long)caller_insns);
	/* The text report names the callee's ranges by its code object. */
	snprintf(cmd, sizeof(cmd), "'%s' bytecodes '%s'", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &text), 0);
	snprintf(heading, sizeof(heading), "\n  %s  ", f.callee);
	if (!strstr(text, heading))
		fail_msg("%s: `jitflow bytecodes` has no heading for %s", dir, f.callee);
	free(text);
	/* The stacks only where the recording traced JIT code alone (the golden): there the
	 * chain's entries equal the frames pushed exactly; on a full recording they are only a
	 * lower bound, and the extra analysis costs the suite about a minute. */
	if (jit_only)
		check_stacks(dir, &f, file_suffix, callee_insns, caller_insns,
			     frames_pushed(pystats_path));
	check_call_offsets(dir, &f, file_suffix);
	return (int)(callee_insns > 0);
}
