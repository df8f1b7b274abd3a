/* A thread's call-stack track: the stacks it ran on over time, as contiguous spans, joined
 * where a span is shorter than a resolution (the span takes the deepest stack the two have
 * in common), so that the track stays about (time covered / resolution) spans long however
 * many calls the thread made, and every clock unit stays in exactly one span. */
#ifndef JITFLOW_CALL_STACK_SPANS_H
#define JITFLOW_CALL_STACK_SPANS_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/call_stacks.h"

/* A span's stack when stacks that share no frame were joined. */
#define JF_STACK_SPANS_SEVERAL JF_NO_STACK

struct jf_stack_span_builder {
	struct jf_stack_span *v;
	size_t n, cap;
	uint64_t resolution;   /* spans shorter than this join the next one (0: none join) */
};

/* The deepest stack that both a and b lie on (JF_NO_STACK when they share no bottom). */
uint32_t jf_call_stack_common(const struct jf_call_stack *rows, uint32_t a, uint32_t b);

/* Stack `stack` (JF_NO_STACK: stacks sharing nothing) ran over [start, end). -1 when out
 * of memory (the span is then lost). */
int jf_stack_spans_add(struct jf_stack_span_builder *b, const struct jf_call_stack *rows,
		       uint64_t start, uint64_t end, uint32_t stack);
/* Join b's spans again at resolution (larger than b's). */
void jf_stack_spans_coarsen(struct jf_stack_span_builder *b, const struct jf_call_stack *rows,
			    uint64_t resolution);

#endif
