/* The fast Intel PT path returning blocks: the blocks pt_fast.c follows, turned
 * into the flow records libipt's block decoder returns through pt_decoder.c (with
 * end_on_call, end_on_jump and join_cache_splits).
 *
 * With those options libipt ends a block at every branch (direct calls and jumps
 * included), at the IP an event binds to and where the trace is needed; it also cuts
 * blocks where its block cache or a section ends, which join_cache_splits joins again.
 * The block cache of an emitting decoder ends blocks at direct jumps (pt_fast_blocks.h),
 * so each of its blocks is one of libipt's, except that one reaching the cache's length
 * limit (JF_FAST_CONTINUE) is joined here to the block after it, as join_cache_splits
 * joins libipt's.
 *
 * A record's offset is where libipt's query decoder is when the block decoder starts the
 * block: the start of the next packet it has not read (pt_fast.c's "stop"). Following
 * packets, a block is queued with the offset of the packet whose first bit (or IP) it
 * takes, or waits for the next stop (jf_fast_settle) when it starts after that. */
#include "pt_fast_internal.h"
#include "pt_fast_block_paths.h"
#include "pt_fast_short_packets.h"

#include "jitflow/insn.h"

/* Queue the block blk (its record's block), joined to the block queued just before if
 * that one stopped at the cache's length limit (goes_on: blk does too). Returns 0, or 1
 * if the queue is full (not modelled). Inline: called for every block returned, so that
 * its callers' blocks, made in registers from what the caches keep, are stored straight
 * into the record. */
static inline __attribute__((always_inline)) int emit_record_block(struct fast *f,
								    const struct jf_block *blk,
								    int goes_on, uint64_t offset)
{
	struct jf_flow *fl;
	struct jf_block *b;

	if (f->joinable && f->pending.n) {
		b = &f->pending.flows[f->pending.n - 1].u.block;
		if (b->next == blk->start && (uint64_t)b->ninsn + blk->ninsn <= UINT32_MAX) {
			b->last = blk->last;
			b->next = blk->next;
			b->ninsn += blk->ninsn;
			b->end = blk->end;
			b->last_size = blk->last_size;
			f->joinable = goes_on;
			return 0;
		}
	}
	fl = jf_fast_queue_flow(f, JF_FLOW_BLOCK, offset);
	if (!fl)
		return 1;
	fl->ip = blk->start;
	fl->u.block = *blk;
	f->joinable = goes_on;
	return 0;
}

/* The instructions [start, last] (ninsn of them) queued as emit_record_block queues a
 * block. */
static inline __attribute__((always_inline)) int emit_range(struct fast *f, uint64_t start,
							     uint64_t last, uint32_t ninsn,
							     enum jf_block_end end,
							     uint8_t last_size, int goes_on,
							     uint64_t offset)
{
	struct jf_block blk;

	memset(&blk, 0, sizeof(blk));
	blk.start = start;
	blk.last = last;
	blk.next = last + last_size;
	blk.ninsn = ninsn;
	blk.end = (uint8_t)end;
	blk.isa = (uint8_t)f->isa;
	blk.last_size = last_size;
	return emit_record_block(f, &blk, goes_on, offset);
}

/* The block b of the block cache, queued. */
static inline __attribute__((always_inline)) int emit_cached_block(struct fast *f,
								    const struct jf_fast_block *b,
								    uint64_t offset)
{
	return emit_range(f, b->start, b->last, b->ninsn,
			  jf_fast_block_end((enum jf_fast_end)b->end), b->last_size,
			  b->end == JF_FAST_CONTINUE, offset);
}

/* jf_fast_emit_block where the block may join the one before it or the queue is full:
 * apart, so that the common case saves fewer registers (a TIP takes it for the block
 * it ends: 13 instructions fewer per TIP on pt-latency.sh's buffer). */
static __attribute__((noinline)) int emit_block_rarely(struct fast *f,
							const struct jf_fast_block *b,
							uint64_t offset)
{
	return emit_cached_block(f, b, offset);
}

int jf_fast_emit_block(struct fast *f, const struct jf_fast_block *b, uint64_t offset)
{
	if (f->joinable || f->pending.n == f->pending.cap)
		return emit_block_rarely(f, b, offset);
	return emit_cached_block(f, b, offset);
}

/* The instructions of the straight block at start up to (not including) to, which lies
 * inside it: the block libipt ends where an event binds. */
