/* The stencil table of a CPython 3.13 JIT build: each micro-op's code and data size, read
 * from the build's generated Python/jit_stencils.h (the `trampoline` and `stencil_groups`
 * initialisers that Tools/jit writes as `{emit_NAME, CODE_SIZE, DATA_SIZE}`).
 *
 * CPython lays an executor out as the trampoline, then one stencil per uop in trace
 * order, then _FATAL_ERROR, then the data of each; a stencil's offset is therefore the
 * trampoline's code size plus the code sizes of the uops before it. */
#ifndef JITFLOW_CPYTHON_STENCIL_TABLE_H
#define JITFLOW_CPYTHON_STENCIL_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct cpython_stencil {
	char name[64];            /* the uop's name, e.g. "_BINARY_OP_ADD_INT" */
	uint32_t code_size, data_size;
};

struct cpython_stencil_table {
	struct cpython_stencil trampoline;
	struct cpython_stencil *stencils;   /* in file order */
	size_t count;
};

/* Parses text[0, len). Returns 0, or -1 with a message naming the line and what was
 * expected in err (the table is then empty). Free with cpython_stencil_table_free. */
int cpython_stencil_table_parse(const char *text, size_t len, struct cpython_stencil_table *t,
				char *err, size_t errlen);
void cpython_stencil_table_free(struct cpython_stencil_table *t);
/* The stencil of a uop by name, or NULL. */
const struct cpython_stencil *cpython_stencil_find(const struct cpython_stencil_table *t,
						   const char *name);

#endif
