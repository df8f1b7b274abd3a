/* The recorder's state while QEMU runs: guest threads with their PT streams, the blocks
 * QEMU translated, the files the program opened and mapped, and the counters that the
 * manifest reports. It consumes the parsed QEMU log (qemu_log.h callbacks) and writes
 * perf.data records as it goes. */
#ifndef JITFLOW_RECORDER_RECORD_STATE_H
#define JITFLOW_RECORDER_RECORD_STATE_H

#include <stdint.h>
#include <stdio.h>

#include <jitflow/error.h>

#include "block_map.h"
#include "perf_data.h"
#include "program_image.h"
#include "pt_stream.h"
#include "qemu_log.h"

struct jf_record_state;
struct jf_rec_filter;

struct jf_deferred {
	uint64_t pc;
	struct jf_block block;
};

struct jf_record_thread {
	struct jf_record_state *owner;
	unsigned cpu;              /* QEMU's CPU index */
	int tid;                   /* 0 until the clone result names it */
	int ptid;
	unsigned queue;            /* its AUX buffer index */
	int started;               /* its stream has begun */
	int announced;             /* FORK/ITRACE_START written */
	int have_prev;
	int exited;                /* made the exit system call */
	uint64_t last_exec_seq;    /* when it logged last (st->exec_seq) */
	uint64_t last_pc;          /* the last block logged for it ... */
	uint32_t last_ninsn;       /* ... and the instructions counted for it */
	int resume_at_last;        /* that block did not run after all: when it is logged
	                            * again, the thread has not moved */
	int signal_arrived;        /* QEMU printed a signal for it: the next block is its
	                            * handler */
	int deferring;             /* waiting for the handler to return (record_state.c) */
	int sigreturned;           /* made rt_sigreturn: its next block is where the
	                            * handler's frame resumed it (or a new delivery) */
	unsigned handler_depth;    /* handlers nested in the stretch it waits on */
	uint64_t handler_entries;  /* deliveries seen (exact with the plugin) */
	struct jf_block defer_from; /* the block the signal came after */
	struct jf_deferred *deferred;
	size_t ndeferred, deferred_cap;
	struct jf_block prev;      /* the block it ran last */
	uint64_t instructions, blocks, aux_offset;
	uint64_t traced;           /* the instructions inside the IP filter (all without one):
	                            * the thread's position in its trace */
	int prev_inside;           /* the block it ran last was inside the IP filter */
	uint64_t hidden;           /* instructions of blocks whose branch an OVF hides: a
	                            * decoder cannot finish them, so its count of the
	                            * thread's instructions is this much behind `traced`;
	                            * also the last block of a thread stopped in it */
	int ended_in_block;        /* stopped from outside somewhere in its last block */
	uint64_t straight_from;    /* the position where its run of straight-line blocks
	                            * (joined by direct jumps, calls, fall-through) began:
	                            * where a decoder's block holding the next one begins */
	uint64_t start_clock;      /* the instruction clock when it appeared */
	uint64_t *marker_times;    /* perf time of each jf_emitter_marker call, in order */
	size_t nmarker_times, marker_times_cap;
	uint64_t async_events, lost_events, marker_calls;
	struct jf_pt_stream *pt;   /* NULL once the thread's stream is complete */
	struct jf_pt_stats stats;  /* its packet counts, kept when the stream is gone */
	int finished;
	unsigned clone_k;          /* made by the k-th thread-creating clone (0: unknown) */
	uint64_t block_at, block_traced; /* its last block's position, and the instructions
	                            * of it the trace holds: where a TSC read in it lies */
};

enum { JF_RECORD_MAX_FDS = 4096, JF_RECORD_MAX_ZONE_FILES = 16, JF_RECORD_MAX_NOTES = 32,
       JF_RECORD_MAX_SIGNALS = 65, JF_RECORD_MAX_HANDLERS = 256 };

