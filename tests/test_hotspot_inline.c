/* HotSpot's bytecode ranges per compiled method, inlined methods included, against what
 * the JVM's own LogCompilation, the class file (javap) and the program's construction fix.
 *
 * tests/hotspot/Inline.java: hot(CALLS) calls inner CALLS times, inner's loop runs K
 * times per call with one i2s right after a getstatic (the only i2s of the run, so each
 * interpreted iteration is one entry into the interpreter's i2s codelet). Recorded with C1
 * alone and -Xbatch (compilations finish before the thread goes on), C1 compiles inner,
 * then hot with inner inlined (LogCompilation says so: <inline_success> under the call in
 * hot's task). The report's HotSpot section lists per nmethod the methods that ran in it
 * and their bytecode ranges (analysis/hotspot_methods.c), and:
 *
 *  - the methods of each nmethod are among the task's own method and those LogCompilation
 *    says were inlined into that compile id (an inlined method whose code vanished, e.g.
 *    an empty constructor, has no range), and for hot's nmethod exactly hot and inner;
 *  - every range's bcis lie within its method's bytecode (LogCompilation's bytes= for
 *    every method a task names; javap's last offset for Inline's);
 *  - calls: interpreted calls of inner (i2s codelet entries / K, a whole number) + entries
 *    into inner's nmethods + CALLS x entries into hot's are at most the ROUNDS x CALLS
 *    calls the program makes (no OSR compilation of either, which LogCompilation
 *    confirms); fewer when compiled code ran before its nmethod's record applied (HotSpot
 *    posts CompiledMethodLoad after installing the code);
 *  - iterations: C1 neither unrolls nor peels loops, so in each nmethod where inner's loop
 *    runs, the code its debug info gives to the loop's back-edge (javap's goto) is the same
 *    c instructions in each of the K iterations per call, and that of its test (javap's
 *    if_icmpge) in each of the K + 1 tests: the range's instructions are c x K x the calls
 *    counted there (entries of inner's nmethod; CALLS x entries of hot's), plus at most one
 *    call's worth for a call under way when the record applied (runs_fit). */
#include "hotspot_check.h"
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 300
#define CALLS 100  /* Inline.CALLS */
#define K 40       /* Inline.K */
#define MAX_METHODS 64

struct bytecode_facts {        /* javap -c of Inline.inner */
	long length, back_edge, loop_test;
};

struct method_set {
	char name[MAX_METHODS][256]; /* "pkg/Class.method", no signature */
	int n;
};

static void add_method(struct method_set *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return;
	if (s->n == MAX_METHODS)
		fail_msg("more than %d methods in one compilation", MAX_METHODS);
	snprintf(s->name[s->n++], sizeof(s->name[0]), "%s", name);
}

static int has_method(const struct method_set *s, const char *name)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return 1;
	return 0;
}

/* "java/lang/String.hashCode()I" -> "java/lang/String.hashCode" */
static void without_signature(const char *name, char *out, size_t size)
{
	snprintf(out, size, "%.*s", (int)strcspn(name, "("), name);
}

/* The element <tag id='id' ...> declared in [from, to) of the log, or NULL. */
static const char *declaration(const char *from, const char *to, const char *tag, const char *id)
{
	char key[96];
	const char *p;

	snprintf(key, sizeof(key), "<%s id='%s' ", tag, id);
	p = strstr(from, key);
	return p && p < to ? p : NULL;
}

/* A <method> element's "holder/Class.name" and bytes; a task declares the klasses and
 * methods it names, with ids of its own. */
static int method_of(const char *log_start, const char *to, const char *id, char *name,
		     size_t size, long *bytes)
{
	const char *m = declaration(log_start, to, "method", id), *k;
	char holder[16], klass[128], mname[64], b[32], *c;

	if (!m || jf_test_log_attribute(m, "holder", holder, sizeof(holder)) < 0 ||
	    jf_test_log_attribute(m, "name", mname, sizeof(mname)) < 0 ||
	    jf_test_log_attribute(m, "bytes", b, sizeof(b)) < 0)
		return -1;
	k = declaration(log_start, to, "klass", holder);
	if (!k || jf_test_log_attribute(k, "name", klass, sizeof(klass)) < 0)
		return -1;
	for (c = klass; *c; c++)
		if (*c == '.')
			*c = '/'; /* "java.lang.String" as the agent names it */
	snprintf(name, size, "%s.%s", klass, mname);
	*bytes = atol(b);
	return 0;
}

