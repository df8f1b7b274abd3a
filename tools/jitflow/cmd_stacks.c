/* jitflow stacks: the call stacks of a trace (jitflow/call_stacks.h), named by the ELF
 * symbols of the files the recording mapped and by the runtime's regions. The decode and
 * analysis are the analysis commands' (cli_analysis.c); this file says how to print. */
#include "cli_stacks.h"

#include <stdio.h>

#include "cli_analysis.h"
#include "cli_views.h"
#include "commands.h"
#include "jitflow/images.h"

static const char what[] =
	"Call stacks per thread, rebuilt from every call and return in the trace: the\n"
	"hottest stacks by instructions run with them on top (self), with their time and\n"
	"the times each was entered. Native frames are named by ELF symbols, jitted ones by\n"
	"the runtime's regions (trace, bridge, method). Returns that match no frame (longjmp,\n"
	"exceptions), signal deliveries and lost data are counted and located; callers above\n"
	"where a thread's stack became known show as [unknown].";

void jf_cli_stacks_usage(FILE *out, const char *inputs_help)
{
	fprintf(out,
		"usage: jitflow stacks [RECORDING_DIR | PERF.DATA | INPUTS]\n"
		"       [--folded | --json | --svg FILE]\n"
		"       [--top N] [--zone FILE]...\n\n%s\n\n"
		"  RECORDING_DIR     a folder written by `jitflow record`\n"
		"  PERF.DATA         an Intel PT perf.data file (its zone files: --zone)\n"
		"  --folded          one line per stack, `thread;bottom;...;top INSNS`, for\n"
		"                    flamegraph.pl, inferno and speedscope\n"
		"  --json            every stack with its frames, and the counts (docs/analysis.md)\n"
		"  --svg FILE        the flame graph of the stacks (widths: instructions) as SVG\n"
		"  --top N           stacks in text output (default 10)\n%s",
		what, inputs_help);
}

static const char *symbol_name(void *ctx, uint64_t addr)
{
	return jf_symtab_lookup(ctx, addr, NULL);
}

struct flame_call {
	const struct jf_analysis_result *r;
	const struct jf_report_meta *m;
	const struct jf_stack_names *names;
};

static int flame(FILE *out, void *ctx)
{
	const struct flame_call *c = ctx;

	return jf_report_call_stacks_svg(out, c->r, c->m, c->names, 1200);
}

int jf_cli_stack_names(struct jf_cli_inputs *in, struct jf_stack_names *names,
		       struct jf_error *err)
{
	names->native_name = symbol_name;
	names->ctx = in->symtab;
	if (in->perf_images && jf_perf_images_symbols(in->perf_images, in->symtab) < 0)
		return jf_fail(err, "out of memory reading symbols");
	return 0;
}

int jf_cli_stacks_print(FILE *out, const struct jf_analysis_result *r,
			const struct jf_report_meta *m, struct jf_cli_inputs *in, int folded,
			int json, const char *svg, struct jf_error *err)
{
	struct jf_stack_names names;
	struct flame_call c = { r, m, &names };

	if (jf_cli_stack_names(in, &names, err) < 0)
		return -1;
	if (svg)
		return jf_cli_write_file(svg, "--svg", flame, &c, err);
	if (folded)
		return jf_report_call_stacks_folded(out, r, &names) < 0 ?
			jf_fail(err, "out of memory") : 0;
	if (json)
		return jf_report_call_stacks_json(out, r, m, &names) < 0 ?
			jf_fail(err, "out of memory") : 0;
	jf_report_call_stacks(out, r, m, &names);
	return 0;
}

int jf_cmd_stacks(int argc, char **argv)
{
	return jf_cli_analysis_main("stacks", what, NULL, argc, argv);
}
