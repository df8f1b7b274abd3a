/* A test binary's temporary folder stays when one of its tests failed (test_support.c):
 * a failure that happens once, as test_hotspot_traps' recording under load did, leaves
 * its recording to be looked at. Each case runs in a child process that makes the folder,
 * ends through jf_test_exit with a failure count and exits (the folder goes, or not, at
 * exit); the parent then looks for the folder. */
#include "test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The folder a child made, ending with jf_test_exit(failed); whether it exists after. */
static int folder_left_after_exit(int failed, char *dir, size_t size)
{
	int fds[2], status;
	ssize_t n;
	pid_t pid;
	struct stat st;

	if (pipe(fds) < 0)
		fail_msg("pipe failed");
	pid = fork();
	if (pid < 0)
		fail_msg("fork failed");
	if (pid == 0) {
		const char *tmp;

		unsetenv("JITFLOW_KEEP_TEST_TMP");
		tmp = jf_test_tmpdir();
		if (write(fds[1], tmp, strlen(tmp)) < 0)
			_exit(2);
		exit(jf_test_exit(failed) == (failed ? 1 : 0) ? 0 : 3);
	}
	close(fds[1]);
	n = read(fds[0], dir, size - 1);
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    n <= 0)
		fail_msg("the child failed (status %d)", status);
	dir[n] = '\0';
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static void test_failure_keeps_folder(void **state)
{
	char dir[4096];

	(void)state;
	if (!folder_left_after_exit(1, dir, sizeof(dir)))
		fail_msg("%s went although a test failed", dir);
	rmdir(dir);
}

static void test_success_removes_folder(void **state)
{
	char dir[4096];

	(void)state;
	if (folder_left_after_exit(0, dir, sizeof(dir))) {
		rmdir(dir);
		fail_msg("%s stayed although no test failed", dir);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failure_keeps_folder),
		cmocka_unit_test(test_success_removes_folder),
	};

	return jf_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
