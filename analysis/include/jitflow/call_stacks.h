/* Call stacks: per thread, the stack of calls the flow went through, rebuilt from its
 * blocks (a call pushes a frame, a return pops the frame it returns to), and for every
 * distinct stack the instructions and time spent with it on top and the times it was
 * entered. Part of the analysis result when jf_analysis_config.call_stacks is set
 * (docs/analysis.md, "Call stacks").
 *
 * A stack is a row: its top frame on top of its parent row. Frames carry addresses and
 * region rows, not names: the caller names native code (ELF symbols) and the analysis's
 * region table names jitted regions, so no name lookup runs while the flow is read. */
#ifndef JITFLOW_CALL_STACKS_H
#define JITFLOW_CALL_STACKS_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(default)

#ifdef __cplusplus
extern "C" {
#endif

enum jf_frame_kind {
	JF_FRAME_UNKNOWN = 0, /* "[unknown]": callers above the point where the thread's stack
	                       * became known (its start, a resynchronisation) */
	JF_FRAME_CODE,        /* the function entered at addr: by a call, or the code the
	                       * thread was running where its stack became known */
	JF_FRAME_REGION,      /* jitted region `region`, reached by a jump from the frame below
	                       * (a trace entered from the interpreter, a bridge from a guard) */
	JF_FRAME_SIGNAL,      /* "[signal]": a signal delivered over the frames below */
	JF_FRAME_GUEST,       /* the guest function (code object `addr`) that region
	                       * `region`'s code-object pc map says the code is in; where the
	                       * runtime inlined it, over the frames of the functions it was
	                       * inlined into (the runtime's inline frames, outermost first) */
};

/* Frames deeper than this are counted (truncated_calls), not kept. */
#define JF_CALL_STACKS_DEPTH_MAX 256
/* A return is matched against this many frames below the top; one that matches none
 * resynchronises the stack. */
#define JF_CALL_STACKS_SEARCH 64
/* Resynchronisations located in the result (the count has them all). */
#define JF_CALL_STACKS_NOTES_MAX 16

#define JF_NO_STACK UINT32_MAX

struct jf_call_stack {
	uint32_t parent;      /* row of the stack below its top frame; JF_NO_STACK at the bottom */
	uint32_t depth;       /* frames, 1 for a bottom frame */
	int32_t tid;          /* the thread (as in jf_split_result) */
	uint8_t kind;         /* enum jf_frame_kind of the top frame */
	int32_t region;       /* JF_FRAME_REGION: row in the result's regions; JF_FRAME_CODE:
	                       * the region holding addr (jitted code called), or -1 */
	uint64_t addr;        /* JF_FRAME_CODE: where the function was entered;
	                       * JF_FRAME_GUEST: the code object's id */
	uint64_t insns;       /* instructions run with this stack on top (self) */
	uint64_t time;        /* clock attributed while it was on top (when the trace has time) */
	uint64_t entries;     /* times it became the stack: a call, a jump into a region, a
	                       * signal's delivery */
};

enum jf_call_stacks_note_kind {
	JF_STACK_NOTE_UNWOUND = 1, /* a return to a frame below the top: the frames above it
	                            * were left without returning (longjmp, exceptions) */
	JF_STACK_NOTE_UNMATCHED,   /* a return to no frame within the search depth: the stack
	                            * restarts as [unknown] below the return's target */
	JF_STACK_NOTE_LOST,        /* decoding lost track (error, overflow, lost data): the
	                            * stack restarts as [unknown] at the next block */
};

struct jf_call_stacks_note {
	uint32_t kind;        /* enum jf_call_stacks_note_kind */
	int32_t tid;
	uint64_t ip;          /* the return's target; for LOST, where decoding resumed (0: not
	                       * known) */
	uint64_t offset;      /* the trace offset of the flow record */
	uint64_t time;        /* the thread's last timestamp (when has_time) */
	int has_time;
	uint32_t frames;      /* frames dropped */
};

/* Stack `stack` (a row; JF_NO_STACK: spans of stacks sharing no frame, joined) was the
 * thread's over [start, end) of the clock (time, or instructions without it). */
struct jf_stack_span {
	uint64_t start, end;
	uint32_t stack;
};

/* A thread's stacks along one clock: contiguous spans (gaps where the clock went to other
 * threads or was not attributed), a span shorter than `resolution` joined with the next
 * into the deepest stack both lie on. Every unit of the clock the thread's stacks took is
 * in one span. */
struct jf_stack_series {
	struct jf_stack_span *spans; size_t nspans;
	uint64_t resolution;
};

/* by_time: the clock of the trace (the stacks' time); by_insns: the position among all
 * instructions analysed (the stacks' insns), for threads that had no timestamp (the
 * timeline draws instructions only where the trace has no time). */
struct jf_stack_track {
	int32_t tid;
	struct jf_stack_series by_time, by_insns;
};
/* Spans kept per thread before the track's resolution doubles. */
#define JF_STACK_TRACK_SPANS_MAX 65536

struct jf_call_stacks_result {
	struct jf_call_stack *stacks; size_t nstacks;
	uint64_t insns;            /* every block's instructions, each in one stack */
	uint64_t calls, returns, signals;
	uint64_t unwound;          /* returns that dropped frames above their target */
	uint64_t unmatched;        /* returns that matched no frame in the search depth */
	uint64_t above_start;      /* returns out of the frame a thread's stack began in (not
	                            * an error: its callers were never seen) */
	uint64_t restarts;         /* stacks restarted after decoding lost track */
	uint64_t truncated_calls;  /* calls deeper than JF_CALL_STACKS_DEPTH_MAX */
	struct jf_call_stacks_note notes[JF_CALL_STACKS_NOTES_MAX]; size_t nnotes;
	struct jf_stack_track *tracks; size_t ntracks;   /* one per thread */
};

const char *jf_call_stacks_note_name(enum jf_call_stacks_note_kind kind);

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
