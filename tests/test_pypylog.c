/* The PYPYLOG reader on a real log (tests/data/pypy/loop.pypylog: Debian's pypy3 7.3.11
 * running tests/data/pypy/loop.py with
 * PYPYLOG=jit-backend-dump,jit-backend-addr,jit-log-opt,jit-backend-counts) and on
 * hostile variants of it. Expected values were read off the log's text with grep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitflow/pypylog.h"
#include "jitflow/pypylog_layout.h"
#include "jitflow/pypylog_zone.h"
#include "jitflow/zone.h"
#include "jitflow/zone_format.h"
#include "test_support.h"

static char *data_file(const char *name, size_t *size)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/tests/data/pypy/%s", jf_test_source_dir(), name);
	return jf_test_read_file(path, size);
}

static char *real_log(size_t *size)
{
	return data_file("loop.pypylog", size);
}

static struct jf_pypylog *parse(const char *text, size_t size)
{
	struct jf_pypylog *log;
	struct jf_error err;

	assert_int_equal(jf_pypylog_parse(&log, text, size, "loop.pypylog", &err), 0);
	return log;
}

static void real_log_is_read_whole(void **state)
{
	size_t size;
	char *text = real_log(&size);
	struct jf_pypylog *log = parse(text, size);
	const struct jf_pypylog_trace *loop, *bridge;
	const struct jf_pypylog_op *op;
	size_t i, guards = 0;

	(void)state;
	assert_int_equal(log->problems, 0);
	assert_int_equal(log->unclosed, 0);
	assert_int_equal(log->ndumps, 59);         /* grep -c CODE_DUMP */
	assert_int_equal(log->sections, 64);
	assert_int_equal(log->dumps[0].addr, 0x7fe107924000);
	assert_int_equal(log->dumps[0].size, 157);
	assert_int_equal(log->dumps[0].tsc, 0x2e067ed83b834);
	assert_int_equal(log->dumps[0].bytes[0], 0x48);
	assert_int_equal(log->ntraces, 2);

	loop = jf_pypylog_loop(log, 1);
	assert_non_null(loop);
	assert_string_equal(loop->name, "run;/tmp/pypy/loop.py:5-8~#24 FOR_ITER");
	assert_int_equal(loop->start, 0x7fe107925b3b);
	assert_int_equal(loop->end, 0x7fe107925e30);
	assert_int_equal(loop->gc_table, 0x7fe1079259e0);
	assert_int_equal(loop->entry, 0x7fe107925ab0);
	assert_int_equal(loop->resops, 0x7fe107925b3b);
	assert_int_equal(loop->failures, 0x7fe107925e30);
	assert_int_equal(loop->code_end, 0x7fe1079260e3);
	assert_int_equal(loop->nops, 153);

	op = &log->ops[loop->first_op];
	assert_true(op->has_offset);
	assert_int_equal(op->offset, 360);
	assert_string_equal(op->name, "getfield_gc_r");
	for (i = 0; i < loop->nops; i++)
		guards += log->ops[loop->first_op + i].kind == JF_PYPY_OP_GUARD;
	assert_int_equal(guards, 24);
	/* "+452: label(..., descr=TargetToken(140604473448336))", then the merge point */
	op = &log->ops[loop->first_op + 16];
	assert_int_equal(op->kind, JF_PYPY_OP_LABEL);
	assert_int_equal(op->offset, 452);
	assert_int_equal(op->descr, 140604473448336ull);
	op++;
	assert_int_equal(op->kind, JF_PYPY_OP_MERGE_POINT);
	assert_false(op->has_offset);
	assert_string_equal(op->code, "run;/tmp/pypy/loop.py:5-8");
	assert_int_equal(op->bytecode, 24);
	assert_string_equal(op->bytecode_name, "FOR_ITER");
	op++;
	assert_int_equal(op->kind, JF_PYPY_OP_GUARD);
	assert_string_equal(op->name, "guard_value");
	assert_int_equal(op->descr, 0x7fe107b02fe0);
	assert_int_equal(log->ops[loop->first_op + loop->nops - 1].kind, JF_PYPY_OP_END);

	bridge = jf_pypylog_bridge(log, 0x7fe107b031c0);
	assert_non_null(bridge);
	assert_int_equal(bridge->start, 0x7fe107926250);
	assert_int_equal(bridge->end, 0x7fe1079263a0);
	assert_int_equal(bridge->entry, 0x7fe107926250);
	assert_int_equal(bridge->resops, 0x7fe10792625e);
	assert_int_equal(bridge->code_end, 0x7fe10792652f);
	assert_int_equal(bridge->nops, 61);

	assert_true(log->has_counts);
	assert_int_equal(log->ncounts, 4);
	assert_int_equal(log->counts[0].kind, JF_PYPY_COUNT_ENTRY);
	assert_int_equal(log->counts[0].id, 1);
	assert_int_equal(log->counts[0].count, 201);
	assert_int_equal(log->counts[2].kind, JF_PYPY_COUNT_LABEL);
	assert_int_equal(log->counts[2].id, 140604473448416ull);
	assert_int_equal(log->counts[2].count, 1757);
	assert_int_equal(log->counts[3].kind, JF_PYPY_COUNT_BRIDGE);
	assert_int_equal(log->counts[3].id, 0x7fe107b031c0); /* decimal in the log */
	assert_int_equal(log->counts[3].count, 80);
	jf_pypylog_free(log);
	free(text);
}

