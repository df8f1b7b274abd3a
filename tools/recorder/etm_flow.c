#include "etm_flow.h"

#include <stdlib.h>
#include <string.h>

#include "pt_stream.h"

/* AArch64 Linux system calls (asm-generic/unistd.h) and mmap flags that --filter=jit
 * follows. */
enum { SYS_MMAP = 222, SYS_MPROTECT = 226, PROT_EXEC_BIT = 4, MAP_ANONYMOUS_BIT = 0x20 };
enum { SYS_EXIT = 93, SYS_EXIT_GROUP = 94, SYS_RT_SIGRETURN = 139 };
/* Blocks a thread may hold while it waits for a handler's return (bounded memory); past
 * that the wait is given up. */
enum { MAX_HELD_BLOCKS = 1 << 20 };
enum { SIG_DFL_OR_IGN = 1 }; /* handler values 0 (SIG_DFL) and 1 (SIG_IGN) run nothing */

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
	for (size_t i = 0; i < f->nthreads; i++)
		free(f->threads[i].held);
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

static int is_handler(const struct jf_etm_flow *f, uint64_t pc)
{
	unsigned i;

	for (i = 0; i < f->nhandlers; i++)
		if (f->handler_set[i] == pc)
			return 1;
	return 0;
}

/* The clock where the trace is: the instructions it showed so far (not those an
 * Overflow hid). */
