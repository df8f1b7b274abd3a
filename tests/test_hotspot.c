/* HotSpot through jitflow's JVMTI agent (tools/runtimes/hotspot), under `jitflow record`
 * (which adds the agent to JAVA_TOOL_OPTIONS by itself), checked against what the program
 * and the JVM fix independently of jitflow:
 *
 *  - `-Xint`: CodeletEntries runs the bytecode i2s exactly K times and no other code of
 *    the run has one (HotSpot's own class library included: the count would differ), each
 *    time dispatched to the start of the codelet, so the report's region
 *    "Interpreter: i2s" has K entries; no nmethod of Java code runs;
 *  - compiled code: every nmethod the JVM lists in its LogCompilation file is a region of
 *    the agent's zone file with the same compile id, address, size, level and OSR kind,
 *    and there are no others (hotspot_check.c): recorded with C1 only (the fast mode under
 *    QEMU), and, for C2 and all tiered levels, once more outside the recorder (the agent
 *    alone, the recorder adds nothing to what it writes);
 *  - patched code: ClassHierarchyChange has its call sites resolved and a method made not
 *    entrant by loading a subclass (LogCompilation says which), so HotSpot rewrites
 *    compiled code in place after the agent described it;
 *
 * and every recording decodes with no error and no data lost, every instruction the
 * recorder counted decoded (but those it counts as hidden: blocks an OVF hides, and the last
 * block of a thread that the JVM's exit stopped inside it):
 * with compiled code, only because the recorder's observed patches (code that ran with
 * other bytes than the agent's copy, or before the agent described it) apply where the
 * new bytes first ran, and the report counts them. Reports speak HotSpot
 * (analysis/runtime_hotspot.c): the HotSpot section's interpreted bytecodes give i2s its K
 * entries, its nmethods by tier are LogCompilation's (native wrappers, C1, OSR), and the
 * text report has nmethods and uncommon traps where a tracing JIT has traces and guards.
 * Not skipped: `tools/setup.sh --tests` installs the JDK, and without it the agent and
 * these programs are not built. */
#include "hotspot_check.h"
#include "json_check.h"
#include "test_support.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define I2S_RUNS 1000
#define HOT_ROUNDS 300
#define CHA_ROUNDS 200

static const char *classes(void)
{
	static char dir[1024];

	snprintf(dir, sizeof(dir), "%s/tests/hotspot", jf_test_binary_dir());
	return dir;
}

static const char *agent(void)
{
	static char path[1024];

	snprintf(path, sizeof(path), "%s/tools/runtimes/hotspot/libjitflow-jvmti.so",
		 jf_test_binary_dir());
	return path;
}

/* Records `java OPTIONS -cp CLASSES MAIN ARG` into dir; returns the program's stdout. */
static char *record_java(const char *dir, const char *options, const char *main_class,
			 int arg)
{
	char cmd[8192], *out;

	snprintf(cmd, sizeof(cmd),
		 "env -u JAVA_TOOL_OPTIONS -u JDK_JAVA_OPTIONS -u JITFLOW_ZONE_DIR "
		 "'%s' record --emulate -o '%s' -- java %s -cp '%s' %s %d 2>'%s.stderr'",
		 jf_test_cli(), dir, options, classes(), main_class, arg, dir);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("%s failed (see %s.stderr)", cmd, dir);
	return out;
}

/* The instructions the recorder counted (manifest.json) that a decoder can see: all but
 * each thread's hidden_instructions (blocks whose branch an OVF hides; the last block of a
 * thread stopped inside it, which the JVM's exit_group does to threads that are running). */
static double decodable_instructions(const char *dir)
{
	char path[1200], *text;
	cJSON *m;
	const cJSON *t;
	double n;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	text = jf_test_read_file(path, NULL);
	m = cJSON_Parse(text);
	free(text);
	if (!m)
		fail_msg("%s: not JSON", path);
	n = jf_test_num(m, "instructions");
	cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(m, "threads"))
		n -= jf_test_num(t, "hidden_instructions");
	cJSON_Delete(m);
	return n;
}