/* The methods of compile id cid: the task's own and those inlined into it, and for each
 * method the task names, its bytecode length (into lengths, by name). Returns 0 when the
 * log has no such task. */
static int compiled_methods(const char *log, long cid, struct method_set *methods,
			    struct method_set *named, long *lengths)
{
	char key[64], own[256], name[256], id[16];
	const char *task, *end, *start, *p;
	char *c;
	long bytes;
	int i;

	snprintf(key, sizeof(key), "<task compile_id='%ld' ", cid);
	task = strstr(log, key);
	if (!task)
		return 0;
	end = strstr(task, "</task>");
	if (!end)
		fail_msg("LogCompilation: task %ld has no end", cid);
	start = task;
	memset(methods, 0, sizeof(*methods));
	memset(named, 0, sizeof(*named));
	/* method='java.lang.String hashCode ()I' -> java/lang/String.hashCode */
	if (jf_test_log_attribute(task, "method", own, sizeof(own)) < 0)
		fail_msg("LogCompilation: task %ld names no method", cid);
	for (c = own; *c && *c != ' '; c++)
		if (*c == '.')
			*c = '/';
	own[strcspn(own, " ")] = '.';
	own[strcspn(own, " ")] = '\0';
	add_method(methods, own);
	if (jf_test_log_attribute(task, "bytes", id, sizeof(id)) == 0) {
		add_method(named, own);
		lengths[0] = atol(id);
	}
	for (p = task; (p = strstr(p, "<method id='")) && p < end; p++) {
		if (jf_test_log_attribute(p, "id", id, sizeof(id)) < 0 ||
		    method_of(start, end, id, name, sizeof(name), &bytes) < 0)
			continue;
		for (i = 0; i < named->n && strcmp(named->name[i], name); i++)
			;
		if (i == named->n) {
			add_method(named, name);
			lengths[i] = bytes;
		} else if (bytes > lengths[i]) {
			lengths[i] = bytes; /* overloads: the longest bounds them all */
		}
	}
	for (p = task; (p = strstr(p, "<inline_success")) && p < end; p++) {
		const char *call = NULL, *q;

		for (q = task; (q = strstr(q, "<call method='")) && q < p; q++)
			call = q;
		if (!call || jf_test_log_attribute(call, "method", id, sizeof(id)) < 0 ||
		    method_of(start, end, id, name, sizeof(name), &bytes) < 0)
			fail_msg("LogCompilation: an inlining in task %ld names no method", cid);
		add_method(methods, name);
	}
	return 1;
}

/* The methods around `method`'s code in task cid, outermost first ("Class.name"), as
 * LogCompilation nests them: an inlined method's <parse> inside its caller's, the task's
 * own method the outermost. Returns how many (0: the task's own method), -1 when the task
 * does not parse `method`. */
static int inline_path(const char *log, long cid, const char *method, char path[][256], int max)
{
	char key[64], id[16], name[256], open[16][256];
	const char *task, *end, *p;
	long bytes;
	int depth = 0, i;

	snprintf(key, sizeof(key), "<task compile_id='%ld' ", cid);
	if (!(task = strstr(log, key)) || !(end = strstr(task, "</task>")))
		return -1;
	for (p = task;;) {
		const char *o = strstr(p, "<parse method='"), *c = strstr(p, "</parse>");

		if (c && c < end && (!o || c < o)) {
			depth -= depth > 0;
			p = c + 1;
			continue;
		}
		if (!o || o >= end)
			return -1;
		p = o + 1;
		if (jf_test_log_attribute(o, "method", id, sizeof(id)) < 0 ||
		    method_of(task, end, id, name, sizeof(name), &bytes) < 0)
			fail_msg("LogCompilation: a <parse> of task %ld names no method", cid);
		if (!strcmp(name, method)) {
			for (i = 0; i < depth && i < max; i++)
				memcpy(path[i], open[i], sizeof(path[i]));
			return depth;
		}
		if (depth < 16)
			snprintf(open[depth], sizeof(open[depth]), "%s", name);
		depth++;
	}
}

