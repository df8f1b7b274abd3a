/* Where a perf.data's files come from, as perf finds them: --buildid-dir (default
 * ~/.debug), --archive (perf archive's tarball; PERF.DATA.tar.bz2 beside the file is used
 * without asking), --symfs, --kernel. */
#ifndef JITFLOW_CLI_PERF_FILES_H
#define JITFLOW_CLI_PERF_FILES_H

#include "jitflow/error.h"

struct jf_cli_inputs;

/* Like jf_cli_input_option, for these options. */
int jf_cli_perf_files_option(struct jf_cli_inputs *in, const char *opt, const char *val,
			     struct jf_error *err);
/* Once the perf.data is known: its build-ids, the archive, the default cache. */
int jf_cli_perf_files_prepare(struct jf_cli_inputs *in, struct jf_error *err);
/* --kernel without a perf.data (no build-id to check it against). */
int jf_cli_load_kernel(struct jf_cli_inputs *in, struct jf_error *err);
/* Remove the unpacked archive. */
void jf_cli_perf_files_fini(struct jf_cli_inputs *in);

#endif
