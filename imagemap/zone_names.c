/* Names of zone record types and of the enums inside them, for listings and JSON. */
#include "jitflow/emitter.h"
#include <string.h>

#include "jitflow/zone.h"

const char *jf_zone_record_name(uint32_t id)
{
	static const char *const perf[] = { "CODE_LOAD", "CODE_MOVE", "CODE_DEBUG_INFO",
					    "CODE_CLOSE", "CODE_UNWINDING_INFO" };
	static const char *const ext[] = { NULL, "CLOCK", "REGION_LOAD", "REGION_FREE",
					   "REGION_MOVE", "PATCH", "GUARD", "PC_MAP", "OP_NAME",
					   "CODE_OBJECT", "INTERP_RANGE", "EVENT", "MARKER", "POINT",
					   "THREAD_NAME", "INLINE_FRAMES" };

	if (id < JF_JITDUMP_CODE_MAX)
		return perf[id];
	if (id > JF_ZONE_ID_BASE && id <= JF_ZONE_ID_LAST)
		return ext[id - JF_ZONE_ID_BASE];
	return "UNKNOWN";
}

const char *jf_zone_region_kind_name(uint32_t kind)
{
	switch (kind) {
	case JF_REGION_OTHER: return "other";
	case JF_REGION_INTERPRETER: return "interpreter";
	case JF_REGION_TRACE: return "trace";
	case JF_REGION_BRIDGE: return "bridge";
	case JF_REGION_EXIT_STUB: return "exit-stub";
	case JF_REGION_TRAMPOLINE: return "trampoline";
	case JF_REGION_INLINE_CACHE: return "inline-cache";
	case JF_REGION_STENCIL: return "stencil";
	case JF_REGION_FUNCTION: return "function";
	}
	return "unknown";
}

const char *jf_zone_interp_kind_name(uint32_t kind)
{
	switch (kind) {
	case JF_INTERP_EVAL_LOOP: return "eval-loop";
	case JF_INTERP_HANDLER: return "handler";
	case JF_INTERP_TRACER: return "tracer";
	case JF_INTERP_COMPILER: return "compiler";
	case JF_INTERP_GC: return "gc";
	case JF_INTERP_DEOPT: return "deopt";
	case JF_INTERP_RUNTIME: return "runtime";
	case JF_INTERP_INSTRUMENTATION: return "instrumentation";
	}
	return "unknown";
}

const char *jf_zone_event_kind_name(uint32_t kind)
{
	switch (kind) {
	case JF_EVENT_ITERATION: return "iteration";
	case JF_EVENT_TRACE_START: return "trace-start";
	case JF_EVENT_TRACE_ABORT: return "trace-abort";
	case JF_EVENT_COMPILE_BEGIN: return "compile-begin";
	case JF_EVENT_COMPILE_END: return "compile-end";
	case JF_EVENT_LOOP_HEADER: return "loop-header";
	case JF_EVENT_TRACE_FLUSH: return "trace-flush";
	case JF_EVENT_TRACE_LINK: return "trace-link";
	case JF_EVENT_RUNTIME: return "runtime";
	case JF_EVENT_INSTRUMENTATION_BEGIN: return "instrumentation-begin";
	case JF_EVENT_INSTRUMENTATION_END: return "instrumentation-end";
	case JF_EVENT_PHASE_BEGIN: return "phase-begin";
	case JF_EVENT_PHASE_END: return "phase-end";
	}
	return "unknown";
}

/* LuaJIT's own words (jit.util.traceinfo's linktype), which the other runtimes share. */
const char *jf_zone_trace_link_name(uint32_t link)
{
	switch (link) {
	case JF_LINK_NONE: return "none";
	case JF_LINK_LOOP: return "loop";
	case JF_LINK_TRACE: return "root";
	case JF_LINK_RETURN: return "return";
	case JF_LINK_INTERPRETER: return "interpreter";
	case JF_LINK_TAIL_CALL: return "tail-recursion";
	case JF_LINK_UP_RECURSION: return "up-recursion";
	case JF_LINK_DOWN_RECURSION: return "down-recursion";
	case JF_LINK_STITCH: return "stitch";
	}
	return "unknown";
}

const char *jf_zone_clock_name(uint32_t clock)
{
	switch (clock) {
	case JF_ZONE_CLOCK_MONOTONIC: return "monotonic";
	case JF_ZONE_CLOCK_TSC: return "tsc";
	case JF_ZONE_CLOCK_ARM_CNTVCT: return "cntvct";
	}
	return "unknown";
}

int jf_zone_is_file_name(const char *base)
{
	const char *p = base + 4;

	if (strncmp(base, "jit-", 4) || *p < '0' || *p > '9')
		return 0;
	while (*p >= '0' && *p <= '9')
		p++;
	return !strcmp(p, ".dump");
}
