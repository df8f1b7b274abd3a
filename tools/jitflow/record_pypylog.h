/* `jitflow record` and PyPy: the JIT log (PYPYLOG) that describes PyPy's machine code is
 * written into the recording folder as DIR/pypylog.log. */
#ifndef JITFLOW_RECORD_PYPYLOG_H
#define JITFLOW_RECORD_PYPYLOG_H

#include <stddef.h>

#include "jitflow/pypylog_phases.h"

/* The sections jitflow reads (jitflow/pypylog.h): the code, the VM's timed phases and the
 * program's iteration marks. */
#define JF_PYPYLOG_SECTIONS "jit-backend-dump,jit-backend-addr,jit-log-opt,jit-backend-counts," \
	JF_PYPYLOG_PHASE_SECTIONS "," JF_PYPYLOG_ITERATION_SECTION

struct jf_pypylog_plan {
	int active;            /* PROGRAM is PyPy */
	char user_file[4096];  /* the user's own PYPYLOG file, copied afterwards ("" if none) */
};

/* Before the run: when program is PyPy (its name starts with "pypy") and PYPYLOG is unset,
 * set it to write JF_PYPYLOG_SECTIONS into DIR/pypylog.log; when the user set PYPYLOG,
 * keep it and remember its file (the part after the last ':'), noting on stderr what
 * cannot be used (stderr "-", sections jitflow needs that are missing). Returns 0, -1 when
 * dir cannot be made absolute. */
int jf_pypylog_plan(struct jf_pypylog_plan *plan, const char *dir, const char *program);

/* After the run: copy the user's file into DIR/pypylog.log. Returns 0 or -1 (message on
 * stderr). */
int jf_pypylog_finish(const struct jf_pypylog_plan *plan, const char *dir);

#endif
