/* perf accepts zone files with jitflow's extension records: this program, run under
 * `perf record -k mono` as a workload, writes every record type while running jitted code;
 * `perf inject --jit` must find the dump through its executable mapping, skip the
 * extension records, write the jitted ELF, and `perf report` must attribute samples to the
 * jitted region by its name. Skips (77) with the reason when perf cannot record on this
 * machine (asked before the workload runs). */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitflow/emitter.h"

/* xor eax, eax; inc eax; ret: returns 1 */
static const uint8_t ret1[] = { 0x31, 0xc0, 0xff, 0xc0, 0xc3 };

static int workload(void)
{
	struct jf_emitter *em = jf_emitter_open(".", JF_EMIT_CLOCK_MONOTONIC);
	uint8_t *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct jf_region r = { .name = "trace 1 (perf test)", .code = ret1, .size = sizeof(ret1),
			       .kind = JF_REGION_TRACE, .trace_id = 1, .code_object = 1 };
	struct jf_pc_map_entry pc = { 0, 3, 0, 0, 1 };
	int (*fn)(void);
	long i, sum = 0;

	if (!em || p == MAP_FAILED)
		return 1;
	memcpy(p, ret1, sizeof(ret1));
	r.addr = (uint64_t)(uintptr_t)p;
	jf_emit_code_object(em, 1, "main", "perf.mvm", 1);
	jf_emit_op_name(em, 1, "RETURN_ONE");
	jf_emit_interp_range(em, JF_INTERP_EVAL_LOOP, 0x1000, 0x2000, "eval");
	jf_emit_event(em, JF_EVENT_COMPILE_BEGIN, 1);
	jf_emit_region_load(em, &r);
	jf_emit_guard(em, 1, 1, r.addr, r.addr + 4, 3);
	jf_emit_pc_map(em, r.addr, &pc, 1);
	jf_emit_event(em, JF_EVENT_ITERATION, 0);
	fn = (int (*)(void))(uintptr_t)p;
	for (i = 0; i < 200000000; i++)
		sum += fn();
	jf_emit_patch(em, r.addr + 2, (const uint8_t[]){ 0x90, 0x90 }, 2, "test patch");
	memcpy(p + 4096, ret1, sizeof(ret1));
	jf_emit_region_move(em, r.addr, r.addr + 4096, sizeof(ret1));
	jf_emit_region_free(em, r.addr + 4096, sizeof(ret1));
	jf_emitter_close(em);
	return sum == 200000000 ? 0 : 1;
}

static char self[1024];

static void test_perf_inject_accepts_extension_records(void **state)
{
	char cmd[4096];
	char *out = NULL;
	const char *dir = jf_test_tmpdir();

	(void)state;
	/* -k mono: the CLOCK_MONOTONIC sample clock that jitdump timestamps use */
	snprintf(cmd, sizeof(cmd), "cd '%s' && perf record -q -e cpu-clock -k mono -o perf.data "
		 "'%s' --workload 2>&1", dir, self);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("the workload (the emitter under perf record) failed:\n%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "cd '%s' && perf inject --jit -i perf.data -o perf.jit.data "
		 "2>&1", dir);
	if (jf_test_run(cmd, &out) != 0)
		fail_msg("perf inject --jit failed:\n%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "cd '%s' && ls jitted-*-0.so", dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	free(out);
	snprintf(cmd, sizeof(cmd), "cd '%s' && perf report -i perf.jit.data --stdio --sort sym "
		 "2>/dev/null", dir);
	assert_int_equal(jf_test_run(cmd, &out), 0);
	if (!strstr(out, "trace 1 (perf test)"))
		fail_msg("perf report does not name the jitted region:\n%s", out);
	free(out);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_inject_accepts_extension_records),
	};
	char *out = NULL;
	ssize_t n;

	if (argc > 1 && !strcmp(argv[1], "--workload"))
		return workload();
	jf_test_require_tools("perf --version", "perf (linux-perf)");
	/* Whether perf may record at all here, asked of a program that is not under test. */
	if (jf_test_run("perf record -q -e cpu-clock -k mono -o /dev/null true 2>&1", &out) != 0)
		return jf_test_skip_reason(JF_NEED_ROOT, "perf cannot record here "
					   "(perf_event_paranoid, or no perf_event_open in this "
					   "VM/container): %s", out ? out : "");
	free(out);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
