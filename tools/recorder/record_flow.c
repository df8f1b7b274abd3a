/* Consecutive blocks of a thread -> PT packets: branches, system calls, blocks QEMU stopped
 * before running them, and signals (see record_state.h). */
#include "record_filter.h"
#include "record_internal.h"
#include "record_code_changes.h"
#include "record_jitcode.h"

#include <stdlib.h>
#include <string.h>

/* Whether the block at pc is traced (inside the IP filter, or no filter). */
static int inside(struct jf_record_state *st, uint64_t pc)
{
	return !st->filter || jf_rec_filter_has(st->filter, pc);
}

/* The instructions a decoder never counts when an OVF follows the thread's last block:
 * with the OVF pending after the last branch the trace told it about, the decoder stops
 * there, so it skips the whole run of straight-line blocks that the last block ends (a
 * direct jump or call before it included), not only that block. */
static uint64_t hidden_by_overflow(const struct jf_record_thread *t)
{
	return t->prev_inside ? t->traced - t->straight_from : 0;
}

/* Something happened between prev and the block at pc that the log does not show (a
 * signal delivered between blocks). known_ip: where the thread was interrupted, or 0.
 * in: pc is inside the IP filter. */
static void interruption(struct jf_record_thread *t, uint64_t known_ip, uint64_t pc, int in)
{
	static const char *const kinds[] = { "no branch", "conditional branch", "jump", "call",
					     "indirect jump", "indirect call", "return",
					     "system call", "faulting instruction" };
	struct jf_record_state *st = t->owner;

	if (!known_ip && st->interruptions_noted++ < 8)
		jf_rec_note(st, "thread %d: after the block at %#llx (ends with a %s at %#llx) came %#llx: "
		     "%s at PT offset %llu", t->tid, (unsigned long long)t->prev.pc,
		     kinds[t->prev.exit < 9 ? t->prev.exit : 8], (unsigned long long)t->prev.last_ip,
		     (unsigned long long)pc, in ? "direction unknown, reported as an overflow (OVF)" :
		     "direction unknown, outside the IP filter: tracing stops at that branch "
		     "(TIP.PGD without an IP)", (unsigned long long)t->pt->stats.bytes);
	if (known_ip) {
		jf_pt_async_disable(t->pt, known_ip);
		if (in)
			jf_pt_enable(t->pt, pc);
		t->async_events++;
	} else if (in) {
		jf_pt_overflow(t->pt, pc);
		t->lost_events++;
		t->hidden += hidden_by_overflow(t);
	} else {
		/* A decoder binds a TIP.PGD without an IP to the next branch that needs
		 * trace: the branch whose direction is unknown. */
		jf_pt_disable(t->pt);
		t->async_events++;
	}
}

/* The packets for leaving prev and arriving at pc. Returns 1 when the block at pc only
 * continues prev's last instruction (a rep string operation's next iteration).
 * With an IP filter: a block outside writes nothing; the first one back inside a
 * TIP.PGE; a branch from inside to outside (in = 0) only a TIP.PGD with its target. */
static int transition(struct jf_record_thread *t, const struct jf_block *prev, uint64_t pc,
		      int in)
{
	struct jf_pt_stream *pt = t->pt;

	if (prev->exit == JF_EXIT_NONE && pc != prev->next_ip && prev->last_is_rep &&
	    pc == prev->last_ip)
		return 1;
	if (!t->prev_inside) {
		if (in)
			jf_pt_enable(pt, pc);
		return 0;
	}
	switch (prev->exit) {
	case JF_EXIT_NONE:
		if (pc != prev->next_ip)
			interruption(t, prev->next_ip, pc, in);
		else if (!in)
			jf_pt_filter_disable(pt, pc);
		return 0;
	case JF_EXIT_COND:
		if (pc != prev->target && pc != prev->next_ip)
			interruption(t, 0, pc, in); /* which way it went is unknown */
		else if (!in)
			jf_pt_filter_disable(pt, pc);
		else
			jf_pt_cond(pt, pc == prev->target);
		return 0;
	case JF_EXIT_JUMP:
		if (pc != prev->target)
			interruption(t, prev->target, pc, in);
		else if (!in)
			jf_pt_filter_disable(pt, pc);
		return 0;
	case JF_EXIT_CALL:
		if (pc == prev->target && !in) {
			jf_pt_filter_disable(pt, pc);
			return 0;
		}
		jf_pt_call(pt, prev->next_ip);
		if (pc != prev->target)
			interruption(t, prev->target, pc, in);
		return 0;
	case JF_EXIT_IND_CALL:
		if (!in) {
			jf_pt_filter_disable(pt, pc);
			return 0;
		}
		jf_pt_call(pt, prev->next_ip);
		jf_pt_indirect(pt, pc);
		return 0;
	case JF_EXIT_IND_JUMP:
		if (in)
			jf_pt_indirect(pt, pc);
		else
			jf_pt_filter_disable(pt, pc);
		return 0;
	case JF_EXIT_RET:
		if (in)
			jf_pt_return(pt, pc);
		else
			jf_pt_filter_disable(pt, pc);
		return 0;
	case JF_EXIT_SYSCALL:
		/* Into the kernel and back: to the next instruction, or to a signal handler,
		 * or (rt_sigreturn) to wherever the signal interrupted the thread. */
		jf_pt_disable(pt);
		if (in)
			jf_pt_enable(pt, pc);
		return 0;
	case JF_EXIT_FAULT:
	default:
		interruption(t, prev->last_ip, pc, in);
		return 0;
	}
}