/* The recording's report, which must decode every instruction the recorder counted
 * (decodable_instructions), with no error and nothing lost. */
static cJSON *report(const char *dir)
{
	char cmd[4096];
	cJSON *r;
	const cJSON *summary;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s' --json", jf_test_cli(), dir);
	r = jf_test_run_json(cmd);
	summary = cJSON_GetObjectItemCaseSensitive(r, "summary");
	if (jf_test_num(summary, "decode_errors") != 0 || jf_test_num(summary, "lost_bytes") != 0 ||
	    jf_test_num(summary, "unknown_code_blocks") != 0)
		fail_msg("%s: %.0f decode errors, %.0f bytes lost, %.0f blocks of unknown code", dir,
			 jf_test_num(summary, "decode_errors"), jf_test_num(summary, "lost_bytes"),
			 jf_test_num(summary, "unknown_code_blocks"));
	if (jf_test_num(summary, "instructions") != decodable_instructions(dir))
		fail_msg("%s: %.0f instructions decoded, the recorder counted %.0f that a decoder "
			 "can see", dir, jf_test_num(summary, "instructions"),
			 decodable_instructions(dir));
	return r;
}

/* Compiled code ran with bytes the agent's records do not hold (HotSpot patched it after
 * the copy, or before the late record came): the report counts those observed changes. */
static void check_observed_changes(const cJSON *r, const char *dir)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(r, "observed_code");

	if (!o || jf_test_num(o, "changed") < 1 || jf_test_num(o, "before_record") < 1)
		fail_msg("%s: the report counts %.0f observed code changes and %.0f blocks that ran "
			 "before their record; compiled code is patched and described late", dir,
			 o ? jf_test_num(o, "changed") : 0.0, o ? jf_test_num(o, "before_record") : 0.0);
}

/* The zone file the recording holds (the agent's jit-PID.dump, copied in). */
static void zone_file(const char *dir, char *out, size_t size)
{
	char cmd[2048], *name;

	snprintf(cmd, sizeof(cmd), "cd '%s' && ls jit-[0-9]*.dump", dir);
	assert_int_equal(jf_test_run(cmd, &name), 0);
	name[strcspn(name, "\n")] = '\0';
	if (!*name)
		fail_msg("%s: no zone file: the agent was not loaded", dir);
	snprintf(out, size, "%s/%s", dir, name);
	free(name);
}

/* The agent brackets its callbacks as instrumentation; under the recorder its records are
 * dated by the write() that puts them out, so a begin and an end that leave in one write
 * bracket nothing, and ones that leave in different writes of a batch bracket whatever
 * the thread ran until the later one. Each goes out on its own, so every bracket of the
 * recording's zone copy (`jitflow zone dump`) must end later than it begins. */
static void check_brackets_dated_apart(const char *zone)
{
	enum { MAX_THREADS = 64 };
	struct { int tid; unsigned long long begin; } open[MAX_THREADS];
	char cmd[2048], *text, *line;
	int nopen = 0, pairs = 0, empty = 0;

	snprintf(cmd, sizeof(cmd), "'%s' zone dump '%s'", jf_test_cli(), zone);
	assert_int_equal(jf_test_run(cmd, &text), 0);
	for (line = strstr(text, " EVENT "); line; line = strstr(line + 1, " EVENT ")) {
		unsigned long long ts, seq;
		char kind[16];
		int tid, i;

		if (sscanf(line, " EVENT ts=%llu seq=%llu tid=%d kind=\"instrumentation-%15[a-z]",
			   &ts, &seq, &tid, kind) != 4)
			continue;
		for (i = 0; i < nopen && open[i].tid != tid; i++)
			;
		if (!strcmp(kind, "begin")) {
			if (i == nopen && nopen < MAX_THREADS)
				nopen++;
			open[i].tid = tid;
			open[i].begin = ts;
		} else if (i < nopen) {
			pairs++;
			empty += ts <= open[i].begin;
			open[i] = open[--nopen];
		}
	}
	free(text);
	if (!pairs || empty)
		fail_msg("%s: %d of %d instrumentation brackets end no later than they begin "
			 "(their records left in one write())", zone, empty, pairs);
}

