/* jitflow report, guards, split, bytecodes: views of one analysis of a trace. */
#include "cli_analysis.h"
#include "commands.h"

static void guards_view(FILE *out, const struct jf_analysis_result *r,
			const struct jf_report_meta *m)
{
	jf_report_guards(out, r, m);
	fputc('\n', out);
	jf_report_retrace(out, r, m);
}

static void split_view(FILE *out, const struct jf_analysis_result *r,
		       const struct jf_report_meta *m)
{
	jf_report_split(out, r, m);
	fputc('\n', out);
	if (r->phases_told || r->phase_problem_count) {
		jf_report_phases(out, r, m);
		fputc('\n', out);
	}
	jf_report_iterations(out, r, m);
	fputc('\n', out);
	jf_report_unavailable(out, r, m);
}

static void bytecodes_view(FILE *out, const struct jf_analysis_result *r,
			   const struct jf_report_meta *m)
{
	jf_report_bytecodes(out, r, m);
}

int jf_cmd_report(int argc, char **argv)
{
	return jf_cli_analysis_main("report",
		"A summary of a trace of JIT-compiled code: threads, instructions, the split\n"
		"between interpreter, jitted and native code, decode errors and losses; then the\n"
		"top traces (entries, iterations, exits) and guards, and the retrace candidates.",
		jf_report_summary, argc, argv);
}

int jf_cmd_guards(int argc, char **argv)
{
	return jf_cli_analysis_main("guards",
		"Guards by exits: passes, failure rate, resume bytecode pc, the bridge that took\n"
		"over and how many exits came before it; then the retrace candidates.",
		guards_view, argc, argv);
}

int jf_cmd_split(int argc, char **argv)
{
	return jf_cli_analysis_main("split",
		"Instructions and time in the interpreter, jitted code and native code, per thread\n"
		"and overall, with the transitions between them; the VM phases (tracing, compiling,\n"
		"GC, exit handling) the runtime told; per iteration when the runtime\n"
		"marks iterations, with a warmup classification (flat, warmup, slowdown, no steady\n"
		"state).",
		split_view, argc, argv);
}

int jf_cmd_bytecodes(int argc, char **argv)
{
	return jf_cli_analysis_main("bytecodes",
		"Inside jitted code: instructions per bytecode range of each region (from the\n"
		"runtime's pc maps, as `74->78 35.4%`), and per op or stencil kind across all\n"
		"traces.",
		bytecodes_view, argc, argv);
}

int jf_cmd_timeline(int argc, char **argv)
{
	return jf_cli_analysis_main("timeline",
		"A timeline of the run in Chrome's trace-event JSON format, for Perfetto's UI\n"
		"(ui.perfetto.dev: Open trace file) or chrome://tracing: a track per thread with\n"
		"spans for the interpreter, each trace and bridge, jitted regions and native code\n"
		"(merged below --resolution), guard exits (trace, guard, resume pc, count), code\n"
		"compiled and freed, bridges attached, iteration marks, and a counter of the jitted\n"
		"share. Time is the trace's clock; without timing, the instruction count\n"
		"(the file's otherData says which). Needs -o FILE.",
		NULL, argc, argv);
}
