/* Two decoders' outputs compared, for the tests that check the fast Intel PT path against
 * libipt's block decoder (a cmocka failure names the first record that differs). */
#ifndef JITFLOW_TEST_FLOW_CHECK_H
#define JITFLOW_TEST_FLOW_CHECK_H

#include "jitflow/decoder.h"

/* Every counter of the statistics but blocks and how time is kept. */
void jf_check_same_stats(const struct jf_decode_stats *a, const struct jf_decode_stats *b);

/* Every record of both decoders (fast: the one under test, ref: libipt's), blocks included,
 * to the end of both, then their statistics. */
void jf_check_same_flows(const char *what, struct jf_decoder *fast, struct jf_decoder *ref);
/* The same, with after(record, ctx) called after each pair of equal records (where a test
 * changes what both decoders read, as a session applies a JIT's zone records). */
void jf_check_same_flows_with(const char *what, struct jf_decoder *fast, struct jf_decoder *ref,
			      void (*after)(const struct jf_flow *record, void *ctx), void *ctx);

#endif