static const cJSON *region(const cJSON *r, const char *name)
{
	const cJSON *g;

	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(r, "regions")) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(g, "name");

		if (cJSON_IsString(n) && !strcmp(n->valuestring, name))
			return g;
	}
	return NULL;
}

/* The report's HotSpot section (analysis/runtime_hotspot.c). */
static const cJSON *hotspot_section(const cJSON *r, const char *dir)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(r, "hotspot");

	if (!cJSON_IsObject(h))
		fail_msg("%s: the report does not speak HotSpot (no \"hotspot\" object): the "
			 "agent's runtime record is missing", dir);
	return h;
}

static const cJSON *codelet(const cJSON *hotspot, const char *bytecode)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(hotspot, "bytecodes")) {
		const char *name = jf_test_str(c, "codelet");

		if (name && !strcmp(name, bytecode))
			return c;
	}
	return NULL;
}

/* nmethods of one tier ("c1", "c2", "native_wrapper") in the HotSpot section. */
static double tier(const cJSON *hotspot, const char *name, const char *what)
{
	return jf_test_num(cJSON_GetObjectItemCaseSensitive(
				   cJSON_GetObjectItemCaseSensitive(hotspot, "nmethods"), name), what);
}

/* The text report names HotSpot's code in its own words, not a tracing JIT's. */
static void check_text_words(const char *dir)
{
	static const char *const said[] = { "Nmethods", "HotSpot code", "Interpreted bytecodes",
					    "Uncommon traps", "Not told apart: the VM's own C++" };
	char cmd[2048], *text;
	size_t i;

	snprintf(cmd, sizeof(cmd), "'%s' report '%s'", jf_test_cli(), dir);
	assert_int_equal(jf_test_run(cmd, &text), 0);
	for (i = 0; i < sizeof(said) / sizeof(said[0]); i++)
		if (!strstr(text, said[i]))
			fail_msg("%s: the text report does not say \"%s\"", dir, said[i]);
	if (strstr(text, "\nTraces") || strstr(text, "\nGuards"))
		fail_msg("%s: the text report has a tracing JIT's Traces or Guards table", dir);
	free(text);
}

static void test_interpreted_bytecode_entries(void **state)
{
	char dir[1024], *out;
	cJSON *r;
	const cJSON *i2s, *g;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/xint", jf_test_tmpdir());
	out = record_java(dir, "-Xint -XX:+UseSerialGC", "CodeletEntries", I2S_RUNS);
	/* (short)70000 = 4464, added K times */
	assert_int_equal(atol(out), 4464L * I2S_RUNS);
	free(out);
	r = report(dir);
	i2s = region(r, "Interpreter: i2s");
	if (!i2s)
		fail_msg("%s: the report has no region \"Interpreter: i2s\"", dir);
	if (jf_test_num(i2s, "entries") != I2S_RUNS)
		fail_msg("%s: %.0f entries into the i2s codelet, the program runs i2s %d times",
			 dir, jf_test_num(i2s, "entries"), I2S_RUNS);
	/* -Xint compiles no Java method; native wrappers (level 0) may still run */
	cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(r, "regions")) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(g, "name");

		if (cJSON_IsString(n) && !strncmp(n->valuestring, "nmethod ", 8) &&
		    !strstr(n->valuestring, " L0 "))
			fail_msg("%s: compiled Java code under -Xint: %s", dir, n->valuestring);
	}
	g = codelet(hotspot_section(r, dir), "i2s");
	if (!g || jf_test_num(g, "entries") != I2S_RUNS)
		fail_msg("%s: the HotSpot section's interpreted bytecodes give i2s %.0f entries, "
			 "the program runs it %d times", dir, g ? jf_test_num(g, "entries") : 0.0,
			 I2S_RUNS);
	if (tier(hotspot_section(r, dir), "c1", "count") != 0 ||
	    tier(hotspot_section(r, dir), "c2", "count") != 0)
		fail_msg("%s: C1 or C2 nmethods counted under -Xint", dir);
	cJSON_Delete(r);
	check_text_words(dir);
}

