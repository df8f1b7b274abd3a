/* The words of minivm (tools/minivm), which are also those of any runtime without a
 * description of its own: loop traces, bridges hung off guards, functions for a method
 * JIT's code, and nothing the split cannot tell apart (minivm names its interpreter). */
#include "runtime.h"

const struct jf_runtime_desc jf_runtime_generic = {
	.name = "",
	.kind_names = {
		[JF_REGION_TRACE] = "loop",
		[JF_REGION_BRIDGE] = "bridge",
		[JF_REGION_FUNCTION] = "function",
	},
	.trace = "trace",
	.bridge = "bridge",
	.bridges = "bridges",
	.guard = "guard",
	.guards = "guards",
	.guard_exit = "guard exit",
};
