/* The view outputs of the analysis commands (cli_views.h). */
#include "cli_views.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_inputs.h"

const char jf_cli_views_help[] =
	"  --folded          folded stacks, `thread;class;region;bytecode-range count`, in\n"
	"                    instructions (they sum to the report's instruction count), for\n"
	"                    flamegraph.pl, inferno or speedscope\n"
	"  --svg FILE        the flame graph of those stacks drawn as an SVG file\n"
	"  --html FILE       the whole report as one self-contained HTML file: split charts\n"
	"                    per thread and iteration, guard exits over time, sortable\n"
	"                    tables, bytecode heat strips and annotated code per trace\n"
	"  --stacks          with --html: also the flame graph of the call stacks (as\n"
	"                    `jitflow stacks` rebuilds them; costs about a fifth more time)\n";

void jf_cli_timeline_usage(FILE *out, const char *what)
{
	fprintf(out,
		"usage: jitflow timeline [RECORDING_DIR | PERF.DATA | INPUTS] -o FILE [--resolution N]\n"
		"       [--stacks] [--svg FILE] [--tolerance X] [--zone FILE]...\n\n%s\n\n"
		"  RECORDING_DIR     a folder written by `jitflow record`: its perf.data and the\n"
		"                    zone files (jit-*.dump) beside it\n"
		"  PERF.DATA         an Intel PT perf.data file (its zone files: --zone)\n"
		"  -o FILE           where to write the timeline (Chrome trace-event JSON)\n"
		"  --resolution N    merge what ran into spans of at least N clock units (ns or\n"
		"                    ticks of the trace's clock; instructions where the trace has\n"
		"                    no timing); default and minimum: the analysis's bucket width\n"
		"  --stacks          add a call-stack track per thread (nested frames, as\n"
		"                    `jitflow stacks` rebuilds them), joined below the resolution\n"
		"                    (when given, finer than the bucket width too)\n"
		"  --svg FILE        the call-stack tracks drawn as an SVG picture (implies\n"
		"                    --stacks; -o then optional): per thread its frames over\n"
		"                    time, callers above callees, joined below one pixel\n"
		"  --tolerance X     relative tolerance of a steady state (default 0.05)\n\n%s",
		what, jf_cli_inputs_help);
}

static int need_arg(int argc, char **argv, int i, struct jf_error *err)
{
	if (i + 1 >= argc) {
		jf_fail(err, "%s: missing argument", argv[i]);
		return JF_CLI_BAD_USAGE;
	}
	return 0;
}

int jf_cli_views_option(struct jf_cli_views *v, int argc, char **argv, int *i,
			struct jf_error *err)
{
	const char *a = argv[*i];

	if (v->timeline_cmd && (!strcmp(a, "--json") || !strcmp(a, "--csv") ||
				!strcmp(a, "--folded") || !strcmp(a, "--html") ||
				!strcmp(a, "--top"))) {
		jf_fail(err, "%s is an option of `jitflow report`; timeline writes to -o FILE", a);
		return JF_CLI_BAD_USAGE;
	}
	if (!strcmp(a, "--folded") && !v->timeline_cmd) {
		v->folded = 1;
		return 1;
	}
	if (v->timeline_cmd && (!strcmp(a, "-o") || !strcmp(a, "--output"))) {
		if (need_arg(argc, argv, *i, err))
			return JF_CLI_BAD_USAGE;
		v->timeline = argv[++*i];
		return 1;
	}
	if (!strcmp(a, "--stacks")) {
		v->stacks = 1;
		return 1;
	}
	if (v->timeline_cmd && !strcmp(a, "--resolution")) {
		char *end;

		if (need_arg(argc, argv, *i, err))
			return JF_CLI_BAD_USAGE;
		errno = 0;
		v->resolution = strtoull(argv[++*i], &end, 10);
		if (errno || *end || end == argv[*i] || argv[*i][0] == '-') {
			jf_fail(err, "--resolution: expected a number of clock units, got '%s'",
				argv[*i]);
			return JF_CLI_BAD_USAGE;
		}
		return 1;
	}
	if (v->timeline_cmd && !strcmp(a, "--svg")) {
		if (need_arg(argc, argv, *i, err))
			return JF_CLI_BAD_USAGE;
		v->timeline_svg = argv[++*i];
		v->stacks = 1;
		return 1;
	}
	if ((!strcmp(a, "--svg") || !strcmp(a, "--html")) && !v->timeline_cmd) {
		if (need_arg(argc, argv, *i, err))
			return JF_CLI_BAD_USAGE;
		if (!strcmp(a, "--svg"))
			v->svg = argv[++*i];
		else
			v->html = argv[++*i];
		return 1;
	}
	return 0;
}

