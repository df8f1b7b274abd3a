/* Signals known exactly (the plugin backend): the handlers the program installed with
 * rt_sigaction and the returns through rt_sigreturn, so that a block is a handler's entry
 * by what it is, not by "it does not follow from the block before" (which cannot tell a
 * signal that arrives right after an indirect jump, call or return from that branch going
 * to the handler).
 *
 * A block at an installed handler's address is a signal's delivery unless the block
 * before reaches it by a direct branch or by falling through. An indirect branch to a
 * handler's address (the program calling its own handler through a pointer) is taken for
 * a delivery too: a limit docs/recorder.md states. */
#include "record_internal.h"

#include <stdlib.h>
#include <string.h>

enum { SIG_DFL_OR_IGN = 1 }; /* handler values 0 (SIG_DFL) and 1 (SIG_IGN) run nothing */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void jf_rec_sigaction(struct jf_record_state *st, unsigned signum, uint64_t handler)
{
	unsigned i;

	if (signum == 0 || signum >= JF_RECORD_MAX_SIGNALS || handler <= SIG_DFL_OR_IGN)
		return;
	/* Every handler ever installed stays in the set: another thread's blocks reach the
	 * recorder up to a chunk later than this call, and may still show deliveries to a
	 * handler this call replaced. Sorted, for the lookup on the hot path. */
	for (i = 0; i < st->nhandler_set; i++)
		if (st->handler_set[i] == handler)
			return;
	if (st->nhandler_set == JF_RECORD_MAX_HANDLERS) {
		if (!st->handlers_dropped++)
			jf_rec_note(st, "more than %d distinct signal handlers: deliveries to the "
			     "others are found only where they do not follow the block before",
			     JF_RECORD_MAX_HANDLERS);
		return;
	}
	st->handler_set[st->nhandler_set++] = handler;
	qsort(st->handler_set, st->nhandler_set, sizeof(st->handler_set[0]), cmp_u64);
}

static int is_handler(const struct jf_record_state *st, uint64_t pc)
{
	unsigned lo = 0, hi = st->nhandler_set;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (st->handler_set[mid] == pc)
			return 1;
		if (st->handler_set[mid] < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

int jf_rec_cannot_follow(const struct jf_block *prev, uint64_t pc)
{
	switch (prev->exit) {
	case JF_EXIT_NONE:
		return pc != prev->next_ip && !(prev->last_is_rep && pc == prev->last_ip);
	case JF_EXIT_COND:
		return pc != prev->target && pc != prev->next_ip;
	case JF_EXIT_JUMP:
	case JF_EXIT_CALL:
		return pc != prev->target;
	default:
		return 0;
	}
}

/* Whether prev's exit can lead anywhere (indirect branches, returns, system calls and
 * faults), so that only the address of the block after it can say it is a handler's. */
static int leads_anywhere(const struct jf_block *prev)
{
	return prev->exit == JF_EXIT_IND_JUMP || prev->exit == JF_EXIT_IND_CALL ||
	       prev->exit == JF_EXIT_RET || prev->exit == JF_EXIT_SYSCALL ||
	       prev->exit == JF_EXIT_FAULT;
}

/* The block thread t ran last, as far as its stream goes: the last one waiting for a
 * handler's return, else the last one written; NULL when there is none to follow. */
static const struct jf_block *last_block(const struct jf_record_thread *t)
{
	if (t->deferring && t->ndeferred)
		return &t->deferred[t->ndeferred - 1].block;
	if (t->deferring)
		return &t->defer_from;
	return t->have_prev ? &t->prev : NULL;
}

void jf_rec_exact_signal(struct jf_record_state *st, struct jf_record_thread *t, uint64_t pc)
{
	const struct jf_block *last = last_block(t);
	int after_sigreturn = t->sigreturned;

	t->sigreturned = 0;
	if (!last)
		return;
	if (is_handler(st, pc) && (leads_anywhere(last) || jf_rec_cannot_follow(last, pc))) {
		st->signals++;
		t->handler_entries++;
		if (t->deferring) {
			/* Delivered as a handler returned: its frame resumes where the returned
			 * one would have, so the thread still waits for that place. */
			if (after_sigreturn)
				return;
			/* A signal inside a handler. Over a block whose exit is known, the
			 * replay writes it exactly; else the outer wait is given up. */
			if (!jf_rec_unknown_successor(last)) {
				t->handler_depth++;
				return;
			}
			jf_rec_replay_deferred(st, t, 0, 0);
		}
		if (jf_rec_unknown_successor(&t->prev))
			t->signal_arrived = 1; /* jf_rec_exec_block waits for the return */
		return;
	}
	if (after_sigreturn && t->deferring) {
		if (t->handler_depth) {
			t->handler_depth--; /* back in the outer handler */
			return;
		}
		/* rt_sigreturn resumed the thread where the signal took it away. */
		if (t->defer_from.exit == JF_EXIT_COND && pc != t->defer_from.target &&
		    pc != t->defer_from.next_ip)
			jf_rec_replay_deferred(st, t, 0, 0);
		else
			jf_rec_replay_deferred(st, t, pc, 1);
		return;
	}
	if (!t->deferring && jf_rec_cannot_follow(last, pc)) {
		/* Not at a handler, yet not where the block before leads: something the
		 * program's system calls did not show. Written as an interruption. */
		st->signals++;
		st->unexplained_transfers++;
		t->signal_arrived = 1;
	}
}
