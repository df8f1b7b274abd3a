/* The plugin backend's records -> the recorder's state (see record_plugin.h). */
#include "record_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "record_clock.h"
#include "record_internal.h"

enum { CLONE_THREAD_FLAG = 0x00010000 };

struct jf_record_plugin {
	struct jf_record_state *st;
	struct jf_block *blocks;   /* each translation, by id (pc 0: none): executions look
	                            * their block up here, not in the block map's hash */
	size_t nblocks;
	struct jf_prec_syscall *calls; /* the system call each vCPU is in, by vCPU */
	size_t ncalls;
	int started;
};

struct jf_record_plugin *jf_record_plugin_new(struct jf_record_state *st)
{
	struct jf_record_plugin *p = calloc(1, sizeof(*p));

	if (p) {
		p->st = st;
		st->exact_signals = 1; /* rt_sigaction and rt_sigreturn come as records */
	}
	return p;
}

void jf_record_plugin_free(struct jf_record_plugin *p)
{
	if (!p)
		return;
	free(p->blocks);
	free(p->calls);
	free(p);
}

int jf_record_plugin_started(const struct jf_record_plugin *p)
{
	return p->started;
}

static void on_hello(void *ctx, const struct jf_prec_hello *h)
{
	struct jf_record_plugin *p = ctx;

	if (h->pid != p->st->pid)
		jf_rec_note(p->st, "the plugin runs in process %d, QEMU was started as %d", h->pid,
			    p->st->pid);
	p->started = 1;
}

static int grow(void *array_ptr, size_t *n, size_t need, size_t elem)
{
	void **array = array_ptr;
	size_t cap = *n ? *n : 1024;
	void *bigger;

	if (need < *n)
		return 0;
	while (cap <= need)
		cap *= 2;
	bigger = realloc(*array, cap * elem);
	if (!bigger)
		return -1;
	memset((char *)bigger + *n * elem, 0, (cap - *n) * elem);
	*array = bigger;
	*n = cap;
	return 0;
}

static void on_translation(void *ctx, const struct jf_prec_translation *t, const uint8_t *bytes)
{
	struct jf_record_plugin *p = ctx;
	struct jf_record_state *st = p->st;
	const struct jf_block *b;

	if (grow(&p->blocks, &p->nblocks, t->id, sizeof(*p->blocks)))
		return;
	jf_block_map_key_next(st->blocks, t->id, JF_REC_PLUGIN_KEY);
	st->translation_id = t->id;
	jf_rec_on_translation(st, t->pc, bytes,
			      jf_block_map_prefix_size(st->blocks, t->pc, bytes, t->nbytes, t->ninsns));
	st->translation_id = 0;
	b = jf_block_map_executed(st->blocks, t->pc, t->id, JF_REC_PLUGIN_KEY);
	if (b)
		p->blocks[t->id] = *b;
}

/* The thread on vcpu now is tid: a vCPU whose thread exited is reused by the next one. */
static struct jf_record_thread *thread_on(struct jf_record_state *st, unsigned vcpu, int tid)
{
	struct jf_record_thread *t = jf_rec_thread_for(st, vcpu);

	if (t && t->tid && t->tid != tid) {
		jf_rec_thread_exit(st, t);
		jf_rec_thread_finish(st, t);
		t = jf_rec_thread_for(st, vcpu);
	}
	if (t && !t->tid) {
		t->tid = tid;
		jf_rec_announce(st, t);
	}
	return t;
}

static void on_execs(void *ctx, unsigned vcpu, int tid, const uint32_t *ids, size_t n)
{
	struct jf_record_plugin *p = ctx;
	struct jf_record_state *st = p->st;
	struct jf_record_thread *t = thread_on(st, vcpu, tid);
	struct jf_qlog_exec e = { .cpu = vcpu, .cflags = JF_REC_PLUGIN_KEY };
	size_t i;

	if (!t)
		return;
	for (i = 0; i < n; i++) {
		const struct jf_block *b = ids[i] < p->nblocks ? &p->blocks[ids[i]] : NULL;
		uint64_t before;

		if (ids[i] == JF_PREC_CLOCK_READ && n - i >= JF_PREC_CLOCK_READ_WORDS) {
			/* In the thread's last block: at its index if the trace holds it. */
			uint64_t index = ids[i + 1];

			jf_rec_clock_read(st, t, t->block_at + (index < t->block_traced ? index :
								t->block_traced),
					  (uint64_t)ids[i + 3] << 32 | ids[i + 2]);
			i += JF_PREC_CLOCK_READ_WORDS - 1;
			continue;
		}
		if (!b || !b->pc) {
			/* Not in a well-formed stream: counted as a block without bytes, and
			 * the thread's next block starts after an OVF. */
			st->unknown_blocks++;
			t->have_prev = 0;
			continue;
		}
		e.pc = b->pc;
		e.flags = ids[i];
		jf_rec_exact_signal(st, t, e.pc);
		before = t->traced - t->hidden;
		jf_rec_exec_block(st, &e, b);
		t->block_at = before;
		t->block_traced = t->traced - t->hidden - before;
	}
}

