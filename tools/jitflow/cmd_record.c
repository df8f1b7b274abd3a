/* jitflow record: capture a program's control flow, as an Intel PT perf.data (x86-64) or
 * an ETMv4 snapshot (AArch64). */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code_pieces.h"
#include "commands.h"
#include "record_pypylog.h"
#include "record_env.h"
#include "record_executions.h"
#include "record_filter.h"
#include "recorder.h"
#include "record_a64.h"

static const char pt_pmu[] = "/sys/bus/event_source/devices/intel_pt";

static void usage(FILE *out)
{
	fprintf(out,
		"usage: jitflow record [-o DIR] [--emulate] [--backend=plugin|log] [--no-timing]\n"
		"                      [--arch x86_64|aarch64] [--etm-buffer=raw|formatted]\n"
		"                      [--filter=jit|START-END[,...]] [--marker-ptw] [--json]\n"
		"                      [--executions N] [--] PROGRAM [ARGS...]\n\n"
		"Run PROGRAM and write DIR/perf.data as `perf record -e intel_pt//u` would.\n"
		"Without the intel_pt PMU (or with --emulate) PROGRAM (x86-64 Linux) runs under\n"
		"qemu-x86_64 and the Intel PT packets are generated from the blocks it executes;\n"
		"timing packets then come from an instruction-count clock (synthetic; stated in\n"
		"DIR/manifest.json). PROGRAM's stdin/stdout/stderr pass through and jitflow\n"
		"exits with PROGRAM's exit status; the recording is written either way.\n\n"
		"  -o DIR        output directory (default: jitflow-record)\n"
		"  --arch x86_64|aarch64  the program's instruction set (default: from its ELF\n"
		"                header). An AArch64 program runs under qemu-aarch64\n"
		"                ($JITFLOW_QEMU_AARCH64; libraries from $JITFLOW_AARCH64_SYSROOT,\n"
		"                default /usr/aarch64-linux-gnu) with the plugin, and DIR gets an\n"
		"                ETMv4 trace as a CoreSight snapshot (decode it with\n"
		"                --cs-snapshot DIR) and DIR/recording.txt\n"
		"  --etm-buffer=raw|formatted  AArch64: the trace buffers (snapshot and\n"
		"                perf.data) as a TRBE writes them (raw, the default) or in\n"
		"                CoreSight formatter frames with the trace ID, as an ETR or ETF\n"
		"                writes them\n"
		"  --emulate     use QEMU even when the machine has Intel PT\n"
		"  --backend=plugin|log  how QEMU reports what ran: jitflow's TCG plugin\n"
		"                (libjitflow_qemu.so, binary records; the default, and fast) or\n"
		"                QEMU's text log (-d in_asm,exec,nochain,strace; slow). Without\n"
		"                the option: $JITFLOW_RECORD_BACKEND, else plugin, falling back to\n"
		"                log with a message when QEMU cannot load the plugin\n"
		"  --no-timing   no TSC/MTC/CYC packets\n"
		"  --filter=jit|START-END[,...]  trace only part of the program, as Intel PT's\n"
		"                address-range filter (perf record --filter) does: 'jit' is\n"
		"                anonymous executable memory (JIT code zones), START-END the\n"
		"                addresses [START, END) in hexadecimal. Leaving the filter writes\n"
		"                TIP.PGD, coming back TIP.PGE; positions in DIR/jit-code.txt count\n"
		"                traced instructions. Makes a runtime's recording a fraction of\n"
		"                the size (PyPy: its start-up is not traced). Emulation only\n"
		"  --marker-ptw  a PTW packet at each call of the zone emitter's marker (synthetic:\n"
		"                perf accepts it, libipt-based decoders report an error there)\n"
		"  --json        print a one-line JSON summary on stderr when done\n"
		"  --executions N  N fresh executions of PROGRAM, one after the other, each\n"
		"                recorded into DIR/exec-1 ... DIR/exec-N with the other options\n"
		"                (for `jitflow warmup`); progress on stderr; exits with the first\n"
		"                nonzero status of an execution, else 0\n"
		"  --save-code   also save the executed pages of the program's files in DIR/code/,\n"
		"                so the recording decodes anywhere (and can be checked in); only\n"
		"                the bytes of instructions that ran are kept, the rest are zeros\n"
		"  $JITFLOW_QEMU the qemu-x86_64 binary to use\n"
		"  $JITFLOW_QEMU_PLUGIN  the plugin to load (default: found beside jitflow)\n\n"
		"Runtimes describe their code into DIR without extra flags: jitflow sets\n"
		"JITFLOW_ZONE_DIR=DIR (the zone emitter writes jit-PID.dump there), and for\n"
		"LuaJIT LUA_INIT (loads jitflow's module) and JITFLOW_EMIT_LIB, each only\n"
		"when not already set. Python (PROGRAM named python*): jitflow's CPython module\n"
		"goes first on PYTHONPATH; it describes a CPython 3.13 JIT build's executors\n"
		"(docs/cpython.md) and runs the sitecustomize it hides.\n"
		"PyPy (PROGRAM named pypy*): PYPYLOG is set to write the JIT's code, addresses,\n"
		"optimized traces and counters (" JF_PYPYLOG_SECTIONS ")\n"
		"to DIR/pypylog.log; a PYPYLOG of your own is kept and its file copied there.\n");
}