/* Every prefix of the log (cut inside hex, inside a name, after a section start): no
 * crash, and a log cut inside a section says so. */
static void truncated_logs(void **state)
{
	size_t size, cut;
	char *text = real_log(&size);

	(void)state;
	for (cut = 0; cut < size; cut += cut < 4096 ? 7 : 997) {
		struct jf_pypylog *log = parse(text, cut);

		assert_true(log->ndumps <= 59);
		jf_pypylog_free(log);
	}
	{
		/* cut in the middle of line 4 (the first CODE_DUMP): odd hex, open section */
		char *nl = text;
		int line;
		struct jf_pypylog *log;

		for (line = 1; line < 4; line++)
			nl = strchr(nl, '\n') + 1;
		log = parse(text, (size_t)(nl - text) + 41);
		assert_int_equal(log->problems, 2);
		assert_string_equal(log->problem[0],
				    "loop.pypylog:4: CODE_DUMP: odd number of hex digits");
		assert_non_null(strstr(log->problem[1], "ends inside 1 open section"));
		jf_pypylog_free(log);
	}
	free(text);
}

static char *replace(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t n = strlen(text) - strlen(from) + strlen(to);
	char *out = malloc(n + 1);

	assert_non_null(at);
	assert_non_null(out);
	memcpy(out, text, (size_t)(at - text));
	strcpy(out + (at - text), to);
	strcat(out, at + strlen(from));
	return out;
}

static void garbled_lines_are_located_and_skipped(void **state)
{
	size_t size;
	char *text = real_log(&size), *bad;
	struct jf_pypylog *log;

	(void)state;
	/* line 117: "CODE_DUMP @7fe107925be3 +0  62020000" */
	bad = replace(text, "@7fe107925be3 +0  62020000", "@7fe107925be3 +0  620Z0000");
	log = parse(bad, strlen(bad));
	assert_int_equal(log->problems, 1);
	assert_string_equal(log->problem[0],
			    "loop.pypylog:117: CODE_DUMP: hex digit 4 ('Z') is not a hex digit");
	assert_int_equal(log->ndumps, 58);
	assert_int_equal(log->ncounts, 4);
	jf_pypylog_free(log);
	free(bad);

	bad = replace(text, "entry 1:201", "entry one:201");
	log = parse(bad, strlen(bad));
	assert_int_equal(log->problems, 1);
	assert_non_null(strstr(log->problem[0], "loop.pypylog:535: expected \"entry N:COUNT\""));
	assert_int_equal(log->ncounts, 3);
	jf_pypylog_free(log);
	free(bad);

	bad = replace(text, "has address 0x7fe107925b3b to", "has address 0x7fe107925b3b till");
	log = parse(bad, strlen(bad));
	assert_true(log->problems >= 1);
	assert_non_null(strstr(log->problem[0], "loop.pypylog:107: expected \"Loop N"));
	assert_int_equal(log->ntraces, 2); /* the loop is still known from its ops */
	jf_pypylog_free(log);
	free(bad);
	free(text);
}

