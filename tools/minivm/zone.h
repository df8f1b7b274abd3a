/* minivm's use of jitflow's zone emitter: everything the runtime says about its code goes
 * through these calls. With no zone directory they do nothing (the runtime's code paths are
 * the same either way). */
#ifndef MVM_ZONE_H
#define MVM_ZONE_H

#include <stdint.h>

#include "vm.h"

/* Open jit-PID.dump in dir (NULL: no zone file). Returns NULL and prints why on failure. */
struct mvm_zone *mvm_zone_open(const char *dir, int *failed);
void mvm_zone_close(struct mvm_zone *z);

/* Interpreter ranges, opcode handlers, code objects (functions), stencil names. */
void mvm_zone_describe_runtime(struct mvm_zone *z, const struct mvm_program *prog);

struct mvm_pc_entry {
	uint32_t code_offset, bytecode_pc, op_index;
	uint16_t stencil;
};

/* A compiled trace or bridge: its body, each exit stub, its guards and its pc map. */
void mvm_zone_trace_loaded(struct mvm_zone *z, const struct mvm_trace *t,
			   const uint8_t *code, const struct mvm_pc_entry *pcs, uint32_t pc_count);
void mvm_zone_trace_freed(struct mvm_zone *z, const struct mvm_trace *t);
void mvm_zone_patch(struct mvm_zone *z, uint64_t addr, const uint8_t *bytes, uint32_t size,
		    const char *reason);
void mvm_zone_event(struct mvm_zone *z, uint32_t kind, uint64_t arg);

/* The VM phase brackets (PHASE_BEGIN / PHASE_END events), one function each, never
 * inlined: an instruction trace shows which bracket ran where, so that perf's listing
 * of a recording tells the phases apart without jitflow (tests/minivm/perf_phases.sh). */
void mvm_zone_tracing_begin(struct mvm_zone *z);
void mvm_zone_tracing_end(struct mvm_zone *z);
void mvm_zone_compiling_begin(struct mvm_zone *z);
void mvm_zone_compiling_end(struct mvm_zone *z);
void mvm_zone_exit_handling_begin(struct mvm_zone *z);
void mvm_zone_exit_handling_end(struct mvm_zone *z);

#endif
