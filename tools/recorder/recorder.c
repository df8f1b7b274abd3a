/* `jitflow record` under QEMU: the log-driven core (see recorder.h). */
#include "recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "block_map.h"
#include "manifest.h"
#include "perf_data.h"
#include "program_image.h"
#include "pt_stream.h"
#include "qemu_log.h"
#include "record_state.h"

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* PATH lookup as execvp does, so that QEMU gets a path it can open and perf a real one. */
static int resolve_program(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char candidate[PATH_MAX];

	if (strchr(name, '/'))
		return realpath(name, out) && size >= PATH_MAX ? 0 : -1;
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);

		snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)len, path, name);
		if (access(candidate, X_OK) == 0 && realpath(candidate, out))
			return 0;
		path = colon ? colon + 1 : NULL;
	}
	return -1;
}

static pid_t start_qemu(const char *qemu, const char *fifo, int argc, char **argv,
			const char *program)
{
	char **args = calloc((size_t)argc + 8, sizeof(*args));
	pid_t pid;
	int i, n = 0;

	if (!args)
		return -1;
	args[n++] = (char *)qemu;
	args[n++] = "-d";
	args[n++] = "in_asm,exec,nochain,strace";
	args[n++] = "-D";
	args[n++] = (char *)fifo;
	args[n++] = (char *)program;
	for (i = 1; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	pid = fork();
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(qemu, args);
		fprintf(stderr, "jitflow record: cannot run %s: %s\n", qemu, strerror(errno));
		_exit(127);
	}
	free(args);
	return pid;
}

/* Streams the FIFO line by line into the parser until QEMU closes it. */
static int pump_log(int fd, struct jf_qlog_parser *parser, pid_t child, int *child_done,
		    int *status)
{
	enum { BUF = 1 << 20 };
	char *buf = malloc(BUF);
	size_t have = 0;
	int saw_writer = 0;
	/* For debugging the recorder: a copy of QEMU's whole log (it is large). */
	const char *copy_path = getenv("JITFLOW_RECORD_LOG_COPY");
	FILE *copy = copy_path ? fopen(copy_path, "w") : NULL;

	if (!buf)
		return -1;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = poll(&pfd, 1, 200);
		ssize_t got;

		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0) {
			/* QEMU may die before it ever opens the log. */
			if (!*child_done && waitpid(child, status, WNOHANG) == child)
				*child_done = 1;
			if (*child_done && !saw_writer)
				break;
			continue;
		}
		got = read(fd, buf + have, BUF - have);
		if (got < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			break;
		}
		if (got == 0) {
			if (saw_writer || (pfd.revents & POLLHUP))
				break;
			continue;
		}
		saw_writer = 1;
		if (copy)
			fwrite(buf + have, 1, (size_t)got, copy);
		have += (size_t)got;
		{
			char *line = buf, *nl, *end = buf + have;

			while ((nl = memchr(line, '\n', (size_t)(end - line))) != NULL) {
				jf_qlog_line(parser, line, (size_t)(nl - line));
				line = nl + 1;
			}
			have = (size_t)(end - line);
			if (have == BUF) { /* a line longer than the buffer: cut it */
				jf_qlog_line(parser, buf, have);
				have = 0;
			} else {
				memmove(buf, line, have);
			}
		}
	}
	if (have)
		jf_qlog_line(parser, buf, have);
	jf_qlog_finish(parser);
	if (copy)
		fclose(copy);
	free(buf);
	return 0;
}

int jf_record(const struct jf_record_options *opt, struct jf_record_result *res,
	      struct jf_error *err)
{
	char program[PATH_MAX], tmpdir[] = "/tmp/jitflow-record-XXXXXX", fifo[PATH_MAX],
	     perf_path[PATH_MAX];
	const char *qemu = opt->qemu ? opt->qemu : getenv("JITFLOW_QEMU");
	struct jf_record_state *st;
	struct jf_qlog_parser *parser;
	struct jf_qlog_callbacks cb;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	pid_t child;
	int fd, status = 0, child_done = 0, rc = -1;
	double t0;