/* Returns the number of nmethods LogCompilation lists; *native of them native wrappers. */
static int check_compiled(const char *zone, const char *log, int *osr, int *native)
{
	int n = jf_test_hotspot_nmethods_match(zone, log, osr, native);

	if (n == 0 || *osr == 0 || *native == 0)
		fail_msg("%s: %d nmethods, %d OSR, %d native wrappers: HotLoops compiles all "
			 "three kinds", log, n, *osr, *native);
	return n;
}

static void test_recorded_nmethods_match_logcompilation(void **state)
{
	char dir[1024], options[2048], zone[1400], log[1200], *out;
	cJSON *r;
	const cJSON *h;
	int osr, native, n;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/c1", jf_test_tmpdir());
	snprintf(log, sizeof(log), "%s/c1-compilation.log", jf_test_tmpdir());
	snprintf(options, sizeof(options),
		 "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:+UnlockDiagnosticVMOptions "
		 "-XX:+LogCompilation -XX:LogFile='%s'", log);
	out = record_java(dir, options, "HotLoops", HOT_ROUNDS);
	/* sum(1000) = 332833500, HOT_ROUNDS times */
	assert_true(atoll(out) == 332833500LL * HOT_ROUNDS);
	free(out);
	zone_file(dir, zone, sizeof(zone));
	n = check_compiled(zone, log, &osr, &native);
	check_brackets_dated_apart(zone);
	r = report(dir);
	check_observed_changes(r, dir);
	/* C1 only: every nmethod LogCompilation lists is a native wrapper or a C1 one */
	h = hotspot_section(r, dir);
	if (tier(h, "native_wrapper", "count") != native || tier(h, "c1", "count") != n - native ||
	    tier(h, "c1", "osr") != osr || tier(h, "c2", "count") != 0 ||
	    tier(h, "unknown_level", "count") != 0)
		fail_msg("%s: the HotSpot section counts %.0f native wrappers, %.0f C1 nmethods "
			 "(%.0f OSR), %.0f C2, %.0f of unknown level; LogCompilation lists %d, %d "
			 "(%d OSR), 0, 0", dir, tier(h, "native_wrapper", "count"),
			 tier(h, "c1", "count"), tier(h, "c1", "osr"), tier(h, "c2", "count"),
			 tier(h, "unknown_level", "count"), native, n - native, osr);
	cJSON_Delete(r);
}

/* The compile ids of the nmethods of `method` (LogCompilation's "Class name (sig)" prefix)
 * that LogCompilation says were made not entrant. */
static int not_entrant_of(const char *log, const char *method)
{
	char *text = jf_test_read_file(log, NULL), *p, *q;
	int count = 0;

	for (p = text; (p = strstr(p, "<make_not_entrant ")); p++) {
		char id[64], nm[128];
		int cid;

		q = strstr(p, "compile_id='");
		if (!q || sscanf(q, "compile_id='%d'", &cid) != 1)
			continue;
		snprintf(id, sizeof(id), "<nmethod compile_id='%d' ", cid);
		q = strstr(text, id);
		snprintf(nm, sizeof(nm), "method='%s", method);
		if (q && strstr(q, nm) && strstr(q, nm) < strchr(q, '\n'))
			count++;
	}
	free(text);
	return count;
}

/* Entries into the compiled methods whose nmethod names method (its compile id, level and
 * signature around it). */
