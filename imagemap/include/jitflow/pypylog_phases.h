/* Which of PyPy's timed log sections is which VM phase (enum jf_vm_phase, jitflow/emitter.h).
 *
 *   jit-tracing                     tracing: the meta-interpreter records a trace
 *   jit-optimize*, jit-backend      compiling: optimizing the trace, assembling it (the
 *                                   jit-backend-dump/-addr sections inside jit-backend
 *                                   are part of it; jit-backend-counts, written at exit,
 *                                   is not a phase)
 *   jit-blackhole                   exit handling: a guard failed and the blackhole
 *                                   interpreter finishes the iteration from its state
 *   gc-minor*, gc-collect*          garbage collection (not gc-hardware or
 *                                   gc-set-nursery-size: start-up configuration)
 *
 * Sections nest (a minor collection inside tracing, compiling inside tracing); the
 * innermost phase counts. What lies in no such section and outside JIT code is PyPy's
 * interpreter and the rest of its runtime. */
#ifndef JITFLOW_PYPYLOG_PHASES_H
#define JITFLOW_PYPYLOG_PHASES_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The sections `jitflow record` asks PyPy for, so that every phase above is logged
 * (PYPYLOG names match by prefix). */
#define JF_PYPYLOG_PHASE_SECTIONS "jit-tracing,jit-optimize,jit-backend,jit-blackhole,gc-minor,gc-collect"
/* The section jitflow's Python module logs once per iteration. */
#define JF_PYPYLOG_ITERATION_SECTION "jitflow-iteration"

/* The phase of the section called name (n bytes), or 0 if it is none. */
int jf_pypylog_phase_of(const char *name, size_t n);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
