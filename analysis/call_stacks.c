/* Call stacks (jitflow/call_stacks.h), a listener of the analysis events: per thread a
 * shadow stack of frames, moved by the blocks' ends (a call pushes, a return pops the frame
 * it returns to) and by signal deliveries; each frame is a row of the table of distinct
 * stacks (call_stack_table.h), which counts what ran on it. */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "call_stack_spans.h"
#include "call_stack_table.h"

/* A frame of a thread's shadow stack. */
struct frame {
	uint64_t ret;          /* where a return to the frame below lands; for a [signal]
	                        * frame, where the interrupted code resumes */
	uint32_t row;          /* the stack with this frame on top */
	int32_t entry_region;  /* the region the frame was entered in (-1: none) */
	int32_t cur_region;    /* the region its code ran in last (-1: none) */
	uint8_t kind;          /* enum jf_frame_kind */
	uint8_t handler;       /* a signal handler's frame: it returns to the signal
	                        * trampoline, to no address of a frame */
};

enum pending {
	PENDING_NONE = 0,
	PENDING_CALL,          /* the last block ended in a call: the next block is the callee */
	PENDING_RETURN,        /* ... in a return: the next block is where it went */
	PENDING_HANDLER,       /* a signal was delivered: the next block is its handler */
};

struct thread_stack {
	int32_t tid;
	struct frame frames[JF_CALL_STACKS_DEPTH_MAX];
	uint32_t depth;
	uint32_t excess;       /* calls made beyond the depth cap, not yet returned */
	uint8_t pending;       /* enum pending */
	uint8_t known;         /* the stack has a bottom (it restarts after lost track) */
	uint8_t lost;          /* restart below [unknown] */
	uint64_t pending_ret;  /* PENDING_CALL: the call's return address */
	uint32_t leaf;         /* the stack the thread's last block ran on (JF_NO_STACK: none) */
	/* Where the thread resumes when tracing comes back: after a system call, or where an
	 * asynchronous disable (a signal's FUP + TIP.PGD) interrupted it; 0: not known. */
	uint64_t resume_at;
	uint64_t last_next;    /* the instruction after the last block (0: not known) */
	uint8_t last_far;      /* the last block ended in a far transfer (a system call) */
	int has_time;
	uint64_t last_time;
	/* The block being counted, in a region with a code-object pc map: its instructions go
	 * to guest-function frames over its leaf as the pc map attributes them, the rest (before
	 * the map's first entry) to the leaf itself. */
	uint8_t in_guest;
	uint32_t block_insns, guest_insns;
	uint32_t region_leaf;  /* the leaf under the guest frames */
	uint32_t guest;        /* the guest frame's stack the thread ran on last (JF_NO_STACK:
	                        * none) */
	/* The last guest frame's stack looked up, by its region leaf, chain and code object
	 * (a block's runs meet the same few again and again). */
	uint32_t memo_region_leaf, memo_chain, memo_row;
	uint64_t memo_code_object;
	uint64_t block_pos;    /* the block's first instruction among all analysed */
	/* The thread's track, along the trace's clock and along instructions. */
	struct jf_stack_span_builder by_time, by_insns;
};


struct call_stacks {
	struct jf_call_stacks_result r;  /* counts and notes (its stacks are the table's) */
	struct call_stack_table stacks;
	struct thread_stack **threads;
	size_t nthreads, threads_cap;
	size_t cur;
	struct thread_stack *counting;  /* the thread whose block is being counted */
};

static struct thread_stack *thread_of(struct call_stacks *cs, int32_t tid)
{
	struct thread_stack *t;
	size_t i;

	if (cs->cur < cs->nthreads && cs->threads[cs->cur]->tid == tid)
		return cs->threads[cs->cur];
	for (i = 0; i < cs->nthreads; i++)
		if (cs->threads[i]->tid == tid)
			return cs->threads[cs->cur = i];
	if (jf_grow((void **)&cs->threads, &cs->threads_cap, cs->nthreads, sizeof(*cs->threads)) < 0 ||
	    !(t = calloc(1, sizeof(*t))))
		return NULL;
	t->tid = tid;
	t->leaf = JF_NO_STACK;
	t->guest = JF_NO_STACK;
	t->memo_region_leaf = JF_NO_STACK;
	cs->threads[cs->nthreads] = t;
	cs->cur = cs->nthreads++;
	return t;
}

