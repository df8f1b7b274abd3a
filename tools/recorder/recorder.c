/* `jitflow record` under QEMU: the log-driven core (see recorder.h). */
#include "recorder.h"

#include <elf.h>
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
#include "record_a64.h"
#include "pt_stream.h"
#include "plugin_stream.h"
#include "qemu_log.h"
#include "record_filter.h"
#include "record_internal.h"
#include "record_plugin.h"
#include "record_qemu.h"

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

pid_t jf_record_start_qemu(const char *qemu, const char *sysroot, const char *plugin_arg,
			   const char *fifo, int argc, char **argv, const char *program)
{
	char **args = calloc((size_t)argc + 10, sizeof(*args));
	pid_t pid;
	int i, n = 0;

	if (!args)
		return -1;
	args[n++] = (char *)qemu;
	if (sysroot) {
		args[n++] = "-L";
		args[n++] = (char *)sysroot;
	}
	if (plugin_arg) {
		args[n++] = "-plugin";
		args[n++] = (char *)plugin_arg;
	} else {
		args[n++] = "-d";
		args[n++] = "in_asm,exec,nochain,strace";
		args[n++] = "-D";
		args[n++] = (char *)fifo;
	}
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

int jf_record_find_plugin(char *out, size_t size)
{
	static const char *const beside_exe[] = {
		"recorder/plugin/libjitflow_qemu.so",  /* the build tree: build/tools/jitflow */
		"../lib/jitflow/libjitflow_qemu.so",   /* an installation: PREFIX/bin/jitflow */
	};
	const char *env = getenv("JITFLOW_QEMU_PLUGIN");
	char exe[PATH_MAX];
	ssize_t n;
	size_t i;

	if (env && *env) {
		snprintf(out, size, "%s", env);
		return access(out, R_OK) ? -1 : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	for (i = 0; i < sizeof(beside_exe) / sizeof(beside_exe[0]); i++) {
		char candidate[PATH_MAX + 64];

		snprintf(candidate, sizeof(candidate), "%s/%s", exe, beside_exe[i]);
		if (access(candidate, R_OK) == 0 && realpath(candidate, out) && size >= PATH_MAX)
			return 0;
	}
	return -1;
}

/* QEMU's -plugin option: FILE,out=FIFO, where a comma inside a value is written twice
 * (QEMU's option syntax). */
void jf_record_plugin_option(char *out, size_t size, const char *plugin, const char *fifo)
{
	const char *parts[3] = { plugin, ",out=", fifo };
	size_t n = 0, i;

	for (i = 0; i < 3; i++) {
		const char *c;

		for (c = parts[i]; *c && n + 2 < size; c++) {
			if (*c == ',' && i != 1)
				out[n++] = ',';
			out[n++] = *c;
		}
	}
	out[n] = '\0';
}

/* What the FIFO carries goes to one of these. */
struct log_consumer {
	struct jf_qlog_parser *parser;
	char *buf;                  /* an incomplete line */
	size_t have;
};

enum { LOG_LINE_BUF = 1 << 20 };

static int consume_log(void *ctx, const char *data, size_t size)
{
	struct log_consumer *c = ctx;

	while (size) {
		size_t take = LOG_LINE_BUF - c->have < size ? LOG_LINE_BUF - c->have : size;
		char *line = c->buf, *nl, *end;

		memcpy(c->buf + c->have, data, take);
		c->have += take;
		data += take;
		size -= take;
		end = c->buf + c->have;
		while ((nl = memchr(line, '\n', (size_t)(end - line))) != NULL) {
			jf_qlog_line(c->parser, line, (size_t)(nl - line));
			line = nl + 1;
		}
		c->have = (size_t)(end - line);
		if (c->have == LOG_LINE_BUF) { /* a line longer than the buffer: cut it */
			jf_qlog_line(c->parser, c->buf, c->have);
			c->have = 0;
		} else {
			memmove(c->buf, line, c->have);
		}
	}
	return 0;
}

static int consume_plugin(void *ctx, const char *data, size_t size)
{
	return jf_prec_feed(ctx, (const uint8_t *)data, size);
}

/* A forked child's plugin writes its execve records to FIFO.children, a regular file (each
 * record one O_APPEND write), not into the FIFO, where its write could land between two of
 * the parent's writes of one record and cut the stream. They only make notes, so they are
 * read after the stream; the file has no hello record of its own. */
static void children_path(char *path, size_t size, const char *fifo)
{
	snprintf(path, size, "%s" JF_PREC_CHILDREN_SUFFIX, fifo);
}

static void read_child_records(const char *fifo, struct jf_record_plugin *plugin,
			       struct jf_record_state *st)
{
	char path[PATH_MAX + 16];
	struct jf_prec_callbacks cb;
	struct jf_prec_reader r;
	uint8_t buf[4096];
	ssize_t n;
	int fd;

	children_path(path, sizeof(path), fifo);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	jf_record_plugin_callbacks(plugin, &cb);
	if (jf_prec_init(&r, &cb) == 0) {
		r.saw_hello = 1;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			if (jf_prec_feed(&r, buf, (size_t)n))
				break;
		if (jf_prec_finish(&r))
			jf_rec_note(st, "%s: %s", path, r.error);
		jf_prec_free(&r);
	}
	close(fd);
}

int jf_record_fifo_open(struct jf_record_fifo *ff, const char *name, struct jf_error *err)
{
	const char *tmp = getenv("TMPDIR");

	/* The FIFO's folder; TMPDIR as for every temporary file jitflow makes (a recorder
	 * killed with SIGKILL leaves it behind). */
	snprintf(ff->dir, sizeof(ff->dir), "%s/jitflow-record-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(ff->dir))
		return jf_fail(err, "%s: cannot create a temporary directory: %m", ff->dir);
	snprintf(ff->path, sizeof(ff->path), "%s/%s", ff->dir, name);
	if (mkfifo(ff->path, 0600)) {
		jf_fail(err, "%s: cannot create FIFO: %m", ff->path);
		rmdir(ff->dir);
		return -1;
	}
	ff->fd = open(ff->path, O_RDONLY | O_NONBLOCK);
	if (ff->fd < 0) {
		jf_fail(err, "%s: cannot open FIFO: %m", ff->path);
		unlink(ff->path);
		rmdir(ff->dir);
		return -1;
	}
	/* A large pipe lets QEMU run ahead instead of waiting for us every 64 KiB. */
	fcntl(ff->fd, F_SETPIPE_SZ, 1 << 20);
	return 0;
}

void jf_record_fifo_close(struct jf_record_fifo *ff)
{
	char children[PATH_MAX + 16];

	close(ff->fd);
	unlink(ff->path);
	children_path(children, sizeof(children), ff->path);
	unlink(children);
	rmdir(ff->dir);
}

/* Streams the FIFO into consume until QEMU closes it. After consume fails (a corrupt
 * plugin stream), the rest is read and dropped so that QEMU can finish. */
int jf_record_pump_fifo(int fd, int (*consume)(void *, const char *, size_t), void *ctx,
			pid_t child, int *child_done, int *status)
{
	enum { BUF = 1 << 20 };
	char *buf = malloc(BUF);
	int saw_writer = 0, consuming = 1;
	/* For debugging the recorder: a copy of the whole stream (it is large). */
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
			/* QEMU may die before it ever opens the FIFO. */
			if (!*child_done && waitpid(child, status, WNOHANG) == child)
				*child_done = 1;
			if (*child_done && !saw_writer)
				break;
			continue;
		}
		got = read(fd, buf, BUF);
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
			fwrite(buf, 1, (size_t)got, copy);
		if (consuming && consume(ctx, buf, (size_t)got))
			consuming = 0;
	}
	if (copy)
		fclose(copy);
	free(buf);
	return 0;
}

enum { NO_PLUGIN = -2 }; /* QEMU did not load the plugin: the program did not run */

/* One recording with one backend (plugin when plugin_path is set). */
static int record_once(const struct jf_record_options *opt, const char *program,
		       const char *plugin_path, struct jf_record_result *res, struct jf_error *err)
{
	char perf_path[PATH_MAX], plugin_arg[2 * PATH_MAX];
	struct jf_record_fifo ff;
	const char *fifo;
	const char *qemu = opt->qemu ? opt->qemu : getenv("JITFLOW_QEMU");
	struct jf_record_state *st;
	struct jf_qlog_parser *parser = NULL;
	struct log_consumer log = { 0 };
	struct jf_record_plugin *plugin = NULL;
	struct jf_prec_reader reader;
	int reader_ok = 0;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	pid_t child;
	int fd, status = 0, child_done = 0, rc = -1, ended, write_failed = 0;
	double t0;

	memset(res, 0, sizeof(*res));
	res->backend = plugin_path ? JF_RECORD_BACKEND_PLUGIN : JF_RECORD_BACKEND_LOG;
	res->arch = JF_RECORD_ARCH_X86_64;
	if (!qemu)
		qemu = "qemu-x86_64";
	snprintf(perf_path, sizeof(perf_path), "%s/perf.data", opt->out_dir);

	st = jf_record_state_new(program, opt->timing, err);
	if (!st)
		return -1;
	st->marker_ptw = opt->marker_ptw;
	if (opt->filter) {
		st->filter = malloc(sizeof(*st->filter));
		if (!st->filter) {
			jf_fail(err, "out of memory");
			goto out_state;
		}
		if (jf_rec_filter_parse(st->filter, opt->filter, err))
			goto out_state;
	}
	if (!realpath(opt->out_dir, st->out_dir)) {
		jf_fail(err, "%s: %m", opt->out_dir);
		goto out_state;
	}
	if (jf_perf_open(&st->perf, perf_path, err))
		goto out_state;
	if (jf_record_fifo_open(&ff, plugin_path ? "qemu.records" : "qemu.log", err))
		goto out_state;
	fifo = ff.path;
	fd = ff.fd;

	if (plugin_path) {
		struct jf_prec_callbacks pcb;

		plugin = jf_record_plugin_new(st);
		if (!plugin) {
			jf_fail(err, "out of memory");
			goto out_fd;
		}
		jf_record_plugin_callbacks(plugin, &pcb);
		if (jf_prec_init(&reader, &pcb)) {
			jf_fail(err, "out of memory");
			goto out_fd;
		}
		reader_ok = 1;
		jf_record_plugin_option(plugin_arg, sizeof(plugin_arg), plugin_path, fifo);
	} else {
		struct jf_qlog_callbacks cb;

		parser = malloc(sizeof(*parser));
		log.buf = malloc(LOG_LINE_BUF);
		if (!parser || !log.buf) {
			jf_fail(err, "out of memory");
			goto out_fd;
		}
		jf_record_state_callbacks(st, &cb);
		jf_qlog_init(parser, &cb);
		log.parser = parser;
	}

	/* ^C goes to the program; the recorder stays to write what was recorded. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	t0 = now_seconds();
	child = jf_record_start_qemu(qemu, NULL, plugin_path ? plugin_arg : NULL, fifo, opt->argc,
				     opt->argv, program);
	if (child < 0) {
		jf_fail(err, "cannot start %s: %m", qemu);
		goto out_sig;
	}
	jf_record_state_begin(st, (int)child);
	if (plugin_path)
		jf_record_pump_fifo(fd, consume_plugin, &reader, child, &child_done, &status);
	else
		jf_record_pump_fifo(fd, consume_log, &log, child, &child_done, &status);
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
	res->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	if (res->term_signal)
		/* QEMU is the program: a signal from outside (SIGKILL) stops it anywhere, and
		 * what it had not yet reported never reaches the recorder. */
		jf_rec_note(st, "the program was killed by signal %d (%s): the recording ends "
			    "with the last block QEMU reported; unless the program raised the "
			    "signal itself (abort), it stopped somewhere inside that block, which "
			    "the instruction count here holds whole and the trace cannot end (a "
			    "decoder counts up to that block's instructions fewer)",
			    res->term_signal, strsignal(res->term_signal));
	if (plugin_path) {
		if (!jf_record_plugin_started(plugin)) {
			rc = NO_PLUGIN;
			goto out_sig;
		}
		if (jf_prec_finish(&reader)) {
			/* Located and kept: what came before the damage is recorded. */
			jf_rec_note(st, "%s", reader.error);
			fprintf(stderr, "jitflow record: %s\n", reader.error);
		}
		st->log_lines = reader.records;
		read_child_records(fifo, plugin, st);
	} else {
		jf_qlog_finish(parser);
		st->log_lines = parser->lines;
		st->garbage_lines = parser->garbage_lines;
	}

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
		ended = jf_record_state_end(st, &info);
		if (jf_perf_close(&st->perf, &info, err)) {
			/* A full disk: the perf.data that is there stays (it decodes up to the
			 * failure); the zone files and the manifest are still tried. */
			write_failed = 1;
		} else if (ended) {
			jf_fail(err, "%s: the PT encoder failed; the file decodes up to its last "
				"whole record", perf_path);
			write_failed = 1;
		}
	}
	res->instructions = st->clock;
	res->traced = st->traced;
	res->blocks = st->blocks_executed;
	res->pt_bytes = st->perf.aux_bytes;
	res->threads = st->nthreads;
	if (write_failed) {
		struct jf_error later = { 0 };

		if (jf_record_copy_zone_files(st, opt->out_dir, &later))
			fprintf(stderr, "jitflow record: %s\n", later.msg);
		if (jf_manifest_write(st, opt, res, &later))
			fprintf(stderr, "jitflow record: %s\n", later.msg);
		goto out_sig;
	}
	if (jf_record_copy_zone_files(st, opt->out_dir, err) ||
	    jf_manifest_write(st, opt, res, err))
		goto out_sig;
	rc = 0;
out_sig:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
out_fd:
	if (reader_ok)
		jf_prec_free(&reader);
	jf_record_plugin_free(plugin);
	free(parser);
	free(log.buf);
	jf_record_fifo_close(&ff);
out_state:
	if (rc)
		jf_perf_abandon(&st->perf);
	jf_record_state_free(st);
	return rc;
}

