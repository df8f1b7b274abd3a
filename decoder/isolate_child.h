/* The child side of jf_isolated_decoder (jitflow/isolate.h), as the CoreSight glue sees it.
 *
 * Before every call into OpenCSD the glue says where it is (jf_isolate_before_call):
 * the child first sends the records it has, then writes the position into a page it shares
 * with its parent, so that when the call crashes the parent knows which bytes of which
 * buffer were being decoded. A child started again after a crash decodes from the start
 * without sending anything until it reaches the crash position (replaying: this rebuilds
 * every state outside OpenCSD, e.g. the latest timestamp), and there either feeds the
 * crashing call's bytes in small steps (narrowing: to find the crashing frame or byte) or
 * resets the decode tree and skips them (the skipped bytes become a JF_FLOW_LOST record).
 * In a process that is not such a child, jf_isolate_child is NULL and nothing changes. */
#ifndef JITFLOW_ISOLATE_CHILD_H
#define JITFLOW_ISOLATE_CHILD_H

#include <stddef.h>
#include <stdint.h>

enum jf_isolate_op { JF_ISOLATE_DATA = 1, JF_ISOLATE_FLUSH, JF_ISOLATE_EOT };

/* The call in progress, in the page shared with the parent. */
struct jf_isolate_spot {
	uint32_t buffer;     /* buffers are numbered in the order this child opens them */
	uint8_t op;          /* enum jf_isolate_op */
	uint8_t in_call;     /* 0 once the call returned */
	uint8_t narrowed;    /* the call was shortened to one unit (see the plan) */
	uint8_t replaying;   /* nothing sent yet: still before the crash position */
	uint64_t pos, len;   /* bytes [pos, pos + len) of the buffer given to the call */
	uint64_t unit;       /* 16 for formatted frames, 1 for a raw stream */
	uint64_t size;       /* of the buffer */
	uint64_t base;       /* flow offset of the buffer's first byte */
	uint32_t source;     /* the buffer's first trace ID, for records */
	uint32_t calls;      /* calls made so far (a plain counter, for tests) */
};

enum { JF_ISOLATE_MAX_SKIPS = 32 };

struct jf_isolate_skip {
	uint32_t buffer;
	uint64_t from, to;
	int done;
};

/* What a child does differently after earlier crashes, and where its code comes from. */
struct jf_isolate_plan {
	struct jf_isolate_skip skips[JF_ISOLATE_MAX_SKIPS];
	size_t nskips;
	int narrowing;               /* feed [narrow_from, narrow_to) of narrow_buffer in units */
	uint32_t narrow_buffer;
	uint64_t narrow_from, narrow_to;
	int replaying;               /* drop records until (send_buffer, send_from) */
	uint32_t send_buffer;
	uint64_t send_from;
};

struct jf_isolate_child {
	struct jf_isolate_spot *spot;
	struct jf_isolate_plan plan;
	uint32_t buffers;            /* buffers opened so far */
	void (*flush)(void);         /* send the records produced so far */
	/* Code bytes from the parent's code map (lockstep mode), else from this process. */
	int remote;
	size_t (*read)(uint64_t addr, void *buf, size_t size);
	uint64_t generation;         /* of the parent's map, sent with each request */
};

extern struct jf_isolate_child *jf_isolate_child;

/* A buffer is opened: its number in this child (0 outside a child). */
uint32_t jf_isolate_buffer_opened(void);

/* Before a call into the isolated library on bytes [pos, pos + *len) of buffer. Returns 0
 * to make the call (*len may be shortened), or 1 when the caller must reset its decode
 * tree and go on at *skip_to instead (the call crashed in an earlier child). */
int jf_isolate_before_call(uint32_t buffer, enum jf_isolate_op op, uint64_t pos, size_t *len,
			   const struct jf_isolate_spot *where, uint64_t *skip_to);
void jf_isolate_after_call(void);

/* Records are sent by the child only when this is 0. */
int jf_isolate_replaying(void);

#endif