static void note(struct call_stacks *cs, const struct thread_stack *t, enum jf_call_stacks_note_kind kind,
		 uint64_t ip, uint64_t offset, uint32_t frames)
{
	struct jf_call_stacks_note *n;

	if (cs->r.nnotes >= JF_CALL_STACKS_NOTES_MAX)
		return;
	n = &cs->r.notes[cs->r.nnotes++];
	n->kind = kind;
	n->tid = t->tid;
	n->ip = ip;
	n->offset = offset;
	n->has_time = t->has_time;
	n->time = t->last_time;
	n->frames = frames;
}

/* Add a span to a thread's track; past JF_STACK_TRACK_SPANS_MAX spans, the track's
 * resolution doubles (from the average span's length) so that it stays bounded. */
static int track(struct call_stacks *cs, struct jf_stack_span_builder *b, uint64_t start,
		 uint64_t end, uint32_t stack)
{
	if (jf_stack_spans_add(b, cs->stacks.rows, start, end, stack) < 0)
		return -1;
	while (b->n >= JF_STACK_TRACK_SPANS_MAX) {
		uint64_t avg = (b->v[b->n - 1].end - b->v[0].start) / b->n;

		jf_stack_spans_coarsen(b, cs->stacks.rows,
				       b->resolution * 2 > avg ? b->resolution * 2 : avg + 1);
	}
	return 0;
}

/* The track along instructions, which the timeline draws only for traces without time: kept
 * until the thread's first timestamp. */
static int track_insns(struct call_stacks *cs, struct thread_stack *t, uint64_t start,
		       uint64_t end, uint32_t stack)
{
	return t->has_time ? 0 : track(cs, &t->by_insns, start, end, stack);
}

/* Push a frame of kind on t's stack; entered: count it as an entry of its stack. Returns
 * -1 when out of memory (the frame is then not pushed). */
static int push(struct call_stacks *cs, struct thread_stack *t, uint8_t kind, uint64_t addr,
		int32_t region, uint64_t ret, int entered)
{
	struct call_stack_key k;
	struct frame *f;
	uint32_t row;

	if (t->depth >= JF_CALL_STACKS_DEPTH_MAX) {
		t->excess++;
		cs->r.truncated_calls++;
		return 0;
	}
	k.parent = t->depth ? t->frames[t->depth - 1].row : JF_NO_STACK;
	k.tid = t->tid;
	k.region = region;
	k.kind = kind;
	k.addr = addr;
	row = jf_call_stack_intern(&cs->stacks, &k);
	if (row == JF_NO_STACK)
		return -1;
	if (entered)
		cs->stacks.rows[row].entries++;
	f = &t->frames[t->depth++];
	f->ret = ret;
	f->row = row;
	f->entry_region = kind == JF_FRAME_CODE ? region : -1;
	f->cur_region = f->entry_region;
	f->kind = kind;
	f->handler = 0;
	return 0;
}

/* Start t's stack at code address at: below [unknown] when the callers are unknown. */
static int restart(struct call_stacks *cs, struct thread_stack *t, uint64_t at, int32_t region,
		   int below_unknown)
{
	t->depth = 0;
	t->excess = 0;
	t->known = 1;
	t->lost = 0;
	if (below_unknown && push(cs, t, JF_FRAME_UNKNOWN, 0, -1, 0, 0) < 0)
		return -1;
	return push(cs, t, JF_FRAME_CODE, at, region, 0, 0);
}

/* A return landed at target. */
static int returned(struct call_stacks *cs, struct thread_stack *t, uint64_t target,
		    int32_t region, uint64_t offset)
{
	uint32_t i, lowest;

	cs->r.returns++;
	if (t->excess) {
		t->excess--;
		return 0;
	}
	lowest = t->depth > JF_CALL_STACKS_SEARCH ? t->depth - JF_CALL_STACKS_SEARCH : 0;
	for (i = t->depth; i-- > lowest;) {
		if (t->frames[i].kind == JF_FRAME_SIGNAL || t->frames[i].ret != target ||
		    !t->frames[i].ret)
			continue;
		if (i + 1 < t->depth) {
			cs->r.unwound++;
			note(cs, t, JF_STACK_NOTE_UNWOUND, target, offset, t->depth - 1 - i);
		}
		t->depth = i;
		return 0;
	}
	/* A signal handler returns to the trampoline that calls rt_sigreturn. */
	if (t->depth && t->frames[t->depth - 1].handler) {
		t->depth--;
		return 0;
	}
	/* Out of the frame the stack began in: its callers were never seen. */
	if (t->depth == 1 || (t->depth == 2 && t->frames[0].kind == JF_FRAME_UNKNOWN)) {
		cs->r.above_start++;
		return restart(cs, t, target, region, 1);
	}
	cs->r.unmatched++;
	note(cs, t, JF_STACK_NOTE_UNMATCHED, target, offset, t->depth);
	return restart(cs, t, target, region, 1);
}