static struct jf_prec_syscall *call_of(struct jf_record_plugin *p, unsigned vcpu)
{
	if (grow(&p->calls, &p->ncalls, vcpu, sizeof(*p->calls)))
		return NULL;
	return &p->calls[vcpu];
}

static void on_syscall(void *ctx, const struct jf_prec_syscall *s, const char *string)
{
	struct jf_record_plugin *p = ctx;
	struct jf_record_state *st = p->st;
	struct jf_prec_syscall *slot;
	struct jf_record_thread *t = s->vcpu < st->cpu_cap ? st->by_cpu[s->vcpu] : NULL;

	if (s->vcpu == JF_PREC_OTHER_PROCESS) {
		if (s->num == JF_SYS_EXECVE || s->num == JF_SYS_EXECVEAT)
			jf_rec_note(st, "%s(\"%.200s\", ...) in child process %d: the new program "
				    "runs outside QEMU and is not recorded", s->num == JF_SYS_EXECVE ?
				    "execve" : "execveat", string, s->tid);
		return;
	}
	st->syscalls++;
	slot = call_of(p, s->vcpu);
	if (slot)
		*slot = *s;
	switch (s->num) {
	case JF_SYS_CLOSE:
		jf_rec_file_closed(st, (long)s->args[0]);
		break;
	case JF_SYS_RT_SIGACTION:
		if (s->string_len == JF_PREC_SIGACTION_SIZE) {
			uint64_t handler;

			memcpy(&handler, string, sizeof(handler));
			jf_rec_sigaction(st, (unsigned)s->args[0], handler);
		}
		break;
	case JF_SYS_RT_SIGRETURN:
		if (t)
			t->sigreturned = 1;
		break;
	case JF_SYS_EXIT:
		if (t) {
			jf_rec_thread_exit(st, t);
			jf_rec_thread_finish(st, t);
		}
		break;
	case JF_SYS_EXECVE:
	case JF_SYS_EXECVEAT:
		jf_rec_note(st, "%s(\"%.200s\", ...): the new program runs outside QEMU and is not "
			    "recorded", s->num == JF_SYS_EXECVE ? "execve" : "execveat", string);
		break;
	case JF_SYS_FORK:
		jf_rec_process_forked(st, t, "fork");
		break;
	case JF_SYS_VFORK:
		jf_rec_process_forked(st, t, "vfork");
		break;
	case JF_SYS_CLONE:
		if (!(s->args[0] & CLONE_THREAD_FLAG))
			jf_rec_process_forked(st, t, "clone");
		break;
	default:
		break;
	}
}

static void on_syscall_ret(void *ctx, const struct jf_prec_syscall_ret *r, const char *string)
{
	struct jf_record_plugin *p = ctx;
	struct jf_record_state *st = p->st;
	const struct jf_prec_syscall *s = r->vcpu < p->ncalls ? &p->calls[r->vcpu] : NULL;
	int ok = r->ret >= 0 || r->ret < -4095; /* -4095..-1 are errors (an mmap can be high) */

	if (!s || s->num != r->num || !ok)
		return;
	switch (r->num) {
	case JF_SYS_OPEN:
	case JF_SYS_OPENAT:
		if (string[0])
			jf_rec_file_opened(st, (long)r->ret, string);
		break;
	case JF_SYS_MMAP:
		jf_rec_mmap(st, (uint64_t)r->ret, s->args[1], (uint32_t)s->args[2] &
			    (PROT_READ | PROT_WRITE | PROT_EXEC), (s->args[3] & MAP_SHARED) ?
			    MAP_SHARED : MAP_PRIVATE, (long)(int)s->args[4], s->args[5]);
		break;
	case JF_SYS_MPROTECT:
		jf_rec_mprotect(st, s->args[0], s->args[1], (uint32_t)s->args[2] & PROT_EXEC);
		break;
	case JF_SYS_WRITE:
	case JF_SYS_WRITEV:
		jf_rec_file_written(st, (long)(int)s->args[0], r->ret, -1);
		break;
	case JF_SYS_PWRITE64:
		jf_rec_file_written(st, (long)(int)s->args[0], r->ret, (long long)s->args[3] + r->ret);
		break;
	case JF_SYS_CLONE:
		if (!(s->args[0] & CLONE_THREAD_FLAG) && r->ret > 0)
			jf_rec_note(st, "clone without CLONE_THREAD (a new process): child pid %lld",
				    (long long)r->ret);
		break;
	default:
		break;
	}
}

void jf_record_plugin_callbacks(struct jf_record_plugin *p, struct jf_prec_callbacks *cb)
{
	memset(cb, 0, sizeof(*cb));
	cb->ctx = p;
	cb->hello = on_hello;
	cb->translation = on_translation;
	cb->execs = on_execs;
	cb->syscall = on_syscall;
	cb->syscall_ret = on_syscall_ret;
}