/* Whether a frame's name ("Inline.inner(I)I (Inline.java:13)") is method "Inline.inner". */
static int frame_is(const char *frame, const char *method)
{
	size_t n = strlen(method);

	return !strncmp(frame, method, n) && frame[n] == '(';
}

/* The instructions of `method`'s ranges in the report's nmethod of compile id cid. */
static double method_insns(const cJSON *hotspot, long cid, const char *method)
{
	const cJSON *nm, *m, *g;
	double n = 0;

	cJSON_ArrayForEach(nm, cJSON_GetObjectItemCaseSensitive(hotspot, "compiled_methods")) {
		if (atol(jf_test_str(nm, "nmethod") + strlen("nmethod ")) != cid)
			continue;
		cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(nm, "methods"))
			if (frame_is(jf_test_str(m, "method"), method))
				cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(m, "ranges"))
					n += jf_test_num(g, "instructions");
	}
	return n;
}

/* The call stacks through Inline's nmethods (jitflow stacks): the guest frames over an
 * nmethod's region frame are its inline chain, the pc maps' innermost method inside the
 * methods LogCompilation's parse tree puts around it (inner inside hot in hot's nmethod,
 * on its own in inner's); per nmethod and method, the instructions of the stacks topped by
 * the method's frame are its ranges' in the report; and each entry into hot's nmethod
 * makes CALLS calls of inner, so inner's inlined frame is entered CALLS times per entry
 * (give or take a call of hot under way when the nmethod's record applied, and an entry
 * of hot's per signal: one written as an overflow hides that entry, not the calls of
 * inner after the handler returns; see runs_fit). */
static void check_stacks(const char *dir, const char *log, const cJSON *hotspot,
			 double hot_entries, double signals)
{
	static const char *const methods[] = { "Inline.hot", "Inline.inner" };
	char cmd[2048], path[16][256];
	cJSON *st = NULL;
	const cJSON *s, *f;
	double insns[8][2] = { { 0 } }, inner_in_hot_entries = 0;
	long cids[8];
	int i, m, ncids = 0, chains = 0;

	snprintf(cmd, sizeof(cmd), "'%s' stacks '%s' --json", jf_test_cli(), dir);
	st = jf_test_run_json(cmd);
	cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(st, "stacks")) {
		const cJSON *frames = cJSON_GetObjectItemCaseSensitive(s, "frames");
		int n = cJSON_GetArraySize(frames), region = -1, k, depth;
		const char *top;
		long cid;

		for (k = 0; k < n; k++) {
			f = cJSON_GetArrayItem(frames, k);
			if (!strncmp(jf_test_str(f, "name"), "nmethod ", 8))
				region = k;
		}
		if (region < 0 || region == n - 1)
			continue;
		top = jf_test_str(cJSON_GetArrayItem(frames, n - 1), "name");
		for (m = 0; m < 2 && !frame_is(top, methods[m]); m++)
			;
		if (m == 2)
			continue;
		cid = atol(jf_test_str(cJSON_GetArrayItem(frames, region), "name") + 8);
		depth = inline_path(log, cid, methods[m], path, 16);
		if (depth != n - 2 - region)
			fail_msg("%s: a stack in nmethod %ld has %d frames around %s, LogCompilation "
				 "%d", dir, cid, n - 2 - region, top, depth);
		for (k = 0; k < depth; k++) {
			const char *name = jf_test_str(cJSON_GetArrayItem(frames, region + 1 + k), "name");

			if (strcmp(jf_test_str(cJSON_GetArrayItem(frames, region + 1 + k), "kind"),
				   "guest") || !frame_is(name, path[k]))
				fail_msg("%s: nmethod %ld's frame %d around %s is %s, LogCompilation's "
					 "is %s", dir, cid, k, top, name, path[k]);
		}
		chains += depth > 0;
		for (i = 0; i < ncids && cids[i] != cid; i++)
			;
		if (i == 8)
			fail_msg("%s: more than 8 nmethods of Inline", dir);
		ncids += i == ncids;
		cids[i] = cid;
		insns[i][m] += jf_test_num(s, "insns");
		if (m == 1 && strstr(jf_test_str(cJSON_GetArrayItem(frames, region), "name"),
				     "Inline.hot("))
			inner_in_hot_entries += jf_test_num(s, "entries");
	}
	if (!chains)
		fail_msg("%s: no stack shows inner inlined in hot", dir);
	for (i = 0; i < ncids; i++)
		for (m = 0; m < 2; m++)
			if (insns[i][m] != method_insns(hotspot, cids[i], methods[m]))
				fail_msg("%s: nmethod %ld: stacks topped by %s ran %.0f instructions, its "
					 "ranges %.0f", dir, cids[i], methods[m], insns[i][m],
					 method_insns(hotspot, cids[i], methods[m]));
	if (inner_in_hot_entries < CALLS * (hot_entries - 1 - signals) ||
	    inner_in_hot_entries > CALLS * (hot_entries + 1 + signals))
		fail_msg("%s: inner's frame in hot's nmethod entered %.0f times, %.0f entries of the "
			 "nmethod x %d calls (%.0f signals)", dir, inner_in_hot_entries, hot_entries,
			 CALLS, signals);
	cJSON_Delete(st);
}

