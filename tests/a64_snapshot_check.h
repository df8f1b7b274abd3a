/* Checking an AArch64 recording (`jitflow record` under qemu-aarch64: a CoreSight snapshot
 * folder) against OpenCSD's trc_pkt_lister: the same instruction ranges, range by range,
 * in jitflow's decoder and in the lister, no decode error, no missing code, and every
 * instruction QEMU ran (recording.txt) decoded, with nothing lost but what the recorder's
 * Overflows hide (which it counts). */
#ifndef JITFLOW_TEST_A64_SNAPSHOT_CHECK_H
#define JITFLOW_TEST_A64_SNAPSHOT_CHECK_H

#include "cs_trace_compare.h"

enum { JF_TEST_A64_TRACE_ID = 0x10 }; /* the recorder's ETM (TRCTRACEIDR) */

/* Instructions in the ranges of run. */
uint64_t jf_test_a64_instructions(const struct cs_run *run);

/* Fails the running test unless jitflow's decoder gives dir the ranges of lister (the
 * lister's decode of dir), with the checks described above (inside a --filter: every
 * instruction QEMU ran less those it ran outside it). */
void jf_test_a64_decoder_matches(const char *dir, const char *name, const struct cs_run *lister);

/* The lister's decode of dir, then jf_test_a64_decoder_matches; lister is left filled
 * with the lister's decode for the caller's own counts. name labels messages. */
void jf_test_a64_snapshot_matches_lister(const char *dir, const char *name,
					 struct cs_run *lister);

#endif
