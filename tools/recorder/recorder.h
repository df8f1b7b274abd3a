/* `jitflow record`: run an x86-64 program under qemu-x86_64 and write what
 * `perf record -e intel_pt//u` would have written on an Intel machine (perf.data with
 * per-thread Intel PT streams and sideband), plus manifest.json, into a directory. An
 * AArch64 program goes to record_a64.h instead (an ETMv4 trace under qemu-aarch64).
 *
 * QEMU's log (-d in_asm,exec,nochain,strace) streams through a FIFO: every translated
 * block's bytes (classified once with capstone) and every executed block, per emulated CPU
 * (= guest thread). Consecutive blocks of a thread give the branch outcomes that the
 * thread's pt_stream turns into packets. */
#ifndef JITFLOW_RECORDER_RECORDER_H
#define JITFLOW_RECORDER_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include <jitflow/error.h>

/* How QEMU tells the recorder what ran. */
enum jf_record_backend {
	JF_RECORD_BACKEND_AUTO,   /* plugin where QEMU loads it, else log (with a message) */
	JF_RECORD_BACKEND_PLUGIN, /* jitflow's TCG plugin streams binary records (fast) */
	JF_RECORD_BACKEND_LOG,    /* QEMU's text log, -d in_asm,exec,nochain,strace */
};

/* The program's instruction set, and so the trace a recording holds. */
enum jf_record_arch {
	JF_RECORD_ARCH_AUTO,      /* from the program's ELF header */
	JF_RECORD_ARCH_X86_64,    /* Intel PT in perf.data */
	JF_RECORD_ARCH_AARCH64,   /* ETMv4 in a CoreSight snapshot folder (record_a64.h) */
};

struct jf_record_options {
	const char *out_dir;      /* created if missing */
	enum jf_record_arch arch;
	const char *qemu;         /* qemu-x86_64 binary (NULL: $JITFLOW_QEMU or PATH) */
	enum jf_record_backend backend;
	const char *plugin;       /* the plugin (NULL: $JITFLOW_QEMU_PLUGIN, else next to the
	                           * jitflow executable, see jf_record_find_plugin) */
	int timing;               /* TSC/MTC/CYC packets (default on) */
	int marker_ptw;           /* PTW packets at jf_emitter_marker calls (default off:
	                           * hardware writes PTW only for a PTWRITE instruction, and
	                           * libipt-based decoders reject PTW anywhere else) */
	const char *filter;       /* IP filter (record_filter.h): "jit", "START-END", a
	                           * comma-separated list of them; NULL: trace everything */
	int etm_formatted;        /* AArch64: the trace buffers in CoreSight formatter frames
	                           * (as an ETR or ETF writes them); 0: raw (as a TRBE) */
	int argc;                 /* the program and its arguments */
	char **argv;
};

struct jf_record_result {
	int exit_status;          /* the program's, as a shell reports it (128+signal) */
	int term_signal;          /* the signal that ended the program (0: it exited) */
	uint64_t instructions, blocks, pt_bytes, threads;
	uint64_t traced;          /* the instructions inside the IP filter (all without one) */
	double seconds;
	double recorder_cpu_seconds;  /* this process (log parsing, encoding, writing) */
	double qemu_cpu_seconds;      /* QEMU, emulating and printing its log */
	enum jf_record_backend backend; /* the one that made the recording */
	enum jf_record_arch arch;       /* what was recorded (pt_bytes: ETM bytes for AArch64) */
};

/* The plugin shared library: $JITFLOW_QEMU_PLUGIN, or where the build or an installation
 * puts it relative to the running executable. Returns 0 and the path, -1 if none. */
int jf_record_find_plugin(char *out, size_t size);

/* Records; returns 0 when a recording was written (whatever the program's own exit
 * status), -1 with err filled when no recording could be made. */
int jf_record(const struct jf_record_options *opt, struct jf_record_result *res,
	      struct jf_error *err);

#endif
