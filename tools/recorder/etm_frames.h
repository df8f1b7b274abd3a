/* CoreSight formatter frames, as an ETR or ETF writes one or more trace units' streams into
 * memory (ARM IHI 0029, CoreSight Architecture Specification, "Trace Formatter"): 16-byte
 * frames, aligned in memory (no frame syncs). In a frame, the even bytes 0, 2, .., 14 hold
 * either a trace ID (bit 0 set: ID in bits [7:1]) or a data byte's bits [7:1] (bit 0
 * clear), whose bit 0 is in byte 15 (bit k for byte 2k); the odd bytes 1, 3, .., 13 are
 * data bytes. For an ID byte, byte 15's bit says whether the new ID takes effect before
 * the next data byte (0) or after it (1).
 *
 * The writer starts every frame with the stream's trace ID (so a decoder can start at any
 * frame) and ends the last frame with trace ID 0, which marks what follows as no trace
 * (the rest of the frame). */
#ifndef JITFLOW_RECORDER_ETM_FRAMES_H
#define JITFLOW_RECORDER_ETM_FRAMES_H

#include <stddef.h>
#include <stdint.h>

enum { JF_CS_FRAME_SIZE = 16 };

/* The formatted size of n bytes of one source: a whole number of frames. */
size_t jf_cs_frames_size(size_t n);

/* Writes n bytes of trace ID id's stream as frames into out (jf_cs_frames_size(n)
 * bytes). */
void jf_cs_frames_write(const uint8_t *data, size_t n, uint8_t id, uint8_t *out);

#endif
