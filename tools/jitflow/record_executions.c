/* jitflow record --executions N: each execution is recorded by a jitflow record of its own
 * (re-run from /proc/self/exe), so nothing of one execution's recorder or runtime state
 * reaches the next: the executions are as independent as Krun's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "record_executions.h"

static int record_one(const char *out, int noptions, char **options, int nprogram,
		      char **program)
{
	char **args = calloc((size_t)(noptions + nprogram) + 6, sizeof(*args));
	int n = 0, i, status;
	pid_t pid;

	if (!args)
		return JF_EXIT_FAIL;
	args[n++] = "jitflow";
	args[n++] = "record";
	for (i = 0; i < noptions; i++)
		args[n++] = options[i];
	args[n++] = "-o";
	args[n++] = (char *)out;
	args[n++] = "--";
	for (i = 0; i < nprogram; i++)
		args[n++] = program[i];
	pid = fork();
	if (pid == 0) {
		execv("/proc/self/exe", args);
		fprintf(stderr, "jitflow record: cannot run jitflow again for %s: %m\n", out);
		_exit(JF_EXIT_FAIL);
	}
	free(args);
	if (pid < 0) {
		fprintf(stderr, "jitflow record: cannot start the recording of %s: %m\n", out);
		return JF_EXIT_FAIL;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return JF_EXIT_FAIL;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* mkdir -p: a matrix's DIR is often runs/BENCHMARK, its parent not made yet. */
static int make_dirs(const char *dir)
{
	char path[4096];
	char *p;

	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0777) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(path, 0777) < 0 && errno != EEXIST ? -1 : 0;
}

int jf_record_executions(unsigned n, const char *dir, int noptions, char **options, int nprogram,
			 char **program)
{
	char out[4096];
	unsigned i;
	int first_failure = 0;

	if (make_dirs(dir) < 0) {
		fprintf(stderr, "jitflow record: cannot create %s: %m\n", dir);
		return JF_EXIT_FAIL;
	}
	for (i = 1; i <= n; i++) {
		int rc;

		snprintf(out, sizeof(out), "%s/exec-%u", dir, i);
		fprintf(stderr, "jitflow record: execution %u of %u -> %s\n", i, n, out);
		rc = record_one(out, noptions, options, nprogram, program);
		if (rc) {
			fprintf(stderr, "jitflow record: execution %u of %u exited %d\n", i, n, rc);
			if (!first_failure)
				first_failure = rc;
		}
	}
	return first_failure;
}