/* Whether the block at pc follows prev without a branch the trace shows (a decoder's
 * block goes on through it: libipt's block decoder follows direct jumps and calls). */
static int straight_on(const struct jf_block *prev, uint64_t pc)
{
	switch (prev->exit) {
	case JF_EXIT_NONE:
		return pc == prev->next_ip || (prev->last_is_rep && pc == prev->last_ip);
	case JF_EXIT_JUMP:
	case JF_EXIT_CALL:
		return pc == prev->target;
	default:
		return 0;
	}
}

/* One block of thread t, at pc, in order: the packets for getting there, then its clock. */
static void run_block(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc,
		      const struct jf_block *b)
{
	uint64_t ninsn;
	int in = inside(st, pc);

	jf_pt_advance(t->pt, st->clock);
	if (!t->started) {
		if (in)
			jf_pt_enable(t->pt, pc);
		t->started = 1;
	} else if (!t->have_prev) {
		/* after a block we could not classify */
		if (in)
			jf_pt_overflow(t->pt, pc);
		else
			jf_pt_overflow_outside(t->pt);
		t->lost_events++;
	}
	if (!b) {
		/* QEMU never showed this block's bytes: its exit cannot be classified. */
		st->unknown_blocks++;
		t->have_prev = 0;
		return;
	}
	ninsn = b->ninsn;
	if (st->fork_resume_ip && t->have_prev && t->prev.exit == JF_EXIT_SYSCALL &&
	    pc == st->fork_resume_ip && ++st->fork_resumptions == 2) {
		st->fork_mixed++;
		jf_rec_note(st, "thread %d: between instruction clock %llu and %llu its stream holds the "
		     "blocks of both the parent and the child of a fork (QEMU logs both as one CPU; "
		     "they cannot be separated)", t->tid, (unsigned long long)st->fork_clock,
		     (unsigned long long)st->clock);
		st->fork_resume_ip = 0;
	}
	if (t->resume_at_last) {
		/* The block logged last did not run. If it is this one, the thread simply
		 * runs it now; if not, something (a signal) took the thread away from it. */
		t->resume_at_last = 0;
		if (pc != t->last_pc)
			interruption(t, t->last_pc, pc, in);
	} else if (t->have_prev && transition(t, &t->prev, pc, in) && ninsn) {
		ninsn--;
	}
	t->last_pc = pc;
	t->last_ninsn = (uint32_t)ninsn;
	if (st->marker_addr && pc == st->marker_addr) {
		/* The zone emitter's marker call: its time dates the thread's next zone record
		 * (zone_copy.c). Optionally also a PTW packet; QEMU's log does not show the
		 * sequence number argument, so its payload is the call's ordinal on the thread. */
		st->marker_calls++;
		t->marker_calls++;
		if (t->nmarker_times == t->marker_times_cap) {
			size_t cap = t->marker_times_cap ? t->marker_times_cap * 2 : 64;
			uint64_t *n = realloc(t->marker_times, cap * sizeof(*n));

			if (n) {
				t->marker_times = n;
				t->marker_times_cap = cap;
			}
		}
		if (t->nmarker_times < t->marker_times_cap)
			t->marker_times[t->nmarker_times++] = jf_pt_perf_time(st->clock);
		if (st->marker_ptw)
			jf_pt_ptwrite(t->pt, t->marker_calls);
	}
	jf_rec_jitcode_exec(st, t, pc);
	if (!t->have_prev || !t->prev_inside || !straight_on(&t->prev, pc))
		t->straight_from = t->traced;
	if (in)
		jf_rec_code_ran(st, t, b, t->straight_from - t->hidden);
	jf_pt_boundary(t->pt, pc);
	st->clock += ninsn;
	t->instructions += ninsn;
	if (in) {
		t->traced += ninsn;
		st->traced += ninsn;
	}
	t->prev_inside = in;
	t->prev = *b;
	t->have_prev = 1;
}

