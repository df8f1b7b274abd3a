/* Internal: for decoders that pull from a decoder of their own (perf_session.c). */
#ifndef JITFLOW_DECODER_INTERNAL_H
#define JITFLOW_DECODER_INTERNAL_H

#include "jitflow/decoder.h"

/* jf_decoder_next without counting the flow into dec's stats: for an inner decoder whose
 * stats nobody reads (the outer one counts what it returns), one count less per flow. */
int jf_decoder_next_uncounted(struct jf_decoder *dec, struct jf_flow *flow,
			      struct jf_error *err);

#endif
