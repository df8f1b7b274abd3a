/* minivm's zone file, read back with jitflow's own zone reader (not minivm's code): every
 * guard's branch in the recorded code bytes really is a jnz to the guard's exit stub, every
 * patch re-points a stub to the bridge hanging off that guard, invalidated traces are freed
 * and their addresses reused by different code, interpreter ranges and code objects are
 * there, and the outermost loop's iterations are reported one by one. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jitflow/emitter.h>
#include <jitflow/zone.h>

#include "bytecode.h"
#include "test_support.h"

#define MAX_REGIONS 4096

struct region {
	uint64_t addr, size, trace_id, parent_guard;
	uint32_t kind;
	const uint8_t *code;
	int live;
};

struct zone_facts {
	struct region regions[MAX_REGIONS];
	size_t region_count;
	unsigned guards, patches, frees, reused, pc_maps, code_objects, op_names;
	unsigned eval_loops, handlers, traces, bridges;
	unsigned iterations;
	uint64_t iteration_args[1024];
};

static const char *minivm(void)
{
	const char *m = getenv("MINIVM");

	assert_non_null(m);
	return m;
}

/* Run an example with --zone-dir and --counters; returns the zone file's path. */
static char *run_example(const char *example, const char *counters)
{
	static char path[4096];
	char dir[2048], cmd[8192];
	struct dirent *d;
	DIR *dp;
	char *out = NULL;

	snprintf(dir, sizeof(dir), "%s/%s", jf_test_tmpdir(), example);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && %s --zone-dir %s --counters %s %s/tools/minivm/examples/%s",
		 dir, minivm(), dir, counters, jf_test_source_dir(), example);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	free(out);
	dp = opendir(dir);
	assert_non_null(dp);
	path[0] = 0;
	while ((d = readdir(dp)))
		if (!strncmp(d->d_name, "jit-", 4))
			snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
	closedir(dp);
	assert_true(path[0] != 0);
	return path;
}

static struct region *live_region_at(struct zone_facts *f, uint64_t addr, int kind)
{
	size_t i;

	for (i = 0; i < f->region_count; i++) {
		struct region *r = &f->regions[i];

		if (r->live && addr >= r->addr && addr < r->addr + r->size &&
		    (kind < 0 || (int)r->kind == kind))
			return r;
	}
	return NULL;
}

