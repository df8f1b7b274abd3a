/* Decoding in a child process.
 *
 * OpenCSD 1.3.3 (the version Debian ships) crashes or loops on some corrupt ETMv4/ETE
 * streams (decoder/fuzz/fuzz_cs_frames.c names the bugs; trc_pkt_lister crashes on the
 * same bytes). A command that must never crash on bad input runs such a decoder in a
 * child process: the child pulls flow records and sends them to the parent, and when it
 * dies the parent reports where and goes on:
 *   - a JF_FLOW_ERROR ("OpenCSD crashed (Segmentation fault); resumed after it") at the
 *     first byte of the call into OpenCSD that crashed (flow.offset), with the time of the
 *     last record that arrived;
 *   - a new child decodes the same trace again without sending anything up to that call,
 *     feeds the crashing bytes one frame (formatted data) or one byte (a raw stream) at a
 *     time to find the unit that crashes, resets OpenCSD's decode tree there and goes on
 *     after it (at the next frame boundary, where OpenCSD searches the next A-sync itself):
 *     a JF_FLOW_LOST record (JF_LOST_DECODER_CRASH) says which bytes were skipped;
 *   - each crash moves further on (a crash while replaying, which a library reading
 *     memory it does not own can have one time and not the next, is skipped too); after a
 *     bounded number of children (a trace that crashes the library again and again) the
 *     stream ends with "decoding stopped".
 * Only the CoreSight backend reports its position to the child (decoder/isolate_child.h),
 * so only its crashes are resumed; any other inner decoder ends at its first crash.
 *
 * jf_isolated_decoder_new: the child works on its own copy of everything the inner decoder
 * uses (fork) and decodes ahead of the consumer: changes the parent makes to a code map
 * after this call do not reach it.
 * jf_isolated_decoder_lockstep: for a code map that changes while decoding (JIT zone
 * files, perf sideband): the child decodes a record only when the consumer asks for it,
 * and reads code bytes from map in this process, as it is at that moment, so it decodes
 * exactly what the inner decoder would decode here (its lookahead included). */
#ifndef JITFLOW_ISOLATE_H
#define JITFLOW_ISOLATE_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include "jitflow/codemap.h"
#include "jitflow/decoder.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Decode inner in a child process and return a decoder that reads its flow. Takes inner
 * (this process keeps it unused, to start the children from). name is the library blamed
 * in the crash report (e.g. "OpenCSD"). On failure inner is freed and NULL returned.
 * With JITFLOW_ISOLATE=0 in the environment, inner itself is returned (for fuzzing, where
 * the fuzzer must see the decoder's coverage and crashes in its own process). */
struct jf_decoder *jf_isolated_decoder_new(struct jf_decoder *inner, const char *name,
					   struct jf_error *err);
struct jf_decoder *jf_isolated_decoder_lockstep(struct jf_decoder *inner,
						struct jf_codemap *map, const char *name,
						struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