/* Pop t's stack down to below the [signal] frame that resumes at `at`, if any. */
static int signal_returned(struct thread_stack *t, uint64_t at)
{
	uint32_t i;

	for (i = t->depth; i-- > 0;) {
		if (t->frames[i].kind == JF_FRAME_SIGNAL && t->frames[i].ret == at) {
			t->depth = i;
			return 1;
		}
	}
	return 0;
}

/* What the last block (or event) left pending, now that the next block starts at `at`. */
static int settle(struct call_stacks *cs, struct thread_stack *t, uint64_t at, int32_t region,
		  uint64_t offset)
{
	uint8_t p = t->pending;

	t->pending = PENDING_NONE;
	if (!t->known)
		return restart(cs, t, at, region, t->lost);
	switch (p) {
	case PENDING_CALL:
		cs->r.calls++;
		return push(cs, t, JF_FRAME_CODE, at, region, t->pending_ret, 1);
	case PENDING_RETURN:
		return returned(cs, t, at, region, offset);
	case PENDING_HANDLER:
		if (push(cs, t, JF_FRAME_CODE, at, region, 0, 1) < 0)
			return -1;
		if (!t->excess && t->depth)
			t->frames[t->depth - 1].handler = 1;
		return 0;
	default:
		return 0;
	}
}

/* The stack the block runs on: its frame's, or a region's above it when the frame's code
 * jumped into jitted code other than the region it was entered in. */
static uint32_t leaf_of(struct call_stacks *cs, struct thread_stack *t, int32_t region)
{
	struct frame *f;
	struct call_stack_key k;
	uint32_t row;

	if (!t->depth)
		return JF_NO_STACK;
	f = &t->frames[t->depth - 1];
	if (region < 0 || region == f->entry_region) {
		f->cur_region = region;
		return f->row;
	}
	k.parent = f->row;
	k.tid = t->tid;
	k.region = region;
	k.kind = JF_FRAME_REGION;
	k.addr = 0;
	row = jf_call_stack_intern(&cs->stacks, &k);
	if (row != JF_NO_STACK && f->cur_region != region)
		cs->stacks.rows[row].entries++;
	f->cur_region = region;
	return row;
}

static int block_counted(struct jf_analysis *a, void *self, const struct jf_block_event *e)
{
	struct call_stacks *cs = self;
	struct thread_stack *t = thread_of(cs, e->tid);
	const struct jf_block *b = e->b;
	int32_t region = e->r ? (int32_t)e->r->region : -1;

	(void)a;
	if (!t)
		return -1;
	if (settle(cs, t, b->start, region, e->offset) < 0)
		return -1;
	/* Back where a signal interrupted the thread: its handler has returned. */
	if (t->depth && t->frames[t->depth - 1].kind == JF_FRAME_SIGNAL)
		signal_returned(t, b->start);
	t->leaf = leaf_of(cs, t, region);
	cs->counting = t;
	t->in_guest = e->r && e->r->code_object_map.n && t->leaf != JF_NO_STACK;
	t->block_pos = cs->r.insns;
	if (t->in_guest) {
		t->block_insns = b->ninsn;
		t->guest_insns = 0;
		t->region_leaf = t->leaf;
	} else {
		t->guest = JF_NO_STACK;
		if (t->leaf != JF_NO_STACK) {
			cs->stacks.rows[t->leaf].insns += b->ninsn;
			if (track_insns(cs, t, t->block_pos, t->block_pos + b->ninsn, t->leaf) < 0)
				return -1;
		}
	}
	cs->r.insns += b->ninsn;
	t->last_next = b->next ? b->next : b->last_size ? b->last + b->last_size : 0;
	t->last_far = b->end == JF_END_FAR;
	if (b->end == JF_END_CALL || b->end == JF_END_CALL_INDIRECT) {
		t->pending = PENDING_CALL;
		t->pending_ret = t->last_next;
	} else if (b->end == JF_END_RETURN) {
		t->pending = PENDING_RETURN;
	}
	return 0;
}

