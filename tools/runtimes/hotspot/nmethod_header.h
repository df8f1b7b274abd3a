/* What HotSpot's nmethod object says about compiled code that JVMTI's CompiledMethodLoad
 * does not. */
#ifndef JITFLOW_HOTSPOT_NMETHOD_HEADER_H
#define JITFLOW_HOTSPOT_NMETHOD_HEADER_H

#include <stdint.h>

struct jf_nmethod_facts {
	uint64_t header;       /* the nmethod (CodeBlob) object: LogCompilation's address */
	int32_t blob_size;     /* the whole blob: LogCompilation's size */
	int32_t compile_id;
	int32_t level;         /* 0 native wrapper, 1-3 C1, 4 C2 */
	int32_t osr_bci;       /* -1 for a normal (method entry) compilation */
	uint64_t verified_entry;
	/* Where control enters besides the start, 0 when this JVM does not say: an OSR
	 * nmethod's entry from the interpreter's loop, and the deopt handlers a deoptimized
	 * frame returns into (the plain one and the one for method handle calls; they jump
	 * to DeoptimizationBlob). */
	uint64_t osr_entry, deopt_handler, deopt_mh_handler;
};

/* 0 and *out filled when the nmethod whose code starts at code_addr is found. */
int jf_hs_nmethod_facts(const void *code_addr, struct jf_nmethod_facts *out);

#endif
