/* Running the program under QEMU user mode and reading what QEMU (or jitflow's plugin)
 * writes into a FIFO: shared by the x86-64 recorder (recorder.c) and the AArch64 one
 * (record_a64.c). */
#ifndef JITFLOW_RECORDER_RECORD_QEMU_H
#define JITFLOW_RECORDER_RECORD_QEMU_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include <jitflow/error.h>

/* The FIFO QEMU writes into, in a temporary folder of its own. */
struct jf_record_fifo {
	char dir[PATH_MAX - 32];
	char path[PATH_MAX];
	int fd;                    /* the read end (non-blocking) */
};

/* Creates ff's folder in $TMPDIR (or /tmp) and the FIFO named name in it, and opens it;
 * 0, or -1 with err and nothing left behind. */
int jf_record_fifo_open(struct jf_record_fifo *ff, const char *name, struct jf_error *err);
/* Closes the FIFO and removes it, the forked children's record file beside it and the
 * folder. */
void jf_record_fifo_close(struct jf_record_fifo *ff);

/* Starts `QEMU [-L SYSROOT] (-plugin PLUGIN_ARG | -d ... -D FIFO) PROGRAM ARGV[1..]`;
 * returns its pid or -1. */
pid_t jf_record_start_qemu(const char *qemu, const char *sysroot, const char *plugin_arg,
			   const char *fifo, int argc, char **argv, const char *program);

/* QEMU's -plugin option: FILE,out=FIFO, where a comma inside a value is written twice
 * (QEMU's option syntax). */
void jf_record_plugin_option(char *out, size_t size, const char *plugin, const char *fifo);

/* Streams the FIFO into consume until QEMU closes it (or dies before opening it). After
 * consume fails, the rest is read and dropped so that QEMU can finish. */
int jf_record_pump_fifo(int fd, int (*consume)(void *, const char *, size_t), void *ctx,
			pid_t child, int *child_done, int *status);

#endif
