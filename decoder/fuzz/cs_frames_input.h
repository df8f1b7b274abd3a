/* A fuzz input as a CoreSight decode: the first byte chooses the protocol (ETMv4, ETE,
 * PTM, ETMv3), formatted frames or a raw stream, and the look-ahead; the rest is the trace,
 * decoded over a code map holding a small A64/A32 loop. Shared by the fuzz target and the
 * test that replays its findings. */
#ifndef JITFLOW_CS_FRAMES_INPUT_H
#define JITFLOW_CS_FRAMES_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/coresight.h"

struct jf_codemap *jf_cs_frames_code(void);

/* NULL for an empty input; data must outlive the decoder. */
struct jf_decoder *jf_cs_frames_decoder(const uint8_t *data, size_t size, struct jf_error *err);

#endif
