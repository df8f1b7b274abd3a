/* The ordering marker. A control-flow trace shows every call of this function (its entry
 * is a block start at its address), so the n-th call on a thread places the n-th record of
 * that thread exactly in the instruction stream. It must therefore never be inlined,
 * cloned, merged or dropped: hence the attributes, the external visibility and the asm
 * statement that "uses" seq with a memory clobber. It sits in the emitter's code section
 * (emitter_internal.h), counted as instrumentation. */
#include <stdint.h>

#include "jitflow/emitter.h"

#if defined(__clang__)
#define JF_MARKER_ATTRS __attribute__((noinline, optnone, used, visibility("default"), \
				      section("jitflow_emit_text")))
#else
#define JF_MARKER_ATTRS __attribute__((noinline, noipa, used, visibility("default"), \
				      section("jitflow_emit_text")))
#endif

JF_MARKER_ATTRS void jf_emitter_marker(uint64_t seq)
{
	__asm__ volatile("" : : "r"(seq) : "memory");
}