/* Offsets in `javap -c` of Inline.inner: its loop's goto and if_icmpge, its length. */
static void javap_inner(struct bytecode_facts *f)
{
	char cmd[2048], *out, *p, *line;
	long last = -1;

	snprintf(cmd, sizeof(cmd), "javap -c -p -cp '%s/tests/hotspot' Inline", jf_test_binary_dir());
	assert_int_equal(jf_test_run(cmd, &out), 0);
	p = strstr(out, "static int inner(int);");
	if (p)
		p = strstr(p, "Code:");
	if (!p)
		fail_msg("javap: no Inline.inner");
	memset(f, 0, sizeof(*f));
	f->back_edge = f->loop_test = -1;
	for (line = strchr(p, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		long off;
		char op[32];

		if (sscanf(line + 1, " %ld: %31s", &off, op) != 2)
			break;
		last = off;
		if (!strcmp(op, "goto"))
			f->back_edge = off;
		if (!strcmp(op, "if_icmpge"))
			f->loop_test = off;
	}
	free(out);
	f->length = last + 1; /* ireturn, one byte, ends it */
	if (f->back_edge < 0 || f->loop_test < 0)
		fail_msg("javap: Inline.inner has no goto / if_icmpge loop");
}

static char *record_inline(const char *dir, const char *log)
{
	char cmd[8192], *out;

	snprintf(cmd, sizeof(cmd),
		 "env -u JAVA_TOOL_OPTIONS -u JDK_JAVA_OPTIONS -u JITFLOW_ZONE_DIR '%s' record "
		 "--emulate -o '%s' -- java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xbatch "
		 "-XX:+UnlockDiagnosticVMOptions -XX:+LogCompilation -XX:LogFile='%s' "
		 "-cp '%s/tests/hotspot' Inline %d 2>'%s.stderr'",
		 jf_test_cli(), dir, log, jf_test_binary_dir(), ROUNDS, dir);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("%s failed (see %s.stderr)", cmd, dir);
	return out;
}

static const cJSON *hotspot_section(const cJSON *r)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(r, "hotspot");

	if (!cJSON_IsObject(h))
		fail_msg("the report does not speak HotSpot");
	return h;
}

static double i2s_entries(const cJSON *hotspot)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(hotspot, "bytecodes")) {
		const char *name = jf_test_str(c, "codelet");

		if (!strcmp(name, "i2s"))
			return jf_test_num(c, "entries");
	}
	return 0;
}

/* The ranges of one method in one nmethod: instructions of the row starting at bci. */
static double range_insns(const cJSON *method, long bci)
{
	const cJSON *g;
	double n = 0;

	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(method, "ranges"))
		if (jf_test_num(g, "bci_from") == bci)
			n += jf_test_num(g, "instructions");
	return n;
}

/* The nmethod's methods are LogCompilation's for its compile id; every bci is within its
 * method's bytecode. Returns 1 when the nmethod was in the log. */