/* Sections of other kinds (GC, tracing) nested in and between the ones read. */
static void unknown_sections_are_skipped(void **state)
{
	size_t size;
	char *text = real_log(&size), *mixed;
	struct jf_pypylog *log;
	const struct jf_pypylog_trace *loop;

	(void)state;
	mixed = replace(text, "+360: p2 = getfield_gc_r",
			"[2e067f0fc2900] {gc-minor\nsome GC text: 12\n+1: not an op(\n"
			"[2e067f0fc2a00] gc-minor}\n+360: p2 = getfield_gc_r");
	log = parse(mixed, strlen(mixed));
	assert_int_equal(log->problems, 0);
	assert_int_equal(log->unknown_sections, 1);
	loop = jf_pypylog_loop(log, 1);
	assert_int_equal(loop->nops, 153);
	jf_pypylog_free(log);
	free(mixed);
	free(text);
}

/* Guard branches found in the code against PyPy's own patches: right after assembling
 * the loop, PyPy writes the 4-byte offset of each guard's jump (22 CODE_DUMPs at
 * branch + 2, the rel32 of "0f 8x rel32"); when it attaches the bridge it rewrites the
 * offset of that guard's jump (the CODE_DUMP at 0x7fe107925dbe). Counter addresses are
 * those objdump shows for "movabs r11, ...; inc qword [r11]". */
static void layout_matches_pypys_own_patches(void **state)
{
	static const uint64_t fixups[] = {
		0x7fe107925be3, 0x7fe107925bec, 0x7fe107925bf9, 0x7fe107925c0a, 0x7fe107925c22,
		0x7fe107925c56, 0x7fe107925c69, 0x7fe107925c79, 0x7fe107925c8b, 0x7fe107925ca7,
		0x7fe107925cb3, 0x7fe107925cc7, 0x7fe107925cee, 0x7fe107925d07, 0x7fe107925d26,
		0x7fe107925d3d, 0x7fe107925d82, 0x7fe107925dbe, 0x7fe107925dca, 0x7fe107925dde,
		0x7fe107925df4, 0x7fe107925e0b,
	};
	size_t size, i, j, loop_guards = 0, with_branch = 0;
	char *text = real_log(&size);
	struct jf_pypylog *log = parse(text, size);
	struct jf_pypylog_layout *lay;
	struct jf_error err;

	(void)state;
	assert_int_equal(jf_pypylog_layout(log, &lay, &err), 0);
	assert_int_equal(lay->problems, 0);
	assert_int_equal(lay->traces_done, 2);
	for (i = 0; i < lay->nguards; i++) {
		const struct jf_pypylog_guard_site *g = &lay->guards[i];

		if (log->traces[g->trace].kind != JF_PYPY_LOOP)
			continue;
		loop_guards++;
		if (!g->branch) {
			assert_string_equal(g->op->name, "guard_not_invalidated");
			continue;
		}
		with_branch++;
		for (j = 0; j < sizeof(fixups) / sizeof(fixups[0]); j++)
			if (fixups[j] == g->branch + 2)
				break;
		assert_true(j < sizeof(fixups) / sizeof(fixups[0]));
		if (g->descr == 0x7fe107b031c0)
			assert_int_equal(g->branch + 2, 0x7fe107925dbe);
	}
	assert_int_equal(loop_guards, 24);
	assert_int_equal(with_branch, 22);
	assert_int_equal(lay->npoints, 4);
	assert_int_equal(lay->points[0].kind, JF_PYPY_COUNT_ENTRY);
	assert_int_equal(lay->points[0].id, 1);
	assert_int_equal(lay->points[0].addr, 0x7fe107925b3b);
	assert_int_equal(lay->points[1].kind, JF_PYPY_COUNT_LABEL);
	assert_int_equal(lay->points[1].id, 140604473448336ull);
	assert_int_equal(lay->points[1].addr, 0x7fe107925bd0);
	assert_int_equal(lay->points[2].id, 140604473448416ull);
	assert_int_equal(lay->points[2].addr, 0x7fe107925d70);
	assert_int_equal(lay->points[3].kind, JF_PYPY_COUNT_BRIDGE);
	assert_int_equal(lay->points[3].id, 0x7fe107b031c0);
	jf_pypylog_layout_free(lay);
	jf_pypylog_free(log);
	free(text);
}

