/* jitflow's QEMU TCG plugin: `qemu-x86_64 -plugin libjitflow_qemu.so,out=FIFO PROGRAM` (or
 * qemu-aarch64) streams what `jitflow record` needs as binary records
 * (../plugin_records.h) into FIFO: each translation block's bytes once, each executed
 * block as a 4-byte translation id in a per-vCPU buffer, and system calls with their
 * results. No text on the hot path: an executed block costs one call and one store.
 *
 * Nothing here interprets the program; the recorder does (record_plugin.c). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../plugin_records.h"
#include "qemu_plugin_api.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT int qemu_plugin_version = JF_QEMU_PLUGIN_API_VERSION;

enum {
	EXEC_BUFFER = 16384,      /* ids per vCPU before a write (64 KiB) ... */
	EXEC_CHUNK_THREADED = 1024, /* ... or fewer once there are threads: other threads'
	                           * executions are ordered against these only per chunk */
	PENDING_TRANSLATIONS = 1 << 20,
};

struct vcpu_buffer {
	int32_t tid;              /* 0 until the thread on this vCPU runs a block */
	uint32_t n;
	uint32_t ids[EXEC_BUFFER];
};

static int out_fd = -1;
/* Where a forked child's QEMU writes its records: a regular file beside the FIFO, never the
 * FIFO, where its write could land between two of the parent's writes of one record. */
static char children_path[4096];
static int failed;
static pid_t recorded_pid;    /* a forked child's QEMU writes nothing */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vcpu_buffer *vcpus[JF_PREC_MAX_VCPUS];
static uint32_t exec_chunk = EXEC_BUFFER;
static uint32_t next_translation_id;
/* The numbers of the system calls the plugin reads arguments or results of, for the
 * target QEMU emulates (the kernel struct sigaction is 32 bytes on both). */
struct target_syscalls {
	int64_t execve, execveat, rt_sigaction, exit, open, openat;
};
static const struct target_syscalls x86_64_syscalls = {
	JF_SYS_EXECVE, JF_SYS_EXECVEAT, JF_SYS_RT_SIGACTION, JF_SYS_EXIT, JF_SYS_OPEN,
	JF_SYS_OPENAT,
};
static const struct target_syscalls aarch64_syscalls = {
	JF_A64_SYS_EXECVE, JF_A64_SYS_EXECVEAT, JF_A64_SYS_RT_SIGACTION, JF_A64_SYS_EXIT,
	-1 /* none */, JF_A64_SYS_OPENAT,
};
static const struct target_syscalls *sys = &x86_64_syscalls;
static intptr_t guest_base;   /* host address - guest address (user mode) */
static int guest_base_known;
/* Translations not yet written: they go out before any executions (under out_lock). */
static uint8_t *pending;
static size_t npending;

static void write_all(const void *data, size_t size)
{
	const uint8_t *p = data;

	while (size && !failed) {
		ssize_t n = write(out_fd, p, size);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			failed = 1;
			return;
		}
		p += n;
		size -= (size_t)n;
	}
}

/* Under out_lock: translations first, so that every id a later record names is known. */
static void write_pending_translations(void)
{
	if (npending)
		write_all(pending, npending);
	npending = 0;
}

static void write_record(uint32_t type, const void *a, size_t asize, const void *b, size_t bsize)
{
	static const uint8_t zeros[4];
	struct jf_prec_head head = { type, (uint32_t)((asize + bsize + 3) & ~(size_t)3) };

	write_all(&head, sizeof(head));
	write_all(a, asize);
	if (bsize)
		write_all(b, bsize);
	write_all(zeros, head.size - asize - bsize);
}

/* Under out_lock: the vCPU's executions so far. */
static void write_execs(unsigned vcpu, struct vcpu_buffer *b)
{
	struct jf_prec_execs e = { vcpu, b->tid };

	if (b->n)
		write_record(JF_PREC_EXECS, &e, sizeof(e), b->ids, b->n * sizeof(b->ids[0]));
	b->n = 0;
}

static int writing(void)
{
	return !failed && getpid() == recorded_pid;
}

static struct vcpu_buffer *buffer_of(unsigned vcpu)
{
	struct vcpu_buffer *b;

	if (vcpu >= JF_PREC_MAX_VCPUS)
		return NULL;
	b = vcpus[vcpu];
	if (!b) {
		b = calloc(1, sizeof(*b));
		vcpus[vcpu] = b;
		if (vcpu > 0)
			exec_chunk = EXEC_CHUNK_THREADED;
	}
	return b;
}

