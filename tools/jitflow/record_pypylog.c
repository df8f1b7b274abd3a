/* PYPYLOG for recordings of PyPy (record_pypylog.h). */
#include "record_pypylog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_pypy(const char *program)
{
	const char *base = strrchr(program, '/');

	return !strncmp(base ? base + 1 : program, "pypy", 4);
}

/* PYPYLOG is "FILE" (everything), "SECTIONS:FILE" or "+N:FILE" (profile only); section
 * names match by prefix. */
static void check_user_value(struct jf_pypylog_plan *plan, const char *value)
{
	const char *colon = strrchr(value, ':');
	const char *file = colon ? colon + 1 : value;
	static const char *const needed[] = { "jit-backend-dump", "jit-backend-addr",
					      "jit-log-opt", "jit-backend-counts" };
	size_t i;

	if (!strcmp(file, "-") || !*file) {
		fprintf(stderr, "jitflow record: PYPYLOG=%s writes to stderr; jitflow cannot read "
			"PyPy's code from it (set PYPYLOG to a file, or unset it)\n", value);
		return;
	}
	snprintf(plan->user_file, sizeof(plan->user_file), "%s", file);
	if (!colon)
		return; /* no section list: PyPy logs everything */
	for (i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		const char *p = value;
		size_t n = strlen(needed[i]);
		int found = 0;

		while (p < colon) {
			const char *end = memchr(p, ',', (size_t)(colon - p));

			end = end ? end : colon;
			/* a listed prefix of the section name enables it */
			if ((size_t)(end - p) <= n && end > p && !strncmp(p, needed[i], (size_t)(end - p)))
				found = 1;
			p = end + 1;
		}
		if (!found)
			fprintf(stderr, "jitflow record: PYPYLOG does not enable %s; reports on PyPy's "
				"code will lack what it gives\n", needed[i]);
	}
}

int jf_pypylog_plan(struct jf_pypylog_plan *plan, const char *dir, const char *program)
{
	const char *user = getenv("PYPYLOG");
	char abs_dir[PATH_MAX], value[PATH_MAX + sizeof(JF_PYPYLOG_SECTIONS) + 16];

	memset(plan, 0, sizeof(*plan));
	if (!is_pypy(program))
		return 0;
	plan->active = 1;
	if (user) {
		check_user_value(plan, user);
		return 0;
	}
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "jitflow record: %s: cannot create directory: %m\n", dir);
		return -1;
	}
	if (!realpath(dir, abs_dir)) {
		fprintf(stderr, "jitflow record: %s: %m\n", dir);
		return -1;
	}
	snprintf(value, sizeof(value), JF_PYPYLOG_SECTIONS ":%s/pypylog.log", abs_dir);
	return setenv("PYPYLOG", value, 1);
}

int jf_pypylog_finish(const struct jf_pypylog_plan *plan, const char *dir)
{
	char dest[PATH_MAX], buf[65536];
	int in, out, rc = 0;
	ssize_t n;

	if (!plan->active || !plan->user_file[0])
		return 0;
	snprintf(dest, sizeof(dest), "%s/pypylog.log", dir);
	in = open(plan->user_file, O_RDONLY);
	if (in < 0) {
		fprintf(stderr, "jitflow record: PyPy's log %s: %m (not copied)\n", plan->user_file);
		return -1;
	}
	out = open(dest, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		fprintf(stderr, "jitflow record: %s: %m\n", dest);
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			rc = -1;
			break;
		}
	if (n < 0 || rc)
		fprintf(stderr, "jitflow record: copying %s to %s: %m\n", plan->user_file, dest);
	close(in);
	close(out);
	return n < 0 ? -1 : rc;
}