static uint64_t trace_time(const struct jf_etm_flow *f)
{
	return jf_pt_perf_time(f->instructions - f->untraced - f->hidden);
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
	/* A handler's entry is a signal's delivery, written exactly where the interrupted
	 * address is known (after a fall-through, a direct branch or a system call). */
	if (!is_handler(f, next))
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

/* Thread t ran block id (a known translation). */
static void run_block(struct jf_etm_flow *f, struct jf_etm_thread *t, uint32_t id)
{
	const struct jf_a64_block *b = &f->blocks[id];
	int at_waypoint = 1;

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

/* ---- signals delivered where the next block cannot say where the thread was ----
 *
 * QEMU delivers a signal between two blocks. After a conditional or indirect branch, the
 * handler's first block does not say where the branch went (= where the signal
 * interrupted the thread): the handler's rt_sigreturn resumes there. Until then the
 * thread's blocks are held; then the branch's atom (and address), the Exception at the
 * resumption address and the held blocks are written in order. A handler that does not
 * return (siglongjmp, the thread's end): after an indirect branch its target never ran,
 * and the branch is written as the trace leaving (an E atom without an address, as when
 * it leaves the IP filter); after a conditional branch the trace unit could not have
 * known the direction, so it writes an Overflow, and what ran since the last waypoint
 * is lost (counted). */

static void replay_held(struct jf_etm_flow *f, struct jf_etm_thread *t)
{
	size_t i, n = t->nheld;

	t->nheld = 0;
	for (i = 0; i < n && !f->failed; i++)
		run_block(f, t, t->held[i]);
}

/* The handler did not return where the thread's blocks could show it. */
static void give_up(struct jf_etm_flow *f, struct jf_etm_thread *t)
{
	const struct jf_a64_block *p = &f->blocks[t->pending];

	t->deferring = 0;
	t->handler_depth = 0;
	enter_thread(f, t, p->pc);
	if (p->exit == JF_A64_EXIT_INDIRECT) {
		jf_etm_atom(&f->etm, 1);
		f->target_never_ran++;
	} else {
		size_t at = jf_etm_overflow(&f->etm);

		if (!f->overflows++) {
			f->first_overflow_offset = at;
			f->first_overflow_pc = p->pc;
		}
		f->lost_instructions += t->unended + p->ninsns;
		f->hidden += t->unended + p->ninsns;
	}
	waypoint_done(f, t);
	f->current = NULL;
	replay_held(f, t);
}

/* rt_sigreturn resumed thread t (waiting since the pending block's branch) at resume. */
static void resume(struct jf_etm_flow *f, struct jf_etm_thread *t, uint64_t resume_at)
{
	const struct jf_a64_block *p = &f->blocks[t->pending];
	int cond = p->exit == JF_A64_EXIT_COND;

	if (cond && resume_at != p->target && resume_at != p->end) {
		give_up(f, t); /* not a place the branch leads: the frame was changed */
		return;
	}
	t->deferring = 0;
	t->handler_depth = 0;
	enter_thread(f, t, p->pc);
	/* A branch to the next instruction shows as taken. */
	jf_etm_atom(&f->etm, !cond || resume_at == p->target);
	if (!f->filter || jf_rec_filter_has(f->filter, resume_at)) {
		if (!cond)
			jf_etm_address(&f->etm, resume_at);
		jf_etm_exception(&f->etm, JF_ETM_EXC_IRQ, resume_at, JF_ETM_VECTOR_IRQ);
		waypoint_done(f, t); /* the branch's block is on the clock the Timestamp says */
		exception_time(f);
	}
	waypoint_done(f, t);
	f->current = NULL;
	f->signals_resolved++;
	replay_held(f, t);
}

/* Hold block id of a waiting thread; 0 when it cannot be held (the wait is given up). */
static int hold(struct jf_etm_flow *f, struct jf_etm_thread *t, uint32_t id)
{
	if (t->nheld >= MAX_HELD_BLOCKS ||
	    grow((void **)&t->held, &t->held_cap, t->nheld + 1, sizeof(*t->held))) {
		give_up(f, t);
		return 0;
	}
	t->held[t->nheld++] = id;
	return 1;
}

/* Block p does not lead to pc by falling through or a direct branch: a block at pc that
 * is a handler's is a signal's delivery. */
static int not_led_to(const struct jf_a64_block *p, uint64_t pc)
{
	switch (p->exit) {
	case JF_A64_EXIT_NONE:
		return pc != p->end;
	case JF_A64_EXIT_DIRECT:
		return pc != p->target;
	case JF_A64_EXIT_COND:
		return pc != p->target && pc != p->end;
	default:
		return 1;
	}
}

static int unknown_successor(const struct jf_a64_block *p)
{
	return p->exit == JF_A64_EXIT_COND || p->exit == JF_A64_EXIT_INDIRECT;
}

/* The signal bookkeeping of thread t's next block id. Returns 1 when the block is held. */
static int follow_signals(struct jf_etm_flow *f, struct jf_etm_thread *t, uint32_t id)
{
	const struct jf_a64_block *b = &f->blocks[id];
	const struct jf_a64_block *last = t->last ? &f->blocks[t->last] : NULL;
	uint32_t last_id = t->last;
	int after_sigreturn = t->sigreturned;
	int entry = last && is_handler(f, b->pc) && not_led_to(last, b->pc);

	t->sigreturned = 0;
	t->last = id;
	if (entry)
		f->handler_entries++;
	if (t->deferring) {
		if (after_sigreturn && !entry) {
			if (!t->handler_depth) {
				resume(f, t, b->pc);
				return 0;
			}
			t->handler_depth--; /* back in the outer handler */
			return hold(f, t, id);
		}
		/* A delivery as a handler returns resumes where the returned frame would
		 * have: the wait goes on. */
		if (!entry || after_sigreturn)
			return hold(f, t, id);
		/* A signal inside the handler: over a block whose exit is known it is
		 * written exactly when the held blocks are; else the outer wait ends. */
		if (!unknown_successor(last)) {
			t->handler_depth++;
			return hold(f, t, id);
		}
		give_up(f, t);
	}
	if (entry && t->has_pending && t->pending == last_id && unknown_successor(last)) {
		t->deferring = 1;
		t->handler_depth = 0;
		t->nheld = 0;
		return hold(f, t, id);
	}
	return 0;
}

static void execute(struct jf_etm_flow *f, struct jf_etm_thread *t, uint32_t id)
{
	if (id >= f->nblocks || !f->known[id]) {
		f->unknown_ids++;
		return;
	}
	if (!follow_signals(f, t, id))
		run_block(f, t, id);
}

void jf_etm_flow_sigaction(struct jf_etm_flow *f, uint64_t handler)
{
	unsigned i;

	if (handler <= SIG_DFL_OR_IGN)
		return;
	/* Every handler ever installed stays: another thread's blocks may still show
	 * deliveries to one this call replaced. */
	for (i = 0; i < f->nhandlers; i++)
		if (f->handler_set[i] == handler)
			return;
	if (f->nhandlers == JF_ETM_MAX_HANDLERS)
		f->handlers_dropped++;
	else
		f->handler_set[f->nhandlers++] = handler;
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
	if (t && num == SYS_RT_SIGRETURN)
		t->sigreturned = 1;
	/* The thread ends inside a handler that never returned: its blocks go out now,
	 * before the exit's system call ends the last one. */
	if (t && t->deferring && (num == SYS_EXIT || num == SYS_EXIT_GROUP))
		give_up(f, t);
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

	for (i = 0; i < f->nthreads; i++)
		if (f->threads[i].deferring)
			give_up(f, &f->threads[i]);
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
	if (s->vcpu == JF_PREC_OTHER_PROCESS)
		return;
	if (s->num == JF_A64_SYS_RT_SIGACTION && s->string_len == JF_PREC_SIGACTION_SIZE) {
		uint64_t handler;

		memcpy(&handler, string, sizeof(handler));
		jf_etm_flow_sigaction(ctx, handler);
	}
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