	memset(res, 0, sizeof(*res));
	if (!qemu)
		qemu = "qemu-x86_64";
	if (opt->argc < 1)
		return jf_fail(err, "no program to record");
	if (resolve_program(opt->argv[0], program, sizeof(program)))
		return jf_fail(err, "%s: program not found", opt->argv[0]);
	if (mkdir(opt->out_dir, 0777) && errno != EEXIST)
		return jf_fail(err, "%s: cannot create directory: %m", opt->out_dir);
	snprintf(perf_path, sizeof(perf_path), "%s/perf.data", opt->out_dir);

	st = jf_record_state_new(program, opt->timing, err);
	if (!st)
		return -1;
	st->marker_ptw = opt->marker_ptw;
	if (!realpath(opt->out_dir, st->out_dir)) {
		jf_fail(err, "%s: %m", opt->out_dir);
		goto out_state;
	}
	if (jf_perf_open(&st->perf, perf_path, err))
		goto out_state;
	if (!mkdtemp(tmpdir)) {
		jf_fail(err, "cannot create a temporary directory: %m");
		goto out_state;
	}
	snprintf(fifo, sizeof(fifo), "%s/qemu.log", tmpdir);
	if (mkfifo(fifo, 0600)) {
		jf_fail(err, "%s: cannot create FIFO: %m", fifo);
		goto out_tmp;
	}
	fd = open(fifo, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		jf_fail(err, "%s: cannot open FIFO: %m", fifo);
		goto out_fifo;
	}
	/* A large pipe lets QEMU run ahead instead of waiting for us every 64 KiB. */
	fcntl(fd, F_SETPIPE_SZ, 1 << 20);

	/* ^C goes to the program; the recorder stays to write what was recorded. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	t0 = now_seconds();
	child = start_qemu(qemu, fifo, opt->argc, opt->argv, program);
	if (child < 0) {
		jf_fail(err, "cannot start %s: %m", qemu);
		goto out_sig;
	}
	jf_record_state_begin(st, (int)child);

	parser = malloc(sizeof(*parser));
	if (!parser) {
		jf_fail(err, "out of memory");
		goto out_sig;
	}
	jf_record_state_callbacks(st, &cb);
	jf_qlog_init(parser, &cb);
	pump_log(fd, parser, child, &child_done, &status);
	if (!child_done)
		waitpid(child, &status, 0);
	res->seconds = now_seconds() - t0;
	{
		struct rusage self, children;

		getrusage(RUSAGE_SELF, &self);
		getrusage(RUSAGE_CHILDREN, &children);
		res->recorder_cpu_seconds = (double)self.ru_utime.tv_sec + self.ru_utime.tv_usec / 1e6 +
					    (double)self.ru_stime.tv_sec + self.ru_stime.tv_usec / 1e6;
		res->qemu_cpu_seconds = (double)children.ru_utime.tv_sec +
					children.ru_utime.tv_usec / 1e6 +
					(double)children.ru_stime.tv_sec + children.ru_stime.tv_usec / 1e6;
	}
	res->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) :
			   WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	st->log_lines = parser->lines;
	st->garbage_lines = parser->garbage_lines;
	free(parser);

	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !st->clock) {
		jf_fail(err, "%s did not run the program (exit status 127)", qemu);
		goto out_sig;
	}
	{
		struct utsname uts;
		struct jf_perf_info info = { .cmdline_argv0 = "jitflow", .argc = opt->argc,
					     .argv = opt->argv };

		if (uname(&uts) == 0) {
			info.hostname = uts.nodename;
			info.osrelease = uts.release;
		}
		if (jf_record_state_end(st, &info) || jf_perf_close(&st->perf, &info, err))
			goto out_sig;
	}
	res->instructions = st->clock;
	res->blocks = st->blocks_executed;
	res->pt_bytes = st->perf.aux_bytes;
	res->threads = st->nthreads;
	if (jf_record_copy_zone_files(st, opt->out_dir, err) ||
	    jf_manifest_write(st, opt, res, err))
		goto out_sig;
	rc = 0;
out_sig:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	close(fd);
out_fifo:
	unlink(fifo);
out_tmp:
	rmdir(tmpdir);
out_state:
	if (rc)
		jf_perf_abandon(&st->perf);
	jf_record_state_free(st);
	return rc;
}
