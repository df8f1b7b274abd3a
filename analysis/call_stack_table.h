/* The distinct call stacks of an analysis: each a row (jitflow/call_stacks.h), its top
 * frame on top of its parent row, interned by (parent row, thread, top frame) so that a
 * stack met again is found rather than added. Memory grows with the stacks a program has,
 * not with the length of its trace. */
#ifndef JITFLOW_CALL_STACK_TABLE_H
#define JITFLOW_CALL_STACK_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "jitflow/call_stacks.h"

struct call_stack_key {
	uint32_t parent;
	int32_t tid;
	int32_t region;
	uint8_t kind;
	uint64_t addr;
};

struct call_stack_table {
	struct jf_call_stack *rows;
	size_t n, cap;
	uint32_t *slots;     /* open addressing: row + 1, 0 = empty */
	size_t nslots;
};

/* The row of stack k (made, with zero counts, when new); JF_NO_STACK when out of memory. */
uint32_t jf_call_stack_intern(struct call_stack_table *t, const struct call_stack_key *k);
void jf_call_stack_table_free(struct call_stack_table *t);

#endif
