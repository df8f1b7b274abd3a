/* What the analysis keeps for the views people look at (flame graphs, the timeline, the
 * HTML report), beside the tables of jitflow/analysis.h. Everything here is bounded by the
 * code image and a fixed number of time buckets, never by the length of the trace, and
 * merges like the rest of the result (jf_analysis_merge).
 *
 * Stacks: instructions per thread, code class, region and bytecode range (the folded
 * stacks of a flame graph); they sum exactly to the result's instruction count.
 *
 * Timeline: per thread, two series of buckets over the run, one on the trace's clock (only
 * where the flow carried timestamps) and one on the instruction count (always). A bucket
 * holds what ran in it (an activity: interpreter, trace N, bridge N, a jitted region, native
 * code) with the amount of clock, in order of first appearance, and the guard exits that
 * happened in it. Buckets are a power of two wide; when a series would need more than
 * JF_TIMELINE_BUCKETS of them (or the
 * analysis's configured number), the width doubles and neighbours merge. Events (code
 * compiled or freed, a bridge attached, an iteration began) are kept with the clock and
 * instruction count at which they took effect. */
#ifndef JITFLOW_VIEWS_H
#define JITFLOW_VIEWS_H

/* The API of libjitflow.so, which is built with hidden visibility. */
#pragma GCC visibility push(default)

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define JF_TIMELINE_BUCKETS 2048
#define JF_TIMELINE_MAX_EVENTS 65536

/* One folded stack. */
struct jf_stack_result {
	int32_t tid;
	uint8_t cls;                 /* enum jf_code_class */
	uint8_t has_range;           /* pc-mapped code: the bytecode range [pc_from, pc_to) */
	uint32_t pc_from, pc_to;
	char region[96];             /* the jitted region's name, or the mapped file's ("" when
	                              * nothing names the code) */
	uint64_t insns;
};

/* An instruction of pc-mapped jitted code that ran, for annotated listings: disassembled
 * (capstone) when first executed, so the text is of the code that ran even if it was freed
 * or patched since. */
struct jf_code_line {
	uint64_t region_key;         /* trace id, or the region's address */
	uint64_t addr;
	uint32_t offset;             /* in its region */
	uint32_t pc_from, pc_to;     /* the bytecode range of its pc map entry */
	uint16_t op_kind;
	uint64_t insns;              /* times executed */
	char text[56];               /* disassembly ("" when the bytes were not readable) */
};

/* What ran: a class, and for traces and bridges the runtime's trace id, for other jitted
 * code the region's name. */
struct jf_activity {
	uint8_t cls;                 /* enum jf_code_class */
	uint64_t trace_id;           /* 0: none */
	char name[96];               /* the region's name for jitted code without a trace id */
};

/* An entry of a bucket: `what` is an activity index, or a guard index with
 * JF_BUCKET_GUARD set (amount = exits). */
#define JF_BUCKET_GUARD 0x80000000u
struct jf_bucket_entry {
	uint64_t bucket;             /* absolute bucket number: covers [bucket * width, + width) */
	uint32_t what;
	uint64_t amount;
};

struct jf_timeline_series {
	uint64_t width;              /* clock units per bucket (a power of two; 0: empty) */
	struct jf_bucket_entry *entries; /* by bucket, in order of first appearance within one */
	size_t nentries, cap;
};

struct jf_timeline_thread {
	int32_t tid;
	struct jf_timeline_series by_time, by_insns;
};

enum jf_timeline_event_kind {
	JF_TL_COMPILE = 1,           /* a trace, bridge or jitted region became live; id: its
	                              * trace id (0 for plain jitted code), arg: region kind */
	JF_TL_FREE,                  /* code was freed; id: its address */
	JF_TL_BRIDGE,                /* a bridge attached; id: bridge trace id, and
	                              * parent_trace, parent_guard */
	JF_TL_ITERATION,             /* the runtime began iteration arg */
};

struct jf_timeline_event {
	uint8_t kind;                /* enum jf_timeline_event_kind */
	uint8_t has_time;
	uint8_t describes_only;      /* a REGION_LOAD without its CODE_LOAD before it in this
	                              * part (merging joins it to the earlier part's event) */
	uint32_t region_kind;        /* JF_TL_COMPILE: JF_REGION_* (0: jitdump only says) */
	uint64_t time;               /* the flow clock when it took effect (if has_time) */
	uint64_t insn_pos;           /* instructions analysed before it */
	uint64_t id, arg;
	uint64_t parent_trace, parent_guard; /* JF_TL_BRIDGE: the guard it attached to */
	char name[96];               /* JF_TL_COMPILE: the region's name */
};

struct jf_timeline_result {
	struct jf_activity *activities;      size_t nactivities;
	struct jf_timeline_thread *threads;  size_t nthreads;
	struct jf_timeline_event *events;    size_t nevents;
	uint64_t events_dropped;             /* beyond JF_TIMELINE_MAX_EVENTS */
};

#ifdef __cplusplus
}
#endif

#pragma GCC visibility pop

#endif
