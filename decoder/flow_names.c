#include "jitflow/flow.h"

#include <stddef.h>

#define NAME(table, i) ((size_t)(i) < sizeof(table) / sizeof(table[0]) && table[i] ? table[i] : "unknown")

const char *jf_flow_kind_name(enum jf_flow_kind kind)
{
	static const char *const names[] = {
		[JF_FLOW_BLOCK] = "block",       [JF_FLOW_ENABLED] = "enabled",
		[JF_FLOW_DISABLED] = "disabled", [JF_FLOW_ASYNC] = "async",
		[JF_FLOW_OVERFLOW] = "overflow", [JF_FLOW_EXEC_MODE] = "exec-mode",
		[JF_FLOW_PTWRITE] = "ptwrite",   [JF_FLOW_CONTEXT] = "context",
		[JF_FLOW_TIME] = "time",         [JF_FLOW_OTHER] = "other",
		[JF_FLOW_LOST] = "lost",         [JF_FLOW_ERROR] = "error",
		[JF_FLOW_END] = "end",
	};
	return NAME(names, kind);
}

const char *jf_block_end_name(enum jf_block_end end)
{
	static const char *const names[] = {
		[JF_END_UNKNOWN] = "unknown",
		[JF_END_NONE] = "none",
		[JF_END_COND_TAKEN] = "cond-taken",
		[JF_END_COND_NOT_TAKEN] = "cond-not-taken",
		[JF_END_COND] = "cond",
		[JF_END_JUMP] = "jump",
		[JF_END_JUMP_INDIRECT] = "jump-indirect",
		[JF_END_CALL] = "call",
		[JF_END_CALL_INDIRECT] = "call-indirect",
		[JF_END_RETURN] = "return",
		[JF_END_FAR] = "far",
		[JF_END_OTHER] = "other",
	};
	return NAME(names, end);
}

const char *jf_isa_name(enum jf_isa isa)
{
	static const char *const names[] = {
		[JF_ISA_UNKNOWN] = "unknown", [JF_ISA_X86_16] = "16-bit",
		[JF_ISA_X86_32] = "32-bit",   [JF_ISA_X86_64] = "64-bit",
		[JF_ISA_A64] = "A64",         [JF_ISA_A32] = "A32",
		[JF_ISA_T32] = "T32",
	};
	return NAME(names, isa);
}

const char *jf_lost_reason_name(enum jf_lost_reason reason)
{
	static const char *const names[] = {
		[JF_LOST_SKIPPED] = "skipped",
		[JF_LOST_AUX_TRUNCATED] = "aux-truncated",
		[JF_LOST_AUX_COLLISION] = "aux-collision",
		[JF_LOST_NO_SYNC] = "no-sync",
		[JF_LOST_NO_IMAGE] = "no-image",
		[JF_LOST_OVERFLOW] = "overflow",
		[JF_LOST_RECORDS] = "lost-records",
		[JF_LOST_FILE_CUT] = "file-cut",
		[JF_LOST_DECODER_CRASH] = "decoder-crash",
	};
	return NAME(names, reason);
}

const char *jf_error_phase_name(enum jf_error_phase phase)
{
	static const char *const names[] = {
		[JF_PHASE_DECODE] = "error",
		[JF_PHASE_SYNC] = "sync error",
		[JF_PHASE_IMAGE] = "image mismatch",
		[JF_PHASE_CONTAINER] = "container error",
	};
	return NAME(names, phase);
}
