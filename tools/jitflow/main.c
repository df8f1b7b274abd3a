/* jitflow: decode hardware control-flow traces of JIT-compiled code, and report on them. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct jf_command commands[] = {
	{ "decode", "decode a trace: one line per instruction, block or event", jf_cmd_decode },
	{ "stat", "count instructions, blocks, errors and losses in a trace", jf_cmd_stat },
	{ "report", "traces, guards, time split and retrace candidates of a JIT trace", jf_cmd_report },
	{ "guards", "guard exits, passes, failure rates and bridges", jf_cmd_guards },
	{ "split", "interpreter / jitted / native split per thread and per iteration", jf_cmd_split },
	{ "bytecodes", "instructions per bytecode range and per op inside jitted code", jf_cmd_bytecodes },
	{ "timeline", "a timeline of the run for Perfetto / chrome://tracing (trace-event JSON)",
	  jf_cmd_timeline },
	{ "stacks", "call stacks per thread: hottest, folded, flame graph, JSON", jf_cmd_stacks },
	{ "check", "compare a report with a baseline: fail on regressions", jf_cmd_check },
	{ "zone", "list the records of a JIT code-zone file (jitdump + jitflow records)",
	  jf_cmd_zone },
	{ "record", "run a program and record its trace: Intel PT (x86-64), ETMv4 (AArch64, QEMU)",
	  jf_cmd_record },
	{ "warmup", "warm-up across executions: changepoints, classes, verdict (Krun-style)",
	  jf_cmd_warmup },
	{ "merge", "merge warm-up reports (--json) into the report of all their executions",
	  jf_cmd_merge },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: jitflow COMMAND [OPTIONS] [--help]\n\n"
		     "Decode Intel PT and CoreSight traces through JIT-compiled code.\n\n"
		     "commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n`jitflow COMMAND --help` describes each command.\n");
}

int main(int argc, char **argv)
{
	size_t i;

	/* Memory the process frees stays in it for the next use: decoders made per segment
	 * (-j N) free and remake megabytes of records, and memory new to a process is the
	 * dearest thing on a virtual machine (docs/performance.md: 13-38 us per page on ours,
	 * against well under 1 us on bare metal). Large blocks come from the heap too, so
	 * that they are reused rather than unmapped; peak memory is unchanged. */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);

	if (argc < 2) {
		usage(stderr);
		return JF_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return JF_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("jitflow 0.1.0\n");
		return JF_EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "jitflow: unknown command '%s' (see jitflow --help)\n", argv[1]);
	return JF_EXIT_USAGE;
}
