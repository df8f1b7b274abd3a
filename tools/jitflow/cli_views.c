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
	"  --svg FILE        the flame graph of those stacks drawn as an SVG file\n";

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

	if (!strcmp(a, "--folded") && !v->timeline_cmd) {
		v->folded = 1;
		return 1;
	}
	if (!strcmp(a, "--svg") && !v->timeline_cmd) {
		if (need_arg(argc, argv, *i, err))
			return JF_CLI_BAD_USAGE;
		v->svg = argv[++*i];
		return 1;
	}
	return 0;
}

int jf_cli_views_wanted(const struct jf_cli_views *v)
{
	return v->folded || v->svg || v->html || v->timeline;
}

/* Write one view into path; the file is complete or an error says why not. */
static int write_file(const char *path, const char *what,
		      int (*write)(FILE *out, const struct jf_analysis_result *r,
				   const struct jf_report_meta *m, const struct jf_cli_views *v),
		      const struct jf_analysis_result *r, const struct jf_report_meta *m,
		      const struct jf_cli_views *v, struct jf_error *err)
{
	FILE *out = fopen(path, "w");
	int rc;

	if (!out)
		return jf_fail(err, "%s: cannot create %s: %s", what, path, strerror(errno));
	rc = write(out, r, m, v);
	if (ferror(out))
		rc = -1;
	if (fclose(out) != 0)
		rc = -1;
	if (rc < 0)
		return jf_fail(err, "%s: writing %s failed", what, path);
	return 0;
}

static int svg(FILE *out, const struct jf_analysis_result *r, const struct jf_report_meta *m,
	       const struct jf_cli_views *v)
{
	jf_report_flame_svg(out, r);
	return 0;
}

int jf_cli_views_write(const struct jf_cli_views *v, const struct jf_analysis_result *r,
		       const struct jf_report_meta *m, struct jf_error *err)
{
	if (v->svg && write_file(v->svg, "--svg", svg, r, m, v, err) < 0)
		return -1;
	if (v->folded && jf_report_folded(stdout, r) < 0)
		return jf_fail(err, "--folded: out of memory");
	return 0;
}
