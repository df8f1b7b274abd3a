#include "etm_flow.h"

#include <stdlib.h>
#include <string.h>

#include "pt_stream.h"

/* AArch64 Linux system calls (asm-generic/unistd.h) and mmap flags that --filter=jit
 * follows. */
enum { SYS_MMAP = 222, SYS_MPROTECT = 226, PROT_EXEC_BIT = 4, MAP_ANONYMOUS_BIT = 0x20 };

int jf_etm_flow_init(struct jf_etm_flow *f)
{
	memset(f, 0, sizeof(*f));
	jf_etm_init(&f->etm);
	if (jf_a64_disasm_open(&f->cs))
		return -1;
	jf_etm_sync(&f->etm);
	return 0;
}

void jf_etm_flow_free(struct jf_etm_flow *f)
{
	if (f->cs)
		cs_close(&f->cs);
	free(f->blocks);
	free(f->known);
	free(f->code);
	free(f->bytes);
	free(f->threads);
	jf_etm_free(&f->etm);
	memset(f, 0, sizeof(*f));
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	np = realloc(*p, n * elem);
	if (!np)
		return -1;
	memset((char *)np + *cap * elem, 0, (n - *cap) * elem);
	*p = np;
	*cap = n;
	return 0;
}

void jf_etm_flow_translation(struct jf_etm_flow *f, uint32_t id, uint64_t pc,
			     const uint8_t *bytes, size_t nbytes, uint32_t ninsns)
{
	struct jf_a64_block b;
	size_t cap = f->nblocks, known_cap = f->nblocks;

	if (f->failed)
		return;
	/* The plugin numbers translations from 1 in the order it writes them; anything else
	 * (or a block that is not whole 4-byte instructions) is a damaged stream, and an
	 * execution naming it is counted as unknown. */
	if (id != f->last_id + 1 || jf_a64_block_classify(f->cs, pc, bytes, nbytes, ninsns, &b)) {
		f->bad_translations++;
		return;
	}
	f->last_id = id;
	if (grow((void **)&f->blocks, &cap, (size_t)id + 1, sizeof(*f->blocks)) ||
	    grow((void **)&f->known, &known_cap, (size_t)id + 1, 1) ||
	    grow((void **)&f->code, &f->code_cap, f->ncode + 1, sizeof(*f->code)) ||
	    grow((void **)&f->bytes, &f->bytes_cap, f->nbytes + nbytes, 1)) {
		f->failed = 1;
		return;
	}
	f->nblocks = cap < known_cap ? cap : known_cap;
	f->blocks[id] = b;
	f->known[id] = 1;
	f->code[f->ncode].pc = pc;
	f->code[f->ncode].offset = f->nbytes;
	f->code[f->ncode].size = nbytes;
	f->ncode++;
	memcpy(f->bytes + f->nbytes, bytes, nbytes);
	f->nbytes += nbytes;
	if (f->jitcode)
		jf_rec_jitcode_translated(f->jitcode, pc, bytes, nbytes);
}

static struct jf_etm_thread *thread_of(struct jf_etm_flow *f, int32_t tid)
{
	size_t i, cur = f->current ? (size_t)(f->current - f->threads) : 0;

	for (i = 0; i < f->nthreads; i++)
		if (f->threads[i].tid == tid)
			return &f->threads[i];
	if (grow((void **)&f->threads, &f->threads_cap, f->nthreads + 1, sizeof(*f->threads))) {
		f->failed = 1;
		return NULL;
	}
	if (f->current)
		f->current = &f->threads[cur]; /* the array moved */
	f->threads[f->nthreads].tid = tid;
	f->threads[f->nthreads].call = -1;
	return &f->threads[f->nthreads++];
}

/* The clock where the trace is: the instructions it showed so far. */
static uint64_t trace_time(const struct jf_etm_flow *f)
{
	return jf_pt_perf_time(f->instructions - f->untraced);
}

