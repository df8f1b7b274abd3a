/* Internal: a jf_pt_config as libipt's pt_config (shared by the block-decoder path and the
 * fast path, so that both decode with the same CPU errata and timing parameters). */
#ifndef JITFLOW_PT_LIBIPT_CONFIG_H
#define JITFLOW_PT_LIBIPT_CONFIG_H

#include <intel-pt.h>

#include "jitflow/pt.h"

/* Fill *out for cfg's (non-empty) trace. Returns 0, or -1 with err set when libipt does
 * not know the CPU's errata. */
int jf_pt_libipt_config(const struct jf_pt_config *cfg, struct pt_config *out,
			struct jf_error *err);

/* libipt's packet decoder over size bytes of trace (NULL: out of memory). */
struct pt_packet_decoder *jf_pt_packet_decoder(const uint8_t *trace, size_t size);

#endif