static void flush_vcpu(unsigned vcpu, struct vcpu_buffer *b)
{
	pthread_mutex_lock(&out_lock);
	if (writing()) {
		write_pending_translations();
		write_execs(vcpu, b);
	}
	b->n = 0;
	pthread_mutex_unlock(&out_lock);
}

/* The hot path: called by the code QEMU generated at the start of every block. */
static void on_exec(unsigned int vcpu, void *userdata)
{
	struct vcpu_buffer *b = vcpu < JF_PREC_MAX_VCPUS ? vcpus[vcpu] : NULL;

	if (__builtin_expect(!b, 0)) {
		b = buffer_of(vcpu);
		if (!b) {
			failed = 1; /* more vCPUs than we keep: the recorder sees the stream end */
			return;
		}
	}
	if (__builtin_expect(!b->tid, 0))
		b->tid = (int32_t)syscall(SYS_gettid);
	b->ids[b->n++] = (uint32_t)(uintptr_t)userdata;
	if (__builtin_expect(b->n >= exec_chunk, 0))
		flush_vcpu(vcpu, b);
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static uint64_t host_tsc(void) { return __rdtsc(); }
#define HAVE_HOST_TSC 1
#else
#define HAVE_HOST_TSC 0
#endif

/* rdtsc (0f 31) or rdtscp (0f 01 f9), with or without prefixes. */
static int reads_tsc(const uint8_t *insn, size_t size)
{
	size_t i = 0;

	while (i < size && (insn[i] == 0x66 || insn[i] == 0xf2 || insn[i] == 0xf3 ||
			    (insn[i] & 0xf0) == 0x40))
		i++;
	return (size - i == 2 && insn[i] == 0x0f && insn[i + 1] == 0x31) ||
	       (size - i == 3 && insn[i] == 0x0f && insn[i + 1] == 0x01 && insn[i + 2] == 0xf9);
}

/* Just before a guest rdtsc: the host's TSC, which is what the guest reads. */
static void on_clock_read(unsigned int vcpu, void *userdata)
{
#if HAVE_HOST_TSC
	struct vcpu_buffer *b = vcpu < JF_PREC_MAX_VCPUS ? vcpus[vcpu] : NULL;
	uint64_t tsc;

	if (!b)
		return; /* the block's own callback made it: never here */
	if (b->n + JF_PREC_CLOCK_READ_WORDS > EXEC_BUFFER)
		flush_vcpu(vcpu, b);
	tsc = host_tsc();
	b->ids[b->n++] = JF_PREC_CLOCK_READ;
	b->ids[b->n++] = (uint32_t)(uintptr_t)userdata;
	b->ids[b->n++] = (uint32_t)tsc;
	b->ids[b->n++] = (uint32_t)(tsc >> 32);
	if (b->n >= exec_chunk)
		flush_vcpu(vcpu, b);
#else
	(void)vcpu;
	(void)userdata;
#endif
}

static void on_translation(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb), nbytes = 0, need;
	struct jf_prec_head head;
	struct jf_prec_translation t;
	uint32_t tid;
	uint8_t *p;

	(void)id;
	for (i = 0; i < n; i++)
		nbytes += qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i));
	if (n && !guest_base_known) {
		struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);

		guest_base = (intptr_t)qemu_plugin_insn_haddr(first) -
			     (intptr_t)qemu_plugin_insn_vaddr(first);
		guest_base_known = 1;
	}
	pthread_mutex_lock(&out_lock);
	tid = ++next_translation_id;
	need = sizeof(head) + sizeof(t) + ((nbytes + 3) & ~(size_t)3);
	if (!writing())
		npending = 0; /* a forked child: nothing goes out */
	else if (npending + need > PENDING_TRANSLATIONS)
		write_pending_translations();
	if (need <= PENDING_TRANSLATIONS) {
		head.type = JF_PREC_TRANSLATION;
		head.size = (uint32_t)(need - sizeof(head));
		t.id = tid;
		t.nbytes = (uint32_t)nbytes;
		t.pc = qemu_plugin_tb_vaddr(tb);
		t.ninsns = (uint32_t)n;
		t.pad = 0;
		p = pending + npending;
		memcpy(p, &head, sizeof(head));
		memcpy(p + sizeof(head), &t, sizeof(t));
		p += sizeof(head) + sizeof(t);
		for (i = 0; i < n; i++) {
			struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
			size_t size = qemu_plugin_insn_size(insn);

			memcpy(p, qemu_plugin_insn_data(insn), size);
			p += size;
		}
		memset(p, 0, (size_t)(pending + npending + need - p));
		npending += need;
	}
	pthread_mutex_unlock(&out_lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)tid);
	if (sys != &x86_64_syscalls || !HAVE_HOST_TSC)
		return;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (reads_tsc(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn)))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_clock_read,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)i);
	}
}

