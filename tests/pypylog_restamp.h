/* For testing `--pypylog` without jit-code.txt: a PyPy log recorded under `jitflow record`
 * restamped as it would be on Intel PT hardware, where PyPy's rdtsc is the trace's TSC.
 *
 * Under QEMU PyPy stamps its sections with the host's TSC, which the recording does not
 * have. The recorder's own record says when each code write first ran (jit-code.txt: the
 * instruction position of every block of anonymous memory that ran with new bytes). Each
 * jit-backend-dump section is taken to run first at the first block that runs its bytes
 * (some equal, and any that differ rewritten by a later section), no earlier than the
 * first run of an earlier section at the same addresses; every stamp line then gets the recording's TSC `lead`
 * instructions before the earliest first run among the sections from that line on (a log
 * is written in order, and a write is made before its bytes run). Nothing here comes from
 * jitflow's placement (imagemap/pypylog_place.c). Single-threaded programs only: a thread's
 * position is then the recording's clock. */
#ifndef JITFLOW_TEST_PYPYLOG_RESTAMP_H
#define JITFLOW_TEST_PYPYLOG_RESTAMP_H

#include <stdint.h>

struct jf_test_restamp_stats {
	uint64_t sections, placed; /* dump sections, and those whose bytes ran */
	uint64_t unlogged;         /* blocks of jit-code.txt that no section wrote */
	uint64_t first_unlogged_pc;
};

/* Read log_path and jit_code_path; write the restamped log to out_path. instructions is
 * the recording's total (the stamp of lines after the last code that ran). */
void jf_test_pypylog_restamp(const char *log_path, const char *jit_code_path,
			     uint64_t instructions, uint64_t lead, const char *out_path,
			     struct jf_test_restamp_stats *st);

#endif
