/* Call-stack tracks (call_stack_spans.h): spans of stacks over time, joined below a
 * resolution into their deepest common stack. */
#include <stdlib.h>

#include "analysis_internal.h"
#include "call_stack_spans.h"

uint32_t jf_call_stack_common(const struct jf_call_stack *rows, uint32_t a, uint32_t b)
{
	while (a != b && a != JF_NO_STACK && b != JF_NO_STACK) {
		if (rows[a].depth >= rows[b].depth)
			a = rows[a].parent;
		else
			b = rows[b].parent;
	}
	return a == b ? a : JF_NO_STACK;
}

/* The last span, joined with the one before when they now touch on the same stack. */
static void settle_last(struct jf_stack_span_builder *b)
{
	struct jf_stack_span *last = &b->v[b->n - 1];

	if (b->n >= 2 && last[-1].end == last->start && last[-1].stack == last->stack) {
		last[-1].end = last->end;
		b->n--;
	}
}

int jf_stack_spans_add(struct jf_stack_span_builder *b, const struct jf_call_stack *rows,
		       uint64_t start, uint64_t end, uint32_t stack)
{
	struct jf_stack_span *last = b->n ? &b->v[b->n - 1] : NULL;

	if (end <= start)
		return 0;
	if (last && last->end == start) {
		if (last->stack == stack) {
			last->end = end;
			return 0;
		}
		if (last->end - last->start < b->resolution) {
			last->stack = stack == JF_NO_STACK || last->stack == JF_NO_STACK ?
				JF_NO_STACK : jf_call_stack_common(rows, last->stack, stack);
			last->end = end;
			settle_last(b);
			return 0;
		}
	}
	if (jf_grow((void **)&b->v, &b->cap, b->n, sizeof(*b->v)) < 0)
		return -1;
	b->v[b->n].start = start;
	b->v[b->n].end = end;
	b->v[b->n].stack = stack;
	b->n++;
	return 0;
}

void jf_stack_spans_coarsen(struct jf_stack_span_builder *b, const struct jf_call_stack *rows,
			    uint64_t resolution)
{
	size_t i, n = b->n;

	/* Re-adding in place: the spans written never pass the one being read. */
	b->n = 0;
	b->resolution = resolution;
	for (i = 0; i < n; i++) {
		struct jf_stack_span s = b->v[i];

		jf_stack_spans_add(b, rows, s.start, s.end, s.stack);
	}
}