int jf_cli_views_check(const struct jf_cli_views *v, struct jf_error *err)
{
	if (v->timeline_cmd && !v->timeline && !v->timeline_svg) {
		jf_fail(err, "-o FILE: where to write the timeline is missing (see --help)");
		return JF_CLI_BAD_USAGE;
	}
	if (v->stacks && !v->timeline_cmd && !v->html) {
		jf_fail(err, "--stacks: an option of `timeline` and of --html FILE (see --help)");
		return JF_CLI_BAD_USAGE;
	}
	return 0;
}

int jf_cli_views_wanted(const struct jf_cli_views *v)
{
	return v->folded || v->svg || v->html || v->timeline || v->timeline_svg;
}

int jf_cli_write_file(const char *path, const char *what, int (*write)(FILE *out, void *ctx),
		      void *ctx, struct jf_error *err)
{
	FILE *out = fopen(path, "w");
	int rc;

	if (!out)
		return jf_fail(err, "%s: cannot create %s: %s", what, path, strerror(errno));
	rc = write(out, ctx);
	if (ferror(out))
		rc = -1;
	if (fclose(out) != 0)
		rc = -1;
	if (rc < 0)
		return jf_fail(err, "%s: writing %s failed", what, path);
	return 0;
}

typedef int view_fn(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m,
		    const struct jf_cli_views *v);

struct view_call {
	view_fn *write;
	const struct jf_analysis_result *r;
	const struct jf_report_meta *m;
	const struct jf_cli_views *v;
};

static int call_view(FILE *out, void *ctx)
{
	const struct view_call *c = ctx;

	return c->write(out, c->r, c->m, c->v);
}

/* Write one view into path. */
static int write_file(const char *path, const char *what, view_fn *write,
		      const struct jf_analysis_result *r, const struct jf_report_meta *m,
		      const struct jf_cli_views *v, struct jf_error *err)
{
	struct view_call c = { write, r, m, v };

	return jf_cli_write_file(path, what, call_view, &c, err);
}

static int svg(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m,
	       const struct jf_cli_views *v)
{
	jf_report_flame_svg(out, r);
	return 0;
}

static int html(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m,
		const struct jf_cli_views *v)
{
	jf_report_html_named(out, r, m, v->names);
	return 0;
}

static int timeline_svg(FILE *out, const struct jf_analysis_result *r,
			const struct jf_report_meta *m, const struct jf_cli_views *v)
{
	return jf_report_timeline_svg(out, r, m, v->names, 1200);
}

static int timeline(FILE *out, const struct jf_analysis_result *r,
		    const struct jf_report_meta *m, const struct jf_cli_views *v)
{
	jf_report_timeline_named(out, r, m, v->resolution, v->names);
	return 0;
}

int jf_cli_views_write(const struct jf_cli_views *v, const struct jf_analysis_result *r,
		       const struct jf_report_meta *m, struct jf_error *err)
{
	if (v->timeline && write_file(v->timeline, "-o", timeline, r, m, v, err) < 0)
		return -1;
	if (v->timeline_svg && write_file(v->timeline_svg, "--svg", timeline_svg, r, m, v, err) < 0)
		return -1;
	if (v->html && write_file(v->html, "--html", html, r, m, v, err) < 0)
		return -1;
	if (v->svg && write_file(v->svg, "--svg", svg, r, m, v, err) < 0)
		return -1;
	if (v->folded && jf_report_folded(stdout, r) < 0)
		return jf_fail(err, "--folded: out of memory");
	return 0;
}
