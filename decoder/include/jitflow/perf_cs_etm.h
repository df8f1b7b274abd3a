/* CoreSight (cs_etm) perf.data files: the ETM configuration of every CPU from the
 * AUXTRACE_INFO record, and the AUX buffers decoded with the CoreSight backend.
 *
 * Records are applied in time order (perf_cs_order.h): sideband at its sample time, each
 * AUXTRACE buffer at the time of the AUX records that announced its data, after the
 * sideband up to then, so code mapped by records written after the AUX data in the file
 * still decodes; the caller's on_record hook sees every sideband record in that order.
 * Flow offsets are FILE offsets (the payload's position plus the index in it),
 * flow.source is the trace ID. Formatted buffers (ETR/ETF sinks) hold all CPUs' streams
 * by trace ID; a buffer whose AUX record says "raw" (TRBE) is the stream of the CPU of
 * its AUXTRACE record and of no other. AUX records that report truncated or overwritten
 * data become JF_FLOW_LOST records, PERF_RECORD_LOST too. Each AUXTRACE buffer is
 * decoded by OpenCSD in a child process in lockstep (isolate.h), reading the code map as
 * the sideband and the caller leave it: a crash of OpenCSD is a located error and a loss,
 * and decoding goes on.
 * Not done (yet): interleaving several CPUs' flows by their CoreSight timestamps (buffers
 * are ordered by their AUX times, each CPU's flows stay in order); per-process code maps
 * from traced context IDs (the code map is the one of the AUXTRACE record's thread's
 * process). */
#ifndef JITFLOW_PERF_CS_ETM_H
#define JITFLOW_PERF_CS_ETM_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#include "jitflow/coresight.h"
#include "jitflow/perf_data.h"
#include "jitflow/perf_session.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { JF_PERF_AUXTRACE_CS_ETM = 3 };

/* perf's AUX record flag for CoreSight data without formatter frames (TRBE). */
#define JF_PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW 0x100u

/* The sources described by a cs_etm AUXTRACE_INFO record (malloc'd array, one per CPU
 * in the order recorded; cpus[i] is source i's CPU). Errors name the file offset and
 * what was expected. */
int jf_perf_cs_etm_sources(const struct jf_perf_record *info, struct jf_cs_source **sources,
			   uint32_t **cpus, size_t *count, struct jf_error *err);

/* The AUXTRACE_INFO type of path (JF_PERF_AUXTRACE_CS_ETM, 1 for intel_pt, ...); 0 if
 * the file has none. -1 on a malformed file. */
int jf_perf_auxtrace_type(const char *path, uint32_t *type, struct jf_error *err);

struct jf_decoder *jf_perf_cs_decoder_new(const char *path,
					  const struct jf_perf_session_hooks *hooks,
					  struct jf_error *err);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