static int check_against_log(const char *log, const cJSON *nm, const struct bytecode_facts *inner)
{
	struct method_set methods, named, seen;
	long lengths[MAX_METHODS];
	long cid = (long)jf_test_num(nm, "compile_id");
	const char *nmethod = jf_test_str(nm, "nmethod");
	const cJSON *m, *g;
	int i;

	if (!compiled_methods(log, cid, &methods, &named, lengths))
		return 0;
	memset(&seen, 0, sizeof(seen));
	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(nm, "methods")) {
		char name[256];
		long length = -1;

		without_signature(jf_test_str(m, "method"), name, sizeof(name));
		if (!has_method(&methods, name))
			fail_msg("%s: %s ran in it, LogCompilation neither compiled nor inlined it "
				 "in compile %ld", nmethod, name, cid);
		add_method(&seen, name);
		for (i = 0; i < named.n; i++)
			if (!strcmp(named.name[i], name))
				length = lengths[i];
		if (!strcmp(name, "Inline.inner") && length != inner->length)
			fail_msg("Inline.inner: %ld bytes of bytecode in LogCompilation, %ld in javap",
				 length, inner->length);
		cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(m, "ranges")) {
			double from = jf_test_num(g, "bci_from"), to = jf_test_num(g, "bci_to");

			if (length < 0 || from >= length || to >= length)
				fail_msg("%s: %s range %.0f->%.0f, the method has %ld bytes of "
					 "bytecode", nmethod, name, from, to, length);
		}
	}
	if (strstr(nmethod, "Inline.hot(") &&
	    (seen.n != 2 || !has_method(&seen, "Inline.hot") || !has_method(&seen, "Inline.inner") ||
	     methods.n != 2))
		fail_msg("%s: %d methods ran in it, LogCompilation has %d (hot and inner inlined)",
			 nmethod, seen.n, methods.n);
	return 1;
}

/* Whether a range that runs `per` times per entry of its nmethod can have run `insns`
 * instructions when `entries` entries were counted. Both count from the nmethod's record
 * on, which may apply while a call is under way (HotSpot posts the record after the code
 * was installed, and the agent's buffered records date from their write): its runs count
 * without its entry, so the runs lie in [per x entries, per x (entries + 1)). C1 neither
 * unrolls nor peels loops, so each run of the range is the same c >= 1 instructions:
 * some c divides insns with c x per x entries <= insns < c x per x (entries + 1).
 * Except where a signal interrupted a run: the loop's safepoint poll faults when a
 * safepoint is armed, and HotSpot resumes after the poll, so that run has up to c
 * instructions more or fewer (the recorder counts QEMU's block up to its end, a trace
 * would stop before the poll). `signals`, the recording's deliveries, bounds those runs,
 * and the entries a signal may leave uncounted: a signal after a conditional branch is
 * written as an overflow (docs/recorder.md), which hides the instructions since that
 * branch; an entry among them is not counted, while the runs after the handler returns
 * are (a CI run: 193 entries, runs of 194.4, one signal, one lost event and 14 hidden
 * instructions on the main thread). */
static int runs_fit(double insns, double per, double entries, double signals)
{
	long long c;

	/* A run has at least one instruction: c <= insns ends the search even where the
	 * signals outnumber per x entries. */
	for (c = 1; c <= insns && c * (per * entries - signals) <= insns; c++) {
		long long rest = (long long)insns % c;

		if ((rest <= signals || c - rest <= signals) &&
		    insns < c * (per * (entries + 1 + signals) + signals))
			return 1;
	}
	return 0;
}

/* The signals delivered in the recording at dir (its manifest's sideband). */
static double signals_delivered(const char *dir)
{
	char path[1200];
	cJSON *manifest;
	double n;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	manifest = jf_test_json_file(path);
	n = jf_test_num(cJSON_GetObjectItemCaseSensitive(manifest, "sideband"), "signals");
	cJSON_Delete(manifest);
	return n;
}

/* Inline.inner's loop in one nmethod: `calls` calls of inner per entry. */
static void check_loop(const cJSON *nm, const cJSON *inner_frame, const struct bytecode_facts *f,
		       double calls, double signals)
{
	const char *nmethod = jf_test_str(nm, "nmethod");
	double entries = jf_test_num(nm, "entries");
	double back = range_insns(inner_frame, f->back_edge);
	double test = range_insns(inner_frame, f->loop_test);

	if (entries <= 0 || back <= 0 || test <= 0)
		fail_msg("%s: %.0f entries, %.0f instructions at inner's back-edge (bci %ld), "
			 "%.0f at its loop test (bci %ld)", nmethod, entries, back, f->back_edge,
			 test, f->loop_test);
	if (!runs_fit(back, calls * K, entries, signals) ||
	    !runs_fit(test, calls * (K + 1), entries, signals))
		fail_msg("%s: inner's loop: %.0f instructions at its back-edge do not fit %d "
			 "iterations x %.0f calls x %.0f entries, or %.0f at its test %d tests "
			 "(%.0f signals)", nmethod, back, K, calls, entries, test, K + 1, signals);
}

