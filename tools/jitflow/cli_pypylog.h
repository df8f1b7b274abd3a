/* PyPy's JIT log as an input: `--pypylog FILE`, and DIR/pypylog.log of a recording
 * folder. The log becomes a zone file (jitflow/pypylog_zone.h) in a private temporary
 * folder, removed when the inputs are released. */
#ifndef JITFLOW_CLI_PYPYLOG_H
#define JITFLOW_CLI_PYPYLOG_H

#include "jitflow/error.h"
#include "jitflow/pypylog.h"
#include "jitflow/pypylog_layout.h"
#include "jitflow/pypylog_clock.h"
#include "jitflow/pypylog_place.h"

struct jf_cli_inputs;

struct jf_cli_pypy {
	struct jf_pypylog *log;
	struct jf_pypylog_layout *layout;
	struct jf_pypylog_placement *place; /* NULL: placed by PyPy's TSC stamps */
	struct jf_pypylog_clock_placement *marks; /* its phase and iteration marks (NULL:
	                                     * not placed) */
	char dir[4096], zone[4096 + 32];     /* the temporary folder and zone file */
	const char *placement;               /* how its writes were placed, for the report */
};

/* Read log_path; place its writes with jit_code_path (a recording's jit-code.txt) when it
 * is not NULL, else by their TSC stamps converted onto the trace's clock (the perf.data's
 * TSC conversion; a raw --pt trace's flows are in TSC already); add the zone file to in.
 * Its phase and iteration marks are placed with clock_reads_path (a recording's
 * clock-reads.txt), a zone file per thread; without one they are not placed (said on
 * stderr). The trace must be known by then (see jf_cli_inputs.pypylog_path). Problems go to
 * stderr, one line each (the first few), with their counts. */
int jf_cli_add_pypylog(struct jf_cli_inputs *in, const char *log_path, const char *jit_code_path,
		       const char *clock_reads_path, struct jf_error *err);
void jf_cli_pypy_free(struct jf_cli_pypy *p);

#endif
