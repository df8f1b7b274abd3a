/* Internal: a jf_decoder handle for an Intel PT backend, with the stats every one sets
 * from its configuration (trace bytes, clock). */
#ifndef JITFLOW_PT_WRAP_H
#define JITFLOW_PT_WRAP_H

#include "jitflow/pt.h"

/* Like jf_decoder_new (self is freed on failure, message in err). */
struct jf_decoder *jf_pt_wrap(const struct jf_decoder_ops *ops, void *self,
			      const struct jf_pt_config *cfg, struct jf_error *err);

#endif