static int32_t rel32_at(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void on_region_load(struct zone_facts *f, const struct jf_zone_record *rec)
{
	struct region *r;
	size_t i;

	for (i = 0; i < f->region_count; i++) {
		struct region *old = &f->regions[i];

		assert_false(old->live && rec->u.region_load.addr < old->addr + old->size &&
			     old->addr < rec->u.region_load.addr + rec->u.region_load.size);
		/* the same address held other code before: reused memory */
		if (!old->live && old->addr == rec->u.region_load.addr &&
		    rec->u.region_load.kind == JF_REGION_TRACE && old->kind == JF_REGION_TRACE &&
		    (old->size != rec->u.region_load.size ||
		     memcmp(old->code, rec->u.region_load.code, old->size)))
			f->reused++;
	}
	assert_true(f->region_count < MAX_REGIONS);
	r = &f->regions[f->region_count++];
	r->addr = rec->u.region_load.addr;
	r->size = rec->u.region_load.size;
	r->kind = rec->u.region_load.kind;
	r->trace_id = rec->u.region_load.trace_id;
	r->parent_guard = rec->u.region_load.parent_guard;
	r->code = rec->u.region_load.code;
	r->live = 1;
	assert_non_null(r->code);
	f->traces += r->kind == JF_REGION_TRACE;
	f->bridges += r->kind == JF_REGION_BRIDGE;
}

/* The guard's branch, in the bytes of the code that contains it, is "jnz rel32" (0F 85)
 * to the guard's exit stub, and that stub is a region for this guard. */
static void on_guard(struct zone_facts *f, const struct jf_zone_record *rec)
{
	uint64_t branch = rec->u.guard.branch_addr;
	struct region *code = live_region_at(f, branch, -1), *stub;
	const uint8_t *p;

	assert_non_null(code);
	assert_true(code->kind == JF_REGION_TRACE || code->kind == JF_REGION_BRIDGE);
	assert_int_equal(code->trace_id, rec->u.guard.trace_id);
	assert_true(branch + 6 <= code->addr + code->size);
	p = code->code + (branch - code->addr);
	assert_int_equal(p[0], 0x0f);
	assert_int_equal(p[1], 0x85);
	assert_int_equal(branch + 6 + (uint64_t)(int64_t)rel32_at(p + 2), rec->u.guard.stub_addr);
	stub = live_region_at(f, rec->u.guard.stub_addr, JF_REGION_EXIT_STUB);
	assert_non_null(stub);
	assert_int_equal(stub->addr, rec->u.guard.stub_addr);
	assert_int_equal(stub->parent_guard, rec->u.guard.guard_id);
	f->guards++;
}

/* A patch is a "jmp rel32" inside an exit stub, re-pointed to the bridge of that stub's
 * guard. */
static void on_patch(struct zone_facts *f, const struct jf_zone_record *rec)
{
	struct region *stub = live_region_at(f, rec->u.patch.addr, JF_REGION_EXIT_STUB), *bridge;
	uint64_t target;

	assert_non_null(stub);
	assert_int_equal(rec->u.patch.size, 5);
	assert_int_equal(rec->u.patch.bytes[0], 0xe9);
	target = rec->u.patch.addr + 5 + (uint64_t)(int64_t)rel32_at(rec->u.patch.bytes + 1);
	bridge = live_region_at(f, target, JF_REGION_BRIDGE);
	assert_non_null(bridge);
	assert_int_equal(bridge->addr, target);
	assert_int_equal(bridge->parent_guard, stub->parent_guard);
	f->patches++;
}

static void on_free(struct zone_facts *f, const struct jf_zone_record *rec)
{
	struct region *r = live_region_at(f, rec->u.region_free.addr, -1);

	assert_non_null(r);
	assert_int_equal(r->addr, rec->u.region_free.addr);
	assert_int_equal(r->size, rec->u.region_free.size);
	r->live = 0;
	f->frees++;
}

static void on_pc_map(struct zone_facts *f, const struct jf_zone_reader *zr,
		      const struct jf_zone_record *rec)
{
	struct region *r = live_region_at(f, rec->u.pc_map.region_addr, -1);
	struct jf_zone_pc_entry e;
	uint32_t i, last = 0;

	assert_non_null(r);
	assert_true(rec->u.pc_map.count >= 2);
	for (i = 0; i < rec->u.pc_map.count; i++) {
		jf_zone_pc_map_entry(zr, rec, i, &e);
		assert_true(e.code_offset < r->size);
		assert_true(i == 0 || e.code_offset > last);
		assert_true(e.op_kind < f->op_names);
		last = e.code_offset;
	}
	f->pc_maps++;
}

static void read_zone(const char *path, struct zone_facts *f)
{
	struct jf_zone_reader *zr;
	struct jf_zone_record rec;
	struct jf_error err;
	int rc;

	memset(f, 0, sizeof(*f));
	assert_int_equal(jf_zone_reader_open(&zr, path, &err), 0);
	assert_int_equal(jf_zone_reader_header(zr)->elf_mach, 62);
	while ((rc = jf_zone_next(zr, &rec, &err)) == 1) {
		switch (rec.id) {
		case JF_ZONE_REGION_LOAD: on_region_load(f, &rec); break;
		case JF_ZONE_GUARD: on_guard(f, &rec); break;
		case JF_ZONE_PATCH: on_patch(f, &rec); break;
		case JF_ZONE_REGION_FREE: on_free(f, &rec); break;
		case JF_ZONE_PC_MAP: on_pc_map(f, zr, &rec); break;
		case JF_ZONE_OP_NAME: f->op_names++; break;
		case JF_ZONE_CODE_OBJECT: f->code_objects++; break;
		case JF_ZONE_INTERP_RANGE:
			assert_true(rec.u.interp_range.start < rec.u.interp_range.end);
			f->eval_loops += rec.u.interp_range.kind == JF_INTERP_EVAL_LOOP;
			f->handlers += rec.u.interp_range.kind == JF_INTERP_HANDLER;
			break;
		case JF_ZONE_EVENT:
			if (rec.u.event.kind == JF_EVENT_ITERATION) {
				if (f->iterations < 1024)
					f->iteration_args[f->iterations] = rec.u.event.arg;
				f->iterations++;
			}
			break;
		default:
			break;
		}
	}
	if (rc < 0)
		fail_msg("%s", err.msg);
	jf_zone_reader_close(zr);
}

/* Compiled traces and bridges listed in the counters file. */
static unsigned counted_traces(const char *counters_path, const char *kind)
{
	char *text = NULL, cmd[4200], needle[64];
	unsigned n = 0;
	const char *p;

	snprintf(cmd, sizeof(cmd), "cat %s", counters_path);
	assert_int_equal(jf_test_run(cmd, &text), 0);
	snprintf(needle, sizeof(needle), "\"kind\":\"%s\"", kind);
	for (p = text; (p = strstr(p, needle)); p++)
		n++;
	free(text);
	return n;
}

static struct zone_facts facts;

static void check_common(const char *counters, unsigned functions)
{
	assert_int_equal(facts.eval_loops, 1);
	assert_int_equal(facts.handlers, MVM_OP_COUNT);
	assert_int_equal(facts.code_objects, functions);
	assert_int_equal(facts.traces, counted_traces(counters, "loop"));
	assert_int_equal(facts.bridges, counted_traces(counters, "bridge"));
	assert_int_equal(facts.pc_maps, facts.traces + facts.bridges);
	assert_true(facts.guards > 0);
}

static void test_phase_change_patches_guard_to_bridge(void **state)
{
	char counters[2048];

	(void)state;
	snprintf(counters, sizeof(counters), "%s/phase.json", jf_test_tmpdir());
	read_zone(run_example("phase_change.mvm", counters), &facts);
	check_common(counters, 1);
	assert_int_equal(facts.traces, 1);
	assert_int_equal(facts.bridges, 1);
	assert_int_equal(facts.patches, 1);
	assert_int_equal(facts.iterations, 20000);
	assert_int_equal(facts.frees, 0);
}

static void test_invalidation_frees_and_reuses(void **state)
{
	char counters[2048];

	(void)state;
	snprintf(counters, sizeof(counters), "%s/inval.json", jf_test_tmpdir());
	read_zone(run_example("invalidation.mvm", counters), &facts);
	check_common(counters, 3);
	assert_int_equal(facts.traces, 4);
	/* three flushes, each freeing one trace body and its stubs */
	assert_true(facts.frees >= 3);
	/* all four traces start at the start of code memory: three reuses, different code */
	assert_int_equal(facts.reused, 3 + 2 + 1);
}

static void test_nested_loops_iteration_events(void **state)
{
	char counters[2048];
	unsigned i;

	(void)state;
	snprintf(counters, sizeof(counters), "%s/nested.json", jf_test_tmpdir());
	read_zone(run_example("nested_loops.mvm", counters), &facts);
	check_common(counters, 1);
	/* two outermost loops of 300 iterations each, numbered from 0 */
	assert_int_equal(facts.iterations, 600);
	for (i = 0; i < 600; i++)
		assert_int_equal(facts.iteration_args[i], i % 300);
}

static void test_polymorphic_call_bridges_of_bridges(void **state)
{
	char counters[2048];

	(void)state;
	snprintf(counters, sizeof(counters), "%s/poly.json", jf_test_tmpdir());
	read_zone(run_example("polymorphic_call.mvm", counters), &facts);
	check_common(counters, 4);
	assert_true(facts.bridges >= 2);
	assert_int_equal(facts.patches, facts.bridges);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phase_change_patches_guard_to_bridge),
		cmocka_unit_test(test_invalidation_frees_and_reuses),
		cmocka_unit_test(test_nested_loops_iteration_events),
		cmocka_unit_test(test_polymorphic_call_bridges_of_bridges),
	};
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
