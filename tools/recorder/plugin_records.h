/* The binary records that jitflow's QEMU plugin (plugin/jitflow_qemu.c) streams to the
 * recorder (plugin_stream.c) through a FIFO. Host byte order (both ends run on the same
 * machine); every record is an 8-byte head followed by `size` bytes of payload, and
 * payloads are padded to a multiple of 4 bytes.
 *
 * Order: the plugin writes all records under one lock. A translation is in the stream
 * before any execution that names it; a vCPU's executions, system calls and results are in
 * the order that vCPU ran them (its executions are buffered and written just before its
 * next system call record, or when the buffer is full). Executions of different vCPUs
 * interleave in chunks. */
#ifndef JITFLOW_RECORDER_PLUGIN_RECORDS_H
#define JITFLOW_RECORDER_PLUGIN_RECORDS_H

#include <stdint.h>

#define JF_PREC_MAGIC 0x6a66706cu /* "jfpl" */
#define JF_PREC_VERSION 1u

enum jf_prec_type {
	JF_PREC_HELLO = 1,       /* struct jf_prec_hello */
	JF_PREC_TRANSLATION = 2, /* struct jf_prec_translation, then the block's bytes */
	JF_PREC_EXECS = 3,       /* struct jf_prec_execs, then uint32_t translation ids */
	JF_PREC_SYSCALL = 4,     /* struct jf_prec_syscall, then an optional string */
	JF_PREC_SYSCALL_RET = 5, /* struct jf_prec_syscall_ret, then an optional string */
};

struct jf_prec_head {
	uint32_t type;
	uint32_t size;           /* payload bytes after this head */
};

struct jf_prec_hello {
	uint32_t magic, version;
	int32_t pid;             /* the process QEMU runs the program in */
	uint32_t qemu_api;       /* the plugin API version QEMU reported */
};

/* One translation block: its id (executions name it), guest address, instruction count
 * and bytes, as QEMU reports them. QEMU 7.2 includes in both the start of an instruction
 * that crossed into the next page although it left that instruction to the next block
 * (the recorder drops it: jf_block_map_prefix_size). */
struct jf_prec_translation {
	uint32_t id;
	uint32_t nbytes;
	uint64_t pc;
	uint32_t ninsns;
	uint32_t pad;
};

/* Blocks one vCPU (= one guest thread) executed, in order. Among the ids, where the vCPU
 * read the time-stamp counter (x86 rdtsc/rdtscp): JF_PREC_CLOCK_READ, the instruction's
 * index in the block named just before, then the host's TSC read just before that
 * instruction ran (low, high 32 bits). In user mode QEMU's rdtsc returns the host's TSC,
 * so the value the guest read is this one or a little more, and less than the thread's
 * next read: a program's own TSC stamps (PyPy's log) are placed by them. */
#define JF_PREC_CLOCK_READ 0xffffffffu
#define JF_PREC_CLOCK_READ_WORDS 4u
struct jf_prec_execs {
	uint32_t vcpu;
	int32_t tid;             /* the guest thread running on that vCPU */
};

/* A system call as the guest made it (x86-64: number and six arguments). The string is
 * execve's file name, read from guest memory; for rt_sigaction with a new action, the
 * JF_PREC_SIGACTION_SIZE bytes of the kernel's struct sigaction that its second argument
 * points to (handler, flags, restorer, mask: 8 bytes each), binary; empty otherwise. A forked child process
 * (not recorded) sends only its execve calls, with vcpu = JF_PREC_OTHER_PROCESS, into a file
 * of its own: the FIFO's path with JF_PREC_CHILDREN_SUFFIX (one O_APPEND write a record, no
 * hello record), read after the stream. */
#define JF_PREC_OTHER_PROCESS 0xffffffffu
#define JF_PREC_CHILDREN_SUFFIX ".children"
struct jf_prec_syscall {
	uint32_t vcpu;
	int32_t tid;
	int64_t num;
	uint64_t args[6];
	uint32_t string_len;
	uint32_t pad;
};

/* Its result. The string is the path of the file an open/openat returned, as the kernel
 * names it (/proc/self/fd); empty otherwise. */
struct jf_prec_syscall_ret {
	uint32_t vcpu;
	int32_t tid;
	int64_t num;
	int64_t ret;
	uint32_t string_len;
	uint32_t pad;
};

enum {
	JF_PREC_SIGACTION_SIZE = 32,   /* x86-64 kernel struct sigaction */
	JF_PREC_MAX_PAYLOAD = 1 << 20, /* larger is corrupt */
	JF_PREC_MAX_STRING = 4096,
	JF_PREC_MAX_VCPUS = 4096,      /* the plugin keeps a buffer for this many */
};

/* x86-64 Linux system call numbers the recorder acts on. */
enum jf_x86_64_syscall {
	JF_SYS_WRITE = 1, JF_SYS_OPEN = 2, JF_SYS_CLOSE = 3, JF_SYS_MMAP = 9,
	JF_SYS_MPROTECT = 10,	JF_SYS_RT_SIGACTION = 13, JF_SYS_RT_SIGRETURN = 15, JF_SYS_PWRITE64 = 18,
	JF_SYS_WRITEV = 20,
	JF_SYS_CLONE = 56, JF_SYS_FORK = 57, JF_SYS_VFORK = 58, JF_SYS_EXECVE = 59,
	JF_SYS_EXIT = 60, JF_SYS_EXIT_GROUP = 231, JF_SYS_OPENAT = 257,
	JF_SYS_EXECVEAT = 322, JF_SYS_CLONE3 = 435,
};

/* AArch64 Linux (the generic table) numbers of the calls the plugin itself acts on; its
 * records carry the target's own numbers. AArch64 has no open, only openat. */
enum jf_aarch64_syscall {
	JF_A64_SYS_OPENAT = 56, JF_A64_SYS_EXIT = 93, JF_A64_SYS_RT_SIGACTION = 134,
	JF_A64_SYS_EXECVE = 221, JF_A64_SYS_EXECVEAT = 281,
};

#endif