/* t's pending block is in the trace now (or, at the end, never will be). */
static void pending_done(struct jf_etm_flow *f, struct jf_etm_thread *t)
{
	if (!t->has_pending)
		return;
	f->untraced -= f->blocks[t->pending].ninsns;
	t->has_pending = 0;
	t->last_time = trace_time(f);
}

/* The trace showed a waypoint of t (or stopped): nothing of t is waiting for one. */
static void waypoint_done(struct jf_etm_flow *f, struct jf_etm_thread *t)
{
	pending_done(f, t);
	t->unended = 0;
}

/* After an exception the core is at EL1, where the thread may be switched out: a
 * Timestamp (TRCCONFIGR.TS) says when the thread's own time stopped, so that the time the
 * core then spends in other threads is not taken for this thread's. */
static void exception_time(struct jf_etm_flow *f)
{
	jf_etm_timestamp(&f->etm, trace_time(f));
}

/* An A-Sync (and Trace Info) on 8 bytes (see jf_etm_align). */
static void sync(struct jf_etm_flow *f)
{
	jf_etm_align(&f->etm, trace_time(f));
	jf_etm_sync(&f->etm);
}

/* The core leaves the thread the trace is in: an interrupt (IRQ) before the block it runs
 * next, whose address ends what the trace showed of it. */
static void leave_current(struct jf_etm_flow *f)
{
	struct jf_etm_thread *c = f->current;

	if (c && c->has_pending) {
		jf_etm_exception(&f->etm, JF_ETM_EXC_IRQ, f->blocks[c->pending].pc,
				 JF_ETM_VECTOR_IRQ);
		exception_time(f);
		c->unended = 0;
		f->switches++;
	}
	f->current = NULL;
}

/* The trace goes into thread t, which continues at addr. */
static void enter_thread(struct jf_etm_flow *f, struct jf_etm_thread *t, uint64_t addr)
{
	if (f->current == t)
		return;
	leave_current(f);
	if (jf_etm_sync_due(&f->etm))
		sync(f);
	jf_etm_trace_on(&f->etm);
	jf_etm_address_context(&f->etm, addr, (uint32_t)t->tid);
	jf_etm_timestamp(&f->etm, trace_time(f));
	f->current = t;
}

/* Thread t (in the trace) leaves EL0 by a system call at the end of its pending block. */
static void take_call(struct jf_etm_flow *f, struct jf_etm_thread *t)
{
	jf_etm_exception(&f->etm, JF_ETM_EXC_CALL, f->blocks[t->pending].end,
			 JF_ETM_VECTOR_SYNC);
	waypoint_done(f, t);
	exception_time(f);
	f->current = NULL;
}

/* The block after p is not where p leads: an interruption between the two (a signal's
 * delivery). Returns the address the interruption's exception names: p's end when p
 * falls through or ends in a system call, a direct branch's target (after its E atom),
 * else p's last instruction, which is then left out. */
static uint64_t interrupted_at(struct jf_etm_flow *f, const struct jf_a64_block *p)
{
	switch (p->exit) {
	case JF_A64_EXIT_NONE:
	case JF_A64_EXIT_EXCEPTION:
		return p->end;
	case JF_A64_EXIT_DIRECT:
		jf_etm_atom(&f->etm, 1);
		return p->target;
	default:
		f->lost_instructions++;
		return p->last;
	}
}

/* Thread t (in the trace) ran block p and then the block at next: the waypoint at p's end.
 * When next is outside the filter (inside = 0), the trace shows the waypoint as far as it
 * is inside, then stops. Returns whether the trace is at a waypoint (a point where an
 * A-Sync may go). */