struct jf_record_state {
	char program[4096];
	char out_dir[4096];        /* absolute: zone files are copied there, and the MMAP2
	                            * records of their marker mappings name the copies */
	int timing;
	int marker_ptw;            /* PTW at marker calls (see recorder.h) */
	int pid;
	struct jf_program_image image;
	/* Where QEMU loaded things that no system call shows: the dynamic loader (its entry
	 * is the first block that runs) and a PIE program (entered by the loader's indirect
	 * jump to its entry point). */
	struct jf_program_image interp;
	int layout_state;          /* 0 first block to come, 1 waiting for the program's
	                            * entry, 2 everything mapped */
	uint64_t interp_base, interp_end, main_base;
	uint64_t marker_addr;      /* jf_emitter_marker where it runs (0: none) */
	uint64_t bytes_since_round;
	/* fork: QEMU's child process logs into the same log, on the same CPU index, from
	 * the same place; its blocks cannot be told from the parent's. Both resume after
	 * the fork's system call: the second resumption ends the mixed stretch. */
	uint64_t fork_resume_ip, fork_clock;
	int fork_resumptions;
	uint64_t fork_mixed;       /* stretches of a stream that mix parent and child */
	struct jf_block_map *blocks;
	struct jf_perf_writer perf;

	struct jf_record_thread **threads; /* every thread, in the order they appeared */
	unsigned nthreads, threads_cap;
	struct jf_record_thread **by_cpu;  /* the live thread on each QEMU CPU index (QEMU
	                                    * reuses the index of a thread that exited) */
	unsigned cpu_cap;
	unsigned last_exec_cpu;
	uint64_t exec_seq;         /* exec lines seen */

	uint64_t clock;            /* instructions executed so far, all threads */
	uint64_t traced;           /* ... of which inside the IP filter */
	uint64_t blocks_executed, unknown_blocks, log_lines, garbage_lines, stopped_blocks;
	uint64_t signals, syscalls, mmap_records, marker_calls, interruptions_noted;
	/* Signals (record_signals.c). exact_signals: handler entries are known from the
	 * handlers rt_sigaction installed and returns from rt_sigreturn (plugin backend). */
	int exact_signals;
	uint64_t handler_set[JF_RECORD_MAX_HANDLERS]; /* every handler installed, sorted */
	unsigned nhandler_set;
	uint64_t handlers_dropped;
	uint64_t signals_target_unknown; /* after an indirect branch, handler never returned */
	uint64_t signals_lost;           /* written as an OVF */
	uint64_t unexplained_transfers;  /* blocks that follow from nothing, not at a handler */

	/* System calls whose result is still to come, newest last. Results print on the
	 * call's own line unless another thread logs in between; then the " = result" line
	 * that follows belongs to the newest call still waiting. */
	struct jf_pending_syscall {
		char name[32];
		char args[512];
	} pending[8], pending_result;
	unsigned npending;
	const char *pending_args;  /* the arguments of the call being completed */
	/* Naming new threads. The k-th thread-creating clone line creates the thread on CPU
	 * index 1 + the highest index in use (QEMU's cpu_get_free_index), and the k-th
	 * clone result is its tid; the thread's first block may come before or after. */
	struct jf_clone_prediction {
		unsigned k, cpu;
		int tid;                   /* 0 until the k-th result */
		int appeared;
	} predictions[64];
	unsigned npredictions, clone_lines, clone_results;

	char *fd_paths[JF_RECORD_MAX_FDS];
	char *zone_files[JF_RECORD_MAX_ZONE_FILES];
	unsigned nzone_files;
	/* Writes into zone files (by path): the file size after each and its time, for zone
	 * files without marker calls. */
	struct jf_zone_writes {
		char *path;
		uint64_t *ends, *times;
		size_t n, cap;
		uint64_t size;
		uint64_t parsed; /* where its first record not read yet begins (record_zone_code.c) */
	} zone_writes[JF_RECORD_MAX_ZONE_FILES];
	unsigned nzone_writes;
	struct jf_rec_jitcode *jitcode; /* anonymous executable code (record_jitcode.c) */
	struct jf_rec_filter *filter;   /* --filter (record_filter.h); NULL: trace everything */
	int jitcode_failed;
	FILE *clock_reads;              /* record_clock.c */
	uint64_t clock_reads_written;
	int clock_reads_failed;
	struct jf_rec_code_changes *code_changes; /* record_code_changes.c */
	int code_changes_failed;
	uint32_t translation_id;        /* the plugin's id of the translation being reported */
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