/* The layout of tests/data/pypy/NAME, which must lay out every trace without a problem. */
static struct jf_pypylog_layout *laid_out_whole(const char *name, char **text,
						struct jf_pypylog **log)
{
	size_t size;
	struct jf_pypylog_layout *lay;
	struct jf_error err;

	*text = data_file(name, &size);
	*log = parse(*text, size);
	assert_int_equal((*log)->problems, 0);
	assert_int_equal(jf_pypylog_layout(*log, &lay, &err), 0);
	assert_int_equal(lay->problems, 0);
	assert_int_equal(lay->traces_done, (*log)->ntraces);
	return lay;
}

/* Every counter PyPy reported has exactly one instruction in the layout. */
static void every_count_has_its_point(const struct jf_pypylog *log,
				      const struct jf_pypylog_layout *lay)
{
	size_t i, j;

	for (i = 0; i < log->ncounts; i++) {
		int found = 0;

		for (j = 0; j < lay->npoints; j++)
			found += lay->points[j].kind == log->counts[i].kind &&
				 lay->points[j].id == log->counts[i].id;
		assert_int_equal(found, 1);
	}
}

/* A bigger real log (tests/data/pypy/phases.py, --jit threshold=200,trace_eagerness=20:
 * 6 loops, 11 bridges, some of bridges). When PyPy attaches a bridge it rewrites the
 * 4-byte offset of its guard's jump: for every bridge, the branch found for its guard must
 * be the one PyPy patched. Guards that leave without a jump have none, and every counter
 * PyPy reports has its instruction. */
static void layout_matches_every_bridge_patch(void **state)
{
	size_t i, j, bridges = 0;
	char *text;
	struct jf_pypylog *log;
	struct jf_pypylog_layout *lay = laid_out_whole("phases.pypylog", &text, &log);

	(void)state;
	for (i = 0; i < log->ntraces; i++) {
		const struct jf_pypylog_trace *t = &log->traces[i];
		const struct jf_pypylog_guard_site *g = NULL;
		int patched = 0;

		if (t->kind != JF_PYPY_BRIDGE)
			continue;
		bridges++;
		for (j = 0; j < lay->nguards; j++)
			if (lay->guards[j].descr == t->guard)
				g = &lay->guards[j];
		assert_non_null(g);
		assert_true(g->branch != 0);
		for (j = 0; j < log->ndumps; j++)
			patched |= log->dumps[j].tsc > t->tsc && log->dumps[j].size == 4 &&
				   log->dumps[j].addr == g->branch + 2;
		assert_true(patched);
	}
	assert_int_equal(bridges, 11);
	for (j = 0; j < lay->nguards; j++)
		if (!strcmp(lay->guards[j].op->name, "guard_not_invalidated") ||
		    !strncmp(lay->guards[j].op->name, "guard_not_forced", 16))
			assert_int_equal(lay->guards[j].branch, 0);
	assert_int_equal(log->ncounts, 29);
	every_count_has_its_point(log, lay);
	jf_pypylog_layout_free(lay);
	jf_pypylog_free(log);
	free(text);
}

/* A real log of three threads (tests/data/pypy/vm_phases.py recorded by `jitflow record`):
 * Loop 1 (PyPy's library) ends in guard_not_forced_2, which PyPy gives no failure stub;
 * Loop 3 (main_loop) has two guard_not_invalidated that were invalidated after it ran, when
 * the threads started: PyPy then wrote "jmp stub" (E9 rel32) at each one's "+N" offset
 * from the gc table, over the code that follows (the dumps at log lines 742 and 747). Every
 * trace is laid out all the same: each counter PyPy reports has its instruction, each
 * guard with a branch has it where PyPy patched a rel32 right after assembling the trace,
 * and the invalidation jumps are not taken for the trace's code. */
