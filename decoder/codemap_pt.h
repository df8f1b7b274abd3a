/* Internal: the libipt view of a code map, for the Intel PT backend. */
#ifndef JITFLOW_CODEMAP_PT_H
#define JITFLOW_CODEMAP_PT_H

#include <intel-pt.h>

#include "jitflow/codemap.h"

/* A pt_image with the map's current sections: the one returned before, brought up to
 * date in place, or a new one (the previous is then freed). Either way it holds the
 * current sections only once this is called after a change: callers must re-fetch and
 * pt_blk_set_image before decoding on whenever jf_codemap_generation() changed. */
struct pt_image *jf_codemap_pt_image(struct jf_codemap *map, struct jf_error *err);

/* Whether libipt may decode in `mode` (known) through the map's sections: 1 if it is the
 * mode of every entry their block cache holds (the first mode asked for becomes it), 0 if
 * another mode is. libipt 2.0's cached path takes an entry's mode without comparing it
 * with the decoder's, so the same bytes run in 32-bit and in 64-bit mode would decode in
 * the mode they were first cached in; its uncached path is right. */
int jf_codemap_pt_cache_fits(struct jf_codemap *map, enum pt_exec_mode mode);

#endif