static int resolve(struct jf_etm_flow *f, struct jf_etm_thread *t,
		   const struct jf_a64_block *p, uint64_t next, int inside)
{
	switch (p->exit) {
	case JF_A64_EXIT_NONE:
		if (next != p->end)
			break;
		if (inside) {
			t->unended += p->ninsns;
			return 0;
		}
		/* No waypoint inside ends them: the trace never shows them. */
		f->lost_instructions += t->unended + p->ninsns;
		goto stop;
	case JF_A64_EXIT_DIRECT:
		if (next != p->target)
			break;
		jf_etm_atom(&f->etm, 1);
		goto shown;
	case JF_A64_EXIT_COND:
		/* A branch to the next instruction shows as taken. */
		if (next != p->target && next != p->end)
			break;
		jf_etm_atom(&f->etm, next == p->target);
		goto shown;
	case JF_A64_EXIT_INDIRECT:
		jf_etm_atom(&f->etm, 1);
		if (inside)
			jf_etm_address(&f->etm, next);
		goto shown;
	case JF_A64_EXIT_EXCEPTION:
		/* An SVC whose system call the plugin did not report. */
		take_call(f, t);
		if (inside)
			enter_thread(f, t, next);
		return 1;
	case JF_A64_EXIT_UNKNOWN:
		break;
	}
	f->discontinuities++;
	jf_etm_exception(&f->etm, JF_ETM_EXC_IRQ, interrupted_at(f, p), JF_ETM_VECTOR_IRQ);
	waypoint_done(f, t);
	exception_time(f);
	f->current = NULL;
	if (inside)
		enter_thread(f, t, next);
	return 1;
shown:
	if (inside)
		return 1;
stop:
	waypoint_done(f, t);
	f->current = NULL;
	return 1;
}

/* Thread t ran block b, which is outside the filter: not traced. */
static void execute_outside(struct jf_etm_flow *f, struct jf_etm_thread *t,
			    const struct jf_a64_block *b)
{
	if (t->has_pending) {
		enter_thread(f, t, f->blocks[t->pending].pc);
		resolve(f, t, &f->blocks[t->pending], b->pc, 0);
	} else if (f->current != t) {
		leave_current(f);
	}
	if (!t->ran) {
		t->ran = 1;
		t->first_time = trace_time(f);
	}
	f->instructions += b->ninsns;
	f->filtered += b->ninsns;
	f->blocks_executed++;
	t->last_time = trace_time(f);
}

static void execute(struct jf_etm_flow *f, struct jf_etm_thread *t, uint32_t id)
{
	const struct jf_a64_block *b;
	int at_waypoint = 1;

	if (id >= f->nblocks || !f->known[id]) {
		f->unknown_ids++;
		return;
	}
	b = &f->blocks[id];
	if (!f->instructions)
		f->first_pc = b->pc;
	if (f->filter && !jf_rec_filter_has(f->filter, b->pc)) {
		execute_outside(f, t, b);
		return;
	}
	enter_thread(f, t, t->has_pending ? f->blocks[t->pending].pc : b->pc);
	if (t->has_pending)
		at_waypoint = resolve(f, t, &f->blocks[t->pending], b->pc, 1);
	if (at_waypoint)
		t->unended = 0;
	pending_done(f, t);
	if (at_waypoint && f->current == t && jf_etm_sync_due(&f->etm)) {
		sync(f);
		jf_etm_address_context(&f->etm, b->pc, (uint32_t)t->tid);
		jf_etm_timestamp(&f->etm, trace_time(f));
	}
	if (!t->ran) {
		t->ran = 1;
		t->first_time = trace_time(f);
	}
	if (f->jitcode && jf_rec_jitcode_ran(f->jitcode, t->tid, t->traced, b->pc))
		f->jitcode = NULL; /* jit-code.txt cannot be created: its absence says so */
	t->traced += b->ninsns;
	t->has_pending = 1;
	t->pending = id;
	f->instructions += b->ninsns;
	f->untraced += b->ninsns;
	f->blocks_executed++;
}

void jf_etm_flow_execs(struct jf_etm_flow *f, int32_t tid, const uint32_t *ids, size_t n)
{
	struct jf_etm_thread *t = thread_of(f, tid);
	size_t i;

	if (!t)
		return;
	for (i = 0; i < n && !f->failed; i++)
		execute(f, t, ids[i]);
}