static void layout_of_stubless_and_invalidated_guards(void **state)
{
	size_t i, j, stubless = 0, invalidated = 0;
	char *text;
	struct jf_pypylog *log;
	struct jf_pypylog_layout *lay = laid_out_whole("vm_phases.pypylog", &text, &log);
	const struct jf_pypylog_trace *loop3 = jf_pypylog_loop(log, 3);

	(void)state;
	assert_int_equal(log->ntraces, 7);
	for (j = 0; j < lay->nguards; j++) {
		const struct jf_pypylog_guard_site *g = &lay->guards[j];
		const struct jf_pypylog_trace *t = &log->traces[g->trace];
		int patched = 0;

		if (!strcmp(g->op->name, "guard_not_forced_2")) {
			assert_int_equal(g->stub, 0);
			assert_int_equal(g->branch, 0);
			stubless++;
			continue;
		}
		assert_true(g->stub >= t->failures && g->stub < t->code_end);
		if (!strcmp(g->op->name, "guard_not_invalidated")) {
			assert_int_equal(g->branch, 0);
			continue;
		}
		assert_true(g->branch != 0);
		for (i = 0; i < log->ndumps; i++)
			patched |= log->dumps[i].line < log->ops[t->first_op].line &&
				   log->dumps[i].size == 4 && log->dumps[i].addr == g->branch + 2;
		assert_true(patched);
	}
	assert_int_equal(stubless, 1);
	assert_non_null(loop3);
	for (i = 0; i < loop3->nops; i++) {
		const struct jf_pypylog_op *op = &log->ops[loop3->first_op + i];

		if (strcmp(op->name, "guard_not_invalidated"))
			continue;
		for (j = 0; j < log->ndumps; j++)
			invalidated += log->dumps[j].addr == loop3->gc_table + op->offset &&
				       log->dumps[j].size == 5 && log->dumps[j].bytes[0] == 0xe9;
	}
	assert_int_equal(invalidated, 2);
	assert_int_equal(log->ncounts, 15);
	every_count_has_its_point(log, lay);
	assert_int_equal(lay->npoints, log->ncounts);
	jf_pypylog_layout_free(lay);
	jf_pypylog_free(log);
	free(text);
}

/* The zone file of the real log: without a placement, each write is dated by its section's
 * TSC stamp converted with the trace's conversion (0x2e067ed83b834 is the first dump
 * section's stamp in the log's text), or kept as TSC with ARCH_TIMESTAMP; the code objects
 * are loop.py's functions with the lines of their `def` in tests/data/pypy/loop.py (run: 5,
 * A.f: 2, B.f: 4); the pc maps say their kinds are code objects. */
static void zone_dates_by_tsc_and_names_code_objects(void **state)
{
	size_t size;
	char *text = real_log(&size), path[4096];
	struct jf_pypylog *log = parse(text, size);
	struct jf_pypylog_layout *lay;
	struct jf_pypylog_zone_stats st;
	struct jf_tsc_conversion conv = { .valid = 1, .time_shift = 3, .time_mult = 1,
					  .time_zero = 1000 };
	struct jf_zone_reader *r;
	struct jf_zone_record rec;
	struct jf_error err;
	int pass, loads, run = 0, f2 = 0, f4 = 0, maps = 0;

	(void)state;
	assert_int_equal(jf_pypylog_layout(log, &lay, &err), 0);
	snprintf(path, sizeof(path), "%s/pypylog.zone", jf_test_tmpdir());
	for (pass = 0; pass < 2; pass++) {
		assert_int_equal(jf_pypylog_write_zone(log, lay, NULL, pass ? NULL : &conv, path, &st,
						       &err), 0);
		assert_int_equal(jf_zone_reader_open(&r, path, &err), 0);
		assert_int_equal(jf_zone_reader_header(r)->arch_timestamp, pass);
		loads = 0;
		while (jf_zone_next(r, &rec, &err) == 1) {
			if (rec.id == JF_JITDUMP_CODE_LOAD && !loads++)
				assert_int_equal(rec.timestamp, pass ? 0x2e067ed83b834ull :
						 (0x2e067ed83b834ull >> 3) + 1000);
			if (rec.id == JF_ZONE_PC_MAP) {
				assert_true(rec.u.pc_map.flags & JF_PC_MAP_CODE_OBJECTS);
				maps++;
			}
			if (rec.id != JF_ZONE_CODE_OBJECT)
				continue;
			if (strcmp(rec.u.code_object.file, "/tmp/pypy/loop.py"))
				continue; /* PyPy's library */
			if (!strcmp(rec.u.code_object.name, "run"))
				run += rec.u.code_object.line == 5;
			else if (!strcmp(rec.u.code_object.name, "f"))
				rec.u.code_object.line == 2 ? f2++ : rec.u.code_object.line == 4 ? f4++ : fail();
			else
				fail_msg("code object %s", rec.u.code_object.name);
		}
		jf_zone_reader_close(r);
	}
	assert_int_equal(run, 2);
	assert_int_equal(f2, 2);
	assert_int_equal(f4, 2);
	assert_true(maps > 0);
	assert_true(st.code_objects >= 3);
	assert_int_equal(st.unloaded, 0); /* every trace of the real log has its dump */
	jf_pypylog_layout_free(lay);
	jf_pypylog_free(log);
	free(text);
}

