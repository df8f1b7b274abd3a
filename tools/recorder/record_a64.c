/* `jitflow record` of an AArch64 program: qemu-aarch64 with jitflow's plugin, an ETMv4
 * trace of what ran (etm_flow.c), written as a CoreSight snapshot folder (etm_snapshot.c)
 * and as a cs_etm perf.data (etm_perf.c) beside it, with jit-code.txt (record_jitcode.h)
 * and the program's zone files copied in (etm_zones.c). */
#include "record_a64.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "etm_flow.h"
#include "etm_perf.h"
#include "etm_snapshot.h"
#include "etm_zones.h"
#include "plugin_stream.h"
#include "program_image.h"
#include "record_qemu.h"

int jf_record_elf_machine(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), machine = -1;
	Elf *elf;
	GElf_Ehdr eh;

	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &eh))
		machine = eh.e_machine;
	if (elf)
		elf_end(elf);
	close(fd);
	return machine;
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_seconds(const struct rusage *u)
{
	return (double)u->ru_utime.tv_sec + u->ru_utime.tv_usec / 1e6 +
	       (double)u->ru_stime.tv_sec + u->ru_stime.tv_usec / 1e6;
}

static int consume(void *ctx, const char *data, size_t size)
{
	return jf_prec_feed(ctx, (const uint8_t *)data, size);
}

/* Where the recording says what it holds and what it could not: README-like text for the
 * user and for tests (key = value lines). */
static int write_summary(const char *dir, const struct jf_etm_flow *f,
			 const struct jf_etm_snapshot_stats *snap, const struct jf_record_result *res,
			 const char *note, struct jf_error *err)
{
	char path[PATH_MAX + 16];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/recording.txt", dir);
	fp = fopen(path, "w");
	if (!fp)
		return jf_fail(err, "%s: cannot create: %m", path);
	fprintf(fp,
		"format = CoreSight snapshot and cs_etm perf.data (ETMv4, EL0 only, context ID = "
		"thread ID, timestamps = instructions since the start, in ns)\n"
		"exit_status = %d\ninstructions = %llu\nblocks = %llu\nthreads = %zu\n"
		"system_calls = %llu\nthread_switches = %llu\ntrace_bytes = %zu\natoms = %llu\n"
		"timestamps = %llu\n"
		"exceptions = %llu\nsyncs = %llu\nmemory_images = %llu\ncode_bytes = %llu\n"
		"code_conflicts = %llu\ndiscontinuities = %llu\nlost_instructions = %llu\n"
		"filter = %s\nfiltered_instructions = %llu\nfilter_mappings_dropped = %llu\n"
		"unended_threads = %llu\nbad_translations = %llu\nunknown_translations = %llu\n",
		res->exit_status, (unsigned long long)f->instructions,
		(unsigned long long)f->blocks_executed, f->nthreads,
		(unsigned long long)f->syscalls, (unsigned long long)f->switches, f->etm.size,
		(unsigned long long)f->etm.atom_count, (unsigned long long)f->etm.timestamps,
		(unsigned long long)f->etm.exceptions,
		(unsigned long long)f->etm.syncs, (unsigned long long)snap->regions,
		(unsigned long long)snap->code_bytes, (unsigned long long)snap->conflicts,
		(unsigned long long)f->discontinuities, (unsigned long long)f->lost_instructions,
		f->filter ? f->filter->spec : "none", (unsigned long long)f->filtered,
		f->filter ? (unsigned long long)f->filter->dropped : 0ull,
		(unsigned long long)f->unended_threads, (unsigned long long)f->bad_translations,
		(unsigned long long)f->unknown_ids);
	fprintf(fp, "handler_entries = %llu\nsignals_resolved = %llu\n"
		"signals_target_never_ran = %llu\noverflows = %llu\nhandlers_dropped = %llu\n",
		(unsigned long long)f->handler_entries, (unsigned long long)f->signals_resolved,
		(unsigned long long)f->target_never_ran, (unsigned long long)f->overflows,
		(unsigned long long)f->handlers_dropped);
	/* Where the first Overflow is, for a look at the trace with trc_pkt_lister. */
	if (f->overflows)
		fprintf(fp, "first_overflow = stream offset %llu (of a raw trace.bin), after the "
			"block at %#llx\n",
			(unsigned long long)f->first_overflow_offset,
			(unsigned long long)f->first_overflow_pc);
	if (note && *note)
		fprintf(fp, "note = %s\n", note);
	if (fclose(fp))
		return jf_fail(err, "%s: write failed: %m", path);
	return 0;
}

/* Close jit-code.txt (the blocks of anonymous executable memory as they first ran with new
 * bytes); what it could not list goes into the recording's note. */
static void jitcode_note(const struct jf_etm_flow *f, struct jf_rec_jitcode *jc, char *note,
			 size_t size)
{
	int incomplete = 0, write_error = 0, creatable = f->jitcode != NULL;
	size_t used = strlen(note);

	if (!jc) {
		snprintf(note + used, size - used, "%sout of memory: jit-code.txt not written",
			 used ? "; " : "");
		return;
	}
	jf_rec_jitcode_close(jc, &incomplete, &write_error);
	if (incomplete || write_error || !creatable || f->jitcode_dropped)
		snprintf(note + used, size - used, "%sjit-code.txt: %s", used ? "; " : "",
			 !creatable ? "cannot be created" : write_error ? "write error" :
			 incomplete ? "incomplete (out of memory)" :
			 "anonymous executable mappings beyond 256 not listed");
}

