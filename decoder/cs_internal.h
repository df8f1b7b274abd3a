/* Internals of the CoreSight backend, shared by its cs_*.c files. */
#ifndef JITFLOW_CS_INTERNAL_H
#define JITFLOW_CS_INTERNAL_H

#include <opencsd/c_api/opencsd_c_api.h>

#include "jitflow/coresight.h"
#include "jitflow/flow.h"

#include <string.h>

/* Copy a message into a fixed field, cut to fit (error texts are short by design). */
static inline void jf_cs_copy_text(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* --- cs_elem.c: OpenCSD generic elements -> flow records --- */

/* The latest timestamp seen per trace ID (later records carry it), and the cycles
 * counted so far per trace ID (cycle counts are deltas). */
struct jf_cs_clock {
	uint64_t time[128];
	uint8_t valid[128];
	uint64_t cycles[128];
};

enum { JF_CS_MAX_FLOWS_PER_ELEM = 2 };

/* Convert one element; returns the number of records written to out (0..2). */
int jf_cs_elem_to_flows(const ocsd_generic_trace_elem *elem, uint8_t trace_id,
			uint64_t offset, struct jf_cs_clock *clock,
			struct jf_flow out[JF_CS_MAX_FLOWS_PER_ELEM]);

/* --- cs_tree.c: one OpenCSD decode tree over one buffer --- */

struct jf_cs_tree {
	dcd_tree_handle_t handle;
	struct jf_codemap *map;
	uint64_t generation;   /* of the code map when the accessor was (re)added */
	int has_accessor;
	uint8_t ids[128];      /* trace IDs with a decoder */
	size_t nids;
};

int jf_cs_tree_open(struct jf_cs_tree *tree, const struct jf_cs_buffer *buf,
		    struct jf_codemap *map, struct jf_error *err);
/* Add a decoder for src: 0 = added, 1 = not decodable (err says why), -1 = failure. */
int jf_cs_tree_add_source(struct jf_cs_tree *tree, const struct jf_cs_source *src,
			  struct jf_error *err);
/* Send the elements of all added decoders to on_elem(ctx, ...). */
int jf_cs_tree_start(struct jf_cs_tree *tree, FnTraceElemIn on_elem, const void *ctx,
		     struct jf_error *err);
/* Make OpenCSD see the code map as it is now (re-adding the accessor drops its cache). */
int jf_cs_tree_sync_memory(struct jf_cs_tree *tree, struct jf_error *err);
void jf_cs_tree_close(struct jf_cs_tree *tree);

#endif
