/* The view outputs of the analysis commands: `report --folded`, `--svg FILE`, `--html FILE`,
 * and `jitflow timeline -o FILE [--resolution N]`. */
#ifndef JITFLOW_CLI_VIEWS_H
#define JITFLOW_CLI_VIEWS_H

#include <stdint.h>

#include "jitflow/error.h"
#include "jitflow/report.h"

struct jf_cli_views {
	int timeline_cmd;          /* the `timeline` command: -o FILE is its output */
	int folded;
	const char *svg, *html, *timeline;
	uint64_t resolution;       /* timeline: merge spans below this (clock units; 0 = auto) */
	int stacks;                /* timeline --stacks: a call-stack track per thread */
	const char *timeline_svg;  /* timeline --svg FILE: those tracks drawn */
	const struct jf_stack_names *names; /* names of native frames (set before writing) */
};

#include <stdio.h>

/* Help lines of the view options of report (and the other analysis commands). */
extern const char jf_cli_views_help[];
/* The whole --help of `jitflow timeline`; what: its description. */
void jf_cli_timeline_usage(FILE *out, const char *what);

/* Options at argv[*i]: 1 when taken (*i moves past its argument), 0 when not a view
 * option, JF_CLI_BAD_USAGE (with err) when malformed. */
int jf_cli_views_option(struct jf_cli_views *v, int argc, char **argv, int *i,
			struct jf_error *err);
/* After parsing: JF_CLI_BAD_USAGE (with err) when a required option is missing. */
int jf_cli_views_check(const struct jf_cli_views *v, struct jf_error *err);
/* Whether a view replaces the text output. */
int jf_cli_views_wanted(const struct jf_cli_views *v);
/* Create path and let write(out, ctx) fill it (it returns -1 when out of memory); the file
 * is complete, or err says (naming option `what` and path) why not. 0 or -1 with err. */
int jf_cli_write_file(const char *path, const char *what, int (*write)(FILE *out, void *ctx),
		      void *ctx, struct jf_error *err);
/* Write the views asked for (stdout for --folded). 0 or -1 with err. */
int jf_cli_views_write(const struct jf_cli_views *v, const struct jf_analysis_result *r,
		       const struct jf_report_meta *m, struct jf_error *err);

#endif