static void test_bytecode_ranges_of_inlined_methods(void **state)
{
	char dir[1024], log[1200], cmd[2048], *out, *text, *logtext;
	struct bytecode_facts inner;
	cJSON *r;
	const cJSON *h, *nm, *m;
	double hot_entries = 0, inner_entries = 0, interpreted;
	double signals;
	int checked = 0, inlined = 0;

	(void)state;
	javap_inner(&inner);
	snprintf(dir, sizeof(dir), "%s/inline", jf_test_tmpdir());
	snprintf(log, sizeof(log), "%s/inline-compilation.log", jf_test_tmpdir());
	out = record_inline(dir, log);
	/* inner(j) = j + K * (short)70003 = j + K * 4467, CALLS times, ROUNDS times */
	assert_true(atoll(out) == (long long)ROUNDS * (CALLS * (CALLS - 1) / 2 + CALLS * K * 4467LL));
	free(out);
	signals = signals_delivered(dir);
	logtext = jf_test_read_file(log, NULL);
	if (strstr(logtext, "compile_kind='osr' method='Inline "))
		fail_msg("%s: an OSR compilation of Inline's code; the program avoids them", log);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	r = jf_test_run_json(cmd);
	if (jf_test_num(cJSON_GetObjectItemCaseSensitive(r, "summary"), "decode_errors") != 0)
		fail_msg("%s: decode errors", dir);
	h = hotspot_section(r);
	cJSON_ArrayForEach(nm, cJSON_GetObjectItemCaseSensitive(h, "compiled_methods")) {
		const char *name = jf_test_str(nm, "nmethod");

		checked += check_against_log(logtext, nm, &inner);
		if (strstr(name, "Inline.hot("))
			hot_entries += jf_test_num(nm, "entries");
		if (strstr(name, "Inline.inner("))
			inner_entries += jf_test_num(nm, "entries");
	}
	if (!checked)
		fail_msg("%s: no nmethod of the report is in LogCompilation", dir);
	/* Calls that ran compiled before their nmethod's record applied are not its entries */
	interpreted = i2s_entries(h) / K;
	if (interpreted < 1 || interpreted != (long)interpreted ||
	    interpreted + inner_entries + CALLS * hot_entries > (double)ROUNDS * CALLS)
		fail_msg("%s: %.0f i2s entries / %d = interpreted calls of inner, + %.0f entries into "
			 "inner's nmethods + %d x %.0f into hot's: %.0f calls, the program makes %d",
			 dir, i2s_entries(h), K, inner_entries, CALLS, hot_entries,
			 interpreted + inner_entries + CALLS * hot_entries, ROUNDS * CALLS);
	cJSON_ArrayForEach(nm, cJSON_GetObjectItemCaseSensitive(h, "compiled_methods")) {
		const char *name = jf_test_str(nm, "nmethod");
		int is_hot = strstr(name, "Inline.hot(") != NULL;

		if (!is_hot && !strstr(name, "Inline.inner("))
			continue;
		cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(nm, "methods")) {
			if (strncmp(jf_test_str(m, "method"), "Inline.inner(", 13))
				continue;
			check_loop(nm, m, &inner, is_hot ? CALLS : 1, signals);
			inlined += is_hot && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "inlined"));
		}
	}
	if (!inlined)
		fail_msg("%s: no nmethod of hot ran inner inlined", dir);
	check_stacks(dir, logtext, h, hot_entries, signals);
	free(logtext);
	cJSON_Delete(r);
	snprintf(cmd, sizeof(cmd), "'%s' report '%s'", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &text), 0);
	if (!strstr(text, "Compiled methods") || !strstr(text, "Inline.inner(I)I (inlined)"))
		fail_msg("%s: the text report has no compiled methods with inner inlined", dir);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytecode_ranges_of_inlined_methods),
	};

	if (!jf_test_hotspot_agent_built())
		return 1;
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
