/* Whether two flow records say the same: for checking one decoder against another. */
#include "jitflow/flow.h"

#include <string.h>

int jf_flow_same(const struct jf_flow *a, const struct jf_flow *b)
{
	if (a->kind != b->kind || a->flags != b->flags || a->source != b->source ||
	    a->offset != b->offset || a->time != b->time || a->ip != b->ip)
		return 0;
	/* A block's record leaves the rest of the union unset (pt_decoder.c). */
	if (a->kind == JF_FLOW_BLOCK)
		return !memcmp(&a->u.block, &b->u.block, sizeof(a->u.block));
	return !memcmp(&a->u, &b->u, sizeof(a->u));
}