/* A NUL-terminated string at a guest address, read without trusting the address. */
static size_t guest_string(uint64_t addr, char *out, size_t size)
{
	struct iovec local = { out, size - 1 }, remote;
	ssize_t got;
	size_t len;

	out[0] = '\0';
	if (!guest_base_known || !addr)
		return 0;
	/* Within one page at a time: a read across an unmapped page fails as a whole. */
	remote.iov_base = (void *)(uintptr_t)(addr + (uint64_t)guest_base);
	remote.iov_len = 4096 - (addr & 4095);
	if (remote.iov_len > size - 1)
		remote.iov_len = size - 1;
	local.iov_len = remote.iov_len;
	got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (got <= 0)
		return 0;
	out[got] = '\0';
	len = strlen(out);
	if (len == (size_t)got && (size_t)got < size - 1) {
		/* The string continues on the next page. */
		local.iov_base = out + got;
		local.iov_len = size - 1 - (size_t)got;
		remote.iov_base = (uint8_t *)remote.iov_base + got;
		remote.iov_len = local.iov_len;
		got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (got > 0)
			out[len + (size_t)got] = '\0';
		len = strlen(out);
	}
	return len;
}

/* size bytes at a guest address into out, page by page (an unmapped page fails the whole
 * read). Returns whether all of them were read. */
static int guest_read(uint64_t addr, void *out, size_t size)
{
	uint8_t *o = out;

	if (!guest_base_known || !addr)
		return 0;
	while (size) {
		size_t part = 4096 - (addr & 4095);
		struct iovec local, remote;

		if (part > size)
			part = size;
		local.iov_base = o;
		local.iov_len = part;
		remote.iov_base = (void *)(uintptr_t)(addr + (uint64_t)guest_base);
		remote.iov_len = part;
		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)part)
			return 0;
		o += part;
		addr += part;
		size -= part;
	}
	return 1;
}

static void write_child_record(struct jf_prec_syscall *s, const char *str)
{
	uint8_t rec[sizeof(struct jf_prec_head) + sizeof(*s) + 256];
	struct jf_prec_head head = { JF_PREC_SYSCALL, 0 };
	int fd;

	if (s->string_len > 200)
		s->string_len = 200;
	s->vcpu = JF_PREC_OTHER_PROCESS;
	head.size = (uint32_t)((sizeof(*s) + s->string_len + 3) & ~(size_t)3);
	memset(rec, 0, sizeof(rec));
	memcpy(rec, &head, sizeof(head));
	memcpy(rec + sizeof(head), s, sizeof(*s));
	memcpy(rec + sizeof(head) + sizeof(*s), str, s->string_len);
	/* One O_APPEND write: records of several children cannot mix. */
	fd = open(children_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, rec, sizeof(head) + head.size) < 0)
		failed = 1;
	if (fd >= 0)
		close(fd);
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
		       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
		       uint64_t a7, uint64_t a8)
{
	struct vcpu_buffer *b = buffer_of(vcpu);
	struct jf_prec_syscall s = { vcpu, 0, num, { a1, a2, a3, a4, a5, a6 }, 0, 0 };
	char str[JF_PREC_MAX_STRING];

	(void)id;
	(void)a7;
	(void)a8;
	str[0] = '\0';
	if (num == sys->execve)
		s.string_len = (uint32_t)guest_string(a1, str, sizeof(str));
	else if (num == sys->execveat)
		s.string_len = (uint32_t)guest_string(a2, str, sizeof(str));
	else if (num == sys->rt_sigaction && guest_read(a2, str, JF_PREC_SIGACTION_SIZE))
		s.string_len = JF_PREC_SIGACTION_SIZE; /* the handler the recorder must know */
	s.tid = (int32_t)syscall(SYS_gettid);
	if (getpid() != recorded_pid) {
		/* A forked child's QEMU records nothing but the program it runs next, into
		 * its own file (write_child_record), without the lock another thread may have
		 * held at the fork. */
		if (!failed && (num == sys->execve || num == sys->execveat))
			write_child_record(&s, str);
		return;
	}
	pthread_mutex_lock(&out_lock);
	if (writing()) {
		write_pending_translations();
		if (b)
			write_execs(vcpu, b);
		write_record(JF_PREC_SYSCALL, &s, sizeof(s), str, s.string_len);
	}
	if (b) {
		b->n = 0;
		if (num == sys->exit)
			b->tid = 0; /* the next thread on this vCPU is another one */
	}
	pthread_mutex_unlock(&out_lock);
}