/* The zone emitter's marker function when the program links it at a fixed address. */
static uint64_t fixed_marker_addr(const char *program)
{
	struct jf_program_image img;
	struct jf_error err;

	memset(&img, 0, sizeof(img));
	if (jf_program_image_load_for(&img, program, EM_AARCH64, &err) || img.is_pie)
		return 0;
	return img.marker_addr;
}

int jf_record_a64(const struct jf_record_options *opt, const char *program, const char *plugin,
		  struct jf_record_result *res, struct jf_error *err)
{
	char plugin_arg[2 * PATH_MAX], dir[PATH_MAX];
	struct jf_record_fifo ff;
	const char *qemu = opt->qemu ? opt->qemu : getenv("JITFLOW_QEMU_AARCH64");
	const char *sysroot = getenv("JITFLOW_AARCH64_SYSROOT");
	struct jf_etm_flow flow;
	struct jf_etm_zones zones;
	struct jf_rec_filter filter;
	struct jf_etm_snapshot_stats snap = { 0 };
	struct jf_perf_info info = { .cmdline_argv0 = "jitflow", .argc = opt->argc,
				     .argv = opt->argv };
	struct utsname uts;
	const char *comm;
	struct jf_prec_callbacks cb;
	struct jf_prec_reader reader;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	struct rusage self, children;
	char note[300] = "";
	struct jf_rec_jitcode *jitcode;
	int status = 0, child_done = 0, rc = -1;
	pid_t child;
	double t0;

	memset(res, 0, sizeof(*res));
	res->backend = JF_RECORD_BACKEND_PLUGIN;
	res->arch = JF_RECORD_ARCH_AARCH64;
	if (!qemu || !*qemu)
		qemu = "qemu-aarch64";
	if (!sysroot || !*sysroot)
		sysroot = "/usr/aarch64-linux-gnu";
	if (opt->filter && jf_rec_filter_parse(&filter, opt->filter, err))
		return -1;
	if (!realpath(opt->out_dir, dir))
		return jf_fail(err, "%s: %m", opt->out_dir);
	if (jf_etm_flow_init(&flow)) {
		jf_etm_flow_free(&flow);
		return jf_fail(err, "capstone cannot disassemble AArch64");
	}
	if (opt->filter)
		flow.filter = &filter;
	jf_etm_flow_callbacks(&flow, &cb);
	jf_etm_zones_init(&zones, &flow, &cb, fixed_marker_addr(program));
	if (jf_prec_init(&reader, &cb)) {
		jf_etm_flow_free(&flow);
		return jf_fail(err, "out of memory");
	}
	flow.jitcode = jitcode = jf_rec_jitcode_new(dir);
	if (jf_record_fifo_open(&ff, "qemu.records", err))
		goto out_reader;
	jf_record_plugin_option(plugin_arg, sizeof(plugin_arg), plugin, ff.path);

	/* ^C goes to the program; the recorder stays to write what was recorded. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	t0 = now_seconds();
	child = jf_record_start_qemu(qemu, sysroot, plugin_arg, ff.path, opt->argc, opt->argv,
				     program);
	if (child < 0) {
		jf_fail(err, "cannot start %s: %m", qemu);
		goto out_sig;
	}
	jf_record_pump_fifo(ff.fd, consume, &reader, child, &child_done, &status);
	if (!child_done)
		waitpid(child, &status, 0);
	res->seconds = now_seconds() - t0;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &children);
	res->recorder_cpu_seconds = cpu_seconds(&self);
	res->qemu_cpu_seconds = cpu_seconds(&children);
	res->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) :
			   WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
	res->term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	if (!reader.saw_hello) {
		jf_fail(err, "%s did not load the plugin %s or did not run %s (exit status %d)",
			qemu, plugin, program, res->exit_status);
		goto out_sig;
	}
	if (jf_prec_finish(&reader)) {
		/* Located and kept: what came before the damage is recorded. */
		snprintf(note, sizeof(note), "%s", reader.error);
		fprintf(stderr, "jitflow record: %s\n", reader.error);
	}
	jf_etm_flow_finish(&flow);
	jitcode_note(&flow, jitcode, note, sizeof(note));
	jitcode = NULL;
	if (flow.failed) {
		jf_fail(err, "out of memory while recording");
		goto out_sig;
	}
	res->instructions = flow.instructions;
	res->traced = flow.instructions - flow.lost_instructions - flow.filtered;
	res->blocks = flow.blocks_executed;
	res->pt_bytes = flow.etm.size;
	res->threads = flow.nthreads;
	if (uname(&uts) == 0) {
		info.hostname = uts.nodename;
		info.osrelease = uts.release;
	}
	comm = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
	if (jf_etm_snapshot_write(&flow, dir, opt->etm_formatted, &snap, err) ||
	    jf_etm_perf_write(&flow, &snap, dir, opt->etm_formatted, comm, &info, err) ||
	    write_summary(dir, &flow, &snap, res, note, err) ||
	    jf_etm_zones_copy(&zones, dir, err))
		goto out_sig;
	rc = 0;
out_sig:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	jf_record_fifo_close(&ff);
out_reader:
	if (jitcode)
		jitcode_note(&flow, jitcode, note, sizeof(note));
	jf_etm_snapshot_stats_free(&snap);
	jf_prec_free(&reader);
	jf_etm_zones_free(&zones);
	jf_etm_flow_free(&flow);
	return rc;
}