/* Frames of an inline chain kept: a deeper one (past any compiler's inlining limit) is
 * shown without its chain. */
#define INLINE_FRAMES_MAX 64

/* The row of code object `code_object`'s guest frame over row `parent`. */
static uint32_t guest_row(struct call_stacks *cs, const struct thread_stack *t, uint32_t parent,
			  uint64_t code_object)
{
	struct call_stack_key k;

	k.parent = parent;
	k.tid = t->tid;
	k.region = cs->stacks.rows[t->region_leaf].region;
	k.kind = JF_FRAME_GUEST;
	k.addr = code_object;
	return jf_call_stack_intern(&cs->stacks, &k);
}

/* The row of code object `code_object`'s frame inside the frames of inline chain `chain`
 * over the region's leaf: outermost first, as the compiler inlined them. */
static uint32_t guest_stack(struct call_stacks *cs, const struct jf_analysis *a,
			    const struct thread_stack *t, uint32_t chain, uint64_t code_object)
{
	uint16_t outer[INLINE_FRAMES_MAX];
	const struct jf_inline_frame *f;
	uint32_t n = 0, row = t->region_leaf;

	for (; (f = jf_inline_frame_at(&a->zm, chain)) && n < INLINE_FRAMES_MAX; chain = f->parent)
		outer[n++] = f->code_object;
	if (f || cs->stacks.rows[row].depth + n + 1 > JF_CALL_STACKS_DEPTH_MAX + 2)
		n = 0;
	while (n && row != JF_NO_STACK)
		row = guest_row(cs, t, row, outer[--n]);
	return row == JF_NO_STACK ? row : guest_row(cs, t, row, code_object);
}

/* Whether row is top or one of the rows below it. */
static int below_or_at(const struct call_stack_table *s, uint32_t row, uint32_t top)
{
	for (; top != JF_NO_STACK && s->rows[top].depth >= s->rows[row].depth;
	     top = s->rows[top].parent)
		if (top == row)
			return 1;
	return 0;
}

/* The thread moves from guest frame t->guest to `row`: every guest frame of row's stack
 * that was not on the last one is entered (an inlined callee, or its caller again after
 * code of another chain). */
static void guest_entered(struct call_stacks *cs, const struct thread_stack *t, uint32_t row)
{
	for (; row != t->region_leaf && row != JF_NO_STACK; row = cs->stacks.rows[row].parent)
		if (t->guest == JF_NO_STACK || !below_or_at(&cs->stacks, row, t->guest))
			cs->stacks.rows[row].entries++;
}

/* n instructions of the block being counted ran in bytecode range row `bytecode`: in a
 * code object's range, on that guest function's frame, inside the frames of the functions
 * the runtime inlined it into (inline chain `chain`). */
static int bytecode_insns(struct jf_analysis *a, void *self, int32_t bytecode, uint32_t chain,
			  uint32_t n)
{
	struct call_stacks *cs = self;
	struct thread_stack *t = cs->counting;
	uint64_t key, code_object;
	uint32_t row;

	if (!t || !t->in_guest || bytecode < 0)
		return 0;
	key = a->bytecodes[bytecode].region_key;
	if (!(key & JF_BYTECODE_CODE_OBJECT))
		return 0;
	code_object = JF_BYTECODE_CODE_OBJECT_ID(key);
	if (t->memo_region_leaf == t->region_leaf && t->memo_chain == chain &&
	    t->memo_code_object == code_object) {
		row = t->memo_row;
	} else {
		row = guest_stack(cs, a, t, chain, code_object);
		if (row == JF_NO_STACK)
			return -1;
		t->memo_region_leaf = t->region_leaf;
		t->memo_chain = chain;
		t->memo_code_object = code_object;
		t->memo_row = row;
	}
	if (row != t->guest)
		guest_entered(cs, t, row);
	cs->stacks.rows[row].insns += n;
	if (track_insns(cs, t, t->block_pos + t->guest_insns, t->block_pos + t->guest_insns + n,
			row) < 0)
		return -1;
	t->guest_insns += n;
	t->guest = t->leaf = row;
	return 0;
}

