/* A PyPy JIT log as a jitflow zone file: the same records jitflow's own emitter writes
 * (docs/zone-format.md), so that decoding and analysis treat PyPy like any runtime.
 *
 *   loops and bridges    CODE_LOAD + REGION_LOAD (kind trace / bridge; a bridge names the
 *                        loop or bridge owning its guard and the guard's descr); the gc
 *                        table in front of the code is a region of its own (kind other)
 *   assembler helpers    CODE_LOAD + REGION_LOAD, kind trampoline ("pypy helper")
 *   code PyPy never logged (seen run by the recorder): CODE_LOAD + REGION_LOAD, kind
 *                        other, "anonymous code 0xADDR", with the bytes it ran
 *   later writes         PATCH (jump fix-ups, a guard's jump re-pointed to its bridge)
 *   memory reused        REGION_FREE of the regions a new load overlaps
 *   guards               GUARD (branch and stub from jitflow/pypylog_layout.h, the op's
 *                        name as op_kind, the bytecode index of the merge point before it)
 *   counters             POINT (entry N, TargetToken(T), bridge B)
 *   bytecodes            CODE_OBJECT per Python code object (FUNCTION, FILE, first
 *                        line from "FUNCTION;FILE:FIRSTLINE-LINE"), PC_MAP per trace with
 *                        JF_PC_MAP_CODE_OBJECTS (each merge point's code object and
 *                        bytecode index, at the code offset of the first op after it that
 *                        has one)
 *
 * When each write applies (jitflow/pypylog_place.h): at the exact position where its bytes
 * first ran, from a recording's jit-code.txt (MARKER with JF_ZONE_MARKER_POSITION); without
 * one, at PyPy's own TSC stamp, as on real hardware, where PyPy's rdtsc is the clock of the
 * trace's TSC packets: converted with the trace's TSC conversion onto the decoder's flow
 * time (or, with no conversion given, kept as TSC with jitdump's ARCH_TIMESTAMP flag).
 * A stamp places a write only as finely as the trace's timing (docs/recorder.md). */
#ifndef JITFLOW_PYPYLOG_ZONE_H
#define JITFLOW_PYPYLOG_ZONE_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stdint.h>

#include "jitflow/error.h"
#include "jitflow/pt.h"
#include "jitflow/pypylog.h"
#include "jitflow/pypylog_clock.h"
#include "jitflow/pypylog_layout.h"
#include "jitflow/pypylog_place.h"

#ifdef __cplusplus
extern "C" {
#endif

struct jf_pypylog_zone_stats {
	uint64_t loads, helpers, patches, frees, guards, points, code_objects, foreign;
	/* Traces of the log that no dump loads whole ([gc table, end) with the entry inside):
	 * their code, if it runs, decodes as helper code or as missing, without the trace's
	 * guards and name. first_unloaded: the log line of the first of them. */
	uint64_t unloaded;
	uint32_t first_unloaded;
};

/* Write the zone file to out_path. place may be NULL: then each write is dated by its
 * section's TSC stamp, converted with conv (NULL: left as TSC, ARCH_TIMESTAMP). */
int jf_pypylog_write_zone(const struct jf_pypylog *log, const struct jf_pypylog_layout *lay,
			  const struct jf_pypylog_placement *place,
			  const struct jf_tsc_conversion *conv, const char *out_path,
			  struct jf_pypylog_zone_stats *stats, struct jf_error *err);

/* The marks placed on thread tid (jitflow/pypylog_clock.h) as a zone file of its own,
 * stamped with positions: EVENT records PHASE_BEGIN / PHASE_END (arg: the phase) and
 * ITERATION (arg: the program's index), in the log's order; after a tracing section's
 * begin, TRACE_START with the loop or bridge it made (the one jit-backend-addr names
 * inside it; none when the trace was aborted), and COMPILE_END with it after its end. One file a thread, since a
 * position stream's records apply in file order on their own thread. *events: how many. */
int jf_pypylog_write_marks_zone(const struct jf_pypylog *log,
				const struct jf_pypylog_clock_placement *place, int32_t tid,
				const char *out_path, uint64_t *events, struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
