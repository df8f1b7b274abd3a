/* stat and decode on a perf.data recording, through the command's own inputs
 * (tools/jitflow/cli_inputs.c: the session, the zone filter, PyPy's log), the fast path
 * on settled AUX buffers against libipt's block decoder on every buffer
 * (--decoder=libipt-block): shared by test_perf_fast_paths and test_perf_fast_recorded.
 *
 * - stat: the same instructions, events, errors, overflows, bytes lost and time span, and
 *   every record but the blocks the same (the fast counter returns no blocks; its blocks
 *   are cut at every branch, so their number differs; its enable records do not say
 *   whether tracing resumed where it stopped);
 * - decode: every record the same, offsets and times included. */
#ifndef JITFLOW_TEST_PERF_FAST_CHECK_H
#define JITFLOW_TEST_PERF_FAST_CHECK_H

#include <stdint.h>

#include "jitflow/perf_session.h"
#include "jitflow/pt_fast.h"

/* One recording folder at path, counted (stat) or decoded (decode), fast against libipt's
 * block decoder; image_dir: where its program's files are (NULL: at the recorded paths or
 * in its code/ folder); cpu_none: --cpu none. Fails the test where they differ. Returns
 * the fast run's session report (its AUX buffers, and how many the fast path decoded);
 * *fast_path and *path_of: its decode path, as stat reports it. */
struct jf_perf_session_report jf_check_perf_fast(const char *path, const char *image_dir,
						 int count, int cpu_none,
						 struct jf_pt_fast_report *fast_path,
						 uint64_t *path_of);

#endif