/* A trace whose entry lies before its gc table (the real log with Loop 1's "function:"
 * moved 16 bytes under "gc table: 0x7fe1079259e0"): no dump loads it; the stats and the
 * command line say which trace, by its log line (107: "Loop 1 ... has address"). */
static void unloaded_traces_are_told(void **state)
{
	size_t size;
	char *text = real_log(&size), path[4096], cmd[8192], *out, *at;
	struct jf_pypylog *log;
	struct jf_pypylog_layout *lay;
	struct jf_pypylog_zone_stats st;
	struct jf_error err;
	FILE *f;

	(void)state;
	at = strstr(text, "function: 0x7fe107925ab0");
	assert_non_null(at);
	memcpy(at, "function: 0x7fe1079259d0", strlen("function: 0x7fe1079259d0"));
	log = parse(text, size);
	assert_int_equal(jf_pypylog_layout(log, &lay, &err), 0);
	snprintf(path, sizeof(path), "%s/unloaded.zone", jf_test_tmpdir());
	assert_int_equal(jf_pypylog_write_zone(log, lay, NULL, NULL, path, &st, &err), 0);
	assert_int_equal(st.unloaded, 1);
	assert_int_equal(st.first_unloaded, 107);

	snprintf(path, sizeof(path), "%s/unloaded.pypylog", jf_test_tmpdir());
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, size, f), size);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "'%s' report --pypylog '%s' --perf '%s/traces/minivm-bridge/"
		 "perf.data' 2>&1", jf_test_cli(), path, jf_test_source_dir());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "unloaded.pypylog: line 107: no code dump holds this trace's "
				    "code whole with its entry inside (1 trace in all)"));
	free(out);
	jf_pypylog_layout_free(lay);
	jf_pypylog_free(log);
	free(text);
}

/* `--pypylog FILE` on the command line: it needs an Intel PT trace to date the writes, one
 * log at a time; with a perf.data the report says the writes were placed by TSC stamps.
 * (traces/minivm-bridge is an Intel PT recording without PyPy: nothing of the log runs. Its
 * minivm was recorded at a path that no other machine has, so the recording folder is given,
 * whose saved copies of the code decode it.) */
static void cli_pypylog_input(void **state)
{
	char cmd[8192], *out;
	const char *src = jf_test_source_dir();

	(void)state;
	snprintf(cmd, sizeof(cmd), "'%s' report --pypylog '%s/tests/data/pypy/loop.pypylog' 2>&1",
		 jf_test_cli(), src);
	assert_int_not_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "loop.pypylog: PyPy's log needs an Intel PT trace (--perf "
				    "or --pt)"));
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' report --pypylog a.log --pypylog b.log 2>&1",
		 jf_test_cli());
	assert_int_not_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "b.log: one PyPy log at a time"));
	free(out);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s/traces/minivm-bridge' "
		 "--pypylog '%s/tests/data/pypy/loop.pypylog' 2>&1",
		 jf_test_cli(), src, src);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_non_null(strstr(out, "decode errors 0,"));
	assert_non_null(strstr(out, "PyPy's code writes placed by their TSC stamps"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(real_log_is_read_whole),
		cmocka_unit_test(truncated_logs),
		cmocka_unit_test(garbled_lines_are_located_and_skipped),
		cmocka_unit_test(unknown_sections_are_skipped),
		cmocka_unit_test(layout_matches_pypys_own_patches),
		cmocka_unit_test(layout_matches_every_bridge_patch),
		cmocka_unit_test(layout_of_stubless_and_invalidated_guards),
		cmocka_unit_test(zone_dates_by_tsc_and_names_code_objects),
		cmocka_unit_test(unloaded_traces_are_told),
		cmocka_unit_test(cli_pypylog_input),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
