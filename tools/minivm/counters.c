/* minivm's ground-truth counters as JSON:
 * {"traces":[{"id":N,"kind":"loop"|"bridge","entries":N,"iterations":N,
 *             "guards":[{"id":G,"exits":N}]}]}
 * plus "parent_trace" and "parent_guard" for bridges. Every trace ever compiled is listed,
 * invalidated ones included. Then the VM phases it bracketed, as spans:
 * "phases":{"tracing":N,"compiling":N,"exit handling":N} (no GC: minivm has none). */
#include <inttypes.h>
#include <stdio.h>

#include "vm.h"

int mvm_counters_write(const struct mvm_vm *vm, const char *path)
{
	FILE *f = fopen(path, "w");
	const struct mvm_trace *t;
	uint32_t i;

	if (!f)
		return -1;
	fprintf(f, "{\"traces\":[");
	for (t = vm->traces; t; t = t->next) {
		fprintf(f, "%s\n {\"id\":%" PRIu64 ",\"kind\":\"%s\",\"entries\":%" PRIu64
			   ",\"iterations\":%" PRIu64 ",",
			t == vm->traces ? "" : ",", t->id,
			t->kind == MVM_TRACE_LOOP ? "loop" : "bridge", t->entries,
			/* a bridge has no header of its own: one pass per entry */
			t->kind == MVM_TRACE_LOOP ? t->iterations : t->entries);
		if (t->kind == MVM_TRACE_BRIDGE)
			fprintf(f, "\"parent_trace\":%" PRIu64 ",\"parent_guard\":%" PRIu64 ",",
				t->parent_guard->trace->id, t->parent_guard->id);
		fprintf(f, "\"guards\":[");
		for (i = 0; i < t->guard_count; i++)
			fprintf(f, "%s{\"id\":%" PRIu64 ",\"exits\":%" PRIu64 "}", i ? "," : "",
				t->guards[i]->id, t->guards[i]->exits);
		fprintf(f, "]}");
	}
	fprintf(f, "\n],\"phases\":{\"tracing\":%" PRIu64 ",\"compiling\":%" PRIu64
		   ",\"exit handling\":%" PRIu64 "}}\n",
		vm->recordings, vm->compilations, vm->exits_handled);
	return fclose(f) ? -1 : 0;
}
