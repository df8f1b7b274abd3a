/* libFuzzer target: the stencil table of a CPython JIT build (jit_stencils.h), as the
 * CPython module's extension reads it (tools/runtimes/cpython/stencil_table.c). Any input
 * must give a table or an error naming the line. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stencil_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpython_stencil_table t;
	char err[256];

	if (cpython_stencil_table_parse((const char *)data, size, &t, err, sizeof(err)) == 0) {
		size_t i;

		for (i = 0; i < t.count; i++)
			if (cpython_stencil_find(&t, t.stencils[i].name) == NULL)
				__builtin_trap();
		cpython_stencil_table_free(&t);
	} else if (!memchr(err, '\0', sizeof(err)) || strncmp(err, "jit_stencils.h line ", 20)) {
		__builtin_trap();
	}
	return 0;
}
