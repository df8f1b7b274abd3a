/* The recorder's state while QEMU runs: guest threads with their PT streams, the blocks
 * QEMU translated, the files the program opened and mapped, and the counters that the
 * manifest reports. It consumes the parsed QEMU log (qemu_log.h callbacks) and writes
 * perf.data records as it goes. */
#ifndef JITFLOW_RECORDER_RECORD_STATE_H
#define JITFLOW_RECORDER_RECORD_STATE_H

#include <stdint.h>

#include <jitflow/error.h>

#include "block_map.h"
#include "perf_data.h"
#include "program_image.h"
#include "pt_stream.h"
#include "qemu_log.h"

struct jf_record_state;

struct jf_record_thread {
	struct jf_record_state *owner;
	unsigned cpu;              /* QEMU's CPU index */
	int tid;                   /* 0 until the clone result names it */
	int ptid;
	unsigned queue;            /* its AUX buffer index */
	int started;               /* its stream has begun */
	int announced;             /* FORK/ITRACE_START written */
	int have_prev;
	struct jf_block prev;      /* the block it ran last */
	uint64_t instructions, blocks, aux_offset;
	uint64_t async_events, lost_events, marker_calls;
	struct jf_pt_stream *pt;
};

enum { JF_RECORD_MAX_FDS = 4096, JF_RECORD_MAX_ZONE_FILES = 16, JF_RECORD_MAX_NOTES = 32 };

struct jf_record_state {
	char program[4096];
	int timing;
	int pid;
	struct jf_program_image image;
	struct jf_block_map *blocks;
	struct jf_perf_writer perf;

	struct jf_record_thread **threads; /* by CPU index */
	unsigned nthreads, threads_cap;

	uint64_t clock;            /* instructions executed so far, all threads */
	uint64_t blocks_executed, unknown_blocks, log_lines, garbage_lines;
	uint64_t signals, syscalls, mmap_records, marker_calls;

	/* The system call whose result is still to come. */
	char pending_name[32];
	char pending_args[512];
	int pending_tids[64];      /* clone results not yet claimed by a new CPU */
	unsigned npending_tids;

	char *fd_paths[JF_RECORD_MAX_FDS];
	char *zone_files[JF_RECORD_MAX_ZONE_FILES];
	unsigned nzone_files;
	char *notes[JF_RECORD_MAX_NOTES]; /* what was not followed (fork, execve, ...) */
	unsigned nnotes;
};

struct jf_record_state *jf_record_state_new(const char *program, int timing,
					    struct jf_error *err);
void jf_record_state_free(struct jf_record_state *st);
/* QEMU started with this pid: the first thread, its COMM and MMAP2 records. */
void jf_record_state_begin(struct jf_record_state *st, int pid);
void jf_record_state_callbacks(struct jf_record_state *st, struct jf_qlog_callbacks *cb);
/* QEMU has exited: close every stream; write EXIT records. */
int jf_record_state_end(struct jf_record_state *st, const struct jf_perf_info *info);
/* Copy the zone files (jit-PID.dump) the program mapped into dir. */
int jf_record_copy_zone_files(struct jf_record_state *st, const char *dir,
			      struct jf_error *err);

#endif
