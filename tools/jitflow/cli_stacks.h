/* How `jitflow stacks` describes itself and prints its result (cmd_stacks.c). */
#ifndef JITFLOW_CLI_STACKS_H
#define JITFLOW_CLI_STACKS_H

#include <stdio.h>

#include "cli_inputs.h"
#include "jitflow/report.h"

void jf_cli_stacks_usage(FILE *out, const char *inputs_help);
/* Names of native frames: the ELF symbols of in's files (read here). -1 with err. */
int jf_cli_stack_names(struct jf_cli_inputs *in, struct jf_stack_names *names,
		       struct jf_error *err);
/* Text, --folded, --json or the flame graph into svg (when not NULL), native frames named
 * by the symbols of in's files. 0, or -1 with err. */
int jf_cli_stacks_print(FILE *out, const struct jf_analysis_result *r,
			const struct jf_report_meta *m, struct jf_cli_inputs *in, int folded,
			int json, const char *svg, struct jf_error *err);

#endif
