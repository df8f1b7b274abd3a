/* Names of the analysis's classes, as reports and JSON print them. */
#include "analysis_internal.h"

const char *jf_code_class_name(enum jf_code_class c)
{
	static const char *const names[JF_CLASS_COUNT] = {
		[JF_CLASS_UNKNOWN] = "unknown",       [JF_CLASS_INTERPRETER] = "interpreter",
		[JF_CLASS_TRACE] = "trace",           [JF_CLASS_BRIDGE] = "bridge",
		[JF_CLASS_EXIT_STUB] = "exit stub",   [JF_CLASS_TRAMPOLINE] = "trampoline",
		[JF_CLASS_INLINE_CACHE] = "inline cache", [JF_CLASS_STENCIL] = "stencil",
		[JF_CLASS_JITTED] = "jitted",         [JF_CLASS_RUNTIME] = "runtime native",
		[JF_CLASS_NATIVE] = "other native",   [JF_CLASS_KERNEL] = "kernel",
		[JF_CLASS_INSTRUMENTATION] = "instrumentation",
		[JF_CLASS_GC] = "garbage collection",
		[JF_CLASS_TRACING] = "tracing",       [JF_CLASS_COMPILING] = "compiling",
		[JF_CLASS_EXIT_HANDLING] = "exit handling",
	};
	return (unsigned)c < JF_CLASS_COUNT ? names[c] : "unknown";
}

const char *jf_split_class_name(enum jf_split_class c)
{
	static const char *const names[JF_SPLIT_COUNT] = {
		[JF_SPLIT_INTERPRETER] = "interpreter", [JF_SPLIT_JITTED] = "jitted",
		[JF_SPLIT_NATIVE] = "native",           [JF_SPLIT_UNKNOWN] = "unknown",
		[JF_SPLIT_INSTRUMENTATION] = "instrumentation",
	};
	return (unsigned)c < JF_SPLIT_COUNT ? names[c] : "unknown";
}

const uint8_t jf_split_by_class[JF_CLASS_COUNT] = {
	[JF_CLASS_UNKNOWN] = JF_SPLIT_UNKNOWN,
	[JF_CLASS_INTERPRETER] = JF_SPLIT_INTERPRETER,
	[JF_CLASS_TRACE] = JF_SPLIT_JITTED,        [JF_CLASS_BRIDGE] = JF_SPLIT_JITTED,
	[JF_CLASS_EXIT_STUB] = JF_SPLIT_JITTED,    [JF_CLASS_TRAMPOLINE] = JF_SPLIT_JITTED,
	[JF_CLASS_INLINE_CACHE] = JF_SPLIT_JITTED, [JF_CLASS_STENCIL] = JF_SPLIT_JITTED,
	[JF_CLASS_JITTED] = JF_SPLIT_JITTED,
	[JF_CLASS_RUNTIME] = JF_SPLIT_NATIVE,      [JF_CLASS_NATIVE] = JF_SPLIT_NATIVE,
	[JF_CLASS_KERNEL] = JF_SPLIT_NATIVE,
	[JF_CLASS_INSTRUMENTATION] = JF_SPLIT_INSTRUMENTATION,
	[JF_CLASS_GC] = JF_SPLIT_NATIVE,
	[JF_CLASS_TRACING] = JF_SPLIT_NATIVE,      [JF_CLASS_COMPILING] = JF_SPLIT_NATIVE,
	[JF_CLASS_EXIT_HANDLING] = JF_SPLIT_NATIVE,
};

enum jf_split_class jf_split_of(enum jf_code_class c)
{
	return jf_split_fast(c);
}

const char *jf_warmup_name(enum jf_warmup_kind k)
{
	switch (k) {
	case JF_WARMUP_FLAT: return "flat";
	case JF_WARMUP_WARMUP: return "warmup";
	case JF_WARMUP_SLOWDOWN: return "slowdown";
	case JF_WARMUP_NO_STEADY_STATE: return "no steady state";
	default: return "unknown";
	}
}
