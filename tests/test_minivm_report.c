/* The analysis against a runtime's own counters: every minivm example, run under
 * `jitflow record`, then `jitflow report --json`. For every trace the runtime compiled,
 * entries and iterations, and for every guard its exits, must equal what the compiled
 * code counted itself (minivm --counters), with no decode error and no data lost. */
#include "minivm_examples.h"
#include "report_check.h"
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void check_example(const char *name)
{
	const char *tmp = jf_test_tmpdir(), *src = jf_test_source_dir();
	const char *minivm = getenv("JITFLOW_MINIVM");
	char dir[512], zones[512], counters[512], cmd[4096];

	assert_non_null(minivm);
	snprintf(dir, sizeof(dir), "%s/%s", tmp, name);
	snprintf(zones, sizeof(zones), "%s/%s.zones", tmp, name);
	snprintf(counters, sizeof(counters), "%s/%s.counters.json", tmp, name);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s' && '%s' record -o '%s' -- '%s' --counters '%s' --zone-dir '%s' "
		 "'%s/tools/minivm/examples/%s.mvm' > /dev/null",
		 zones, jf_test_cli(), dir, minivm, counters, zones, src, name);
	assert_int_equal(jf_test_run(cmd, NULL), 0);
	jf_test_report_matches_counters(dir, counters, name);
}

static void test_every_example(void **state)
{
	(void)state;
	jf_test_each_minivm_example(check_example);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_example),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
