/* Internal: the libipt view of a code map, for the Intel PT backend. */
#ifndef JITFLOW_CODEMAP_PT_H
#define JITFLOW_CODEMAP_PT_H

#include <intel-pt.h>

#include "jitflow/codemap.h"

/* A pt_image with the map's current sections. The previous image returned stays valid only
 * until this is called after a change: callers must re-fetch and pt_blk_set_image before
 * decoding on whenever jf_codemap_generation() changed. */
struct pt_image *jf_codemap_pt_image(struct jf_codemap *map, struct jf_error *err);

#endif