/* ---- signals that interrupt a thread where the log cannot say ----
 *
 * QEMU delivers a signal between two blocks. When the block before ended with a
 * conditional or indirect branch, where that branch went (= where the signal interrupted
 * the thread) only shows when the handler returns: rt_sigreturn resumes there. Until then
 * the thread's blocks wait here (memory bounded by the handler's length, capped); then
 * the branch, the FUP + TIP.PGD of the interruption and the handler's blocks are written
 * in order. */

enum { MAX_DEFERRED_BLOCKS = 1 << 20 };

int jf_rec_unknown_successor(const struct jf_block *b)
{
	return b->exit == JF_EXIT_COND || b->exit == JF_EXIT_IND_JUMP ||
	       b->exit == JF_EXIT_IND_CALL || b->exit == JF_EXIT_RET;
}

void jf_rec_replay_deferred(struct jf_record_state *st, struct jf_record_thread *t,
			    uint64_t resume, int resolved)
{
	const struct jf_block *from = &t->defer_from;
	size_t i;

	if (resolved && !t->prev_inside) {
		/* The interrupted block was outside the IP filter: nothing to write. */
		t->have_prev = 0;
		t->started = 0;
	} else if (resolved && !inside(st, resume)) {
		jf_pt_filter_disable(t->pt, resume);
		t->async_events++;
		t->have_prev = 0;
		t->started = 0;
	} else if (resolved) {
		switch (from->exit) {
		case JF_EXIT_COND:
			jf_pt_cond(t->pt, resume == from->target);
			break;
		case JF_EXIT_IND_CALL:
			jf_pt_call(t->pt, from->next_ip);
			jf_pt_indirect(t->pt, resume);
			break;
		case JF_EXIT_RET:
			jf_pt_return(t->pt, resume);
			break;
		default:
			jf_pt_indirect(t->pt, resume);
			break;
		}
		jf_pt_async_disable(t->pt, resume);
		t->async_events++;
		t->have_prev = 0;
		t->started = 0; /* the handler's first block re-enables tracing */
		t->pt->enabled = 0;
	} else if (st->exact_signals && from->exit != JF_EXIT_COND) {
		/* The handler did not return (a longjmp out of it, or the thread's end): the
		 * indirect branch's target was never run and is not known. The branch is
		 * written as leaving the traced context (TIP.PGD without an IP), which
		 * decoders follow without a loss: no instruction is missing. */
		if (from->exit == JF_EXIT_IND_CALL)
			jf_pt_call(t->pt, from->next_ip);
		jf_pt_disable(t->pt);
		st->signals_target_unknown++;
		if (st->interruptions_noted++ < 8)
			jf_rec_note(st, "thread %d: a signal interrupted the block at %#llx right after "
			     "its indirect branch and the handler did not return: the branch is "
			     "written as leaving the traced context (its target never ran)", t->tid,
			     (unsigned long long)from->pc);
		t->have_prev = 0;
		t->started = 0; /* the handler's first block re-enables tracing */
	} else {
		t->have_prev = 0; /* an OVF before the handler: where it interrupted is lost */
		t->hidden += hidden_by_overflow(t);
		st->signals_lost++;
		if (st->interruptions_noted++ < 8)
			jf_rec_note(st, "thread %d: a signal interrupted the block at %#llx and the "
			     "handler did not return where the log could see it: reported as an "
			     "overflow (OVF)", t->tid, (unsigned long long)from->pc);
	}
	t->deferring = 0;
	t->handler_depth = 0;
	for (i = 0; i < t->ndeferred; i++) {
		run_block(st, t, t->deferred[i].pc, &t->deferred[i].block);
	}
	t->ndeferred = 0;
}

