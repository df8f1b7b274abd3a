/* Internal: where an Intel PT stream can be cut for parallel decoding. A decoder can start
 * at any PSB, so segments begin at PSBs; libipt's packet decoder finds them (the same
 * search its decoders make when they resynchronise). */
#ifndef JITFLOW_PT_SEGMENTS_H
#define JITFLOW_PT_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

struct jf_pt_psb_finder;

struct jf_pt_psb_finder *jf_pt_psb_finder_new(const uint8_t *trace, size_t size);
void jf_pt_psb_finder_free(struct jf_pt_psb_finder *finder);

/* The offset of the first PSB that begins at or after offset (offset >= 1), or -1 if there
 * is none. */
int64_t jf_pt_psb_at_or_after(struct jf_pt_psb_finder *finder, uint64_t offset);

#endif