static int emit_up_to(struct fast *f, uint64_t start, uint64_t to, uint64_t offset)
{
	struct jf_insn_info in;
	uint64_t ip = start, last = start;
	uint32_t n = 0;
	uint8_t size = 0, cls = JF_INSN_OTHER;

	while (ip < to) {
		if (jf_insn_at(f->insns, f->isa, ip, &in) < 0)
			return 1;
		last = ip;
		size = in.size;
		cls = in.cls;
		n++;
		ip += in.size;
	}
	if (ip != to)
		return 1; /* to is not an instruction's address */
	f->ip = to;
	return emit_range(f, start, last, n, jf_insn_class_to_end((enum jf_insn_class)cls), size,
			  0, offset);
}

int jf_fast_emit_walk(struct fast *f, uint64_t to, int has_to, int bind_branch, uint64_t offset)
{
	uint64_t n = 0;

	for (;;) {
		const struct jf_fast_block *b, *cached;

		if (has_to && f->ip == to)
			return 0;
		if (n >= MAX_WALK)
			return 1;
		cached = jf_fast_block_at(f->blocks, f->isa, f->ip, f->generation);
		b = jf_fast_changing_block(f, cached);
		/* Every block here is straight: to is inside it or not on it at all. (Up to to,
		 * the bytes of code that may change are not decoded ahead: the block decoder's.) */
		if (has_to && to > b->start && to <= b->last)
			return b != cached ? 1 : emit_up_to(f, b->start, to, offset);
		n += b->ninsn;
		switch ((enum jf_fast_end)b->end) {
		case JF_FAST_CONTINUE:
			if (jf_fast_emit_block(f, b, offset))
				return 1;
			f->ip = b->next;
			continue;
		case JF_FAST_JUMP:
			if (jf_fast_emit_block(f, b, offset))
				return 1;
			f->ip = b->target;
			continue;
		case JF_FAST_CALL:
			if (jf_fast_emit_block(f, b, offset))
				return 1;
			if (b->target != b->next)
				jf_fast_push_return(f, b->next);
			f->ip = b->target;
			continue;
		case JF_FAST_CALL_IND:
		case JF_FAST_COND:
		case JF_FAST_RETURN:
		case JF_FAST_INDIRECT:
		case JF_FAST_FAR:
		case JF_FAST_FAR_CALL:
			/* Needs trace: libipt errs unless the event binds to this branch. */
			if (!bind_branch || jf_fast_emit_block(f, b, offset))
				return 1;
			if (b->end == JF_FAST_CALL_IND)
				jf_fast_push_return(f, b->next);
			/* Where libipt expects tracing to resume (pt_blk_set_disable_resume_ip):
			 * after a call or a far call (a syscall, say); else nowhere. The other
			 * far branches (JF_FAST_FAR) include some that capstone and libipt may
			 * class differently (vmcall, ud2): an enable after one hands over. */
			f->resume_unsure = b->end == JF_FAST_FAR;
			f->ip = b->end == JF_FAST_CALL_IND || b->end == JF_FAST_FAR ||
				b->end == JF_FAST_FAR_CALL ? b->next : 0;
			return 0;
		default:
			return 1;
		}
	}
}

/* One block of a TNT payload, the first of (bits, nbits), stepped through alone: where no
 * cached path starts (a compressed return to an older call, a block that needs a TIP).
 * Returns 0 (*used: whether it took a bit), or 1 if not modelled. */
static int emit_tnt_step(struct fast *f, uint64_t bits, unsigned nbits, uint64_t offset,
			 int *used)
{
	const struct jf_fast_block *b = jf_fast_changing_block(
		f, jf_fast_block_at(f->blocks, f->isa, f->ip, f->generation));
	int taken = (int)((bits >> (nbits - 1)) & 1);

	*used = 0;
	if (jf_fast_emit_block(f, b, offset))
		return 1;
	switch ((enum jf_fast_end)b->end) {
	case JF_FAST_COND:
		f->ip = taken ? b->target : b->next;
		break;
	case JF_FAST_RETURN:
		/* A compressed return; a not-taken bit here is an error. */
		if (!taken || jf_fast_pop_return(f, &f->ip))
			return 1;
		break;
	case JF_FAST_CALL:
		if (b->target != b->next)
			jf_fast_push_return(f, b->next);
		/* fall through */
	case JF_FAST_JUMP:
		f->ip = b->target;
		return 0;
	case JF_FAST_CONTINUE:
		f->ip = b->next;
		return 0;
	default:
		return 1; /* needs a TIP, or bad code */
	}
	*used = 1;
	return 0;
}

