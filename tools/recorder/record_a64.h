/* `jitflow record` of an AArch64 Linux program (static or dynamically linked; the loader
 * and libraries come from $JITFLOW_AARCH64_SYSROOT, default /usr/aarch64-linux-gnu): it
 * runs under qemu-aarch64 ($JITFLOW_QEMU_AARCH64) with jitflow's plugin, and the folder
 * receives an ETMv4 trace of it as a CoreSight snapshot (etm_snapshot.h) and
 * recording.txt, what the recording holds and what it could not trace. */
#ifndef JITFLOW_RECORDER_RECORD_A64_H
#define JITFLOW_RECORDER_RECORD_A64_H

#include "recorder.h"

/* The e_machine of the ELF file at path (EM_AARCH64 = 183, EM_X86_64 = 62), or -1 when it
 * is not an ELF file that can be read. */
int jf_record_elf_machine(const char *path);

/* Records program (a resolved path) with the plugin; opt->out_dir exists. Returns 0 when a
 * recording was written, -1 with err. */
int jf_record_a64(const struct jf_record_options *opt, const char *program, const char *plugin,
		  struct jf_record_result *res, struct jf_error *err);

#endif