static double compiled_entries(const cJSON *hotspot, const char *method)
{
	const cJSON *m;
	double sum = 0;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(hotspot, "compiled_methods")) {
		const char *name = jf_test_str(m, "nmethod");

		if (name && strstr(name, method))
			sum += jf_test_num(m, "entries");
	}
	return sum;
}

/* Square.area, an instance method, runs only from step's virtual call after Square is
 * loaded: CHA_ROUNDS x 1000 calls, each entering its nmethod once the call runs compiled
 * code (callers enter at the verified entry, after the inline-cache check), the first ones
 * interpreted. */
static void check_instance_method_entries(const cJSON *r, const char *dir)
{
	double square = compiled_entries(hotspot_section(r, dir), "ClassHierarchyChange$Square.area()");

	if (square <= 0 || square > CHA_ROUNDS * 1000.0)
		fail_msg("%s: %.0f entries into Square.area's nmethods; the program calls it %d "
			 "times, the first ones interpreted", dir, square, CHA_ROUNDS * 1000);
}

static void test_patched_code_decodes_exactly(void **state)
{
	char dir[1024], options[2048], log[1200], *out;
	cJSON *r;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/patched", jf_test_tmpdir());
	snprintf(log, sizeof(log), "%s/patched-compilation.log", jf_test_tmpdir());
	snprintf(options, sizeof(options),
		 "-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:CompileCommand=quiet "
		 "-XX:CompileCommand=dontinline,ClassHierarchyChange::step "
		 "-XX:+UnlockDiagnosticVMOptions -XX:+LogCompilation -XX:LogFile='%s'", log);
	out = record_java(dir, options, "ClassHierarchyChange", CHA_ROUNDS);
	assert_true(atoll(out) == 4000LL * CHA_ROUNDS);
	free(out);
	if (not_entrant_of(log, "ClassHierarchyChange step") < 1)
		fail_msg("%s: no nmethod of ClassHierarchyChange.step made not entrant: loading "
			 "Square should have invalidated it", log);
	r = report(dir);
	check_observed_changes(r, dir);
	check_instance_method_entries(r, dir);
	cJSON_Delete(r);
}

/* All tiers and C2, natively: what the agent writes does not depend on the recorder. */
static void test_tiered_nmethods_match_logcompilation(void **state)
{
	char dir[1024], cmd[8192], zone[1400], log[1200], *out;
	int osr, native;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tiered", jf_test_tmpdir());
	snprintf(log, sizeof(log), "%s/compilation.log", dir);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s' && env -u JAVA_TOOL_OPTIONS -u JDK_JAVA_OPTIONS JITFLOW_ZONE_DIR='%s' "
		 "java -agentpath:'%s' -XX:+UseSerialGC -XX:+UnlockDiagnosticVMOptions "
		 "-XX:+LogCompilation -XX:LogFile='%s' -cp '%s' HotLoops %d", dir, dir, agent(),
		 log, classes(), 20 * HOT_ROUNDS);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	assert_true(atoll(out) == 332833500LL * 20 * HOT_ROUNDS);
	free(out);
	zone_file(dir, zone, sizeof(zone));
	check_compiled(zone, log, &osr, &native);
	snprintf(cmd, sizeof(cmd), "grep -c \"<nmethod [^>]*level='4'\" '%s' >/dev/null", log);
	if (jf_test_run(cmd, NULL) != 0)
		fail_msg("%s: no C2 (level 4) nmethod to compare", log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interpreted_bytecode_entries),
		cmocka_unit_test(test_recorded_nmethods_match_logcompilation),
		cmocka_unit_test(test_patched_code_decodes_exactly),
		cmocka_unit_test(test_tiered_nmethods_match_logcompilation),
	};

	if (access(agent(), R_OK) != 0) {
		fprintf(stderr, "%s is not built: no JDK was found (tools/setup.sh --tests "
			"installs openjdk-17-jdk-headless)\n", agent());
		return 1;
	}
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