/* The block is counted: what no guest function took ran on its region's frame. */
static void block_done(struct jf_analysis *a, void *self, const struct jf_block *b)
{
	struct call_stacks *cs = self;
	struct thread_stack *t = cs->counting;

	(void)a, (void)b;
	if (!t || !t->in_guest)
		return;
	t->in_guest = 0;
	if (t->guest_insns < t->block_insns) {
		cs->stacks.rows[t->region_leaf].insns += t->block_insns - t->guest_insns;
		/* (placed after the guest functions' instructions of the block) */
		track_insns(cs, t, t->block_pos + t->guest_insns, t->block_pos + t->block_insns,
			    t->region_leaf);
	}
}

/* Tracing comes back at ip, where a frame returns to: the code that ran untraced (outside
 * an IP filter, such as a library called through the PLT) returned there. */
static int returned_untraced(struct call_stacks *cs, struct thread_stack *t, uint64_t ip)
{
	uint32_t i, lowest;

	if (t->pending == PENDING_CALL && ip == t->pending_ret) {
		t->pending = PENDING_NONE;
		cs->r.calls++;
		cs->r.returns++;
		return 1;
	}
	lowest = t->depth > JF_CALL_STACKS_SEARCH ? t->depth - JF_CALL_STACKS_SEARCH : 0;
	for (i = t->depth; i-- > lowest;) {
		if (t->frames[i].kind != JF_FRAME_SIGNAL && t->frames[i].ret == ip && ip) {
			t->depth = i;
			t->pending = PENDING_NONE;
			cs->r.returns++;
			return 1;
		}
	}
	return 0;
}

/* Tracing comes back at ip. Coming back where a [signal] frame resumes, a handler has
 * returned (through rt_sigreturn); where a frame returns to, untraced code returned.
 * Otherwise, where the thread should have resumed (after its system call, or where a
 * signal's asynchronous disable interrupted it) and it comes back elsewhere, a signal's
 * handler runs. */
static int enabled(struct call_stacks *cs, struct thread_stack *t, const struct jf_flow *f)
{
	uint64_t resume = t->resume_at;

	t->resume_at = 0;
	if ((f->flags & JF_FLOW_IP_SUPPRESSED) || !t->known)
		return 0;
	if (signal_returned(t, f->ip)) {
		t->pending = PENDING_NONE;
		return 0;
	}
	if (returned_untraced(cs, t, f->ip) || f->u.enabled.resumed)
		return 0;
	if (!resume || f->ip == resume)
		return 0;
	/* What the last block left pending went to the interrupted place. */
	if (t->pending != PENDING_NONE && settle(cs, t, resume, -1, f->offset) < 0)
		return -1;
	/* Still in a [signal] frame: its handler returned to the trampoline, whose
	 * rt_sigreturn let a pending signal in over the place the first one interrupted. */
	if (t->depth && t->frames[t->depth - 1].kind == JF_FRAME_SIGNAL)
		resume = t->frames[--t->depth].ret;
	cs->r.signals++;
	if (push(cs, t, JF_FRAME_SIGNAL, 0, -1, resume, 1) < 0)
		return -1;
	t->pending = PENDING_HANDLER;
	return 0;
}

static void flow_event(struct jf_analysis *a, void *self, int32_t tid, const struct jf_flow *f)
{
	struct call_stacks *cs = self;
	struct thread_stack *t = thread_of(cs, tid);

	(void)a;
	if (!t)
		return;
	switch (f->kind) {
	case JF_FLOW_ERROR:
	case JF_FLOW_LOST:
	case JF_FLOW_OVERFLOW:
		if (t->known) {
			cs->r.restarts++;
			note(cs, t, JF_STACK_NOTE_LOST,
			     (f->flags & JF_FLOW_IP_SUPPRESSED) ? 0 : f->ip, f->offset, t->depth);
		}
		t->known = 0;
		t->lost = 1;
		t->pending = PENDING_NONE;
		t->resume_at = 0;
		break;
	case JF_FLOW_DISABLED:
		if (f->u.disabled.at)
			t->resume_at = f->u.disabled.at;   /* an interruption */
		else
			t->resume_at = t->last_far ? t->last_next : 0;
		break;
	case JF_FLOW_ENABLED:
		if (!(f->flags & JF_FLOW_STATUS_UPDATE))
			enabled(cs, t, f);
		break;
	default:
		break;
	}
}

