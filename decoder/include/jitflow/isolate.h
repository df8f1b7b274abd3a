/* Decoding in a child process.
 *
 * OpenCSD 1.3.3 (the version Debian ships) crashes or loops on some corrupt ETMv4/ETE
 * streams (decoder/fuzz/fuzz_cs_frames.c names the bugs; trc_pkt_lister crashes on the
 * same bytes). A command that must never crash on bad input runs such a decoder in a
 * child process: the child pulls flow records and sends them through a pipe, and when it
 * dies, the parent reports where (a JF_FLOW_ERROR after the last record that arrived,
 * naming the signal) and ends the stream cleanly instead of crashing.
 *
 * The child works on its own copy of everything the inner decoder uses (fork): changes the
 * parent makes to a code map after this call do not reach it, so a decoder whose code map
 * changes while it runs (JIT zone files) must not be isolated. */
#ifndef JITFLOW_ISOLATE_H
#define JITFLOW_ISOLATE_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include "jitflow/decoder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Move inner into a child process (the parent's copy is freed) and return a decoder that
 * reads its flow. name is the library blamed in the crash report (e.g. "OpenCSD"). On
 * failure inner is freed and NULL returned. */
struct jf_decoder *jf_isolated_decoder_new(struct jf_decoder *inner, const char *name,
					   struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