/* The blocks of a cached path, queued as emit_tnt_step queues them one by one, and
 * its return-stack operations. *first: no bit of the packet was taken yet (the packet is
 * read with its first bit: later blocks start at the next stop). *idle: blocks in a row
 * that took no bit, before and after. Returns 0, or 1 if not modelled. */
static int emit_path(struct fast *f, const struct jf_block_path *p, uint64_t offset, int *first,
		     unsigned *idle)
{
	unsigned i;
	uint64_t ip;

	for (i = 0; i < p->nblocks; i++) {
		const struct jf_block blk = jf_path_block_record(p, i);

		if (emit_record_block(f, &blk, p->blocks[i].path_flags & JF_PATH_GOES_ON, offset))
			return 1;
		if (!(p->blocks[i].path_flags & JF_PATH_TOOK_BIT)) {
			/* Code that calls itself forever needs no trace: hand over, not loop. */
			if (++*idle > MAX_TIP_WALK)
				return 1;
			continue;
		}
		*idle = 0;
		if (*first)
			jf_fast_settle(f, offset);
		*first = 0;
	}
	for (i = 0; i < p->nops; i++) {
		if (p->pops & (1u << i))
			jf_fast_pop_return(f, &ip); /* a return pushed just before on the path */
		else
			jf_fast_push_return(f, jf_block_path_push(p, i));
	}
	f->ip = p->end;
	return 0;
}

/* The payload of the TNT-8 after the TNT-8 at offset, past PADs and CYCs (in a trace
 * with cycle counts one stands between most packets), into c->next_bits and
 * c->next_nbits; those 0 where another packet comes first, or the one at offset is a
 * TNT-64. Only a hint of the path cache's next lookup (jf_block_path_prefetch_next): a
 * wrong one costs a useless prefetch. */
static void see_next_tnt8(const struct fast *f, uint64_t offset, struct jf_block_paths *c)
{
	const uint8_t *t = f->cfg.trace;
	const uint64_t size = f->cfg.size;
	uint64_t at = offset + 1;

	c->next_nbits = 0;
	if (t[offset] == 0x02)
		return;
	for (;;) {
		at = past_pads(t, at, size);
		if (at >= size || (t[at] & 0x03) != 0x03)
			break;
		/* A CYC: its first byte says whether more follow (bit 2), each later one
		 * (bit 0). */
		if (t[at] & 0x04)
			while (++at < size && (t[at] & 0x01))
				;
		at++;
	}
	if (at < size && tnt8(t[at]))
		c->next_bits = tnt8_bits(t[at], &c->next_nbits);
}

int jf_fast_emit_tnt(struct fast *f, uint64_t bits, unsigned nbits, uint64_t offset)
{
	unsigned idle = 0; /* blocks in a row that took no bit */
	int first = 1, used;

	if (!nbits || !f->enabled || f->pend_fup || f->pend_mode || f->isa == JF_ISA_UNKNOWN)
		return 1;
	f->report.tnt_packets++;
	/* (Not while a stretch is decoded again: its blocks are the replay's own,
	 * pt_fast_optimism.c.) */
	if (!f->block_paths && !f->rolling)
		f->block_paths = jf_block_paths_new(f->blocks, BLOCK_PATH_CACHE_LOG2);
	if (f->block_paths)
		see_next_tnt8(f, offset, f->block_paths);
	while (nbits) {
		const struct jf_block_path *p =
			f->block_paths ? jf_block_path_at(f->block_paths, f->isa, f->ip,
							  f->generation, bits, nbits)
				       : NULL;

		if (p && p->nblocks) {
			if (emit_path(f, p, offset, &first, &idle))
				return 1;
			nbits -= p->used;
			continue;
		}
		if (emit_tnt_step(f, bits, nbits, offset, &used))
			return 1;
		if (!used) {
			if (++idle > MAX_TIP_WALK)
				return 1;
			continue;
		}
		idle = 0;
		nbits--;
		if (first)
			jf_fast_settle(f, offset);
		first = 0;
	}
	return 0;
}