int jf_record(const struct jf_record_options *opt, struct jf_record_result *res,
	      struct jf_error *err)
{
	char program[PATH_MAX], plugin[PATH_MAX];
	int have_plugin, rc;

	memset(res, 0, sizeof(*res));
	if (opt->argc < 1)
		return jf_fail(err, "no program to record");
	if (resolve_program(opt->argv[0], program, sizeof(program)))
		return jf_fail(err, "%s: program not found", opt->argv[0]);
	if (mkdir(opt->out_dir, 0777) && errno != EEXIST)
		return jf_fail(err, "%s: cannot create directory: %m", opt->out_dir);
	if (opt->arch == JF_RECORD_ARCH_AARCH64 ||
	    (opt->arch == JF_RECORD_ARCH_AUTO && jf_record_elf_machine(program) == EM_AARCH64)) {
		if (opt->backend == JF_RECORD_BACKEND_LOG)
			return jf_fail(err, "AArch64 programs are recorded with the plugin only");
		if (opt->plugin)
			snprintf(plugin, sizeof(plugin), "%s", opt->plugin);
		else if (jf_record_find_plugin(plugin, sizeof(plugin)))
			return jf_fail(err, "the QEMU plugin libjitflow_qemu.so cannot be found (set "
				       "JITFLOW_QEMU_PLUGIN); AArch64 programs need it");
		return jf_record_a64(opt, program, plugin, res, err);
	}
	if (opt->backend == JF_RECORD_BACKEND_LOG)
		return record_once(opt, program, NULL, res, err);
	if (opt->plugin) {
		snprintf(plugin, sizeof(plugin), "%s", opt->plugin);
		have_plugin = access(plugin, R_OK) == 0;
	} else {
		have_plugin = jf_record_find_plugin(plugin, sizeof(plugin)) == 0;
	}
	if (!have_plugin) {
		if (opt->backend == JF_RECORD_BACKEND_PLUGIN)
			return jf_fail(err, "the QEMU plugin %s cannot be read (set "
				       "JITFLOW_QEMU_PLUGIN, or use --backend=log)",
				       opt->plugin ? opt->plugin : "libjitflow_qemu.so");
		fprintf(stderr, "jitflow record: the QEMU plugin libjitflow_qemu.so is not "
			"installed; recording from QEMU's log instead (slower)\n");
		return record_once(opt, program, NULL, res, err);
	}
	rc = record_once(opt, program, plugin, res, err);
	if (rc != NO_PLUGIN)
		return rc;
	if (opt->backend == JF_RECORD_BACKEND_PLUGIN)
		return jf_fail(err, "QEMU did not load the plugin %s (a QEMU built without plugin "
			       "support?); use --backend=log", plugin);
	fprintf(stderr, "jitflow record: QEMU did not load the plugin %s; recording from QEMU's "
		"log instead (slower)\n", plugin);
	return record_once(opt, program, NULL, res, err);
}