static void on_syscall_ret(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, int64_t ret)
{
	struct jf_prec_syscall_ret r = { vcpu, (int32_t)syscall(SYS_gettid), num, ret, 0, 0 };
	char str[JF_PREC_MAX_STRING];

	(void)id;
	str[0] = '\0';
	/* The guest's descriptors are QEMU's own in user mode: the kernel names the file. */
	if ((num == sys->open || num == sys->openat) && ret >= 0 && getpid() == recorded_pid) {
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%lld", (long long)ret);
		n = readlink(link, str, sizeof(str) - 1);
		if (n > 0) {
			str[n] = '\0';
			r.string_len = (uint32_t)n;
		}
	}
	pthread_mutex_lock(&out_lock);
	if (writing())
		write_record(JF_PREC_SYSCALL_RET, &r, sizeof(r), str, r.string_len);
	pthread_mutex_unlock(&out_lock);
}

static void on_exit_all(qemu_plugin_id_t id, void *userdata)
{
	unsigned i;

	(void)id;
	(void)userdata;
	pthread_mutex_lock(&out_lock);
	if (writing()) {
		write_pending_translations();
		for (i = 0; i < JF_PREC_MAX_VCPUS; i++)
			if (vcpus[i])
				write_execs(i, vcpus[i]);
	}
	pthread_mutex_unlock(&out_lock);
}

/* A fork while another thread holds out_lock would leave the child's copy locked for
 * good: hold it across the fork, release it on both sides. */
static void before_fork(void)
{
	pthread_mutex_lock(&out_lock);
}

static void after_fork(void)
{
	pthread_mutex_unlock(&out_lock);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
			       char **argv);

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
			       char **argv)
{
	struct jf_prec_hello hello = { JF_PREC_MAGIC, JF_PREC_VERSION, 0, 0 };
	const char *out = NULL;
	int i;

	if (info->version.cur < JF_QEMU_PLUGIN_API_VERSION ||
	    info->version.min > JF_QEMU_PLUGIN_API_VERSION) {
		fprintf(stderr, "jitflow plugin: QEMU's plugin API is version %d..%d, this plugin "
			"needs %d\n", info->version.min, info->version.cur,
			JF_QEMU_PLUGIN_API_VERSION);
		return -1;
	}
	if (!info->system_emulation && !strcmp(info->target_name, "aarch64")) {
		sys = &aarch64_syscalls;
	} else if (info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "jitflow plugin: only qemu-x86_64 and qemu-aarch64 (user mode) are "
			"supported, not %s\n", info->target_name);
		return -1;
	}
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out = argv[i] + 4;
	if (!out) {
		fprintf(stderr, "jitflow plugin: usage: -plugin libjitflow_qemu.so,out=FIFO\n");
		return -1;
	}
	out_fd = open(out, O_WRONLY | O_CLOEXEC);
	snprintf(children_path, sizeof(children_path), "%s" JF_PREC_CHILDREN_SUFFIX, out);
	pending = malloc(PENDING_TRANSLATIONS);
	if (out_fd < 0 || !pending) {
		fprintf(stderr, "jitflow plugin: %s: %s\n", out, strerror(errno));
		return -1;
	}
	/* Keep the stream's descriptor out of the program's way (programs that dup2 onto
	 * low numbers or close what they did not open). */
	{
		int high = fcntl(out_fd, F_DUPFD_CLOEXEC, 1000);

		if (high >= 0) {
			close(out_fd);
			out_fd = high;
		}
	}
	pthread_atfork(before_fork, after_fork, after_fork);
	recorded_pid = getpid();
	hello.pid = recorded_pid;
	hello.qemu_api = (uint32_t)info->version.cur;
	write_record(JF_PREC_HELLO, &hello, sizeof(hello), NULL, 0);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translation);
	qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
	qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
	qemu_plugin_register_atexit_cb(id, on_exit_all, NULL);
	return 0;
}