static int record_with_perf(const char *dir, int argc, char **argv)
{
	char **args = calloc((size_t)argc + 8, sizeof(*args));
	char out[4096];
	int i, n = 0;

	if (!args)
		return JF_EXIT_FAIL;
	snprintf(out, sizeof(out), "%s/perf.data", dir);
	args[n++] = "perf";
	args[n++] = "record";
	args[n++] = "-e";
	args[n++] = "intel_pt//u";
	args[n++] = "-o";
	args[n++] = out;
	args[n++] = "--";
	for (i = 0; i < argc; i++)
		args[n++] = argv[i];
	execvp("perf", args);
	fprintf(stderr, "jitflow record: the machine has Intel PT but perf cannot run (%m); "
		"use --emulate\n");
	free(args);
	return JF_EXIT_FAIL;
}

int jf_cmd_record(int argc, char **argv)
{
	struct jf_record_options opt = { .out_dir = "jitflow-record", .timing = 1 };
	struct jf_pypylog_plan pypy;
	struct jf_record_result res;
	struct jf_error err = { { 0 } };
	int i, emulate = 0, json = 0, save_code = 0, noptions = 0;
	unsigned long executions = 0;
	char traced[300] = "";
	const char *backend = getenv("JITFLOW_RECORD_BACKEND");

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return JF_EXIT_OK;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			opt.out_dir = argv[++i];
		} else if (!strncmp(argv[i], "--arch", 6) &&
			   (argv[i][6] == '=' || (!argv[i][6] && i + 1 < argc))) {
			const char *a = argv[i][6] == '=' ? argv[i] + 7 : argv[++i];

			if (!strcmp(a, "aarch64") || !strcmp(a, "arm64")) {
				opt.arch = JF_RECORD_ARCH_AARCH64;
			} else if (!strcmp(a, "x86_64") || !strcmp(a, "x86-64")) {
				opt.arch = JF_RECORD_ARCH_X86_64;
			} else {
				fprintf(stderr, "jitflow record: unknown --arch '%s' (expected x86_64 "
					"or aarch64)\n", a);
				return JF_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--emulate")) {
			emulate = 1;
		} else if (!strncmp(argv[i], "--backend=", 10)) {
			backend = argv[i] + 10;
		} else if (!strcmp(argv[i], "--no-timing")) {
			opt.timing = 0;
		} else if (!strncmp(argv[i], "--filter=", 9)) {
			opt.filter = argv[i] + 9;
		} else if (!strcmp(argv[i], "--filter") && i + 1 < argc) {
			opt.filter = argv[++i];
		} else if (!strcmp(argv[i], "--etm-buffer=raw")) {
			opt.etm_formatted = 0;
		} else if (!strcmp(argv[i], "--etm-buffer=formatted")) {
			opt.etm_formatted = 1;
		} else if (!strncmp(argv[i], "--etm-buffer", 12)) {
			fprintf(stderr, "jitflow record: %s: expected --etm-buffer=raw or "
				"--etm-buffer=formatted\n", argv[i]);
			return JF_EXIT_USAGE;
		} else if (!strcmp(argv[i], "--marker-ptw")) {
			opt.marker_ptw = 1;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--save-code")) {
			save_code = 1;
		} else if (!strcmp(argv[i], "--executions") && i + 1 < argc) {
			char *end;

			executions = strtoul(argv[++i], &end, 10);
			if (*end || !executions || executions > 100000) {
				fprintf(stderr, "jitflow record: --executions takes a count from 1 to "
					"100000, not '%s'\n", argv[i]);
				return JF_EXIT_USAGE;
			}
			continue;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "jitflow record: unknown option '%s' (see --help)\n", argv[i]);
			return JF_EXIT_USAGE;
		} else {
			break;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "jitflow record: no program given (see --help)\n");
		return JF_EXIT_USAGE;
	}
	if (executions) {
		/* The options of every execution: all but -o and --executions. */
		char **options = calloc((size_t)argc, sizeof(*options));
		int rc;

		for (int k = 1; k < i && options; k++) {
			if (!strcmp(argv[k], "-o") || !strcmp(argv[k], "--executions"))
				k++;
			else if (strcmp(argv[k], "--"))
				options[noptions++] = argv[k];
		}
		rc = options ? jf_record_executions((unsigned)executions, opt.out_dir, noptions,
						    options, argc - i, argv + i) : JF_EXIT_FAIL;
		free(options);
		return rc;
	}
	opt.argc = argc - i;
	opt.argv = argv + i;
	if (backend && *backend) {
		if (!strcmp(backend, "plugin")) {
			opt.backend = JF_RECORD_BACKEND_PLUGIN;
		} else if (!strcmp(backend, "log")) {
			opt.backend = JF_RECORD_BACKEND_LOG;
		} else {
			fprintf(stderr, "jitflow record: unknown backend '%s' (expected plugin or log)\n",
				backend);
			return JF_EXIT_USAGE;
		}
	}
	if (opt.filter) {
		struct jf_rec_filter check;

		if (jf_rec_filter_parse(&check, opt.filter, &err)) {
			fprintf(stderr, "jitflow record: %s\n", err.msg);
			return JF_EXIT_USAGE;
		}
	}
	if (jf_pypylog_plan(&pypy, opt.out_dir, opt.argv[0]) < 0)
		return JF_EXIT_FAIL;

	if (opt.arch == JF_RECORD_ARCH_AUTO &&
	    jf_record_elf_machine(opt.argv[0]) == EM_AARCH64)
		opt.arch = JF_RECORD_ARCH_AARCH64;
	if (jf_record_setup_env(opt.out_dir, opt.argv[0], opt.arch == JF_RECORD_ARCH_AARCH64,
				1) < 0) {
		fprintf(stderr, "jitflow record: %s: cannot create directory: %m\n", opt.out_dir);
		return JF_EXIT_FAIL;
	}
	/* Intel PT hardware records x86-64 programs only. */
	if (opt.arch == JF_RECORD_ARCH_AARCH64)
		emulate = 1;
	if (!emulate && access(pt_pmu, F_OK) == 0 && opt.filter) {
		fprintf(stderr, "jitflow record: --filter is made by the emulated recorder; with "
			"Intel PT hardware add --emulate, or use perf record --filter\n");
		return JF_EXIT_USAGE;
	}
	if (!emulate && access(pt_pmu, F_OK) == 0) {
		if (mkdir(opt.out_dir, 0777) && errno != EEXIST) {
			fprintf(stderr, "jitflow record: %s: cannot create directory: %m\n",
				opt.out_dir);
			return JF_EXIT_FAIL;
		}
		/* perf runs PROGRAM itself: a user's own PYPYLOG file stays where it is */
		return record_with_perf(opt.out_dir, opt.argc, opt.argv);
	}
	if (jf_record(&opt, &res, &err)) {
		fprintf(stderr, "jitflow record: %s\n", err.msg);
		return JF_EXIT_FAIL;
	}
	jf_pypylog_finish(&pypy, opt.out_dir);
	if (save_code && res.arch == JF_RECORD_ARCH_AARCH64) {
		/* The snapshot's memory images hold the code that ran already. */
		fprintf(stderr, "jitflow record: --save-code: an AArch64 recording keeps its code in "
			"%s/mem_*.bin\n", opt.out_dir);
	} else if (save_code && jf_save_code_pieces(opt.out_dir, &err) < 0) {
		fprintf(stderr, "jitflow record: saving code: %s\n", err.msg);
		return JF_EXIT_FAIL;
	}
	if (opt.filter)
		snprintf(traced, sizeof(traced), " (%llu inside --filter=%s)",
			 (unsigned long long)res.traced, opt.filter);
	if (res.arch == JF_RECORD_ARCH_AARCH64 && !json)
		fprintf(stderr, "jitflow record: %s: %llu instructions%s, %llu threads, %llu bytes of "
			"ETMv4 trace (emulated under qemu-aarch64; CoreSight snapshot and cs_etm "
			"perf.data, see %s/recording.txt) in %.2f s\n", opt.out_dir,
			(unsigned long long)res.instructions, traced,
			(unsigned long long)res.threads, (unsigned long long)res.pt_bytes,
			opt.out_dir, res.seconds);
	else if (json)
		fprintf(stderr, "{\"dir\": \"%s\", \"exit_status\": %d, \"instructions\": %llu, "
			"\"traced_instructions\": %llu, "
			"\"pt_bytes\": %llu, \"threads\": %llu, \"seconds\": %.3f, "
			"\"synthetic_timing\": %s, \"backend\": \"%s\", \"arch\": \"%s\"}\n",
			opt.out_dir, res.exit_status,
			(unsigned long long)res.instructions, (unsigned long long)res.traced,
			(unsigned long long)res.pt_bytes,
			(unsigned long long)res.threads, res.seconds,
			opt.timing && res.arch != JF_RECORD_ARCH_AARCH64 ? "true" : "false",
			res.backend == JF_RECORD_BACKEND_PLUGIN ? "plugin" : "log",
			res.arch == JF_RECORD_ARCH_AARCH64 ? "aarch64" : "x86_64");
	else
		fprintf(stderr, "jitflow record: %s/perf.data: %llu instructions%s, %llu threads, "
			"%llu bytes of Intel PT (emulated under QEMU, %s) in %.2f s\n",
			opt.out_dir, (unsigned long long)res.instructions, traced,
			(unsigned long long)res.threads, (unsigned long long)res.pt_bytes,
			opt.timing ? "synthetic timing" : "no timing", res.seconds);
	if (res.term_signal)
		fprintf(stderr, "jitflow record: %s was killed by signal %d (%s); the recording "
			"holds what ran up to it (manifest.json says how its end is counted)\n",
			opt.argv[0], res.term_signal, strsignal(res.term_signal));
	return res.exit_status;
}