void jf_etm_flow_syscall(struct jf_etm_flow *f, int32_t tid, int64_t num,
			 const uint64_t args[6])
{
	struct jf_etm_thread *t = thread_of(f, tid);

	f->syscalls++;
	if (t) {
		t->call = num;
		memcpy(t->call_args, args, sizeof(t->call_args));
	}
	if (!t || !t->has_pending || f->blocks[t->pending].exit != JF_A64_EXIT_EXCEPTION)
		return;
	enter_thread(f, t, f->blocks[t->pending].pc);
	take_call(f, t);
}

void jf_etm_flow_syscall_ret(struct jf_etm_flow *f, int32_t tid, int64_t num, int64_t ret)
{
	struct jf_etm_thread *t = thread_of(f, tid);
	const uint64_t *a;
	int anon_exec;

	if (!t || t->call != num)
		return;
	t->call = -1;
	a = t->call_args;
	/* Anonymous executable memory: a JIT's code (mapped so, or made executable later). */
	anon_exec = (num == SYS_MMAP && ret >= 0 && (a[2] & PROT_EXEC_BIT) &&
		     (a[3] & MAP_ANONYMOUS_BIT)) ||
		    (num == SYS_MPROTECT && ret == 0 && (a[2] & PROT_EXEC_BIT));
	if (anon_exec && f->filter) /* one that does not fit is counted in the filter */
		jf_rec_filter_anon_exec(f->filter, num == SYS_MMAP ? (uint64_t)ret : a[0], a[1]);
	if (anon_exec && f->jitcode &&
	    jf_rec_jitcode_add(f->jitcode, num == SYS_MMAP ? (uint64_t)ret : a[0], a[1]))
		f->jitcode_dropped++;
}

void jf_etm_flow_finish(struct jf_etm_flow *f)
{
	size_t i;

	/* The time the trace ends, before the last blocks of unended threads count as lost
	 * (the trace never shows them, so its clock does not either). A decoder that holds
	 * the last range until an element follows it (perf) has one. */
	jf_etm_timestamp(&f->etm, trace_time(f));
	jf_etm_align(&f->etm, trace_time(f));

	for (i = 0; i < f->nthreads; i++) {
		struct jf_etm_thread *t = &f->threads[i];

		if (!t->has_pending)
			continue;
		/* Ended by another thread's exit_group or by a signal somewhere in its last
		 * block: where it stopped is not known. */
		f->unended_threads++;
		f->lost_instructions += f->blocks[t->pending].ninsns;
		f->untraced -= f->blocks[t->pending].ninsns;
		t->has_pending = 0;
	}
	if (f->etm.failed)
		f->failed = 1;
}

static void on_translation(void *ctx, const struct jf_prec_translation *t, const uint8_t *bytes)
{
	jf_etm_flow_translation(ctx, t->id, t->pc, bytes, t->nbytes, t->ninsns);
}

static void on_execs(void *ctx, unsigned vcpu, int tid, const uint32_t *ids, size_t n)
{
	(void)vcpu; /* threads are told apart by their IDs */
	jf_etm_flow_execs(ctx, tid, ids, n);
}

static void on_syscall(void *ctx, const struct jf_prec_syscall *s, const char *string)
{
	(void)string;
	if (s->vcpu != JF_PREC_OTHER_PROCESS)
		jf_etm_flow_syscall(ctx, s->tid, s->num, s->args);
}

static void on_syscall_ret(void *ctx, const struct jf_prec_syscall_ret *r, const char *string)
{
	(void)string;
	if (r->vcpu != JF_PREC_OTHER_PROCESS)
		jf_etm_flow_syscall_ret(ctx, r->tid, r->num, r->ret);
}

void jf_etm_flow_callbacks(struct jf_etm_flow *f, struct jf_prec_callbacks *cb)
{
	memset(cb, 0, sizeof(*cb));
	cb->ctx = f;
	cb->translation = on_translation;
	cb->execs = on_execs;
	cb->syscall = on_syscall;
	cb->syscall_ret = on_syscall_ret;
}