/* Queue a block of a deferring thread; resolve when rt_sigreturn's resumption shows. */
static void defer_block(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc,
			const struct jf_block *b)
{
	const struct jf_block *from = &t->defer_from;

	if (t->ndeferred > 0 && !st->exact_signals) {
		const struct jf_deferred *last = &t->deferred[t->ndeferred - 1];

		/* After a system call, a block that is not the call's next instruction is a
		 * return from the signal (or a nested signal's handler: ruled out for
		 * conditional branches by their two possible targets). */
		if (last->block.exit == JF_EXIT_SYSCALL && pc != last->block.next_ip &&
		    (from->exit != JF_EXIT_COND || pc == from->target || pc == from->next_ip)) {
			jf_rec_replay_deferred(st, t, pc, 1);
			run_block(st, t, pc, b);
			return;
		}
	}
	if (!b || t->ndeferred >= MAX_DEFERRED_BLOCKS) {
		jf_rec_replay_deferred(st, t, 0, 0);
		run_block(st, t, pc, b);
		return;
	}
	if (t->ndeferred == t->deferred_cap) {
		size_t cap = t->deferred_cap ? t->deferred_cap * 2 : 256;
		struct jf_deferred *n = realloc(t->deferred, cap * sizeof(*n));

		if (!n) {
			jf_rec_replay_deferred(st, t, 0, 0);
			run_block(st, t, pc, b);
			return;
		}
		t->deferred = n;
		t->deferred_cap = cap;
	}
	t->deferred[t->ndeferred].pc = pc;
	t->deferred[t->ndeferred].block = *b;
	t->ndeferred++;
}

void jf_rec_on_exec(void *ctx, const struct jf_qlog_exec *e)
{
	struct jf_record_state *st = ctx;

	jf_rec_exec_block(st, e, jf_block_map_executed(st->blocks, e->pc, e->flags, e->cflags));
}

void jf_rec_exec_block(struct jf_record_state *st, const struct jf_qlog_exec *e,
		       const struct jf_block *b)
{
	struct jf_record_thread *t = jf_rec_thread_for(st, e->cpu);

	if (!t)
		return;
	st->last_exec_cpu = e->cpu;
	t->last_exec_seq = ++st->exec_seq;
	st->blocks_executed++;
	t->blocks++;
	if (st->layout_state != 2)
		jf_rec_follow_loader(st, t, e->pc);
	if (t->deferring) {
		defer_block(st, t, e->pc, b);
		return;
	}
	if (t->signal_arrived) {
		t->signal_arrived = 0;
		if (!t->resume_at_last && t->have_prev && jf_rec_unknown_successor(&t->prev) && b) {
			t->deferring = 1;
			t->defer_from = t->prev;
			t->ndeferred = 0;
			defer_block(st, t, e->pc, b);
			return;
		}
	}
	run_block(st, t, e->pc, b);
}

void jf_rec_on_stopped(void *ctx, uint64_t pc)
{
	struct jf_record_state *st = ctx;
	struct jf_record_thread *t = NULL;
	unsigned i;

	/* The thread that logged it last is the likeliest one; else any that is at pc. */
	if (st->last_exec_cpu < st->cpu_cap && st->by_cpu[st->last_exec_cpu] &&
	    st->by_cpu[st->last_exec_cpu]->last_pc == pc)
		t = st->by_cpu[st->last_exec_cpu];
	for (i = 0; !t && i < st->cpu_cap; i++)
		if (st->by_cpu[i] && st->by_cpu[i]->last_pc == pc && !st->by_cpu[i]->resume_at_last)
			t = st->by_cpu[i];
	if (!t || t->resume_at_last)
		return;
	if (t->deferring) {
		/* A queued block that did not run: it will be logged again when it does. */
		if (t->ndeferred && t->deferred[t->ndeferred - 1].pc == pc)
			t->ndeferred--;
		return;
	}
	/* Take back what the block was counted for; the branch that led to it stays. */
	st->clock -= t->last_ninsn;
	t->instructions -= t->last_ninsn;
	if (t->prev_inside) {
		t->traced -= t->last_ninsn;
		st->traced -= t->last_ninsn;
	}
	t->resume_at_last = 1;
	st->stopped_blocks++;
}

void jf_rec_on_translation(void *ctx, uint64_t pc, const uint8_t *bytes, size_t size)
{
	struct jf_record_state *st = ctx;

	jf_block_map_translated(st->blocks, pc, bytes, size);
	jf_rec_jitcode_translation(st, pc, bytes, size);
	jf_rec_code_translated(st, pc, st->translation_id, bytes, size);
}

void jf_rec_on_signal(void *ctx, const char *name)
{
	struct jf_record_state *st = ctx;

	(void)name;
	st->signals++;
	/* QEMU prints it while setting up the handler on the receiving thread, which is
	 * (nearly always) the one that logged last. */
	if (st->last_exec_cpu < st->cpu_cap && st->by_cpu[st->last_exec_cpu])
		st->by_cpu[st->last_exec_cpu]->signal_arrived = 1;
}
