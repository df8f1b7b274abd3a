/* The zone files of an AArch64 recording, copied into it as the x86-64 recorder copies
 * them (record_zones.c): the files jit-*.dump that the program maps executable (the
 * jitdump convention, how perf finds them), with each record dated on the recording's
 * clock by the emitter's marker call that follows it (zone_copy.h), so that `jitflow
 * report DIR` finds them beside the trace and applies them where they belong.
 *
 * It sits between the plugin stream and the ETM flow and passes every record on: it
 * follows openat/close/mmap to learn which file descriptors name zone files, and notes
 * when each thread enters the marker function jf_emitter_marker. The marker's address is
 * the program file's symbol, so marker calls are seen in programs that link the emitter
 * and are not position-independent (minivm_a64); other zone files (an emitter in a shared
 * library, e.g. LuaJIT's) are copied with the program's own timestamps, and their copy
 * says so in recording.txt. jitflow places records by their marker calls in the trace
 * whatever their timestamps. */
#ifndef JITFLOW_RECORDER_ETM_ZONES_H
#define JITFLOW_RECORDER_ETM_ZONES_H

#include <stddef.h>
#include <stdint.h>

#include <jitflow/error.h>

#include "etm_flow.h"
#include "plugin_stream.h"

enum { JF_ETM_ZONES_MAX_FDS = 4096, JF_ETM_ZONES_MAX_FILES = 16 };

/* A thread's system call in progress and its marker calls' times (perf ns). */
struct jf_etm_zone_thread {
	int32_t tid;
	int64_t call;
	uint64_t args[6];
	uint64_t *times;
	size_t ntimes, cap;
};

struct jf_etm_zones {
	struct jf_etm_flow *flow;
	struct jf_prec_callbacks next;  /* the flow's own callbacks */
	uint64_t marker_addr;           /* 0: marker calls are not followed */
	char *fd_paths[JF_ETM_ZONES_MAX_FDS];
	char *files[JF_ETM_ZONES_MAX_FILES];
	size_t nfiles;
	struct jf_etm_zone_thread *threads;
	size_t nthreads, threads_cap;
	int failed;                     /* out of memory: some marker calls are missing */
};

/* Puts z in front of the flow's callbacks cb (changed in place to z's). marker_addr: the
 * program's jf_emitter_marker, 0 if it has none at a fixed address. */
void jf_etm_zones_init(struct jf_etm_zones *z, struct jf_etm_flow *flow,
		       struct jf_prec_callbacks *cb, uint64_t marker_addr);
void jf_etm_zones_free(struct jf_etm_zones *z);

/* After the run: copies each zone file into dir, retimed, and appends to dir's
 * recording.txt how many were copied and what could not be done (`zone_files = N`,
 * `zone_note = ...` lines). Returns 0, or -1 with err when a copy cannot be written
 * (the copy is removed: a zone file cut short would stop every decode). */
int jf_etm_zones_copy(struct jf_etm_zones *z, const char *dir, struct jf_error *err);

#endif