static int time_attributed(struct jf_analysis *a, void *self, int32_t tid, int has_from,
			   uint64_t from, uint64_t to)
{
	struct call_stacks *cs = self;
	struct thread_stack *t = thread_of(cs, tid);

	(void)a;
	if (!t)
		return -1;
	if (has_from && t->leaf != JF_NO_STACK && to >= from) {
		cs->stacks.rows[t->leaf].time += to - from;
		if (track(cs, &t->by_time, from, to, t->leaf) < 0)
			return -1;
	}
	if (!t->has_time) {
		free(t->by_insns.v);
		memset(&t->by_insns, 0, sizeof(t->by_insns));
	}
	t->has_time = 1;
	t->last_time = to;
	return 0;
}

/* The stacks of two parts of a trace do not join: the later part's threads would start
 * in the middle of stacks the earlier part knows. Analyses with call stacks take the
 * whole trace in one. */
static int refuse_merge(struct jf_analysis *a, void *self, const struct jf_analysis *later,
			const void *later_self, uint64_t insn_shift)
{
	(void)a, (void)self, (void)later, (void)later_self, (void)insn_shift;
	return -1;
}

static int copy_series(struct jf_stack_series *to, const struct jf_stack_span_builder *b)
{
	to->resolution = b->resolution;
	to->nspans = b->n;
	to->spans = malloc((b->n ? b->n : 1) * sizeof(*to->spans));
	if (!to->spans)
		return -1;
	if (b->n)
		memcpy(to->spans, b->v, b->n * sizeof(*to->spans));
	return 0;
}

static int result(const struct jf_analysis *a, const void *self, struct jf_analysis_result *r)
{
	const struct call_stacks *cs = self;
	struct jf_call_stacks_result *out = &r->call_stacks;
	size_t i;

	(void)a;
	*out = cs->r;
	out->stacks = malloc((cs->stacks.n ? cs->stacks.n : 1) * sizeof(*out->stacks));
	if (!out->stacks)
		return -1;
	if (cs->stacks.n)
		memcpy(out->stacks, cs->stacks.rows, cs->stacks.n * sizeof(*out->stacks));
	out->nstacks = cs->stacks.n;
	out->tracks = calloc(cs->nthreads ? cs->nthreads : 1, sizeof(*out->tracks));
	if (!out->tracks)
		return -1;
	for (i = 0; i < cs->nthreads; i++) {
		const struct thread_stack *t = cs->threads[i];
		struct jf_stack_track *tr = &out->tracks[out->ntracks++];

		tr->tid = t->tid;
		if (copy_series(&tr->by_time, &t->by_time) < 0 ||
		    copy_series(&tr->by_insns, &t->by_insns) < 0)
			return -1;
	}
	return 0;
}

static void destroy(void *self)
{
	struct call_stacks *cs = self;
	size_t i;

	for (i = 0; i < cs->nthreads; i++) {
		free(cs->threads[i]->by_time.v);
		free(cs->threads[i]->by_insns.v);
		free(cs->threads[i]);
	}
	free(cs->threads);
	jf_call_stack_table_free(&cs->stacks);
	free(cs);
}

void *jf_call_stacks_new(void)
{
	return calloc(1, sizeof(struct call_stacks));
}

void jf_call_stacks_result_free(struct jf_analysis_result *r)
{
	size_t i;

	for (i = 0; i < r->call_stacks.ntracks; i++) {
		free(r->call_stacks.tracks[i].by_time.spans);
		free(r->call_stacks.tracks[i].by_insns.spans);
	}
	free(r->call_stacks.tracks);
	free(r->call_stacks.stacks);
	memset(&r->call_stacks, 0, sizeof(r->call_stacks));
}

const char *jf_call_stacks_note_name(enum jf_call_stacks_note_kind kind)
{
	switch (kind) {
	case JF_STACK_NOTE_UNWOUND: return "unwound";
	case JF_STACK_NOTE_UNMATCHED: return "unmatched return";
	case JF_STACK_NOTE_LOST: return "lost track";
	}
	return "?";
}

const struct jf_listener jf_call_stacks_listener = {
	.destroy = destroy,
	.block_counted = block_counted,
	.bytecode_insns = bytecode_insns,
	.block_done = block_done,
	.time_attributed = time_attributed,
	.flow_event = flow_event,
	.merge = refuse_merge,
	.result = result,
};
