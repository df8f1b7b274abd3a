/* PyPy's JIT log as an input (cli_pypylog.h). */
#include "cli_pypylog.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_inputs.h"
#include "jitflow/perf_cs_etm.h"
#include "jitflow/perf_intel_pt.h"
#include "jitflow/pypylog_zone.h"

static void tell_problems(const char *what, uint64_t n, const char (*msgs)[192], size_t kept)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < kept && i < n; i++)
		fprintf(stderr, "jitflow: %s: %s\n", what, msgs[i]);
	if (n > kept)
		fprintf(stderr, "jitflow: %s: %" PRIu64 " problems in all\n", what, n);
}

/* The conversion that puts PyPy's TSC stamps on the flows' clock. */
static int trace_tsc_conversion(const struct jf_cli_inputs *in, const char *log_path,
				struct jf_tsc_conversion *conv, struct jf_error *err)
{
	uint32_t auxtrace = 0;

	if (in->perf_path) {
		if (jf_perf_auxtrace_type(in->perf_path, &auxtrace, err) < 0)
			return -1;
		if (auxtrace == JF_PERF_AUXTRACE_CS_ETM)
			return jf_fail(err, "%s: PyPy's TSC stamps cannot be dated in a CoreSight "
				       "trace (%s); use an Intel PT recording", log_path,
				       in->perf_path);
		return jf_perf_tsc_conversion(in->perf_path, conv, err);
	}
	if (in->pt_path) {
		*conv = in->pt.conv; /* a raw stream's flows are dated in TSC (no conversion) */
		return 0;
	}
	return jf_fail(err, "%s: PyPy's log needs an Intel PT trace (--perf or --pt) to date its "
		       "code writes", log_path);
}

static void marks_zone_path(const struct jf_cli_pypy *p, int32_t tid, char *out, size_t size)
{
	snprintf(out, size, "%s/marks-%" PRId32 ".zone", p->dir, tid);
}

/* The log's phase and iteration marks, placed by the recording's TSC reads: one zone file
 * per thread they fell on. */
static int add_marks(struct jf_cli_inputs *in, struct jf_cli_pypy *p, const char *log_path,
		     const char *clock_reads_path, struct jf_error *err)
{
	const struct jf_pypylog_clock_placement *pl;
	size_t i;

	if (!p->log->nmarks)
		return 0;
	if (!clock_reads_path) {
		fprintf(stderr, "jitflow: %s: %zu phase and iteration marks not placed: that needs a "
			"recording's clock-reads.txt (the program's TSC reads)\n", log_path,
			p->log->nmarks);
		return 0;
	}
	if (jf_pypylog_place_marks(p->log, clock_reads_path, &p->marks, err) < 0)
		return -1;
	pl = p->marks;
	tell_problems("placing PyPy's phase and iteration marks", pl->unplaced + pl->shared +
		      pl->crossed + pl->bad_lines, pl->problem, pl->nproblems);
	for (i = 0; i < pl->ntids; i++) {
		char path[sizeof(p->dir) + 64];
		uint64_t events;

		marks_zone_path(p, pl->tids[i], path, sizeof(path));
		if (jf_pypylog_write_marks_zone(p->log, pl, pl->tids[i], path, &events, err) < 0 ||
		    jf_cli_add_zone(in, path, err) < 0)
			return -1;
	}
	return 0;
}

int jf_cli_add_pypylog(struct jf_cli_inputs *in, const char *log_path, const char *jit_code_path,
		       const char *clock_reads_path, struct jf_error *err)
{
	struct jf_cli_pypy *p;
	struct jf_pypylog_zone_stats st;
	struct jf_tsc_conversion conv;
	const char *tmp = getenv("TMPDIR");

	if (in->pypy)
		return jf_fail(err, "%s: one PyPy log at a time", log_path);
	p = calloc(1, sizeof(*p));
	if (!p)
		return jf_fail(err, "out of memory");
	in->pypy = p;
	if (jf_pypylog_read(&p->log, log_path, err) < 0 ||
	    jf_pypylog_layout(p->log, &p->layout, err) < 0)
		return -1;
	tell_problems(log_path, p->log->problems, p->log->problem, JF_PYPYLOG_PROBLEMS_KEPT);
	tell_problems("finding PyPy's guards", p->layout->problems, p->layout->problem, 8);
	if (jit_code_path) {
		if (jf_pypylog_place(p->log, jit_code_path, &p->place, err) < 0)
			return -1;
		tell_problems("placing PyPy's code writes", p->place->unexplained + p->place->bad_lines,
			      p->place->problem, p->place->nproblems);
		p->placement = "PyPy's code writes placed exactly, at the blocks that first ran "
			       "their bytes (the recorder's jit-code.txt)";
	} else {
		if (trace_tsc_conversion(in, log_path, &conv, err) < 0)
			return -1;
		p->placement = "PyPy's code writes placed by their TSC stamps (on the trace's "
			       "clock): only as fine as the trace's timing, so code rewritten at "
			       "an address and run within that distance may decode with the "
			       "other version's bytes";
	}
	snprintf(p->dir, sizeof(p->dir), "%s/jitflow-pypy-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(p->dir)) {
		p->dir[0] = 0;
		return jf_fail(err, "cannot create a temporary folder: %m");
	}
	snprintf(p->zone, sizeof(p->zone), "%s/pypylog.zone", p->dir);
	if (jf_pypylog_write_zone(p->log, p->layout, p->place, jit_code_path ? NULL : &conv,
				  p->zone, &st, err) < 0)
		return -1;
	if (st.unloaded)
		fprintf(stderr, "jitflow: %s: line %" PRIu32 ": no code dump holds this trace's "
			"code whole with its entry inside (%" PRIu64 " trace%s in all): where it "
			"runs, it decodes as helper or missing code, without its guards\n",
			log_path, st.first_unloaded, st.unloaded, st.unloaded == 1 ? "" : "s");
	if (jf_cli_add_zone(in, p->zone, err) < 0)
		return -1;
	return add_marks(in, p, log_path, clock_reads_path, err);
}

void jf_cli_pypy_free(struct jf_cli_pypy *p)
{
	size_t i;

	if (!p)
		return;
	if (p->zone[0])
		unlink(p->zone);
	for (i = 0; p->marks && i < p->marks->ntids; i++) {
		char path[sizeof(p->dir) + 64];

		marks_zone_path(p, p->marks->tids[i], path, sizeof(path));
		unlink(path);
	}
	if (p->dir[0])
		rmdir(p->dir);
	jf_pypylog_placement_free(p->place);
	jf_pypylog_clock_placement_free(p->marks);
	jf_pypylog_layout_free(p->layout);
	jf_pypylog_free(p->log);
	free(p);
}
